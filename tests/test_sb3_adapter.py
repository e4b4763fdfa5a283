"""The stable-baselines3 adapter against SB3's own DummyVecEnv over single envs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv


@pytest.mark.parametrize(
    "env_id", ["RigidRot/Reorient-v0", "RigidRot/Detumble-v0", "RigidRot/WheelReorient-v0"]
)
def test_adapter_matches_dummy_vec_env_step_for_step(env_id):
    n, seed, limit = 3, 5, 30
    adapter = AttitudeSB3VecEnv(n, env_id, max_episode_steps=limit)
    dummy = DummyVecEnv([lambda: gym.make(env_id, max_episode_steps=limit) for _ in range(n)])
    adapter.seed(seed)
    dummy.seed(seed)
    np.testing.assert_array_equal(adapter.reset(), dummy.reset())
    rng = np.random.default_rng(0)
    ends = 0
    kept = []
    for _ in range(100):
        actions = rng.uniform(-1, 1, size=(n, *adapter.action_space.shape)).astype(np.float32)
        obs_a, rew_a, done_a, info_a = adapter.step(actions)
        obs_d, rew_d, done_d, info_d = dummy.step(actions)
        np.testing.assert_array_equal(obs_a, obs_d)  # same-step reset: new episode's obs
        np.testing.assert_allclose(rew_a, rew_d, rtol=0, atol=1e-6)
        np.testing.assert_array_equal(done_a, done_d)
        for a, d in zip(info_a, info_d, strict=True):
            assert a.keys() == d.keys()
            for key in d.keys() - {"terminal_observation"}:  # every entry, wheels' too
                np.testing.assert_array_equal(a[key], d[key])
                assert type(a[key]) is type(d[key]), key
            if "terminal_observation" in a:
                np.testing.assert_array_equal(a["terminal_observation"], d["terminal_observation"])
                ends += 1
        kept.append((info_a, info_d))
    assert ends >= n * 3  # several episodes ended by time limit
    # What a step handed out is not written by the steps after it (its rows are views).
    for info_a, info_d in kept:
        for a, d in zip(info_a, info_d, strict=True):
            for key in d.keys() - {"terminal_observation"}:
                np.testing.assert_array_equal(a[key], d[key])


def test_adapter_works_under_sb3_wrappers_and_reports_episodes():
    env = VecMonitor(AttitudeSB3VecEnv(4, "RigidRot/Reorient-v0", max_episode_steps=10))
    env.seed(0)
    env.reset()
    episodes = []
    for _ in range(25):
        _, _, dones, infos = env.step(np.zeros((4, 3), dtype=np.float32))
        episodes += [info["episode"] for info, done in zip(infos, dones, strict=True) if done]
    assert len(episodes) == 8 and all(e["l"] == 10 for e in episodes)
    assert env.get_attr("scenario")[0].id == "RigidRot/Reorient-v0"
    assert env.env_is_wrapped(gym.Wrapper) == [False] * 4


def test_adapter_bad_action_raises():
    env = AttitudeSB3VecEnv(2)
    env.reset()
    with pytest.raises(ValueError, match="action must be finite"):
        env.step(np.array([[0.0, 0.0, 0.0], [np.nan, 0.0, 0.0]], dtype=np.float32))

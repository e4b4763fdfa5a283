"""Rendering the environments with PyBullet: frames, videos, vector envs, no client leaks,
and no cost when rendering is off."""

from __future__ import annotations

import gc
import sys
import warnings

import gymnasium as gym
import numpy as np
import pybullet
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.utils.passive_env_checker import env_render_passive_checker

import rigidrot_gym


@pytest.mark.parametrize("env_id", rigidrot_gym.ENV_IDS)
def test_rgb_array_frames(env_id):
    env = gym.make(env_id, render_mode="rgb_array", render_options={"width": 160, "height": 120})
    env.reset(seed=0)
    env_render_passive_checker(env)
    first = env.render()
    assert first.shape == (120, 160, 3) and first.dtype == np.uint8
    for _ in range(10):
        env.step(np.ones(env.action_space.shape, dtype=np.float32))
    assert not np.array_equal(env.render(), first)  # the body turned
    env.close()


def test_record_video_writes_an_mp4(tmp_path):
    env = gym.make("RigidRot/Detumble-v0", render_mode="rgb_array", max_episode_steps=15)
    folder = tmp_path / "videos"
    env = gym.wrappers.RecordVideo(
        env, str(folder), episode_trigger=lambda episode: True, disable_logger=True
    )
    env.reset(seed=0)
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        done = terminated or truncated
    env.close()
    videos = list(folder.glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000


def test_vector_env_renders_every_env_and_records_a_grid(tmp_path):
    envs = gym.make_vec("RigidRot/Reorient-v0", num_envs=4, render_mode="rgb_array", max_episode_steps=5)
    envs.reset(seed=0)
    frames = envs.render()
    assert len(frames) == 4 and all(f.shape == (480, 640, 3) for f in frames)
    assert not np.array_equal(frames[0], frames[1])  # different attitudes
    folder = tmp_path / "videos"
    envs = gym.wrappers.vector.RecordVideo(envs, str(folder), episode_trigger=lambda e: e == 0)
    envs.reset(seed=0)
    for _ in range(6):
        envs.step(np.zeros((4, 3), dtype=np.float32))
    envs.close()
    assert list(folder.glob("*.mp4"))


def test_two_hundred_envs_leak_no_client():
    probe = pybullet.connect(pybullet.DIRECT)
    pybullet.disconnect(probe)
    for _ in range(200):
        env = gym.make(
            "RigidRot/Reorient-v0", render_mode="rgb_array", render_options={"width": 32, "height": 24}
        )
        env.reset(seed=0)
        env.render()
        env.close()
    for _ in range(20):  # dropped without close(): their renderers disconnect when collected
        env = gym.make(
            "RigidRot/Reorient-v0", render_mode="rgb_array", render_options={"width": 32, "height": 24}
        )
        env.reset(seed=0)
        env.render()
        del env
    gc.collect()
    again = pybullet.connect(pybullet.DIRECT)
    pybullet.disconnect(again)
    assert again == probe  # the lowest free id: every client in between was released


def test_rendering_off_imports_nothing_and_render_warns():
    code = (
        "import sys, gymnasium as gym, rigidrot_gym; "
        "e = gym.make('RigidRot/Reorient-v0'); e.reset(seed=0); e.step(e.action_space.sample()); "
        "print('pybullet' in sys.modules)"
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    env = gym.make("RigidRot/Reorient-v0")
    env.reset(seed=0)
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None


@pytest.mark.parametrize("env_id", rigidrot_gym.ENV_IDS)
def test_gymnasium_env_checker_with_its_render_check_passes_headless(env_id, monkeypatch):
    # check_env's render check makes the env in every declared mode, "human" included:
    # without a display, "human" warns and draws off-screen instead of failing
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.warns(UserWarning, match="off-screen"):
        check_env(gym.make(env_id).unwrapped)


def test_human_mode_without_a_display_warns_once_and_draws_off_screen(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    env = gym.make("RigidRot/Reorient-v0", render_mode="human", render_options={"width": 64, "height": 48})
    reference = gym.make(
        "RigidRot/Reorient-v0", render_mode="rgb_array", render_options={"width": 64, "height": 48}
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env.reset(seed=0)
        for _ in range(3):
            assert env.step(np.ones(3, dtype=np.float32))[0] is not None
        assert env.render() is None  # "human" returns nothing, as Gymnasium specifies
    assert sum("off-screen" in str(w.message) for w in caught) == 1
    reference.reset(seed=0)
    for _ in range(3):
        reference.step(np.ones(3, dtype=np.float32))
    renderer = env.unwrapped._renderer
    q, w = env.unwrapped.attitude, env.unwrapped.body_rates
    np.testing.assert_array_equal(renderer.render(q, w, env.unwrapped.target), reference.render())
    env.close()
    reference.close()


def test_missing_pybullet_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pybullet", None)
    env = gym.make("RigidRot/Reorient-v0", render_mode="rgb_array")
    env.reset(seed=0)
    with pytest.raises(gym.error.DependencyNotInstalled, match=r"rigidrot-gym\[render\]"):
        env.render()


@pytest.mark.filterwarnings("ignore:.*render_mode='ascii'")
def test_unknown_render_mode():
    with pytest.raises(ValueError, match=r"render_mode 'ascii' is not supported"):
        gym.make("RigidRot/Reorient-v0", render_mode="ascii")


def test_the_renderer_draws_each_episodes_randomised_body():
    # reference: a renderer built for the episode's true tensor (env.unwrapped.inertia)
    from rigidrot_gym.render import BodyRenderer

    size = {"width": 64, "height": 48}
    randomised = {"randomize_inertia": 0.5, "randomize_inertia_rotation_deg": 40.0}
    env = gym.make("RigidRot/Reorient-v0", render_mode="rgb_array", render_options=size, **randomised)
    vec = gym.make_vec("RigidRot/Reorient-v0", 3, render_mode="rgb_array", render_options=size, **randomised)
    u = env.unwrapped
    nominal = BodyRenderer(u.scenario.inertia, **size)
    for seed in (0, 1):
        env.reset(seed=seed)
        frame = env.render()
        with BodyRenderer(u.inertia, **size) as reference:
            np.testing.assert_array_equal(frame, reference.render(u.attitude, u.body_rates, u.target))
        assert not np.array_equal(frame, nominal.render(u.attitude, u.body_rates, u.target))
    vec.reset(seed=2)
    frames = vec.render()
    batch = vec.unwrapped.batch
    q, w = batch.body_state()
    for i, inertia in enumerate(batch.inertia()):
        with BodyRenderer(inertia, **size) as reference:
            np.testing.assert_array_equal(frames[i], reference.render(q[i], w[i], batch.target[i]))
    nominal.close()
    env.close()
    vec.close()

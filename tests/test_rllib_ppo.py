"""The RLlib recipe (training/rllib_ppo.py) with a tiny budget on the two-node Ray cluster:
the env is made inside the remote env runners from its prefixed name, the saved policy
reloads to the same actions, and its evaluation matches a plain single-env rollout."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import rigidrot_gym  # noqa: F401  (registers the ids)

pytest.importorskip("ray.rllib")

pytestmark = pytest.mark.training
TRAINING = Path(__file__).resolve().parents[1] / "training"
STEPS = 40  # episode length for the test, so that episodes end within the tiny budget


def _recipe():
    spec = importlib.util.spec_from_file_location("rllib_ppo", TRAINING / "rllib_ppo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _final_error_of_plain_rollouts(policy, seeds) -> float:
    errors = []
    for seed in seeds:
        env = gym.make("RigidRot/Reorient-v0", max_episode_steps=STEPS)
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            action, _ = policy.predict(obs[None])
            obs, _, terminated, truncated, info = env.step(action[0])
            done = terminated or truncated
        errors.append(info["pointing_error_deg"])
    return float(np.mean(errors))


def test_rllib_ppo_trains_saves_and_evaluates(ray_cluster, tmp_path):
    recipe = _recipe()
    argv = ["--timesteps", "1024", "--num-envs-per-env-runner", "8", "--train-batch-size", "512"]
    argv += ["--minibatch-size", "256", "--num-epochs", "1", "--eval-episodes", "3"]
    argv += ["--env-kwargs", f"max_episode_steps={STEPS}", "--log-folder", str(tmp_path)]
    folder = recipe.main(argv)

    with open(folder / "progress.csv", newline="") as f:
        progress = list(csv.DictReader(f))
    steps = [int(row["env_steps"]) for row in progress]
    assert len(steps) >= 2 and steps == sorted(steps) and steps[-1] >= 1024
    # Episodes of 40 steps ended in the remote env runner, which logged their success flags.
    assert all(0.0 <= float(row["success_rate"]) <= 1.0 for row in progress)
    assert all(float(row["episode_return_mean"]) < 0.0 for row in progress)  # the reward is a cost

    policy = recipe.load_policy(folder / "checkpoint")
    obs = np.random.default_rng(0).uniform(-1, 1, (5, 7)).astype(np.float32)
    action, _ = policy.predict(obs)
    assert action.shape == (5, 3) and np.all(np.abs(action) <= 1.0)
    assert np.array_equal(policy.predict(obs)[0], action)  # deterministic

    with open(folder / "evaluation.csv", newline="") as f:
        (evaluation,) = list(csv.DictReader(f))
    assert int(evaluation["episodes"]) == 3
    reported = float(evaluation["final_error_deg"])
    assert np.isclose(_final_error_of_plain_rollouts(policy, range(10_000, 10_003)), reported, rtol=1e-4)
    with pytest.raises(SystemExit, match="never overwrites"):
        recipe.main([*argv, "--name", folder.name])

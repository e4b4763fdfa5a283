"""training/sweep.py on the two-node Ray cluster, with a tiny budget: the reports over time,
the rliable statistics against scipy's trimmed mean, and the saved best agent against a
plain single-env rollout of the evaluation episodes."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.control import agents

pytest.importorskip("rliable")

pytestmark = pytest.mark.training

TRAINING = Path(__file__).resolve().parents[1] / "training"
TINY = ["n_timesteps=1024", "n_envs=4", "n_steps=64", "batch_size=128", "n_epochs=1"]


def _sweep_module():
    spec = importlib.util.spec_from_file_location("sweep", TRAINING / "sweep.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return [{k: v if k == "point" else float(v) for k, v in row.items()} for row in csv.DictReader(f)]


def _final_error_of_plain_rollouts(agent, seeds) -> float:
    """Mean final pointing error of the agent flying each seed alone in gym.make's env."""
    errors = []
    for seed in seeds:
        env = gym.make("RigidRot/Reorient-v0")
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            action, _ = agent.predict(obs[None], deterministic=True)
            obs, _, terminated, truncated, info = env.step(action[0])
            done = terminated or truncated
        errors.append(info["pointing_error_deg"])
    return float(np.mean(errors))


@pytest.fixture(scope="module")
def sweep_folder(ray_cluster, tmp_path_factory):
    sweep = _sweep_module()
    argv = ["--seeds", "3", "--grid", "learning_rate=lin_1e-3,lin_3e-4", "--hyperparams", *TINY]
    argv += ["--report-every", "256", "--eval-episodes", "3"]
    argv += ["--log-folder", str(tmp_path_factory.mktemp("logs"))]
    folder = sweep.main(argv)
    return sweep, argv, folder


def test_sweep_reports_over_time_and_refuses_to_overwrite(sweep_folder):
    sweep, argv, folder = sweep_folder
    assert folder.name == "Reorient-v0_1" and folder.parent.name == "ppo"
    for name in ("results.md", "summary.csv", "curves.png", "profile.png", "sweep.yml", "command.txt"):
        assert (folder / name).stat().st_size > 0, name
    progress = _rows(folder / "progress.csv")
    trials = {(r["point"], r["seed"]) for r in progress}
    assert len(trials) == 6  # 2 grid points × 3 seeds
    for trial in trials:
        steps = [r["timesteps"] for r in progress if (r["point"], r["seed"]) == trial]
        assert steps == sorted(set(steps)) and len(steps) >= 3 and steps[-1] == 1024
        rates = [r["success_rate"] for r in progress if (r["point"], r["seed"]) == trial]
        assert all(np.isnan(x) or 0.0 <= x <= 1.0 for x in rates)
    with pytest.raises(SystemExit, match="never overwrites"):
        sweep.main([*argv, "--name", folder.name])


def test_iqm_and_confidence_intervals_across_seeds(sweep_folder):
    _, _, folder = sweep_folder
    results = _rows(folder / "results.csv")
    summary = _rows(folder / "summary.csv")
    assert [s["point"] for s in summary] == ["learning_rate=lin_1e-3", "learning_rate=lin_3e-4"]
    for s in summary:
        for score, key in (("eval_success", "success"), ("ep_return", "return")):
            x = np.array([r[score] for r in results if r["point"] == s["point"]])
            assert len(x) == 3
            assert np.isclose(s[f"iqm_{key}"], stats.trim_mean(x, 0.25), rtol=1e-12, atol=0)
            # A percentile bootstrap of a trimmed mean stays within the sample's range.
            assert x.min() <= s[f"{key}_low"] <= s[f"iqm_{key}"] <= s[f"{key}_high"] <= x.max()
    best = max(summary, key=lambda s: (s["iqm_success"], s["iqm_return"]))
    assert f"Best: {best['point']}, seed" in (folder / "results.md").read_text()


def test_the_best_agent_is_saved_like_a_training_run(sweep_folder):
    _, _, folder = sweep_folder
    best = folder / "best"
    assert (best / "RigidRot-Reorient-v0.zip").exists()
    for name in ("vecnormalize.pkl", "vecnormalize.json", "config.yml", "args.yml", "command.txt"):
        assert (best / "RigidRot-Reorient-v0" / name).exists(), name
    agent = agents.load(best)
    config = agent.config
    results = _rows(folder / "results.csv")
    point = f"learning_rate={config['learning_rate']}"
    chosen = [r for r in results if r["seed"] == config["seed"] and r["point"] == point]
    assert len(chosen) == 1 and config["n_timesteps"] == 1024
    seeds = range(10_000, 10_003)  # the held-out evaluation seeds
    reported = chosen[0]["eval_final_error_deg"]
    assert np.isclose(_final_error_of_plain_rollouts(agent, seeds), reported, rtol=1e-4)

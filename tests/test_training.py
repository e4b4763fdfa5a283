"""Training smoke test: train a few thousand steps, save, reload, evaluate."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import yaml

from rigidrot_gym.control import agents

TRAINING = Path(__file__).resolve().parents[1] / "training"


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, TRAINING / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("algo", "overrides"),
    [
        ("ppo", ["n_timesteps=2048", "n_envs=4", "n_steps=128", "batch_size=128", "n_epochs=2"]),
        ("sac", ["n_timesteps=400", "n_envs=2", "learning_starts=100", "batch_size=64"]),
        ("td3", ["n_timesteps=400", "n_envs=2", "learning_starts=100", "batch_size=64"]),
    ],
)
def test_train_save_reload_evaluate(tmp_path, algo, overrides):
    train, evaluate = _script("train"), _script("evaluate")
    argv = ["--algo", algo, "--env", "RigidRot/Reorient-v0", "--seed", "1", "--log-folder", str(tmp_path)]
    argv += ["--hyperparams", *overrides, "--env-kwargs", "integrator=semi_implicit", "--no-progress"]
    run = train.main(argv)
    for name in ("model.zip", "config.yml", "args.yml", "command.txt", "vecnormalize.pkl"):
        assert (run / name).exists(), name
    config = yaml.safe_load((run / "config.yml").read_text())
    assert (config["algo"], config["env"], config["env_kwargs"]) == (
        algo,
        "RigidRot/Reorient-v0",
        {"integrator": "semi_implicit"},
    )
    assert "--algo" in (run / "command.txt").read_text()
    assert list((run / "tensorboard").iterdir())

    agent = agents.load(run)
    action, _ = agent.predict(np.zeros((5, 7), dtype=np.float32))
    assert action.shape == (5, 3) and np.all(np.abs(action) <= 1.0)

    table = evaluate.main(
        [str(run), "--episodes", "2", "--integrators", "rk4", "--compare", "quaternion_feedback"]
    )
    assert "agent" in table and "quaternion_feedback" in table
    assert (run / "evaluation.md").exists()


def test_loading_a_folder_that_is_not_a_run(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"model\.zip is missing"):
        agents.load(tmp_path)

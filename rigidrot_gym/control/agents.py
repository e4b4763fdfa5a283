"""Trained stable-baselines3 agents, loaded from a training run folder as policies.

A run folder (written by ``training/train.py``) holds ``model.zip``, ``config.yml``
(the hyperparameters, including ``algo`` and ``env``), ``args.yml``, ``command.txt`` and,
when observations were normalised, ``vecnormalize.pkl``. :func:`load` rebuilds the
policy with the same ``predict()`` signature as the classical controllers, normalising
observations exactly as during training, so agents and controllers share one evaluation
path. Needs the ``[train]`` extra.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

ALGORITHMS = ("ppo", "sac", "td3")


class Agent:
    """A trained model plus its observation normaliser, with SB3's ``predict``."""

    def __init__(self, model, normalizer=None, config: dict | None = None):
        self.model = model
        self.normalizer = normalizer
        self.config = dict(config or {})

    def for_scenario(self, scenario) -> Agent | None:
        """This agent where ``scenario`` is the env it was trained on (by id), else None:
        a policy sees one scenario's observations and actions only."""
        return self if scenario.id == self.config.get("env") else None

    def predict(self, observation, state: Any = None, episode_start=None, deterministic: bool = True):
        obs = np.asarray(observation, dtype=np.float32)
        if self.normalizer is not None:
            obs = self.normalizer.normalize_obs(obs)
        return self.model.predict(obs, state=state, episode_start=episode_start, deterministic=deterministic)


def read_config(run_dir: str | Path) -> dict:
    """The run's ``config.yml`` (hyperparameters, algorithm, env id, env overrides)."""
    import yaml

    return yaml.safe_load((Path(run_dir) / "config.yml").read_text())


def load(run_dir: str | Path) -> Agent:
    """The agent saved in ``run_dir``.

    Raises:
        FileNotFoundError: if the folder lacks ``model.zip`` or ``config.yml``.
        ValueError: for an unknown algorithm in the config.
    """
    import stable_baselines3 as sb3
    from stable_baselines3.common.vec_env import VecNormalize

    from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv

    run_dir = Path(run_dir)
    for name in ("model.zip", "config.yml"):
        if not (run_dir / name).exists():
            raise FileNotFoundError(f"{run_dir} is not a training run: {name} is missing")
    config = read_config(run_dir)
    algo = config.get("algo")
    if algo not in ALGORITHMS:
        raise ValueError(f"{run_dir}/config.yml: algo must be one of {ALGORITHMS}, got {algo!r}")
    model = getattr(sb3, algo.upper()).load(run_dir / "model.zip", device="cpu")
    normalizer = None
    if (run_dir / "vecnormalize.pkl").exists():
        venv = AttitudeSB3VecEnv(1, config["env"], **config.get("env_kwargs", {}))
        normalizer = VecNormalize.load(str(run_dir / "vecnormalize.pkl"), venv)
        normalizer.training = False
    return Agent(model, normalizer, config)

"""Trained stable-baselines3 agents, loaded from an rl-baselines3-zoo run folder as policies.

A run folder is what ``python -m rl_zoo3.train`` and ``training/train.py`` write,
``<log folder>/<algo>/<env>_<n>/`` (e.g. ``logs/ppo/RigidRot-Reorient-v0_1/``):

* ``<env>.zip``: the model;
* ``<env>/config.yml``: the hyperparameters (``normalize``, ``n_envs``, ...);
* ``<env>/args.yml``: the arguments of the training command (``algo``, ``env``,
  ``env_kwargs``, ``seed``, ...);
* ``<env>/vecnormalize.pkl``: the observation normaliser, when observations were normalised;
* ``<env>/command.txt``: the command that made the run.

:func:`load` rebuilds the policy with the same ``predict()`` signature as the classical
controllers, normalising observations exactly as during training, so agents and
controllers share one evaluation path. Needs the ``[train]`` extra.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

ALGORITHMS = ("ppo", "sac", "td3")
# The zoo writes its YAML files with PyYAML's Python tags (an OrderedDict of the keys,
# tuples among the values, a class such as torch.nn.ReLU in policy_kwargs given on the
# command line); these are the only ones read, without PyYAML's unsafe loader, a class as
# its dotted name (nothing is imported: the model file holds the policy's own).
_ORDERED_DICT = "tag:yaml.org,2002:python/object/apply:collections.OrderedDict"
_TUPLE = "tag:yaml.org,2002:python/tuple"
_NAME = "tag:yaml.org,2002:python/name:"


class Agent:
    """A trained model plus its observation normaliser, with SB3's ``predict``.

    Args:
        model: the stable-baselines3 model.
        normalizer: its ``VecNormalize`` (statistics frozen), or None.
        config: at least ``env`` (the env id it was trained on); :func:`load` also gives
            ``algo``, ``env_kwargs`` and the hyperparameters.
        name: the label of the agent in tables (default: ``"agent"``).
    """

    def __init__(self, model, normalizer=None, config: dict | None = None, name: str = "agent"):
        self.model = model
        self.normalizer = normalizer
        self.config = dict(config or {})
        self.name = name

    def for_scenario(self, scenario) -> Agent | None:
        """This agent where ``scenario`` is the env it was trained on (by id), else None:
        a policy sees one scenario's observations and actions only."""
        return self if scenario.id == self.config.get("env") else None

    def predict(self, observation, state: Any = None, episode_start=None, deterministic: bool = True):
        """SB3's ``predict`` on raw observations ((7,) or (N, 7)); actions in [-1, 1]."""
        obs = np.asarray(observation, dtype=np.float32)
        if self.normalizer is not None:
            obs = self.normalizer.normalize_obs(obs)
        return self.model.predict(obs, state=state, episode_start=episode_start, deterministic=deterministic)


def read_yaml(path: Path) -> dict:
    """A YAML file of a zoo run (plain YAML, or the zoo's ``OrderedDict`` dump) as a dict."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor(_ORDERED_DICT, lambda loader, node: dict(loader.construct_sequence(node, True)[0]))
    Loader.add_constructor(_TUPLE, lambda loader, node: tuple(loader.construct_sequence(node, True)))
    Loader.add_multi_constructor(_NAME, lambda loader, suffix, node: suffix)
    return yaml.load(path.read_text(), Loader=Loader) or {}


def run_files(run_dir: str | Path) -> tuple[Path, Path]:
    """The model file and the parameter folder of the run in ``run_dir``.

    Raises:
        FileNotFoundError: if ``run_dir`` is not a zoo run folder.
    """
    run_dir = Path(run_dir)
    params = sorted(p.parent for p in run_dir.glob("*/args.yml"))
    if len(params) != 1:
        raise FileNotFoundError(
            f"{run_dir} is not a training run: expected one <env>/args.yml in it (the layout of "
            f"rl_zoo3.train, e.g. logs/ppo/RigidRot-Reorient-v0_1), found {len(params)}"
        )
    model = run_dir / f"{params[0].name}.zip"
    if not model.is_file():
        raise FileNotFoundError(f"{run_dir} is not a training run: {model.name} is missing")
    return model, params[0]


def read_config(run_dir: str | Path) -> dict:
    """The run's hyperparameters (``config.yml``) with ``algo``, ``env``, ``env_kwargs`` and
    ``seed`` of its training command (``args.yml``; ``env_kwargs`` as the zoo resolves
    them: the command's, else the hyperparameter file's, else none)."""
    _, params = run_files(run_dir)
    args = read_yaml(params / "args.yml")
    config = read_yaml(params / "config.yml") if (params / "config.yml").exists() else {}
    env_kwargs = args.get("env_kwargs") or config.get("env_kwargs") or {}
    command = {key: args.get(key) for key in ("algo", "env", "seed")}
    return {**config, **command, "env_kwargs": env_kwargs}


def load(run_dir: str | Path) -> Agent:
    """The agent saved in the zoo run folder ``run_dir``, named ``<algo>/<run folder>``.

    Raises:
        FileNotFoundError: if ``run_dir`` is not a zoo run folder.
        ValueError: for an algorithm other than ``ALGORITHMS`` in its ``args.yml``.
    """
    import stable_baselines3 as sb3
    from stable_baselines3.common.vec_env import VecNormalize

    from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv

    run_dir = Path(run_dir)
    model_path, params = run_files(run_dir)
    config = read_config(run_dir)
    algo = config["algo"]
    if algo not in ALGORITHMS:
        raise ValueError(f"{params / 'args.yml'}: algo must be one of {ALGORITHMS}, got {algo!r}")
    model = getattr(sb3, algo.upper()).load(model_path, device="cpu")
    normalizer = None
    if (params / "vecnormalize.pkl").exists():
        venv = AttitudeSB3VecEnv(1, config["env"], **config["env_kwargs"])
        normalizer = VecNormalize.load(str(params / "vecnormalize.pkl"), venv)
        normalizer.training = False
    return Agent(model, normalizer, config, name=f"{algo}/{run_dir.resolve().name}")

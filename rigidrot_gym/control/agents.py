"""Trained stable-baselines3 agents, loaded from an rl-baselines3-zoo run folder as policies.

A run folder is what ``python -m rl_zoo3.train`` and ``training/train.py`` write,
``<log folder>/<algo>/<env>_<n>/`` (e.g. ``logs/ppo/RigidRot-Reorient-v0_1/``):

* ``<env>.zip``: the model;
* ``<env>/config.yml``: the hyperparameters (``normalize``, ``n_envs``, ...);
* ``<env>/args.yml``: the arguments of the training command (``algo``, ``env``,
  ``env_kwargs``, ``seed``, ...);
* ``<env>/vecnormalize.pkl``: the observation normaliser, when observations were normalised
  (a pickle);
* ``<env>/vecnormalize.json``: the same normaliser's statistics as plain JSON (written by
  ``rigidrot train``, ``training/train.py`` and ``training/sweep.py``; for an older run
  folder, by :func:`write_normalizer_json`);
* ``<env>/command.txt``: the command that made the run.

:func:`load` rebuilds the policy with the same ``predict()`` signature as the classical
controllers, normalising observations exactly as during training, so agents and
controllers share one evaluation path. Needs the ``[train]`` extra.

Loading runs no code from the folder by default: the model's weights are read with
``torch.load(..., weights_only=True)`` into a policy built from the model file's plain JSON
entries (its ``:serialized:`` cloudpickle entries are never unpickled) and the run's YAML
files, and the normaliser from ``vecnormalize.json``. Two things do run code from the
files, and only when asked or when nothing else is there: ``load(..., trusted=True)``
(SB3's own ``load``, which unpickles the model file's cloudpickle entries) and a folder
without ``vecnormalize.json`` (its ``vecnormalize.pkl`` is unpickled, with a warning).
"""

from __future__ import annotations

import json
import warnings
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
# The normaliser's statistics as JSON (no pickle), next to the zoo's vecnormalize.pkl.
NORMALIZER_JSON = "vecnormalize.json"
NORMALIZER_FORMAT = "rigidrot_gym/vecnormalize/1"
# The VecNormalize settings written to and read from the JSON file, with the statistics.
_NORMALIZER_SETTINGS = ("norm_obs", "norm_reward", "clip_obs", "clip_reward", "gamma", "epsilon")


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


def _statistics(rms) -> dict:
    """A ``RunningMeanStd`` as JSON values (floats written by ``repr``: read back bit for bit)."""
    mean, var = np.asarray(rms.mean, dtype=np.float64), np.asarray(rms.var, dtype=np.float64)
    return {
        "shape": list(mean.shape),
        "mean": mean.ravel().tolist(),
        "var": var.ravel().tolist(),
        "count": float(rms.count),
    }


def _running(values: dict):
    from stable_baselines3.common.running_mean_std import RunningMeanStd

    shape = tuple(int(n) for n in values["shape"])
    rms = RunningMeanStd(shape=shape)
    rms.mean = np.array(values["mean"], dtype=np.float64).reshape(shape)
    rms.var = np.array(values["var"], dtype=np.float64).reshape(shape)
    rms.count = float(values["count"])
    return rms


def normalizer_json(normalizer) -> dict:
    """The content of ``vecnormalize.json`` for a ``VecNormalize``: its settings
    (``norm_obs``, ``norm_reward``, ``clip_obs``, ``clip_reward``, ``gamma``, ``epsilon``,
    ``norm_obs_keys``) and the running statistics of the observations (``obs_rms``: one,
    or one per key of a ``Dict`` observation) and of the returns (``ret_rms``), each as
    ``shape``, ``mean``, ``var`` (float64, row-major) and ``count``."""
    obs_rms = normalizer.obs_rms if normalizer.norm_obs else None
    if isinstance(obs_rms, dict):
        obs = {key: _statistics(rms) for key, rms in obs_rms.items()}
    else:
        obs = None if obs_rms is None else _statistics(obs_rms)
    keys = normalizer.norm_obs_keys
    return {
        "format": NORMALIZER_FORMAT,
        **{name: getattr(normalizer, name) for name in _NORMALIZER_SETTINGS},
        "norm_obs_keys": None if keys is None else list(keys),
        "obs_rms": obs,
        "ret_rms": _statistics(normalizer.ret_rms),
    }


def save_normalizer(normalizer, path: str | Path) -> Path:
    """Writes ``normalizer`` (a ``VecNormalize``) to ``path`` as :func:`normalizer_json`
    gives it; returns the path. Every float is written as ``repr`` writes it, which reads
    back to the same float64.

    Raises:
        ValueError: for a statistic that is NaN or infinite (no JSON number).
    """
    path = Path(path)
    path.write_text(json.dumps(normalizer_json(normalizer), indent=1, allow_nan=False) + "\n")
    return path


def load_normalizer(path: str | Path, venv):
    """The ``VecNormalize`` of a ``vecnormalize.json`` around ``venv``, statistics frozen
    (``training`` False): what ``VecNormalize.load`` gives from the pickle, without
    unpickling anything.

    Raises:
        ValueError: for a file that is not a ``vecnormalize.json`` of this format.
    """
    from stable_baselines3.common.vec_env import VecNormalize

    path = Path(path)
    values = json.loads(path.read_text())
    if not isinstance(values, dict) or values.get("format") != NORMALIZER_FORMAT:
        raise ValueError(f"{path}: not a normaliser file of format {NORMALIZER_FORMAT!r}")
    settings = {name: values[name] for name in _NORMALIZER_SETTINGS}
    normalizer = VecNormalize(venv, training=False, norm_obs_keys=values["norm_obs_keys"], **settings)
    obs = values["obs_rms"]
    if settings["norm_obs"]:
        if isinstance(normalizer.obs_rms, dict):
            normalizer.obs_rms = {key: _running(obs[key]) for key in normalizer.obs_rms}
        else:
            normalizer.obs_rms = _running(obs)
    normalizer.ret_rms = _running(values["ret_rms"])
    return normalizer


def write_normalizer_json(run_dir: str | Path) -> Path | None:
    """Writes ``<env>/vecnormalize.json`` of the run in ``run_dir`` from its
    ``vecnormalize.pkl`` (for run folders written before the JSON file was); returns its
    path, or None for a run without a normaliser. It unpickles ``vecnormalize.pkl``, which
    runs any code the pickle holds: only for one's own runs.

    Raises:
        FileNotFoundError: if ``run_dir`` is not a zoo run folder.
    """
    import pickle

    _, params = run_files(run_dir)
    if not (params / "vecnormalize.pkl").exists():
        return None
    with open(params / "vecnormalize.pkl", "rb") as file:
        normalizer = pickle.load(file)
    return save_normalizer(normalizer, params / NORMALIZER_JSON)


# The policy_kwargs classes the weights-only load builds from their names (the zoo's
# config.yml spells them nn.ReLU, th.nn.Tanh, torch.nn.modules.activation.ReLU, ...).
_CLASS_MODULES = {"activation_fn": "torch.nn.modules.activation", "optimizer_class": "torch.optim"}


def _named_class(key: str, name: str):
    """The class ``name`` (a dotted name) of the policy keyword ``key``, from the modules
    :data:`_CLASS_MODULES` allows for it; nothing is imported by name."""
    import importlib

    module = importlib.import_module(_CLASS_MODULES[key]) if key in _CLASS_MODULES else None
    last = name.rsplit(".", 1)[-1]
    found = getattr(module, last, None) if last in getattr(module, "__all__", ()) else None
    if not isinstance(found, type):
        raise ValueError(
            f"policy_kwargs {key}={name}: only a torch activation (activation_fn) or optimizer "
            "(optimizer_class) is rebuilt by name; load(..., trusted=True) unpickles the model's own"
        )
    return found


def _literal(node, key: str | None = None):
    """A policy_kwargs expression of the zoo's config.yml (``dict(net_arch=[64, 64],
    activation_fn=nn.ReLU)``) as values, without evaluating it: literals, ``dict(...)``
    with keywords, and class names (:func:`_named_class`)."""
    import ast

    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        if node.args or any(k.arg is None for k in node.keywords):
            raise ValueError("policy_kwargs: dict(...) with keyword arguments only")
        return {k.arg: _literal(k.value, k.arg) for k in node.keywords}
    if isinstance(node, ast.Dict):
        return {_literal(k): _literal(v, _literal(k)) for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_literal(e, key) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, (ast.Name, ast.Attribute)):
        return _named_class(str(key), ast.unparse(node))
    return ast.literal_eval(node)


def _policy_kwargs(data: dict, config: dict) -> dict:
    """The policy's keyword arguments: the model file's own where they are plain JSON,
    else the run's config.yml (a string the zoo evaluates, or a mapping with classes by
    name), read by :func:`_literal` without evaluating anything."""
    import ast

    saved = data.get("policy_kwargs", {})
    if not (isinstance(saved, dict) and ":serialized:" in saved):
        kwargs = dict(saved)
    else:
        kwargs = config.get("policy_kwargs") or {}
        if isinstance(kwargs, str):
            kwargs = _literal(ast.parse(kwargs, mode="eval").body)
        else:
            kwargs = {
                key: _named_class(key, value) if key in _CLASS_MODULES and isinstance(value, str) else value
                for key, value in kwargs.items()
            }
    kwargs.pop("device", None)
    net_arch = kwargs.get("net_arch")
    if isinstance(net_arch, list) and net_arch and isinstance(net_arch[0], dict):
        kwargs["net_arch"] = net_arch[0]  # SB3's own conversion of its old format
    return kwargs


class Weights:
    """A policy rebuilt from a model file's weights (:func:`load_weights`): what an agent
    uses of an SB3 model, ``policy``, ``observation_space``, ``action_space`` and
    ``predict`` (the model's, which is its policy's)."""

    def __init__(self, policy):
        self.policy = policy
        self.observation_space = policy.observation_space
        self.action_space = policy.action_space

    def predict(self, observation, state: Any = None, episode_start=None, deterministic: bool = False):
        """SB3's ``BaseAlgorithm.predict``: the policy's."""
        return self.policy.predict(observation, state, episode_start, deterministic)


def _check_space(name: str, saved, space) -> None:
    """The space of the env against the model file's readable record of its own."""
    if not isinstance(saved, dict):
        return
    shape, dtype = saved.get("_shape"), saved.get("dtype")
    if (shape is not None and list(shape) != list(space.shape)) or (
        dtype is not None and dtype != str(space.dtype)
    ):
        raise ValueError(
            f"the model's {name} (shape {shape}, {dtype}) is not the env's "
            f"(shape {list(space.shape)}, {space.dtype})"
        )


def load_weights(model_path: str | Path, config: dict, venv) -> Weights:
    """The policy of the SB3 model file ``model_path`` without unpickling anything.

    The zip's ``data`` is read as plain JSON and its ``:serialized:`` (cloudpickle) entries
    are left alone; the policy class is the algorithm's ``config["policy"]``
    (``MlpPolicy`` if none), its keyword arguments those of :func:`_policy_kwargs`, its
    spaces ``venv``'s (checked against the file's shapes and dtypes), and its weights
    ``policy.pth``, read by ``torch.load(..., weights_only=True)`` and loaded strictly
    (every tensor present, none left over).

    Raises:
        ValueError: for an algorithm other than ``ALGORITHMS``, a policy class or keyword
            that cannot be rebuilt, or spaces that differ from the file's.
    """
    import zipfile

    import stable_baselines3 as sb3
    import torch

    algo = config["algo"]
    if algo not in ALGORITHMS:
        raise ValueError(f"algo must be one of {ALGORITHMS}, got {algo!r}")
    algorithm = getattr(sb3, algo.upper())
    with zipfile.ZipFile(model_path) as archive:
        data = json.loads(archive.read("data"))
        with archive.open("policy.pth") as file:
            state = torch.load(file, map_location="cpu", weights_only=True)
    name = config.get("policy") or "MlpPolicy"
    if name not in algorithm.policy_aliases:
        raise ValueError(
            f"{model_path}: policy {name!r} is not one of {algo.upper()}'s "
            f"({', '.join(algorithm.policy_aliases)}); load(..., trusted=True) unpickles the model's own"
        )
    policy_class = algorithm.policy_aliases[name]
    # The class's own readable entries name its __init__ (when it defines one).
    recorded = data.get("policy_class")
    init = str(recorded.get("__init__", "")) if isinstance(recorded, dict) else ""
    if init and f" {policy_class.__name__}.__init__ " not in init:
        raise ValueError(f"{model_path}: the model's policy ({init}) is not {policy_class.__name__}")
    _check_space("observation space", data.get("observation_space"), venv.observation_space)
    _check_space("action space", data.get("action_space"), venv.action_space)
    kwargs = _policy_kwargs(data, config)
    if algo == "ppo":
        kwargs["use_sde"] = bool(data.get("use_sde", False))
    elif algo == "sac":
        kwargs.setdefault("use_sde", bool(data.get("use_sde", False)))
    policy = policy_class(venv.observation_space, venv.action_space, lambda _: 0.0, **kwargs)
    policy.load_state_dict(state, strict=True)
    policy.set_training_mode(False)
    return Weights(policy)


def load(run_dir: str | Path, trusted: bool = False) -> Agent:
    """The agent saved in the zoo run folder ``run_dir``, named ``<algo>/<run folder>``.

    By default nothing in the folder runs code: the model is :func:`load_weights`' and the
    normaliser ``vecnormalize.json``'s (:func:`load_normalizer`). A folder without
    ``vecnormalize.json`` (written before it was, or by ``python -m rl_zoo3.train``) still
    loads: its ``vecnormalize.pkl`` is unpickled, with a warning, as it runs any code the
    pickle holds (:func:`write_normalizer_json` writes the JSON file of one's own run).

    Args:
        run_dir: the run folder.
        trusted: load the model with SB3's own ``load`` (which unpickles the model file's
            cloudpickle entries: any code they hold runs), and a ``vecnormalize.pkl``
            without a warning; only for one's own files.

    Raises:
        FileNotFoundError: if ``run_dir`` is not a zoo run folder.
        ValueError: for an algorithm other than ``ALGORITHMS`` in its ``args.yml``, or
            (not ``trusted``) a model that cannot be rebuilt from its weights.
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
    venv = AttitudeSB3VecEnv(1, config["env"], **config["env_kwargs"])
    if trusted:
        model = getattr(sb3, algo.upper()).load(model_path, device="cpu")
    else:
        model = load_weights(model_path, config, venv)
    normalizer = None
    if (params / NORMALIZER_JSON).exists():
        normalizer = load_normalizer(params / NORMALIZER_JSON, venv)
    elif (params / "vecnormalize.pkl").exists():
        if not trusted:
            warnings.warn(
                f"{params / 'vecnormalize.pkl'}: no {NORMALIZER_JSON} next to it, so the pickle is "
                "read, which runs any code it holds; for one's own run, "
                "rigidrot_gym.control.agents.write_normalizer_json writes the JSON file",
                UserWarning,
                stacklevel=2,
            )
        normalizer = VecNormalize.load(str(params / "vecnormalize.pkl"), venv)
        normalizer.training = False
    return Agent(model, normalizer, config, name=f"{algo}/{run_dir.resolve().name}")

"""The policies of the control benchmark by name, in a form that travels to Ray workers.

A policy maker is called with a scenario and returns a policy (SB3's ``predict()``) or
None where the policy does not apply. Three kinds, all small when pickled:

* :class:`ControllerMaker`: a controller of :data:`rigidrot_gym.control.CONTROLLERS` by
  name; a worker builds it from the name.
* :class:`AgentMaker`: a zoo training run's files (``<env>.zip`` and ``<env>/``'s
  ``args.yml``, ``config.yml``, ``vecnormalize.json``, ``vecnormalize.pkl``) held as
  bytes. Shipped once to the object store, they reach each worker as bytes; a process
  loads the agent from them once and keeps it (keyed by the files' digest), so no task
  trains, loads or pickles an agent again. The agent predicts on one torch thread: how a
  matrix product is split over threads changes its rounding (measured: 3.6e-7 on a batch
  of 5 with 2 threads against 1), and a campaign must give the same bits in any process.
* :class:`ImportMaker`: any importable policy, ``"package.module:Name"``; it travels as
  that string (and the folder the module was found in) and a worker imports it.

What a maker's object gives for a scenario is one rule, :func:`build`, for the entries of
``--policies package.module:Name`` and for the objects given to
:func:`rigidrot_gym.tools.bench.control.benchmark` alike: ``obj.for_scenario(scenario)``
where the object has it; a class without it, ``obj()``; an object with ``predict()``,
itself; any other callable, ``obj(scenario)`` (or ``obj()`` if it takes no argument).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.control import CONTROLLERS, agents

# The files of a zoo run's parameter folder that rebuild its agent (agents.load).
AGENT_FILES = ("args.yml", "config.yml", "vecnormalize.json", "vecnormalize.pkl")

# Agents loaded in this process, by the digest of their files.
_LOADED: dict[str, Any] = {}


class PolicyError(ValueError):
    """A policy that cannot be built, or that failed in a run; the message names the entry
    and what went wrong. Building is checked when a campaign is planned (an error before any
    task runs); a failure in a run makes the task a failed entry (:attr:`Block.failure
    <rigidrot_gym.tools.bench.control.Block.failure>`) and the campaign goes on."""


def build(obj: Any, scenario: Scenario) -> Any:
    """The policy ``obj`` gives for ``scenario`` (None: it does not apply there).

    * an object with ``for_scenario`` (a class or an instance): ``obj.for_scenario(scenario)``;
    * a class without it: ``obj()``, with no arguments;
    * an object with ``predict()``: the object itself, for every scenario;
    * any other callable (a policy maker: the built-in ones, a function): ``obj(scenario)``,
      or ``obj()`` if its signature takes no argument.

    Raises:
        TypeError: for an object that is none of these (what it raises itself passes through).
    """
    if hasattr(obj, "for_scenario"):
        return obj.for_scenario(scenario)
    if inspect.isclass(obj):
        return obj()
    if hasattr(obj, "predict"):
        return obj
    if not callable(obj):
        raise TypeError(
            f"{type(obj).__name__} is neither a policy (predict()) nor a class, a for_scenario or a callable"
        )
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):  # no signature to read (some builtins): a maker
        return obj(scenario)
    try:
        signature.bind(scenario)
    except TypeError:
        try:
            signature.bind()
        except TypeError:
            raise TypeError(f"{obj!r} takes neither a scenario nor no argument: {signature}") from None
        return obj()
    return obj(scenario)


def policy_for(name: str, obj: Any, scenario: Scenario) -> Any:
    """:func:`build`, checked: the policy of the entry ``name`` for ``scenario``, or None.

    Raises:
        PolicyError: naming the entry and the scenario, if building raises or gives an
            object without a callable ``predict()``.
    """
    try:
        policy = build(obj, scenario)
    except Exception as err:
        raise PolicyError(
            f"policy {name!r}: building it for {scenario.id} raised {type(err).__name__}: {err}"
        ) from err
    if policy is not None and not callable(getattr(policy, "predict", None)):
        raise PolicyError(
            f"policy {name!r}: built for {scenario.id} it is a {type(policy).__name__}, which has no "
            "predict(observation, state, episode_start, deterministic) method"
        )
    return policy


class ControllerMaker:
    """Builds the controller ``name`` of :data:`CONTROLLERS` for a scenario."""

    def __init__(self, name: str):
        if name not in CONTROLLERS:
            raise ValueError(f"controller must be one of {sorted(CONTROLLERS)}, got {name!r}")
        self.name = name
        self.fingerprint = name

    def __call__(self, scenario: Scenario):
        return CONTROLLERS[self.name](scenario)


class AgentMaker:
    """A trained agent, as the bytes of its run folder's files.

    Args:
        run_dir: a run folder of ``rl_zoo3.train`` / ``training/train.py``
            (e.g. ``training/agents/ppo/RigidRot-Reorient-v0_1``).

    Raises:
        FileNotFoundError: if ``run_dir`` is not a zoo run folder.
    """

    def __init__(self, run_dir: str | Path):
        model, params = agents.run_files(run_dir)
        self.files = {model.name: model.read_bytes()}
        for name in AGENT_FILES:
            if (params / name).exists():
                self.files[f"{params.name}/{name}"] = (params / name).read_bytes()
        digest = hashlib.sha256()
        for name in sorted(self.files):
            digest.update(name.encode() + b"\0" + self.files[name])
        self.fingerprint = f"agent:{digest.hexdigest()[:16]}"

    def agent(self):
        """The agent, loaded once per process from the files."""
        if self.fingerprint not in _LOADED:
            with tempfile.TemporaryDirectory(prefix="rigidrot-agent-") as folder:
                for name, data in self.files.items():
                    (Path(folder) / name).parent.mkdir(exist_ok=True)
                    (Path(folder) / name).write_bytes(data)
                _LOADED[self.fingerprint] = agents.load(folder)
        return _LOADED[self.fingerprint]

    def __call__(self, scenario: Scenario) -> OneThread | None:
        agent = self.agent().for_scenario(scenario)
        return None if agent is None else OneThread(agent)


class OneThread:
    """A policy whose ``predict()`` runs with torch limited to one thread (restored after)."""

    def __init__(self, policy):
        self.policy = policy

    def predict(self, observation, state: Any = None, episode_start=None, deterministic: bool = True):
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return self.policy.predict(observation, state, episode_start, deterministic)
        finally:
            torch.set_num_threads(threads)


class ImportMaker:
    """Any importable policy, by its entry ``"package.module:Name"`` (``Name`` may be a
    dotted path inside the module, ``module:Class.factory``).

    The module is imported as Python imports it (``sys.path``), and if it is not found
    there, from the current folder (as ``python -m`` would; the ``rigidrot`` script does not
    put the current folder on ``sys.path``). What the object gives for a scenario:
    :func:`build` (``for_scenario(scenario)`` where it has one, else a class with no
    arguments, ...); None from ``for_scenario`` leaves the scenario out.

    Pickled, the maker is the entry, the folder the module was found in and the
    fingerprint; a Ray worker imports the module itself, from its own ``sys.path`` or else
    that folder (on a cluster of several machines the module must be importable on each:
    installed, or in the same folder). :attr:`fingerprint` is the entry and the SHA-256 of
    the module's source, and of every ``.py`` file of its top-level package: a stored
    shard is not reused once the code is edited.

    Args:
        entry: ``"package.module:Name"``.

    Raises:
        ValueError: naming the entry, if it is not ``module:Name``, the module does not
            import (with the import's own error), or the module has no ``Name``.
    """

    def __init__(self, entry: str):
        module, _, attribute = entry.partition(":")
        if not module or not attribute or ":" in attribute:
            raise ValueError(f"policy {entry!r}: expected package.module:Name, e.g. my_gnc.controller:MyPD")
        self.entry = entry
        self.root: str | None = None
        self._object = self._load()
        self.fingerprint = f"{entry}@{_source_digest(sys.modules[module])}"

    def _load(self) -> Any:
        module_name, _, attribute = self.entry.partition(":")
        try:
            module = _import(module_name, self.root)
        except Exception as err:
            raise ValueError(
                f"policy {self.entry!r}: module {module_name!r} does not import: {type(err).__name__}: {err}"
            ) from err
        if self.root is None:
            self.root = _root(module)
        obj: Any = module
        for part in attribute.split("."):
            if not hasattr(obj, part):
                raise ValueError(f"policy {self.entry!r}: {module_name} has no {attribute!r}")
            obj = getattr(obj, part)
        return obj

    @property
    def object(self) -> Any:
        """The imported object (imported again in a process the maker was unpickled in)."""
        if self._object is None:
            self._object = self._load()
        return self._object

    def __getstate__(self) -> dict[str, Any]:
        return {"entry": self.entry, "root": self.root, "fingerprint": self.fingerprint, "_object": None}

    def __call__(self, scenario: Scenario) -> Any:
        return build(self.object, scenario)


def _import(module: str, root: str | None):
    """``importlib.import_module``; if the entry's module (or a package above it) is not
    found, it is looked for again in ``root`` (the folder it was found in when the maker
    was made) or else the current folder."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        missing = err.name or ""
        folder = root or os.getcwd()
        if not (module == missing or module.startswith(f"{missing}.")) or folder in sys.path:
            raise
        sys.path.append(folder)
        importlib.invalidate_caches()
        return importlib.import_module(module)


def _top(module) -> Path | None:
    """The file or folder of ``module``'s top-level module or package (a namespace package
    too), or None for a module without a file."""
    path = getattr(module, "__file__", None)
    if path is None:
        return None
    path = Path(path).resolve()
    depth = module.__name__.count(".") + (path.name == "__init__.py")
    return path.parents[depth - 1] if depth else path


def _root(module) -> str | None:
    """The ``sys.path`` folder ``module`` was found in, or None."""
    top = _top(module)
    return None if top is None else str(top.parent)


def _source_digest(module) -> str:
    """SHA-256 (16 hex digits) of the module's source file and of every ``.py`` file of
    its top-level package; ``"no-source"`` for a module without a file."""
    top = _top(module)
    if top is None:
        return "no-source"
    files = sorted({Path(module.__file__).resolve(), *(top.rglob("*.py") if top.is_dir() else ())})
    digest = hashlib.sha256()
    for path in files:
        digest.update(os.path.relpath(path, top.parent).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def is_entry(name: str) -> bool:
    """Whether ``name`` reads as an import entry ``module:Name`` (a colon, and no folder
    of that name)."""
    return ":" in name and not Path(name).is_dir()


def resolve(names: list[str]) -> dict[str, ControllerMaker | AgentMaker | ImportMaker]:
    """Policy makers by display name: controller names as they are, agent folders as
    ``agent <algo folder>/<run folder>`` (the zoo's layout, e.g. ``agent ppo/RigidRot-Reorient-v0_1``),
    import entries ``package.module:Name`` (:class:`ImportMaker`) as they are.

    Raises:
        ValueError: naming the entry, for one that is neither a controller, a folder nor an
            import entry, or an import entry that does not import.
    """
    makers: dict[str, ControllerMaker | AgentMaker | ImportMaker] = {}
    for name in names:
        if name in CONTROLLERS:
            makers[name] = ControllerMaker(name)
        elif Path(name).is_dir():
            folder = Path(name).resolve()
            makers[f"agent {folder.parent.name}/{folder.name}"] = AgentMaker(name)
        elif is_entry(name):
            makers[name] = ImportMaker(name)
        else:
            raise ValueError(
                f"policy {name!r} is neither a controller ({', '.join(CONTROLLERS)}), a run folder "
                "nor an importable package.module:Name"
            )
    return makers


def why_left_out(names: Sequence[str], scenario: Scenario, makers: Mapping[str, Any] | None = None) -> str:
    """Why the policies ``names`` (controller names, agents' display names, import entries)
    give no policy for ``scenario``, as ``rigidrot evaluate --compare`` and ``rigidrot bench
    control`` say it. ``makers`` (by name), where given, tells the import entries and the
    objects given to :func:`~rigidrot_gym.tools.bench.control.benchmark` from the agents."""
    makers = makers or {}

    def own(name: str) -> bool:  # a user's own policy: an import entry, an object
        maker = makers.get(name)
        if isinstance(maker, ImportMaker):
            return True
        return hasattr(maker, "predict") and not isinstance(maker, agents.Agent)

    controllers = [name for name in names if name in CONTROLLERS]
    users = [name for name in names if name not in CONTROLLERS and own(name)]
    others = [name for name in names if name not in CONTROLLERS and not own(name)]
    reasons = []
    if controllers:
        fit = [name for name, make in CONTROLLERS.items() if make(scenario) is not None]
        reasons.append(
            f"{', '.join(controllers)} cannot command the actuators of {scenario.id}; "
            f"the controllers that can: {', '.join(fit) or 'none'}"
        )
    if others:
        reasons.append(
            f"{', '.join(others)} on {scenario.id}: "
            "a trained agent runs only on the scenario it was trained on"
        )
    if users:
        reasons.append(f"{', '.join(users)} gave no policy (None) for {scenario.id}")
    return "; ".join(reasons)

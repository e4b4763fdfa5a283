"""Every scenario file in ``envs/`` becomes a Gymnasium id at ``import rigidrot_gym``.

Gymnasium ≥ 1.0 has no entry-point plugin hook, so the package registers its ids itself.
It does so without importing Gymnasium: the physics layer (``import rigidrot_gym.physics``)
must stay usable, and light, without it. If Gymnasium is already imported the ids are
registered at once; otherwise right after Gymnasium's own import finishes, by a one-shot
import hook (:class:`_AfterImport`). Either way ``gym.make("RigidRot/Reorient-v0")`` finds
them, whatever the order of ``import gymnasium`` and ``import rigidrot_gym``;
``gym.make("rigidrot_gym:RigidRot/Reorient-v0")`` imports the package on demand.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

from rigidrot_gym.attitude.scenario import builtin

ENTRY_POINT = "rigidrot_gym.attitude.env:AttitudeEnv"
VECTOR_ENTRY_POINT = "rigidrot_gym.attitude.vector_env:AttitudeVectorEnv"


def register_scenarios() -> list[str]:
    """Register the built-in scenarios with Gymnasium (once); return their ids."""
    import gymnasium as gym

    ids = []
    for scenario in builtin():
        if scenario.id not in gym.registry:
            gym.register(
                id=scenario.id,
                entry_point=ENTRY_POINT,
                vector_entry_point=VECTOR_ENTRY_POINT,
                # None: the env truncates itself at its scenario's limit, so that a scenario
                # passed to gym.make (or a file of one's own) sets it, not the id's
                max_episode_steps=None,
                kwargs={"scenario": scenario.id},
            )
        ids.append(scenario.id)
    return ids


class _Chained(importlib.abc.Loader):
    """``loader``, then ``after()`` once the module has executed."""

    def __init__(self, loader: importlib.abc.Loader, after: Callable[[], Any]) -> None:
        self.loader, self.after = loader, after

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        # The module keeps its own loader: nothing after the import sees this wrapper.
        module.__loader__ = module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        self.after()


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``after()`` right after the module ``name`` is first imported, then leaves
    ``sys.meta_path``. It finds nothing itself: it wraps the loader the other finders give."""

    def __init__(self, name: str, after: Callable[[], Any]) -> None:
        self.name, self.after = name, after

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _Chained(spec.loader, self.after)
        return spec


def register_when_gymnasium_loads() -> None:
    """Register the ids now if Gymnasium is imported, else as soon as it is."""
    if "gymnasium" in sys.modules:
        register_scenarios()
    elif not any(isinstance(f, _AfterImport) and f.name == "gymnasium" for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport("gymnasium", register_scenarios))

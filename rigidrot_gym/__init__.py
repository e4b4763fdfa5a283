"""rigidrot_gym: accurate quaternion integrators for rigid-body rotation, and a spacecraft
attitude-control Gymnasium environment built on them.

Layers, each importing only those below it:

* :mod:`rigidrot_gym.physics`: the rigid body and our integrators, the orbit environment,
  the sensors' and actuators' models (no Gymnasium), on floors of its own;
* :mod:`rigidrot_gym.engines` (foreign engines as methods) and :mod:`rigidrot_gym.render`
  (drawing with PyBullet), on top of physics;
* :mod:`rigidrot_gym.attitude`: the Gymnasium task, its envs and the SB3 adapter;
* :mod:`rigidrot_gym.control`: classical controllers and trained agents;
* :mod:`rigidrot_gym.tools`: the command line, the demo, the cross-check, the benchmarks.

Conventions are stated once, in :mod:`rigidrot_gym.physics.rotation.quaternion`. Importing the
package registers the environment ids of the scenario files (``RigidRot/Reorient-v0``,
...) with Gymnasium, as soon as Gymnasium is imported. The names below are importable from
here; the env classes and controllers are loaded on first use, so that
``import rigidrot_gym.physics`` imports no Gymnasium.
"""

from __future__ import annotations

import importlib
from typing import Any

from rigidrot_gym import engines  # noqa: F401  (registers the foreign engines as methods)
from rigidrot_gym.attitude.registration import register_when_gymnasium_loads
from rigidrot_gym.physics.rotation import inertia, integrators, quaternion
from rigidrot_gym.physics.rotation.exact import torque_free
from rigidrot_gym.physics.rotation.propagate import propagate
from rigidrot_gym.physics.rotation.trajectory import Trajectory

__version__ = "0.2.0"

# Loaded on first access (PEP 562): name -> module holding it.
_LAZY = {
    "AttitudeEnv": "rigidrot_gym.attitude.env",
    "AttitudeVectorEnv": "rigidrot_gym.attitude.vector_env",
    "AttitudeSB3VecEnv": "rigidrot_gym.attitude.sb3",
    "Scenario": "rigidrot_gym.attitude.scenario",
    "CONTROLLERS": "rigidrot_gym.control",
    "LQR": "rigidrot_gym.control",
    "PD": "rigidrot_gym.control",
    "QuaternionFeedback": "rigidrot_gym.control",
    "RateDamping": "rigidrot_gym.control",
    "SlidingMode": "rigidrot_gym.control",
}

__all__ = [
    "ENV_IDS",
    "Trajectory",
    "__version__",
    "inertia",
    "integrators",
    "propagate",
    "quaternion",
    "torque_free",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    if name == "ENV_IDS":
        from rigidrot_gym.attitude.scenario import builtin

        return [s.id for s in builtin()]
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'rigidrot_gym' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


register_when_gymnasium_loads()

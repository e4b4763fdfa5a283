"""The physics of the seeds, usable without Gymnasium: rigid-body rotation and its integrators,
and the orbit environment of a spacecraft, its actuators, sensors and estimator.

Floors, bottom up; each imports only the floors below it (``tests/test_layout.py``):

* :mod:`~rigidrot_gym.physics.plumbing`, the compiler's plumbing and nothing of the physics:
  :mod:`~rigidrot_gym.physics.plumbing.jit` (one source run as numpy or compiled by numba),
  :mod:`~rigidrot_gym.physics.plumbing.numba_compat` (numba's and llvmlite's internals it
  uses), :mod:`~rigidrot_gym.physics.plumbing.quiet` (C libraries' output kept off standard
  output) and :mod:`~rigidrot_gym.physics.plumbing.validation` (argument checks);
* :mod:`~rigidrot_gym.physics.rotation`, the rigid body: quaternions and vectors, inertia,
  Euler's equations, torque terms, the exact solution, the integrators, ``propagate`` and
  its ``Trajectory``, and beside them the translation that the Nyström methods share;
* :mod:`~rigidrot_gym.physics.environment`, the spacecraft's surroundings: the Earth, the
  orbit, the Sun and the geomagnetic field;
* :mod:`~rigidrot_gym.physics.actuators` (reaction wheels) and
  :mod:`~rigidrot_gym.physics.sensors` (gyro, star tracker, magnetometer, Sun sensors), side by
  side;
* :mod:`~rigidrot_gym.physics.estimation`: the multiplicative EKF of attitude and gyro bias.

The modules' paths before the floors (``rigidrot_gym.physics.quaternion``,
``rigidrot_gym.physics.integrators.base`` ...) still import, as the very same module objects:
``_MOVED`` maps each old name to its floor, and an import finder registers the module
under both names when either is imported first.

Nothing here imports Gymnasium, PyBullet, torch or matplotlib.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

from rigidrot_gym.physics.rotation.exact import torque_free
from rigidrot_gym.physics.rotation.propagate import propagate
from rigidrot_gym.physics.rotation.trajectory import Trajectory

__all__ = ["Trajectory", "propagate", "torque_free"]

# Every module of this layer at the commit before the floors (207f493), by its old name under
# rigidrot_gym.physics, and where it lives now; a package's submodules follow it
# (integrators.base is rotation.integrators.base). Read as data by the script that rewrote the
# imports, so keep it one literal.
_MOVED = {
    "jit": "plumbing.jit",
    "numba_compat": "plumbing.numba_compat",
    "quiet": "plumbing.quiet",
    "validation": "plumbing.validation",
    "quaternion": "rotation.quaternion",
    "vector": "rotation.vector",
    "inertia": "rotation.inertia",
    "dynamics": "rotation.dynamics",
    "torques": "rotation.torques",
    "elliptic": "rotation.elliptic",
    "exact": "rotation.exact",
    "integrators": "rotation.integrators",
    "propagate": "rotation.propagate",
    "trajectory": "rotation.trajectory",
    "extrapolation": "rotation.extrapolation",
    "nystrom": "rotation.nystrom",
    "linear": "rotation.linear",
    "rigid_body": "rotation.rigid_body",
    "heavy_top": "rotation.heavy_top",
    "earth": "environment.earth",
    "orbit": "environment.orbit",
    "sun": "environment.sun",
    "geomagnetic": "environment.geomagnetic",
    "reaction_wheels": "actuators.reaction_wheels",
    "gyro": "sensors.gyro",
    "star_tracker": "sensors.star_tracker",
    "magnetometer": "sensors.magnetometer",
    "sun_sensors": "sensors.sun_sensors",
    "mekf": "estimation.mekf",
}


def _new_name(fullname: str) -> str | None:
    """The module's name in its floor, for an old dotted name; None for any other."""
    if not fullname.startswith(__name__ + "."):
        return None
    head, _, tail = fullname.removeprefix(__name__ + ".").partition(".")
    if head not in _MOVED:
        return None
    return f"{__name__}.{_MOVED[head]}" + (f".{tail}" if tail else "")


class _OldNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old name as its module in the floors. Ahead of Python's own finders: once
    the old package name is registered, its ``__path__`` is the floor's folder, where they
    would otherwise find and run ``integrators/base.py`` a second time, as a copy."""

    def find_spec(self, fullname, path=None, target=None):
        new = _new_name(fullname)
        if new is None or importlib.util.find_spec(new) is None:
            return None  # not an old name, or no such module: Python's own error names it
        return importlib.machinery.ModuleSpec(fullname, self, origin=new)

    def create_module(self, spec):
        return None  # a placeholder, which exec_module swaps for the real module

    def exec_module(self, module: ModuleType) -> None:
        # Python's import returns what sys.modules holds under the name once this returns:
        # the real module, whose __spec__ and __name__ stay those of its floor.
        sys.modules[module.__name__] = importlib.import_module(module.__spec__.origin)


if not any(isinstance(finder, _OldNames) for finder in sys.meta_path):
    sys.meta_path.insert(0, _OldNames())

# The modules this file has loaded are registered under their old names now, so that an import
# of rigidrot_gym.physics.propagate finds the module without binding it over the function here.
for _old, _new in _MOVED.items():
    if f"{__name__}.{_new}" in sys.modules:
        sys.modules.setdefault(f"{__name__}.{_old}", sys.modules[f"{__name__}.{_new}"])
del _old, _new


def __getattr__(name: str) -> ModuleType:
    """``rigidrot_gym.physics.quaternion`` and the other old names as attributes."""
    if name in _MOVED:
        return importlib.import_module(f"{__name__}.{name}")  # binds it here, as an import does
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

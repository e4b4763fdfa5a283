"""Integration methods, chosen by name.

Each method lives in its own module, whose docstring cites its source and states its
order, its torque evaluations per step and what it conserves.

Examples:
    >>> from rigidrot_gym import integrators
    >>> integrators.names()[:3]
    ['euler', 'semi_implicit', 'rk4']
"""

from __future__ import annotations

from rigidrot_gym.physics.rotation.integrators import (
    euler,
    exact,
    nielsen_krenk,
    pcdm,
    rk4,
    rk4_dcm,
    rkmk4,
    rkn,
    semi_implicit,
    strang,
    yoshida4,
)
from rigidrot_gym.physics.rotation.integrators.base import ComponentMethod, ConvergenceError, Method

_REGISTRY: dict[str, Method] = {}


def register(method: Method) -> Method:
    """Add ``method`` to the registry under ``method.name``."""
    if not isinstance(method, Method):
        raise ValueError(f"register takes a Method, got {method!r}")
    if method.name in _REGISTRY:
        raise ValueError(f"an integrator named {method.name!r} is already registered")
    _REGISTRY[method.name] = method
    return method


def names() -> list[str]:
    """Names of the registered methods, in registration order."""
    return list(_REGISTRY)


def get(name: str) -> Method:
    """The method registered as ``name``.

    Raises:
        ValueError: for an unknown name; the message lists the valid names.
    """
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown integrator {name!r}; valid names: {', '.join(names())}") from None


for _module in (
    euler,
    semi_implicit,
    rk4,
    rk4_dcm,
    rkn,
    pcdm,
    exact,
    nielsen_krenk,
    strang,
    yoshida4,
    rkmk4,
):
    register(_module.METHOD)

__all__ = ["ComponentMethod", "ConvergenceError", "Method", "get", "names", "register"]

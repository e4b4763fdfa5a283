"""Argument checks shared by the public entry points: each raises a ``ValueError`` that
names the argument and shows the offending value."""

from __future__ import annotations

import numbers

import numpy as np

# |q| may differ from 1 by this much (e.g. a quaternion typed with few digits); it is
# then normalised. Anything further off is a mistake worth an error.
UNIT_TOLERANCE = 1e-6


def vectors(a, name: str, size: int) -> np.ndarray:
    """``a`` as a finite float array of shape (..., size)."""
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim == 0 or arr.shape[-1] != size:
        raise ValueError(f"{name} must have shape (..., {size}), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr.tolist()}")
    return arr


def unit_quaternions(q, name: str = "q0") -> np.ndarray:
    """``q`` as (..., 4) unit quaternions; within :data:`UNIT_TOLERANCE` of unit norm
    they are normalised, further off they raise."""
    q = vectors(q, name, 4)
    off = np.abs(np.linalg.norm(q, axis=-1) - 1.0)
    if np.any(off > UNIT_TOLERANCE):
        first = q.reshape(-1, 4)[int(np.argmax(off.reshape(-1)))]
        raise ValueError(
            f"{name} must be a unit quaternion, got {first.tolist()} with norm {np.linalg.norm(first):.9g}; "
            "normalise it (rigidrot_gym.physics.quaternion.normalize)"
        )
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def scalar(x, name: str, positive: bool = False) -> float:
    """``x`` as a finite float (positive if asked)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not np.isfinite(x) or (positive and x <= 0):
        need = "a positive finite number" if positive else "a finite number"
        raise ValueError(f"{name} must be {need}, got {x!r}")
    return float(x)


def count(x, name: str, minimum: int, maximum: int | None = None) -> int:
    """``x`` as an int ≥ ``minimum`` (and ≤ ``maximum`` if given)."""
    integral = isinstance(x, numbers.Integral) and not isinstance(x, bool | np.bool_)
    if maximum is None:
        if not integral or x < minimum:
            raise ValueError(f"{name} must be an integer ≥ {minimum}, got {x!r}")
    elif not integral or not minimum <= x <= maximum:
        raise ValueError(f"{name} must be an integer in [{minimum}, {maximum}], got {x!r}")
    return int(x)

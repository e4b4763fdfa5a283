"""Checks of what callers hand the envs: actions, reset options and seeds.

Each raises a ``ValueError`` that names the argument, shows its value and says what is
expected, before the env changes anything (validate first, then mutate).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from rigidrot_gym.physics.plumbing.validation import UNIT_TOLERANCE

RESET_OPTIONS = ("attitude", "rate", "target")
# Action dtypes: every real one (float16 and the small integers are members of a float32 Box).
_REAL_KINDS = "biuf"
# Passed to the compiled kernels as they are (each dtype is compiled once); others become float64.
_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def actions(action: Any, shape: tuple[int, ...], name: str = "action") -> np.ndarray:
    """``action`` as a real array of exactly ``shape`` (float32 and float64 as given,
    other real dtypes as float64); finiteness is checked by the kernels that read it.

    Raises:
        ValueError: for another shape (no reshaping: (1, 3) and (3, 1) are not (3,)), or a
            complex, string or object array.
    """
    try:
        arr = np.asarray(action)
    except (TypeError, ValueError):  # ragged nested sequences
        raise ValueError(
            f"{name} must be an array of shape {shape} of real numbers, got {action!r}"
        ) from None
    if arr.dtype.kind not in _REAL_KINDS:
        raise ValueError(
            f"{name} must be an array of shape {shape} of real numbers (float or integer), "
            f"got {action!r} of dtype {arr.dtype}"
        )
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got shape {arr.shape}: {action!r}")
    return arr if arr.dtype in _KERNEL_DTYPES else arr.astype(np.float64)


def _real_vector(value: Any, size: int, name: str, expected: str) -> np.ndarray:
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        arr = np.asarray(None)
    if arr.dtype.kind not in "iuf" or arr.shape != (size,) or not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return arr.astype(np.float64)


def reset_options(options: Any) -> tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]:
    """The fixed start attitude, body rates and target of ``options`` (each ``None`` if
    not given): ``{"attitude": [w, x, y, z], "rate": [ωx, ωy, ωz] (rad/s, body frame),
    "target": [w, x, y, z]}``, any subset.

    Raises:
        ValueError: for options that are not a dict, an unknown key or an invalid value.
    """
    if options is None:
        return None, None, None
    if not isinstance(options, dict):
        raise ValueError(
            f"options must be a dict with keys among {list(RESET_OPTIONS)} or None, got {options!r}"
        )
    unknown = sorted((str(k) for k in set(options) - set(RESET_OPTIONS)), key=str)
    if unknown:
        raise ValueError(f"unknown reset option(s) {unknown}; valid: 'attitude', 'rate', 'target'")
    fixed = []
    for key in RESET_OPTIONS:
        if key not in options:
            fixed.append(None)
            continue
        value, name = options[key], f"options[{key!r}]"
        if key == "rate":
            fixed.append(_real_vector(value, 3, name, "finite: 3 real numbers [ωx, ωy, ωz] in rad/s"))
            continue
        q = _real_vector(value, 4, name, "a unit quaternion [w, x, y, z] (4 finite real numbers)")
        norm = np.linalg.norm(q)
        if abs(norm - 1.0) > UNIT_TOLERANCE:
            raise ValueError(
                f"{name} must be a unit quaternion [w, x, y, z], got {value!r} with norm {norm:.9g}"
            )
        fixed.append(q / norm)
    return fixed[0], fixed[1], fixed[2]


def seed(value: Any, name: str = "seed") -> int | None:
    """A seed for ``np.random.default_rng``: ``None`` or an integer ≥ 0.

    Raises:
        ValueError: otherwise (Gymnasium raises its own ``Error`` later, after re-seeding
            nothing; checking first keeps a failing reset from changing anything).
    """
    if value is None:
        return None
    if not isinstance(value, numbers.Integral) or isinstance(value, bool | np.bool_) or value < 0:
        raise ValueError(f"{name} must be None or an integer ≥ 0, got {value!r}")
    return int(value)


def row_seeds(value: Any, n: int) -> list[int | None] | None:
    """Per-row seeds of a vector env: ``None`` (keep the generators), an integer s (row i
    gets s + i, as ``SyncVectorEnv`` seeds its envs) or a sequence of ``n`` seeds.

    Raises:
        ValueError: for anything else, naming ``seed``.
    """
    if value is None:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_):
        first = seed(value)
        return [first + i for i in range(n)]
    if isinstance(value, Sequence | np.ndarray) and not isinstance(value, str | bytes):
        seeds = list(value)
        if len(seeds) != n:
            raise ValueError(f"seed must be an integer, None or a list of {n} seeds, got {len(seeds)} seeds")
        return [seed(s, f"seed[{i}]") for i, s in enumerate(seeds)]
    raise ValueError(f"seed must be an integer ≥ 0, None or a list of {n} seeds, got {value!r}")

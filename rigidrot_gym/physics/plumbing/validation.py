"""Argument checks shared by the public entry points: each raises a ``ValueError`` that
names the argument, shows the offending value and says what is expected.

Numbers are real: strings (even ``"1.5"``), complex numbers, booleans where a number is
meant, objects and ragged nested sequences are refused rather than converted, so that
nothing reaches numpy's or numba's own errors (which name no argument) or, worse, is
silently reinterpreted (``float(True)``, a string of digits).
"""

from __future__ import annotations

import numbers

import numpy as np

# |q| may differ from 1 by this much (e.g. a quaternion typed with few digits); it is
# then normalised. Anything further off is a mistake worth an error.
UNIT_TOLERANCE = 1e-6

# The largest count (of steps, of sub-steps in a run) the library accepts: every integer
# up to 2**53 is exactly a float64, so a step index n and the time t0 + n·h formed from it
# stay exact, and the compiled kernels' int64 counters are far from overflowing. A count
# converted to a C integer beyond int64 would otherwise wrap (a loop that never runs) or
# raise numpy's OverflowError.
MAX_COUNT = 2**53

# Longest repr of an offending value shown in a message, characters.
_SHOWN = 120


def show(value) -> str:
    """``repr(value)``, shortened to a readable length for an error message."""
    text = repr(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 5] + " ...)"


def bound(n: int) -> str:
    """An integer bound as a message shows it: large powers of two as ``2**k``."""
    if n >= 2**20 and n & (n - 1) == 0:
        return f"2**{n.bit_length() - 1}"
    return str(n)


def _is_real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool | np.bool_)


def floats(a, name: str) -> np.ndarray:
    """``a`` (array-like of real numbers, any shape) as a float64 array.

    Raises:
        ValueError: for strings, complex numbers, booleans, ``None`` and other objects,
            ragged nested sequences, and integers too large for a float.
    """
    if isinstance(a, np.ndarray) and a.dtype.kind in "iuf":
        return a.astype(np.float64, copy=False)
    try:
        arr = np.asarray(a)
    except (ValueError, TypeError):  # numpy refuses ragged nesting
        shown = show(a)
        raise ValueError(f"{name} must be a regular (not ragged) array of numbers, got {shown}") from None
    kind = arr.dtype.kind
    if kind in "iuf":
        return arr.astype(np.float64, copy=False)
    if kind == "O" and all(_is_real(x) for x in arr.reshape(-1)):
        try:
            return arr.astype(np.float64)
        except OverflowError:
            raise ValueError(f"{name} must be finite, got {show(a)} (too large for a float)") from None
    what = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "bytes"}.get(kind, "objects")
    raise ValueError(f"{name} must be real numbers, got {what}: {show(a)}")


def finite_floats(a, name: str) -> np.ndarray:
    """``a`` as a float64 array (:func:`floats`) whose every value is finite."""
    arr = floats(a, name)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {show(arr.tolist())}")
    return arr


def vectors(a, name: str, size: int) -> np.ndarray:
    """``a`` as a finite float array of shape (..., size)."""
    arr = floats(a, name)
    if arr.ndim == 0 or arr.shape[-1] != size:
        raise ValueError(f"{name} must have shape (..., {size}), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {show(arr.tolist())}")
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
            "normalise it (rigidrot_gym.physics.rotation.quaternion.normalize)"
        )
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def scalar(x, name: str, positive: bool = False) -> float:
    """``x`` (a real number or a 0-d real array) as a finite float (positive if asked)."""
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iuf":
        x = x.item()
    try:
        ok = _is_real(x) and bool(np.isfinite(float(x))) and (not positive or x > 0)
    except OverflowError:  # an int beyond the float range
        ok = False
    if not ok:
        need = "a positive finite number" if positive else "a finite number"
        raise ValueError(f"{name} must be {need}, got {show(x)}")
    return float(x)


def count(x, name: str, minimum: int, maximum: int | None = None) -> int:
    """``x`` as an int in [``minimum``, ``maximum``] (``None``: :data:`MAX_COUNT`).

    Integers only (Python's or numpy's, or a 0-d integer array): not ``True``, not
    ``2.0``. The upper bound keeps the value convertible to the int64 and float64 the
    compiled code uses.
    """
    top = MAX_COUNT if maximum is None else maximum
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "iu":
        x = x.item()
    if not isinstance(x, numbers.Integral) or isinstance(x, bool | np.bool_) or not minimum <= x <= top:
        raise ValueError(f"{name} must be an integer in [{bound(minimum)}, {bound(top)}], got {show(x)}")
    return int(x)


def whole(x, name: str, minimum: int, maximum: int | None = None) -> int:
    """Like :func:`count`, but a float with an integer value (``100.0``) is accepted too:
    for options that travel as floats (e.g. an integrator's ``max_iter``)."""
    if _is_real(x) and not isinstance(x, numbers.Integral):
        value = float(x)
        top = MAX_COUNT if maximum is None else maximum
        if not (value.is_integer() and minimum <= value <= top):
            raise ValueError(f"{name} must be an integer in [{bound(minimum)}, {bound(top)}], got {show(x)}")
        return int(value)
    return count(x, name, minimum, maximum)


def boolean(x, name: str) -> bool:
    """``x`` as a bool: only ``True`` or ``False`` (numpy's too), never a truthy value
    such as ``"yes"``, ``"False"`` or ``1``."""
    if not isinstance(x, bool | np.bool_):
        raise ValueError(f"{name} must be True or False, got {show(x)}")
    return bool(x)


def one_of(x, name: str, choices: tuple[str, ...]) -> str:
    """``x`` as one of the strings ``choices``."""
    if not isinstance(x, str) or x not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {show(x)}")
    return x


def generator(rng, name: str = "rng") -> np.random.Generator:
    """``rng`` as it is, if a ``numpy.random.Generator`` (not None, a seed or a legacy
    ``RandomState``: the draws a function documents are the Generator's)."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{name} must be a numpy.random.Generator, got {show(rng)}")
    return rng


def batch_shape(**shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The common batch shape of the named arguments' leading shapes, e.g.
    ``batch_shape(q0=(2,), omega0=(3,))``; the error names every argument and shape."""
    try:
        return np.broadcast_shapes(*shapes.values())
    except ValueError:
        listed = ", ".join(f"{name} {shape}" for name, shape in shapes.items())
        raise ValueError(f"batch shapes do not broadcast together: {listed}") from None


def end_time(t0: float, dt: float, steps: int) -> float:
    """t0 + steps·dt, which must be finite (a huge ``dt`` or ``steps`` would make times inf)."""
    end = t0 + steps * dt
    if not np.isfinite(end):
        raise ValueError(
            f"the end time t0 + steps·dt must be finite, got t0 = {t0!r}, steps = {steps}, dt = {dt!r}"
        )
    return end


def broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether an array of ``shape`` broadcasts to exactly ``target``."""
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False

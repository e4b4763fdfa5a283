"""The whole state of an env as plain values, to compare an env before and after a call.

Everything the env object holds is walked: arrays (compared byte for byte, NaN included),
random generators (their bit generators' states), counters, flags, nested objects of the
attitude package and Gymnasium's spaces. Left out: the batch's staging and scratch arrays,
which each step writes before it reads them (``_staged``, ``_params``, ``_scratch``,
``_commands``, ``_sensed``, ``_normals``, ``_estimator``:
:class:`rigidrot_gym.attitude.data.Work`), and ``_sources``, the
memory addresses of the generators (compared by their states), which differ between an
object and its copy by design.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_SCRATCH = {"_staged", "_params", "_scratch", "_commands", "_sensed", "_normals", "_estimator", "_sources"}
_WALKED = ("rigidrot_gym.attitude", "gymnasium.spaces", "gymnasium.vector", "stable_baselines3")


def state(obj: Any, _seen: set[int] | None = None) -> Any:
    """``obj`` (an env, unwrapped, or any part of one) as nested tuples of plain values."""
    seen = set() if _seen is None else _seen
    if isinstance(obj, np.ndarray):
        return ("array", obj.dtype.str, obj.shape, obj.tobytes())
    if isinstance(obj, np.random.Generator):
        return ("rng", repr(obj.bit_generator.state))
    if obj is None or isinstance(obj, bool | int | float | str | bytes | np.generic):
        return obj
    if isinstance(obj, list | tuple):
        return tuple(state(v, seen) for v in obj)
    if isinstance(obj, dict):
        return tuple((repr(k), state(v, seen)) for k, v in sorted(obj.items(), key=lambda kv: repr(kv[0])))
    if id(obj) in seen:
        return ("seen", type(obj).__name__)
    seen.add(id(obj))
    module = type(obj).__module__
    if hasattr(obj, "__dict__") and module.startswith(_WALKED):
        items = {k: v for k, v in vars(obj).items() if k not in _SCRATCH}
        return (type(obj).__name__, state(items, seen))
    return ("object", type(obj).__name__)


def assert_same_state(before: Any, after: Any, path: str = "env") -> None:
    """Assert two :func:`state` values are equal, naming the first difference."""
    if type(before) is not type(after):
        raise AssertionError(f"{path}: {type(before).__name__} became {type(after).__name__}")
    if isinstance(before, tuple):
        if len(before) != len(after):
            raise AssertionError(f"{path}: {len(before)} entries became {len(after)}")
        if before and before[0] == "array":
            assert before == after, f"{path}: array changed"
            return
        for i, (a, b) in enumerate(zip(before, after, strict=True)):
            label = a[0] if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], str) else i
            assert_same_state(a, b, f"{path}.{label}")
        return
    assert before == after, f"{path}: {before!r} became {after!r}"


def shared_arrays(obj: Any) -> list[tuple[str, str]]:
    """Pairs of array attributes of ``obj`` (one level) that share memory: a copy would
    separate them."""
    arrays = [(k, v) for k, v in vars(obj).items() if isinstance(v, np.ndarray) and v.size]
    for k, v in vars(obj).items():
        if isinstance(v, tuple | list):
            arrays += [(f"{k}[{i}]", a) for i, a in enumerate(v) if isinstance(a, np.ndarray) and a.size]
    return [(a, b) for i, (a, x) in enumerate(arrays) for b, y in arrays[i + 1 :] if np.shares_memory(x, y)]

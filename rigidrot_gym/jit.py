"""Write a numerical function once, run it as numpy code or as compiled numba code.

Every integrator, torque model and quaternion primitive in rigidrot_gym is written
*component-wise*: a quaternion is a tuple ``(w, x, y, z)`` and a 3-vector a tuple
``(x, y, z)`` whose entries are either floats or equally shaped numpy arrays.
Decorated with :func:`jitable` (numba's ``register_jitable``), such a function

* runs as plain Python on tuples of ``(N,)`` arrays: vectorised over a batch, so a
  user's Python torque callable can be evaluated once per stage for all bodies; and
* compiles into the numba kernels, which call it on one body's scalar components.

Both paths execute the same source, so there is exactly one implementation of each
method. Branches on values must go through :func:`select`, :func:`any_true` or
:func:`all_true`, which mean the same thing for a scalar and for an array.
"""

from __future__ import annotations

import numpy as np
from numba.extending import overload, register_jitable

jitable = register_jitable


def select(condition, if_true, if_false):
    """Element-wise ``if_true if condition else if_false`` (``np.where`` for arrays)."""
    return np.where(condition, if_true, if_false)


def any_true(condition) -> bool:
    """True when ``condition`` holds for at least one element."""
    return bool(np.any(condition))


def all_true(condition) -> bool:
    """True when ``condition`` holds for every element."""
    return bool(np.all(condition))


@overload(select)
def _select_scalar(condition, if_true, if_false):
    def impl(condition, if_true, if_false):
        return if_true if condition else if_false

    return impl


@overload(any_true)
def _any_true_scalar(condition):
    def impl(condition):
        return bool(condition)

    return impl


@overload(all_true)
def _all_true_scalar(condition):
    def impl(condition):
        return bool(condition)

    return impl

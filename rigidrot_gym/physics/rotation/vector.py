"""Component-wise 3-vector algebra on tuples ``(x, y, z)`` (see :mod:`rigidrot_gym.physics.plumbing.jit`).

Entries are floats (inside compiled kernels) or equally shaped arrays (vectorised
numpy path). Only what the dynamics needs; batched ``(..., 3)`` array functions for
users live in :mod:`rigidrot_gym.physics.rotation.quaternion`.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.physics.plumbing.jit import jitable


@jitable
def add(a, b):
    """a + b."""
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@jitable
def sub(a, b):
    """a - b."""
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@jitable
def scale(s, a):
    """s a for a scalar (or per-body) factor s."""
    return (s * a[0], s * a[1], s * a[2])


@jitable
def axpy(s, a, b):
    """s a + b."""
    return (s * a[0] + b[0], s * a[1] + b[1], s * a[2] + b[2])


@jitable
def mul(a, b):
    """Element-wise product, e.g. a diagonal inertia times a vector."""
    return (a[0] * b[0], a[1] * b[1], a[2] * b[2])


@jitable
def div(a, b):
    """Element-wise quotient, e.g. a vector divided by a diagonal inertia."""
    return (a[0] / b[0], a[1] / b[1], a[2] / b[2])


@jitable
def dot(a, b):
    """a · b."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@jitable
def cross(a, b):
    """a × b."""
    return (
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    )


@jitable
def norm(a):
    """|a|."""
    return np.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2])


@jitable
def row3(a, i):
    """Row i of a (N, ≥3) array as a 3-tuple."""
    return (a[i, 0], a[i, 1], a[i, 2])


@jitable
def row4(a, i):
    """Row i of a (N, ≥4) array as a 4-tuple (a quaternion)."""
    return (a[i, 0], a[i, 1], a[i, 2], a[i, 3])

"""Domain randomisation of a body: inertia, actuator limits and start ranges, from
uniforms and normals drawn at reset (:func:`rigidrot_gym.attitude.starts.start_states`).

Every randomised inertia is a valid tensor: positive principal moments that satisfy the
triangle inequality I_a + I_b ≥ I_c (the moments of any real mass distribution do).
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.physics import quaternion as quat
from rigidrot_gym.physics.jit import jitable


@jitable
def spread(nominal, fraction, u):
    """nominal × (1 + fraction (2u − 1)): uniform within ±``fraction`` of ``nominal``
    (scalars, or arrays broadcast against uniforms ``u`` on [0, 1))."""
    return nominal * (1.0 + fraction * (2.0 * u - 1.0))


def scaled_moments(moments: np.ndarray, fraction: float, u: np.ndarray) -> np.ndarray:
    """Principal moments (R, 3) within ±``fraction`` of ``moments`` (3,) by uniforms
    ``u`` (R, 3), drawn back towards ``moments`` just as far as the triangle inequality
    needs.

    The moments m(s) = m ⊙ (1 + s δ), δ = fraction (2u − 1), make each deficit
    g_c(s) = m_a(s) + m_b(s) − m_c(s) linear in s; s is the largest value in [0, 1] that
    keeps all three g_c ≥ 0 (s = 0, the nominal body, satisfies them).
    """
    m = np.asarray(moments, dtype=np.float64)
    delta = fraction * (2.0 * np.asarray(u) - 1.0)
    # Written out rather than as products with a ±1 matrix: a matrix product's summation
    # order depends on the batch size, and a vector env's rows must repeat single envs.
    deficit = m.sum() - 2.0 * m  # g_c(0) ≥ 0 for a valid body
    dm = delta * m
    slope = dm.sum(axis=-1, keepdims=True) - 2.0 * dm  # dg_c/ds, (R, 3)
    # Clamp at 0: a nominal body on the boundary (a thin plate) keeps the side it is on.
    # A tiny fraction gives a tiny slope and an infinite limit: s = 1, as it should.
    with np.errstate(over="ignore"):
        limit = np.where(slope < 0.0, np.maximum(deficit, 0.0) / np.where(slope < 0.0, -slope, 1.0), np.inf)
    s = np.minimum(1.0, limit.min(axis=-1, initial=np.inf))[:, None]
    return m * (1.0 + s * delta)


def turned_axes(
    principal: np.ndarray, max_angle: float, axis_normals: np.ndarray, u: np.ndarray
) -> np.ndarray:
    """Principal frames (R, 4) turned from ``principal`` (4,) by an angle uniform in
    [0, ``max_angle``] (rad, uniforms ``u`` (R,)) about a uniform axis (normals
    ``axis_normals`` (R, 3)), turning the body-frame inertia J = B diag(m) Bᵀ so that it
    gains products of inertia."""
    axis = axis_normals / np.linalg.norm(axis_normals, axis=-1, keepdims=True)
    turn = quat.from_rotvec((max_angle * np.asarray(u))[:, None] * axis)
    return quat.multiply(turn, principal)

"""Classic RK4 on (R, ω) with a direction-cosine (rotation) matrix for the attitude.

    Ṙ = R [ω]×  (each row r of R moves as ṙ = r × ω),   ω̇ = I⁻¹(τ − ω × Iω),

RK4 stages as in :mod:`rk4`; after the step R is replaced by its nearest rotation (the
orthogonal polar factor, by Newton's iteration R ← ½(R + R⁻ᵀ), quadratically
convergent) — not by normalising its columns one by one as seed 004 does, which
leaves them non-orthogonal. Torques see the attitude of each stage's matrix, as the
quaternion on the side of the step's starting q (sign-continuous, like the trajectory).

Source: Sasaki (2019) ``runge_kutta`` (seed 004), with its missing ``l4`` stage and
column-wise normalisation corrected. Order 4. Torque evaluations per step: 4.
Conserves nothing exactly; R stays a rotation to round-off.
"""

import numpy as np

from rigidrot_gym.physics.plumbing.jit import all_true, jitable, select
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.dynamics import angular_acceleration
from rigidrot_gym.physics.rotation.integrators.base import ComponentMethod
from rigidrot_gym.physics.rotation.quaternion import qdot, qfrom_matrix, qscale, qto_matrix

# Newton's polar iteration from an RK4-perturbed rotation converges in 2-3 iterations;
# the cap only guards against a non-finite state.
_POLAR_MAX_ITER = 20
_POLAR_TOL = 1e-15


@jitable
def _rows(m):
    return (m[0], m[1], m[2]), (m[3], m[4], m[5]), (m[6], m[7], m[8])


@jitable
def _matrix(a, b, c):
    return (a[0], a[1], a[2], b[0], b[1], b[2], c[0], c[1], c[2])


@jitable
def _axpy9(s, x, y):
    return (
        s * x[0] + y[0],
        s * x[1] + y[1],
        s * x[2] + y[2],
        s * x[3] + y[3],
        s * x[4] + y[4],
        s * x[5] + y[5],
        s * x[6] + y[6],
        s * x[7] + y[7],
        s * x[8] + y[8],
    )


@jitable
def _max_abs9(x):
    m = np.abs(x[0])
    for k in range(1, 9):
        m = np.maximum(m, np.abs(x[k]))
    return m


@jitable
def _aligned(q, reference):
    """±q, whichever lies on the side of ``reference`` (q·reference ≥ 0)."""
    return qscale(select(qdot(q, reference) < 0.0, -1.0, 1.0), q)


@jitable
def _rates(t, m, w, q0, inertia, torque, p):
    """(Ṙ, ω̇) at stage matrix m; the torque sees m's quaternion with q0's sign.

    A matrix fixes its quaternion only up to sign, and the largest-component rule of
    :func:`qfrom_matrix` picks either: a torque that depends on the sign (τ = −K q_vec)
    must see the trajectory's own, continuous quaternion, as every other method gives it.
    """
    a, b, c = _rows(m)
    m_dot = _matrix(vec.cross(a, w), vec.cross(b, w), vec.cross(c, w))
    q = _aligned(qfrom_matrix(m), q0)
    return m_dot, angular_acceleration(inertia, w, torque(t, q, w, p))


@jitable
def _nearest_rotation(m):
    """Orthogonal polar factor of m: iterate m ← ½(m + m⁻ᵀ), m⁻ᵀ = cofactor(m)/det(m)."""
    for _ in range(_POLAR_MAX_ITER):
        a, b, c = _rows(m)
        bc = vec.cross(b, c)
        cofactor = _matrix(bc, vec.cross(c, a), vec.cross(a, b))
        m_next = _axpy9(0.5 / vec.dot(a, bc), cofactor, _axpy9(-0.5, m, m))
        change = _axpy9(-1.0, m, m_next)
        m = m_next
        if all_true(_max_abs9(change) <= _POLAR_TOL):
            break
    return m


@jitable
def step(n, t, h, q, w, s, inertia, torque, potential, p, opts):
    m = qto_matrix(q)
    half = 0.5 * h
    km1, kw1 = _rates(t, m, w, q, inertia, torque, p)
    km2, kw2 = _rates(t + half, _axpy9(half, km1, m), vec.axpy(half, kw1, w), q, inertia, torque, p)
    km3, kw3 = _rates(t + half, _axpy9(half, km2, m), vec.axpy(half, kw2, w), q, inertia, torque, p)
    km4, kw4 = _rates(t + h, _axpy9(h, km3, m), vec.axpy(h, kw3, w), q, inertia, torque, p)
    sixth = h / 6.0
    m1 = _axpy9(sixth, _axpy9(2.0, _axpy9(1.0, km2, km3), _axpy9(1.0, km1, km4)), m)
    w1 = vec.axpy(sixth, vec.axpy(2.0, vec.add(kw2, kw3), vec.add(kw1, kw4)), w)
    return _aligned(qfrom_matrix(_nearest_rotation(m1)), q), w1, s, 0.0


METHOD = ComponentMethod(
    name="rk4_dcm",
    step=step,
    order=4,
    torque_evals=4,
    source="Sasaki (2019): RK4 with a direction-cosine matrix, polar re-orthonormalisation",
)

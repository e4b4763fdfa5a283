"""Runge–Kutta–Nyström on Mandre's second-order quaternion ODE.

    q̈ = q̇ ⊗ q* ⊗ q̇ + ½ q ⊗ (0, I⁻¹(τ − ω × Iω)),   ω = 2 vec(q* ⊗ q̇)
    q₁ = q₀ + h q̇₀ + h²/6 (k₁ + k₂ + k₃),   q̇₁ = q̇₀ + h/6 (k₁ + 2k₂ + 2k₃ + k₄)
    k₁ = q̈(q₀, q̇₀, t);  k₂ = q̈(q₀ + h/2 q̇₀ + h²/8 k₁, q̇₀ + h/2 k₁, t + h/2)
    k₃ = q̈(q₀ + h/2 q̇₀ + h²/8 k₁, q̇₀ + h/2 k₂, t + h/2)
    k₄ = q̈(q₀ + h q̇₀ + h²/2 k₃, q̇₀ + h k₃, t + h)

Source: Mandre (2008), §6; the step is :func:`rigidrot_gym.physics.rotation.nystrom.nystrom_step`.
Order 4. Torque evaluations per step: 4. Conserves nothing exactly.

The step keeps neither |q| = 1 nor q · q̇ = 0. Option ``project_every`` (default 1)
sets how often both are restored (q ← q/|q|, q̇ ← q̇ − (q·q̇) q): every step costs a
square root and keeps the state on the manifold; the seed's "every ~1000 steps" is
cheaper, but then |q| − 1 drifts at the method's truncation level between projections
(visible in ``Trajectory.norm_error``). Between projections the state carries the
radial rate as ``s``, the scalar part of 2 q⁻¹ ⊗ q̇, so q̇ = ½ q ⊗ (s, ω) exactly.
"""

from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.plumbing.validation import MAX_COUNT
from rigidrot_gym.physics.rotation.dynamics import angular_acceleration
from rigidrot_gym.physics.rotation.integrators.base import ComponentMethod
from rigidrot_gym.physics.rotation.nystrom import nystrom_step
from rigidrot_gym.physics.rotation.quaternion import qaxpy, qconj, qdot, qmul, qmul_vec, qnormalize, qscale


@jitable
def quaternion_acceleration(t, q, qd, args):
    """q̈ = q̇ ⊗ q* ⊗ q̇ + ½ q ⊗ (0, I⁻¹(τ − ω × Iω)), ω = 2 vec(q* ⊗ q̇); args = (I, torque, p)."""
    inertia, torque, p = args
    a = qmul(qconj(q), qd)
    w = (2.0 * a[1], 2.0 * a[2], 2.0 * a[3])
    w_dot = angular_acceleration(inertia, w, torque(t, q, w, p))
    return qaxpy(1.0, qmul(qd, a), qmul_vec(qscale(0.5, q), w_dot))


@jitable
def project(q, qd):
    """Restore |q| = 1 and q · q̇ = 0: q ← q/|q|, q̇ ← q̇ − (q·q̇) q."""
    q = qnormalize(q)
    return q, qaxpy(-qdot(q, qd), q, qd)


@jitable
def step(n, t, h, q, w, s, inertia, torque, potential, p, opts):
    qd = qscale(0.5, qaxpy(s, q, qmul_vec(q, w)))
    q1, qd1 = nystrom_step(quaternion_acceleration, (inertia, torque, p), t, h, q, qd, qaxpy)
    if (n + 1) % int(opts[0]) == 0:
        q1, qd1 = project(q1, qd1)
    # (s, ω) = 2 q⁻¹ ⊗ q̇ with q⁻¹ = q*/|q|².
    r = qscale(2.0 / qdot(q1, q1), qmul(qconj(q1), qd1))
    return q1, (r[1], r[2], r[3]), r[0], 0.0


METHOD = ComponentMethod(
    name="rkn",
    step=step,
    order=4,
    torque_evals=4,
    source="Mandre (2008) §6: Runge–Kutta–Nyström on the quaternion's second-order ODE",
    options={"project_every": 1},
    # Any cadence up to the longest run; beyond 2**53 the step index n could not reach it.
    integers={"project_every": (1, MAX_COUNT)},
)

"""Runge–Kutta–Munthe-Kaas of order 4: classic RK4 in the Lie algebra of SO(3).

The attitude is written q(t) = q₀ ⊗ exp(θ(t)/2) with a body-frame rotation vector θ,
which obeys θ̇ = dexp⁻¹(ω) = ω + ½ θ × ω + (1/12) θ × (θ × ω) + O(θ⁴) (the series
truncated after the θ² term suffices for order 4). RK4 runs on (θ, ω) from θ = 0:

    Θ_i = h Σ_j a_ij F_j,  q_i = q₀ ⊗ exp(Θ_i/2),  ω_i = ω₀ + h Σ_j a_ij W_j,
    F_i = dexp⁻¹_{Θ_i}(ω_i),  W_i = I⁻¹(τ(t + c_i h, q_i, ω_i) − ω_i × Iω_i),
    q₁ = q₀ ⊗ exp(h Σ b_i F_i / 2),  ω₁ = ω₀ + h Σ b_i W_i,

with the classic tableau (c = (0, ½, ½, 1), b = (1, 2, 2, 1)/6).

Source: H. Munthe-Kaas, BIT 38 (1998) 92–111; Iserles, Munthe-Kaas, Nørsett & Zanna,
Acta Numerica 9 (2000) 215–365. Order 4. Torque evaluations per step: 4. Every stage
attitude is a rotation (|q| = 1 to round-off, no projection); nothing else conserved.
"""

from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.dynamics import angular_acceleration
from rigidrot_gym.physics.rotation.integrators.base import ComponentMethod
from rigidrot_gym.physics.rotation.quaternion import qexp, qmul


@jitable
def _dexpinv(theta, w):
    """θ̇ = ω + ½ θ × ω + (1/12) θ × (θ × ω)."""
    tw = vec.cross(theta, w)
    return vec.axpy(1.0 / 12.0, vec.cross(theta, tw), vec.axpy(0.5, tw, w))


@jitable
def _stage(t, q, theta, w, inertia, torque, p):
    """(F, W) at the stage attitude q ⊗ exp(θ/2)."""
    q_stage = qmul(q, qexp(vec.scale(0.5, theta)))
    return _dexpinv(theta, w), angular_acceleration(inertia, w, torque(t, q_stage, w, p))


@jitable
def step(n, t, h, q, w, s, inertia, torque, potential, p, opts):
    half = 0.5 * h
    f1, w1 = _stage(t, q, (0.0 * w[0], 0.0 * w[0], 0.0 * w[0]), w, inertia, torque, p)
    f2, w2 = _stage(t + half, q, vec.scale(half, f1), vec.axpy(half, w1, w), inertia, torque, p)
    f3, w3 = _stage(t + half, q, vec.scale(half, f2), vec.axpy(half, w2, w), inertia, torque, p)
    f4, w4 = _stage(t + h, q, vec.scale(h, f3), vec.axpy(h, w3, w), inertia, torque, p)
    sixth = h / 6.0
    theta = vec.scale(sixth, vec.axpy(2.0, vec.add(f2, f3), vec.add(f1, f4)))
    w_next = vec.axpy(sixth, vec.axpy(2.0, vec.add(w2, w3), vec.add(w1, w4)), w)
    return qmul(q, qexp(vec.scale(0.5, theta))), w_next, s, 0.0


METHOD = ComponentMethod(
    name="rkmk4",
    step=step,
    order=4,
    torque_evals=4,
    source="Munthe-Kaas (1998): RK4 in the Lie algebra so(3)",
)

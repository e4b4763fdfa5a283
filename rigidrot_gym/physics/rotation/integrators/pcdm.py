"""Zhao & van Wachem (2013) predictor–corrector direct multiplication (PCDM).

    ω̇b0 = I⁻¹(τb(q0) − ωb0 × Iωb0);  ωb¼ = ωb0 + ¼hω̇b0;  ωb½ = ωb0 + ½hω̇b0
    q′½ = exp(¼h ω¼) ⊗ q0,  ω¼ = q0 ωb¼ q0*            (predicted half-step attitude)
    ω̇b½ = I⁻¹(τb(q′½) − ωb½ × Iωb½)                    (torque re-evaluated at q′½)
    q1 = exp(½h ω½) ⊗ q0,  ω½ = q′½ ωb½ q′½*;   ωb1 = ωb0 + hω̇b½

Source: F. Zhao and B. G. M. van Wachem, Acta Mech 224 (2013) 3091–3109 (seed 001,
with the ¼/½ factors and the body-frame midpoint torque as corrected in the notes).
Order 2 — only because the torque is re-evaluated at q′½; reusing τb(q0) gives order 1
(Seelen, Padding & Kuipers, Acta Mech 227, 2016). Torque evaluations per step: 2.
|q| = 1 up to round-off (products of exponentials); nothing else conserved exactly.
"""

from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.dynamics import angular_acceleration
from rigidrot_gym.physics.rotation.integrators.base import ComponentMethod
from rigidrot_gym.physics.rotation.quaternion import qexp, qmul, qnormalize, qrotate


@jitable
def step(n, t, h, q, w, s, inertia, torque, potential, p, opts):
    w_dot0 = angular_acceleration(inertia, w, torque(t, q, w, p))
    w_quarter = vec.axpy(0.25 * h, w_dot0, w)
    w_half = vec.axpy(0.5 * h, w_dot0, w)
    # exp(¼h q0 ωb¼ q0*) ⊗ q0 = q0 ⊗ exp(¼h ωb¼): no rotation to the world frame needed.
    q_half = qmul(q, qexp(vec.scale(0.25 * h, w_quarter)))
    w_dot_half = angular_acceleration(inertia, w_half, torque(t + 0.5 * h, q_half, w_half, p))
    q1 = qmul(qexp(vec.scale(0.5 * h, qrotate(q_half, w_half))), q)
    return qnormalize(q1), vec.axpy(h, w_dot_half, w), s, 0.0


METHOD = ComponentMethod(
    name="pcdm",
    step=step,
    order=2,
    torque_evals=2,
    source="Zhao & van Wachem (2013), Acta Mech 224: PCDM (seed 001)",
)

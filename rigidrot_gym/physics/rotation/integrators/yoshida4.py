"""Yoshida's fourth-order triple jump of the Strang step.

    Φ_h = S(w₁h) ∘ S(w₀h) ∘ S(w₁h),   w₁ = 1/(2 − 2^⅓),  w₀ = −2^⅓/(2 − 2^⅓)

with S the symmetric kick–rotate–kick step of :mod:`strang` (the middle sub-step runs
backwards in time).

Source: H. Yoshida, Phys. Lett. A 150 (1990) 262–268. Order 4 (for torques independent
of ω). Torque evaluations per step: 6. Exact when there is no torque; conserves |q| = 1;
symmetric, and symplectic for conservative torques τ(q).
"""

from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation.integrators.base import ComponentMethod
from rigidrot_gym.physics.rotation.integrators.strang import strang

_CBRT2 = 2.0 ** (1.0 / 3.0)
W1 = 1.0 / (2.0 - _CBRT2)
W0 = -_CBRT2 / (2.0 - _CBRT2)


@jitable
def step(n, t, h, q, w, s, inertia, torque, potential, p, opts):
    q, w = strang(t, W1 * h, q, w, inertia, torque, p)
    q, w = strang(t + W1 * h, W0 * h, q, w, inertia, torque, p)
    q, w = strang(t + (W1 + W0) * h, W1 * h, q, w, inertia, torque, p)
    return q, w, s, 0.0


METHOD = ComponentMethod(
    name="yoshida4",
    step=step,
    order=4,
    torque_evals=6,
    source="Yoshida (1990): triple-jump composition of the Strang step",
)

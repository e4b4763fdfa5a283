"""Explicit (forward) Euler on (q, ω): the baseline every method beats.

    ω₁ = ω₀ + h I⁻¹(τ₀ − ω₀ × Iω₀),    q₁ = normalise(q₀ + ½h q₀ ⊗ (0, ω₀)).

Source: the first-order member of the Runge–Kutta family of seeds 003/004.
Order 1. Torque evaluations per step: 1. Conserves nothing; |q| = 1 by projection.
"""

from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.dynamics import angular_acceleration, quaternion_rate
from rigidrot_gym.physics.rotation.integrators.base import ComponentMethod
from rigidrot_gym.physics.rotation.quaternion import qaxpy, qnormalize


@jitable
def step(n, t, h, q, w, s, inertia, torque, potential, p, opts):
    w_dot = angular_acceleration(inertia, w, torque(t, q, w, p))
    q1 = qnormalize(qaxpy(h, quaternion_rate(q, w), q))
    return q1, vec.axpy(h, w_dot, w), s, 0.0


METHOD = ComponentMethod(
    name="euler",
    step=step,
    order=1,
    torque_evals=1,
    source="forward Euler; seeds 003 (Ganapathi 2005) and 004 (Sasaki 2019) state the ODE",
)

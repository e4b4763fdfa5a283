"""The game-engine step: semi-implicit Euler without the gyroscopic term.

    ω₁ = ω₀ + h I⁻¹τ₀,    q₁ = normalise(q₀ + ½h q₀ ⊗ (0, ω₁)).

Source: Mandre (2008), §7.6 ("discarding conservation of angular momentum"): many game
physics engines drop ω × Iω from Euler's equations. It is what it is: without torque ω
never changes, so an asymmetric body spins forever about a body-fixed axis — no
torque-free precession (wobble), no intermediate-axis (Dzhanibekov) flip — and its
world angular momentum L = R(q) I ω rotates with the body instead of staying fixed
(unless ω happens to lie on a principal axis). Consistent with Euler's equations only
for a sphere; for any body order 1 in the attitude at fixed ω.
Torque evaluations per step: 1. Conserves kinetic energy when torque-free (ω constant).
"""

from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.dynamics import quaternion_rate
from rigidrot_gym.physics.rotation.integrators.base import ComponentMethod
from rigidrot_gym.physics.rotation.quaternion import qaxpy, qnormalize


@jitable
def step(n, t, h, q, w, s, inertia, torque, potential, p, opts):
    w1 = vec.axpy(h, vec.div(torque(t, q, w, p), inertia), w)
    q1 = qnormalize(qaxpy(h, quaternion_rate(q, w1), q))
    return q1, w1, s, 0.0


METHOD = ComponentMethod(
    name="semi_implicit",
    step=step,
    order=1,
    torque_evals=1,
    source="Mandre (2008) §7.6: game-engine step, gyroscopic term dropped",
)

"""Strang splitting: half kick by the torque, exact free rotation, half kick.

    ω⁺ = ω₀ + (h/2) I⁻¹τ(t, q₀, ω₀);   (q₁, ω⁻) = free rotation of (q₀, ω⁺) over h;
    ω₁ = ω⁻ + (h/2) I⁻¹τ(t + h, q₁, ω⁻)

The kick is the exact flow of ṁ = τ at fixed attitude when τ does not depend on ω (a
potential, a time law, a control held over the step); the free rotation is the exact
Jacobi-elliptic solution (:func:`rigidrot_gym.physics.rotation.exact.free_rotation`).

Source: Strang (1968); for rigid bodies with the exact free flow, Celledoni et al.,
SIAM J. Sci. Comput. 30 (2008). Explicit, order 2 (order 1 if τ depends on ω), exact
when there is no torque. Torque evaluations per step: 2. Conserves |q| = 1 and, without
torque, energy and world angular momentum to round-off; with a constant body torque the
world momentum changes by exactly (h/2)(R(q₀) + R(q₁))τ. Symmetric, and symplectic for
conservative torques τ(q).
"""

from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.exact import free_rotation
from rigidrot_gym.physics.rotation.integrators.base import ComponentMethod


@jitable
def kick(t, h, q, w, inertia, torque, p):
    """ω + h I⁻¹τ(t, q, ω): the flow of ṁ = τ at fixed attitude for a time h."""
    return vec.axpy(h, vec.div(torque(t, q, w, p), inertia), w)


@jitable
def strang(t, h, q, w, inertia, torque, p):
    """One kick–rotate–kick step of size h (h may be negative, as in compositions)."""
    w = kick(t, 0.5 * h, q, w, inertia, torque, p)
    q, w = free_rotation(q, w, inertia, h)
    return q, kick(t + h, 0.5 * h, q, w, inertia, torque, p)


@jitable
def step(n, t, h, q, w, s, inertia, torque, potential, p, opts):
    q1, w1 = strang(t, h, q, w, inertia, torque, p)
    return q1, w1, s, 0.0


METHOD = ComponentMethod(
    name="strang",
    step=step,
    order=2,
    torque_evals=2,
    source="Strang splitting with the exact free rotation (Celledoni et al. 2008)",
)

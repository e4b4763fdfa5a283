"""Euler's equations and quaternion kinematics in principal axes, component-wise.

For a body with principal moments ``I = (I1, I2, I3)``, body rates ω and body torque τ
(all seeds):

    ω̇ = I⁻¹(τ − ω × Iω),        q̇ = ½ q ⊗ (0, ω).

Functions take tuples of floats or arrays (see :mod:`rigidrot_gym.physics.plumbing.jit`).
"""

from __future__ import annotations

from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qmul_vec, qscale


@jitable
def angular_acceleration(inertia, omega, torque):
    """ω̇ = I⁻¹(τ − ω × Iω) (Euler's equations, principal axes)."""
    # Multiplying by 1/I rather than dividing lets a compiled multi-stage step compute
    # the three reciprocals once instead of at every stage.
    inverse = (1.0 / inertia[0], 1.0 / inertia[1], 1.0 / inertia[2])
    return vec.mul(vec.sub(torque, vec.cross(omega, vec.mul(inertia, omega))), inverse)


@jitable
def quaternion_rate(q, omega):
    """q̇ = ½ q ⊗ (0, ω) for body-frame ω."""
    return qscale(0.5, qmul_vec(q, omega))

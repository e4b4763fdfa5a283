"""Environmental disturbance torques: the orbit of the gravity gradient, and slowly
varying random torques.

The gravity-gradient torque itself, 3n² r̂ × (I r̂), is a compiled torque term
(:class:`rigidrot_gym.physics.torques.GravityGradient`) evaluated at every integrator stage.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.physics import validation
from rigidrot_gym.physics.jit import jitable

MU_EARTH = 3.986004418e14  # gravitational parameter GM of the Earth, m³/s² (WGS-84)
R_EARTH = 6378137.0  # equatorial radius of the Earth, m (WGS-84)


def mean_motion(altitude: float) -> float:
    """n = √(μ/R³) (rad/s) of a circular orbit ``altitude`` (m) above the equator's radius."""
    altitude = validation.scalar(altitude, "orbit_altitude", positive=True)
    return float(np.sqrt(MU_EARTH / (R_EARTH + altitude) ** 3))


@jitable
def ornstein_uhlenbeck(torque, std, correlation_time, dt, normals):
    """The torque (scalars or arrays) of an Ornstein–Uhlenbeck process dt later, sampled exactly:
    d ← a d + σ √(1 − a²) ξ with a = exp(−dt/τ), ξ standard ``normals``, so that
    the stationary per-axis standard deviation is ``std`` σ and the autocorrelation
    exp(−|Δt|/τ) (Gillespie, Phys. Rev. E 54, 1996, eq. 1.8)."""
    a = np.exp(-dt / correlation_time)
    return a * torque + std * np.sqrt(1.0 - a * a) * normals

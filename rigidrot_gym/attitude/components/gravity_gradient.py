"""The gravity-gradient torque of a circular orbit, 3n² r̂ × (J r̂) (Wertz 1978 §17.2):
r̂ is the direction from the Earth, turning at the orbit's mean motion n about world z
(the orbit normal), from a phase drawn per episode. The torque itself is the library's
compiled term (:class:`rigidrot_gym.physics.torques.GravityGradient`), evaluated at every
integrator stage; this component holds its parameters."""

from __future__ import annotations

import numpy as np

from rigidrot_gym.physics import torques, validation
from rigidrot_gym.physics.jit import jitable

MU_EARTH = 3.986004418e14  # gravitational parameter GM of the Earth, m³/s² (WGS-84)
R_EARTH = 6378137.0  # equatorial radius of the Earth, m (WGS-84)


def mean_motion(altitude: float) -> float:
    """n = √(μ/R³) (rad/s) of a circular orbit ``altitude`` (m) above the equator's radius."""
    altitude = validation.scalar(altitude, "orbit_altitude", positive=True)
    return float(np.sqrt(MU_EARTH / (R_EARTH + altitude) ** 3))


@jitable
def hold(equipment, bodies, params, i):
    """Body i's gravity-gradient parameters: 3n², n, the orbit phase at its episode step
    and its principal moments."""
    params[torques.GG_RATE, i], params[torques.GG_MOTION, i] = equipment.gravity_rate, equipment.mean_motion
    params[torques.GG_PHASE, i] = equipment.phase[i] + equipment.phase_per_period * bodies.steps[i]
    g, m = torques.GG_MOMENTS, bodies.moments
    params[g, i], params[g + 1, i], params[g + 2, i] = m[0, i], m[1, i], m[2, i]

"""The Earth's magnetic field along the orbit: the tilted centred dipole of the IGRF's
first-degree coefficients at the orbit's epoch (Basilisk's
``magneticFieldCenteredDipole``), the library's :mod:`~rigidrot_gym.physics.environment.geomagnetic`,
at each body's position (:mod:`~rigidrot_gym.attitude.components.orbit`) and episode time.

The Earth turns under the inertial world frame: its rotation angle is θ(t) = θ₀ + θ̇ t,
θ₀ the Greenwich mean sidereal angle of the epoch (:func:`~rigidrot_gym.physics.environment.earth.gmst`)
and θ̇ that formula's rate (its quadratic term changes θ by ~1e-15 rad over a day). The
coefficients are those of the epoch, held for the episode.

Each evaluation writes body i's field at its episode time (:func:`update`): the
observation's last three columns are that field in the body frame over
:data:`FIELD_SCALE`, and the magnetorquers hold it over the next control period.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.components import orbit
from rigidrot_gym.attitude.settings import Table, flag, setting
from rigidrot_gym.physics.environment import earth, geomagnetic
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation.quaternion import qrotate, qrotate_inv

# Entries of Equipment.field_model: the dipole vector (g₁¹, h₁¹, g₁⁰) in the Earth-fixed
# frame (T), the reference radius (m), θ₀ (rad) and θ̇ (rad/s).
DIPOLE, RADIUS, THETA, THETA_RATE = slice(0, 3), 3, 4, 5
MODEL = 6
# The observed field is B over this, clipped to ±1: no field in orbit exceeds the surface's
# at the poles, 2 |g₁⁰| ≈ 59 µT (about 47 µT at 500 km).
FIELD_SCALE = 6e-5  # T
COLUMNS = 3
# dθ/dt of the IAU 1982 sidereal angle (earth.gmst): its linear term, rad/s.
SIDEREAL_RATE = ((876600.0 * 3600.0 + 8640184.812866) / (earth.DAYS_PER_CENTURY * earth.SECONDS_PER_DAY)) * (
    2.0 * np.pi / earth.SECONDS_PER_DAY
)


class MagneticFieldTable(Table, key="magnetic_field"):
    """The geomagnetic field along the orbit (needs ``[orbit]``)."""

    enabled: bool = setting(
        False,
        check=flag,
        flat="magnetic_field",
        switch=True,
        doc="the IGRF centred-dipole field at the orbit's epoch; observed in the body frame (3 more columns)",
    )


def constants(orbit_table: orbit.OrbitTable, table: MagneticFieldTable) -> np.ndarray:
    """Equipment.field_model (entries ``DIPOLE`` … ``THETA_RATE``); zeros when off.

    Raises:
        ValueError: if the orbit's epoch lies outside the IGRF coefficients' span.
    """
    out = np.zeros(MODEL)
    if not table.enabled:
        return out
    jd = earth.julian_date(orbit_table.epoch)
    dipole = geomagnetic.igrf_dipole(geomagnetic.decimal_year(jd))
    out[DIPOLE], out[RADIUS] = dipole.moment, dipole.radius
    out[THETA], out[THETA_RATE] = earth.gmst(jd), SIDEREAL_RATE
    return out


@jitable
def update(equipment, t, i):
    """Body i's field (world frame, T) at its episode time ``t`` (s) into ``equipment.field[i]``."""
    f = equipment.field_model
    r = orbit.position(equipment, t, i)
    b = geomagnetic.field((f[0], f[1], f[2]), f[RADIUS], f[THETA] + f[THETA_RATE] * t, r)
    equipment.field[i, 0], equipment.field[i, 1], equipment.field[i, 2] = b


@jitable
def observe(equipment, state, principal, obs, column, i):
    """Body i's field in its body frame, B_b = B ⊗ (q_p* B_w q_p) ⊗ B* (q_p its attitude in
    principal axes, B its principal frame), over :data:`FIELD_SCALE` and clipped to ±1,
    into ``obs[i, column:column + 3]``."""
    q = (state[0, i], state[1, i], state[2, i], state[3, i])
    b = (principal[0, i], principal[1, i], principal[2, i], principal[3, i])
    world = (equipment.field[i, 0], equipment.field[i, 1], equipment.field[i, 2])
    body = qrotate(b, qrotate_inv(q, world))
    for c in range(COLUMNS):
        obs[i, column + c] = min(max(body[c] / FIELD_SCALE, -1.0), 1.0)

"""The Earth as the spacecraft models see it: its constants, the time scale they share and
the rotation of the Earth-fixed frame in the inertial world frame.

Frames: the world frame is inertial, the Earth's mean equator and equinox of J2000 (ECI,
z along the rotation axis); the Earth-fixed frame (ECEF) turns about z by the Greenwich
mean sidereal angle θ(t), so that ``r_ecef = R_z(θ)ᵀ r_eci``. Precession, nutation and
polar motion are left out: over a training episode (hours) they move the frames by
arcseconds, below every sensor model here. Time: seconds since a scenario's epoch, an
instant of UTC, taken as UT1 (they differ by under 0.9 s, 0.004° of Earth rotation).

Constants: WGS-84 (NIMA TR8350.2, 3rd ed., 2000, table 3.1 and 3.4) for μ, the equatorial
radius and the rotation rate; J₂ is EGM96's C̄₂,₀ unnormalised (J₂ = −√5 C̄₂,₀).
"""

from __future__ import annotations

import datetime as _dt

import numpy as np

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable

MU = 3.986004418e14  # gravitational parameter GM, m³/s² (WGS-84)
RADIUS = 6378137.0  # equatorial radius, m (WGS-84)
J2 = 1.08262668e-3  # second zonal harmonic (EGM96), dimensionless
ROTATION_RATE = 7.292115e-5  # sidereal rotation rate, rad/s (WGS-84)

J2000 = 2451545.0  # Julian date of 2000-01-01 12:00 (TT, here UTC)
SECONDS_PER_DAY = 86400.0
DAYS_PER_CENTURY = 36525.0


def julian_date(epoch: str | _dt.datetime) -> float:
    """The Julian date of ``epoch``, an ISO 8601 UTC instant (``"2026-03-20T12:00:00"``,
    with or without ``Z`` or ``+00:00``) or a ``datetime`` (naive: UTC).

    Raises:
        ValueError: if ``epoch`` is not such an instant, or has another UTC offset.
    """
    if isinstance(epoch, str):
        try:
            instant = _dt.datetime.fromisoformat(epoch.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(
                f"epoch must be an ISO 8601 UTC instant such as '2026-03-20T12:00:00', got {epoch!r}"
            ) from None
    elif isinstance(epoch, _dt.datetime):
        instant = epoch
    else:
        raise ValueError(f"epoch must be an ISO 8601 string or a datetime, got {epoch!r}")
    if instant.utcoffset() not in (None, _dt.timedelta(0)):
        raise ValueError(f"epoch must be in UTC (offset 0), got {epoch!r}")
    instant = instant.replace(tzinfo=None)
    since = instant - _dt.datetime(2000, 1, 1, 12)
    return J2000 + since.days + (since.seconds + since.microseconds * 1e-6) / SECONDS_PER_DAY


def julian_dates(t, epoch: str | _dt.datetime) -> np.ndarray:
    """The Julian dates of ``t`` (s, any shape) after ``epoch`` (as :func:`julian_date`).

    Raises:
        ValueError: if ``t`` is not real and finite, or ``epoch`` is not a UTC instant.
    """
    t = validation.finite_floats(t, "t")
    return julian_date(epoch) + t / SECONDS_PER_DAY


def gmst(jd: float | np.ndarray) -> float | np.ndarray:
    """Greenwich mean sidereal angle θ (rad, in [0, 2π)) at the Julian date(s) ``jd`` (UT1),
    by the IAU 1982 expression (Vallado, *Fundamentals of Astrodynamics and Applications*,
    4th ed., eq. 3-47): θ = 67310.54841 s + (876600 h + 8640184.812866 s) T
    + 0.093104 s T² − 6.2e-6 s T³, T in Julian centuries from J2000."""
    jd = validation.finite_floats(jd, "jd")
    t = (jd - J2000) / DAYS_PER_CENTURY
    seconds = 67310.54841 + (876600.0 * 3600.0 + 8640184.812866) * t + 0.093104 * t**2 - 6.2e-6 * t**3
    angle = np.mod(seconds * (2.0 * np.pi / SECONDS_PER_DAY), 2.0 * np.pi)
    return float(angle) if np.ndim(angle) == 0 else angle


@jitable
def to_fixed(theta, v):
    """``v`` (inertial 3-tuple) in the Earth-fixed frame turned by ``theta`` (rad): R_z(θ)ᵀ v."""
    c, s = np.cos(theta), np.sin(theta)
    return (c * v[0] + s * v[1], -s * v[0] + c * v[1], v[2])


@jitable
def to_inertial(theta, v):
    """``v`` (Earth-fixed 3-tuple) in the inertial frame: R_z(θ) v."""
    c, s = np.cos(theta), np.sin(theta)
    return (c * v[0] - s * v[1], s * v[0] + c * v[1], v[2])

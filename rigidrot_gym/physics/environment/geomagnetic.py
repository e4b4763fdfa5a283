"""The Earth's magnetic field as a tilted centred dipole, from the first-degree Gauss
coefficients (g₁⁰, g₁¹, h₁¹) of the International Geomagnetic Reference Field (IGRF).

Model: the degree-1 part of the IGRF scalar potential (B = −∇V), in geocentric spherical
coordinates of the Earth-fixed frame (colatitude ϑ, east longitude φ) and with the IGRF
reference radius R = 6371.2 km,

    V = R (R/r)² [g₁⁰ cos ϑ + (g₁¹ cos φ + h₁¹ sin φ) sin ϑ].

With x = r sin ϑ cos φ, y = r sin ϑ sin φ, z = r cos ϑ this is V = R³ (m·r)/r³ for the vector
m = (g₁¹, h₁¹, g₁⁰), and ∇((m·r)/r³) = m/r³ − 3 (m·r) r/r⁵ gives

    B = (R/|r|)³ [3 (m·r̂) r̂ − m]        (Earth-fixed components, tesla),

the field of a point dipole at the centre whose moment points along m (magnitude
4πR³|m|/μ₀, 7.7·10²² A·m² for 2020). Since g₁⁰ < 0, m points into the southern hemisphere:
on the geographic equator (r̂_z = 0) the field's northward component is exactly (R/r)³ |g₁⁰|,
and the north geomagnetic pole lies along −m. This is the model (and the sign) of Basilisk's
``magneticFieldCenteredDipole``, which cites Markley & Crassidis, *Fundamentals of Spacecraft
Attitude Determination and Control* (Springer 2014), p. 405 and appendix D.

Frames (as in :mod:`rigidrot_gym.physics.environment.earth`): the field is computed in the Earth-fixed
frame, which turns about the inertial z axis by the Greenwich mean sidereal angle θ
(``r_ecef = R_z(θ)ᵀ r_eci``), and returned in the inertial world frame. The dipole is
geocentric; positions are geocentric, in metres.

Coefficients: :func:`igrf_dipole` gives them for a decimal year in [2020.0, 2030.0], linear
in time:

* 2020.0 ≤ year < 2025.0: IGRF-13, the 2020.0 main field and its predicted secular variation
  for 2020–2025 (Alken et al. 2021, "International Geomagnetic Reference Field: the
  thirteenth generation", Earth, Planets and Space 73:49, doi:10.1186/s40623-020-01288-x);
* 2025.0 ≤ year ≤ 2030.0: IGRF-14, the 2025.0 main field and its secular variation for
  2025–2030 (IAGA Division V Working Group V-MOD, the IGRF-14 coefficient release cited by the
  table's header, doi:10.5281/zenodo.14012302),
  checked against the ``IGRF14.shc`` table that ppigrf 2.1.0 ships.

At 2025.0 the two generations differ (IGRF-13's forecast against IGRF-14's 2025.0 model:
26.3 nT in g₁⁰, 22.5 nT in h₁¹, 0.12 % of the dipole vector): a step between epochs, never
within a run, since a run's coefficients are those of its epoch's year. Secular variation
within a run (2·10⁻⁶ of the field per day) is left out.

Left out: degrees 2 to 13 of the IGRF, the eccentric-dipole offset, the crustal field, and
the external (magnetospheric and ionospheric) fields, which vary with space weather by tens
to hundreds of nT in low Earth orbit. Against the full IGRF-14 at 500 km altitude (2026.0,
a 2° grid, measured with ppigrf in ``tests/test_geomagnetic.py``) the centred dipole's
magnitude is off by 9 % in the median, its direction by 7.8° (35° at worst), and the vector
difference |B_dip − B|/|B| is 20 % in the median and 74 % at worst, over the South Atlantic
Anomaly, where the real field (22 µT) is far weaker than the dipole's (38 µT). Good enough
for magnetorquer control and detumbling studies; not for a magnetometer-based attitude
estimate that must match a real sensor.

Basilisk's Earth helper ``simSetPlanetEnvironment.centeredDipoleMagField`` (bsk 2.12.1),
whose comment says "2020 IGRF", sets g₁⁰ = −30926, g₁¹ = −2318, h₁¹ = 5817 nT: those are the
IGRF coefficients of 1925.0 (the 1925 column of the IGRF-13 and IGRF-14 tables), a dipole
6 % stronger and 2.0° more tilted (11.4° against 9.4°) than 2020's.
"""

from __future__ import annotations

import calendar
import datetime as _dt
from typing import NamedTuple

import numpy as np

from rigidrot_gym.physics.environment import earth
from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import vector

REFERENCE_RADIUS = 6371.2e3  # IGRF reference radius (mean Earth radius), m
# No point of the Earth's surface is nearer the centre than the WGS-84 polar radius
# b = a (1 − f), f = 1/298.257223563: positions inside it are refused (typically km for m).
POLAR_RADIUS = 6356752.314245  # m

NANOTESLA = 1e-9  # T


class Dipole(NamedTuple):
    """First-degree Gauss coefficients of a planet's field (tesla) and their reference radius (m)."""

    g10: float
    g11: float
    h11: float
    radius: float = REFERENCE_RADIUS

    @property
    def moment(self) -> tuple[float, float, float]:
        """The dipole vector m = (g₁¹, h₁¹, g₁⁰) in the planet-fixed frame, T."""
        return (self.g11, self.h11, self.g10)


# Alken et al. 2021 (IGRF-13): the 2020.0 main field and the secular variation 2020–25.
IGRF13_2020 = Dipole(-29404.8 * NANOTESLA, -1450.9 * NANOTESLA, 4652.5 * NANOTESLA)
IGRF13_SV = (5.7 * NANOTESLA, 7.4 * NANOTESLA, -25.9 * NANOTESLA)  # (g10, g11, h11), T per year
# IGRF-14 (doi:10.5281/zenodo.14012302; ppigrf 2.1.0's IGRF14.shc, whose 2030.0 column is
# 2025.0 + 5 × SV): the 2025.0 main field and the secular variation 2025–30.
IGRF14_2025 = Dipole(-29350.0 * NANOTESLA, -1410.3 * NANOTESLA, 4545.5 * NANOTESLA)
IGRF14_SV = (12.6 * NANOTESLA, 10.0 * NANOTESLA, -21.5 * NANOTESLA)  # (g10, g11, h11), T per year

FIRST_YEAR = 2020.0
LAST_YEAR = 2030.0

# The Julian dates a calendar year is found for: Python's datetime holds the years 1 to
# 9999, 0001-01-01 00:00 UTC to just before 10000-01-01 00:00 (proleptic Gregorian).
FIRST_JD = 1721425.5
END_JD = 5373484.5


def igrf_dipole(year: float) -> Dipole:
    """The IGRF dipole at the decimal ``year`` (2020.0 ≤ year ≤ 2030.0), linear in time:
    IGRF-13 before 2025.0, IGRF-14 from 2025.0 on (see the module's notes).

    Raises:
        ValueError: if ``year`` is not a finite number in [2020.0, 2030.0].
    """
    year = validation.scalar(year, "year")
    if not FIRST_YEAR <= year <= LAST_YEAR:
        raise ValueError(
            f"year must lie in [{FIRST_YEAR}, {LAST_YEAR}], the span of the IGRF-13/14 coefficients "
            f"given here, got {year!r}; pass a Dipole of your own for other epochs"
        )
    base, rate, start = (
        (IGRF13_2020, IGRF13_SV, 2020.0) if year < 2025.0 else (IGRF14_2025, IGRF14_SV, 2025.0)
    )
    dt = year - start
    return Dipole(base.g10 + rate[0] * dt, base.g11 + rate[1] * dt, base.h11 + rate[2] * dt, base.radius)


def decimal_year(jd: float) -> float:
    """The calendar decimal year (2020.0 = 2020-01-01 00:00 UTC) of the Julian date ``jd``,
    as the IGRF epochs are counted.

    Raises:
        ValueError: if ``jd`` is not a finite number in [:data:`FIRST_JD`, :data:`END_JD`),
            the years 1 to 9999.
    """
    jd = validation.scalar(jd, "jd")
    if not FIRST_JD <= jd < END_JD:
        raise ValueError(
            f"jd must lie in [{FIRST_JD}, {END_JD}), the years 1 to 9999 "
            f"(0001-01-01 00:00 UTC to 10000-01-01), got {jd!r}"
        )
    # Below END_JD a float is at least 80 µs before it, so the timedelta's rounding to
    # whole microseconds stays inside year 9999.
    instant = _dt.datetime(2000, 1, 1, 12) + _dt.timedelta(days=jd - earth.J2000)
    start = _dt.datetime(instant.year, 1, 1)
    length = _dt.timedelta(days=366 if calendar.isleap(instant.year) else 365)  # 10000-01-01 is no datetime
    return instant.year + (instant - start) / length


@jitable
def field_fixed(dipole_m, radius, r):
    """The dipole's field (3-tuple, T) at ``r`` (3-tuple, m), both in the planet-fixed frame:
    (R/|r|)³ [3 (m·r̂) r̂ − m] for the dipole vector ``dipole_m`` = (g₁¹, h₁¹, g₁⁰) (T) and the
    reference radius ``radius`` (m)."""
    rr = vector.dot(r, r)
    k = radius**3 / (rr * np.sqrt(rr))
    s = 3.0 * vector.dot(dipole_m, r) / rr
    return (
        k * (s * r[0] - dipole_m[0]),
        k * (s * r[1] - dipole_m[1]),
        k * (s * r[2] - dipole_m[2]),
    )


@jitable
def field(dipole_m, radius, theta, r_inertial):
    """The dipole's field (3-tuple, T, inertial frame) at ``r_inertial`` (3-tuple, m) when the
    Earth-fixed frame is turned by ``theta`` (rad) about the inertial z axis."""
    b_fixed = field_fixed(dipole_m, radius, earth.to_fixed(theta, r_inertial))
    return earth.to_inertial(theta, b_fixed)


def _checked_dipole(dipole) -> Dipole:
    if not isinstance(dipole, Dipole):
        raise ValueError(f"dipole must be a Dipole or None, got {validation.show(dipole)}")
    for name in ("g10", "g11", "h11"):
        validation.scalar(getattr(dipole, name), f"dipole.{name}")
    validation.scalar(dipole.radius, "dipole.radius", positive=True)
    return dipole


def field_inertial(r, t, epoch: str | _dt.datetime, dipole: Dipole | None = None) -> np.ndarray:
    """The centred-dipole field (T) in the inertial world frame at positions ``r`` and times
    ``t``.

    Args:
        r: geocentric positions in the inertial frame, shape (..., 3), m.
        t: seconds since ``epoch``, shape broadcasting with ``r``'s leading shape.
        epoch: a UTC instant (ISO 8601 string or datetime; see :func:`earth.julian_date`);
            the Earth's rotation angle is θ = gmst(julian_date(epoch) + t/86400).
        dipole: the coefficients; ``None``: :func:`igrf_dipole` at the epoch's decimal year
            (held for the whole of ``t``).

    Returns:
        B, shape (broadcast of r's leading shape and t's shape) + (3,), T.

    Raises:
        ValueError: naming the argument, for an ``r`` that is not finite, not of shape (..., 3)
            or inside the Earth (|r| below the polar radius: km instead of m?), a ``t`` that
            is not finite, does not broadcast or takes ``epoch + t`` outside the years 1 to
            9999 (:func:`decimal_year`'s), an ``epoch`` that is not a UTC instant or
            (with ``dipole=None``) lies outside the IGRF span 2020–2030, a ``dipole`` that is
            not a Dipole of finite coefficients and a positive radius.
    """
    r = validation.vectors(r, "r", 3)
    t = validation.finite_floats(t, "t")
    jds = earth.julian_dates(t, epoch)
    outside = (jds < FIRST_JD) | (jds >= END_JD)
    if np.any(outside):
        # The sidereal angle's polynomial overflows to NaN near |t| = 1e113 s, and means
        # nothing long before.
        raise ValueError(
            f"t must keep epoch + t within the years 1 to 9999, got t = {float(t[outside].flat[0])!r} s "
            f"after {epoch!r}"
        )
    shape = validation.batch_shape(r=r.shape[:-1], t=jds.shape)
    radius = np.linalg.norm(r, axis=-1)
    if np.any(radius < POLAR_RADIUS):
        nearest = float(np.min(radius))
        raise ValueError(
            f"r must lie outside the Earth (|r| ≥ {POLAR_RADIUS:.0f} m, the polar radius), got |r| = "
            f"{nearest!r} m; positions are in metres"
        )
    jd = earth.julian_date(epoch)
    if dipole is None:
        try:
            dipole = igrf_dipole(decimal_year(jd))
        except ValueError:
            raise ValueError(
                f"epoch must lie in {FIRST_YEAR:.0f}–{LAST_YEAR:.0f} for the built-in IGRF coefficients, "
                f"got {epoch!r}; pass dipole= for another epoch"
            ) from None
    dipole = _checked_dipole(dipole)
    theta = earth.gmst(np.broadcast_to(jds, shape))
    rb = np.broadcast_to(r, (*shape, 3))
    b = field(dipole.moment, dipole.radius, theta, (rb[..., 0], rb[..., 1], rb[..., 2]))
    return np.stack(np.broadcast_arrays(*b), axis=-1)

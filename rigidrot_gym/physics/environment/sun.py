"""The Sun as the spacecraft models see it: its position in the inertial world frame and the
Earth's shadow (umbra and penumbra) it casts.

Frames and time as in :mod:`rigidrot_gym.physics.environment.earth`: positions are Earth-centred, in the
inertial world frame (ECI, mean equator and equinox of J2000); time is seconds since a
scenario's epoch, a UTC instant, used as UT1 and as TDB alike (as the low-precision formula
itself does: the 69 s of TT − UTC move the Sun by 0.0008°).

Solar ephemeris: the Astronomical Almanac's low-precision formula, as Vallado gives it
(*Fundamentals of Astrodynamics and Applications*, 4th ed., 2013, algorithm 29, §5.1.1; his
example 5-1), with T in Julian centuries from J2000:

* mean longitude λ_M = 280.460° + 36000.771° T, mean anomaly M = 357.5291092° + 35999.05034° T;
* ecliptic longitude λ = λ_M + 1.914666471° sin M + 0.019994643° sin 2M (latitude 0);
* distance r = 1.000140612 − 0.016708617 cos M − 0.000139589 cos 2M AU;
* obliquity ε = 23.439291° − 0.0130042° T;
* r_MOD = r (cos λ, cos ε sin λ, sin ε sin λ), :func:`mean_of_date`.

λ_M includes the annual aberration (−20.5″), so the direction is the apparent one, as seen
from the Earth's centre; λ is counted from the mean equinox of date, so the vector is in the
mean-of-date frame (MOD). :func:`position` turns it into the J2000 frame with the IAU 1976
precession (Lieske et al. 1977; Vallado eq. 3-88, r_J2000 = ROT3(ζ) ROT2(−θ) ROT3(z) r_MOD):
left out, the 50″ a year of precession would put the Sun 0.36° off in 2026. The Almanac gives
the formula's accuracy as 0.01° in direction between 1950 and 2050; against astropy's Sun
(GCRS) it is at most 0.0097° off (0.0035° rms) over 2020–2030, and 9e-5 relative in distance.

Eclipse: the Earth is a sphere of radius ``radius_earth`` (by default the WGS-84 equatorial
radius :data:`rigidrot_gym.physics.environment.earth.RADIUS`) that hides part of the Sun's disc (radius
:data:`RADIUS`, IAU 2015 nominal). The model is the conical shadow with penumbra of Montenbruck
& Gill, *Satellite Orbits* (2000), §3.4.2, the same as Basilisk's ``eclipse`` module: from the
spacecraft, the Sun and the Earth are discs of apparent radii a = asin(R_sun/|s − r|) and
b = asin(R_earth/|r|) whose centres are c apart (r the spacecraft's, s the Sun's position from
the Earth's centre); the shadow factor ν is the fraction of the Sun's disc left visible,

* ν = 1 in sunlight (c ≥ a + b), ν = 0 in the umbra (c ≤ b − a);
* ν = 1 − b²/a² when the Earth's disc lies inside the Sun's (annular, c ≤ a − b: only beyond the
  umbra's apex, 1.38 million km behind the Earth);
* ν = 1 − A/(π a²) in the penumbra, A the area shared by two flat discs of radii a and b whose
  centres are c apart.

Basilisk's Earth radius is 6378.1366 km and its Sun radius 695 000 km: pass them as
``radius_earth`` and ``radius_sun`` to compare. Basilisk (2.12.1) also reports full sunlight
wherever the spacecraft is nearer the Sun than the Earth's centre is, which differs from the
geometry only below about 70 m of altitude at the terminator. This module forms the separation
c with ``atan2`` and the penumbra's lens area without cancellation: it agrees with a 40-digit
evaluation of the same formulas to 8e-14, where Basilisk's ``acos`` form is off by up to 7.4e-9
in low orbit (3e-11 in geostationary orbit).

Left out: eclipses by the Moon; the Earth's atmosphere (its refraction and absorption blur
the shadow's edges) and its oblateness (a 21 km shorter
polar radius); the light time (8.3 min, which the aberration term in λ_M already accounts for
in direction); and the Sun's limb darkening (the disc is taken as uniformly bright).
"""

from __future__ import annotations

import datetime as _dt

import numpy as np

from rigidrot_gym.physics.environment import earth
from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable, select
from rigidrot_gym.physics.rotation import vector as vec

AU = 149597870700.0  # astronomical unit, m (IAU 2012 Resolution B2)
RADIUS = 695700000.0  # nominal solar radius, m (IAU 2015 Resolution B3)

_DEG = np.pi / 180.0
_ARCSEC = _DEG / 3600.0
# A floor on the apparent separation of the discs (rad), so that the penumbra's branch, which
# select evaluates everywhere, stays finite on the shadow's axis (c = 0) where it is not used.
_TINY = 1e-300


@jitable
def mean_of_date(jd):
    """The Sun's geocentric position (3-tuple, m) at the Julian date(s) ``jd`` in the mean
    equator and equinox of date (Vallado, algorithm 29)."""
    t = (jd - earth.J2000) / earth.DAYS_PER_CENTURY
    mean_longitude = (280.460 + 36000.771 * t) * _DEG
    mean_anomaly = (357.5291092 + 35999.05034 * t) * _DEG
    longitude = (
        mean_longitude
        + (1.914666471 * _DEG) * np.sin(mean_anomaly)
        + (0.019994643 * _DEG) * np.sin(2.0 * mean_anomaly)
    )
    distance = AU * (
        1.000140612 - 0.016708617 * np.cos(mean_anomaly) - 0.000139589 * np.cos(2.0 * mean_anomaly)
    )
    obliquity = (23.439291 - 0.0130042 * t) * _DEG
    s = distance * np.sin(longitude)
    return (distance * np.cos(longitude), s * np.cos(obliquity), s * np.sin(obliquity))


@jitable
def precess(jd, v):
    """``v`` (3-tuple) from the mean equator and equinox of the Julian date(s) ``jd`` to those of
    J2000, by the IAU 1976 precession: ROT3(ζ) ROT2(−θ) ROT3(z) v (Vallado, eq. 3-88)."""
    t = (jd - earth.J2000) / earth.DAYS_PER_CENTURY
    zeta = ((2306.2181 + (0.30188 + 0.017998 * t) * t) * t) * _ARCSEC
    theta = ((2004.3109 - (0.42665 + 0.041833 * t) * t) * t) * _ARCSEC
    z = ((2306.2181 + (1.09468 + 0.018203 * t) * t) * t) * _ARCSEC
    cz, sz = np.cos(z), np.sin(z)
    x1, y1, z1 = cz * v[0] + sz * v[1], -sz * v[0] + cz * v[1], v[2]
    ct, st = np.cos(theta), np.sin(theta)
    x2, z2 = ct * x1 + st * z1, -st * x1 + ct * z1
    cq, sq = np.cos(zeta), np.sin(zeta)
    return (cq * x2 + sq * y1, -sq * x2 + cq * y1, z2)


@jitable
def position(jd):
    """The Sun's geocentric position (3-tuple, m) at the Julian date(s) ``jd`` in the inertial
    world frame (mean equator and equinox of J2000)."""
    return precess(jd, mean_of_date(jd))


@jitable
def shadow_factor(r_sat, r_sun, radius_earth, radius_sun):
    """The fraction of the Sun's disc visible from ``r_sat`` (3-tuple, m, from the Earth's
    centre) with the Sun at ``r_sun`` (3-tuple, m, from the Earth's centre): 1 in sunlight,
    0 in the umbra, in between in the penumbra (see the module's notes). No checks: a point
    inside the Earth or the Sun gives a number without meaning."""
    to_sun = vec.sub(r_sun, r_sat)
    d = vec.norm(to_sun)
    r = vec.norm(r_sat)
    a = np.arcsin(np.minimum(radius_sun / d, 1.0))  # the Sun's apparent radius
    b = np.arcsin(np.minimum(radius_earth / r, 1.0))  # the Earth's
    # the angle between the directions to the Earth's centre (−r) and to the Sun
    c = np.arctan2(vec.norm(vec.cross(r_sat, to_sun)), -vec.dot(r_sat, to_sun))
    # Penumbra: the discs' boundaries cross at (x, ±y), x from the Sun's centre along the line
    # of centres; α and β are the half-angles of the chord seen from each centre, and the
    # shared area is a²(α − sin α cos α) + b²(β − sin β cos β) = a²α + b²β − c y.
    cs = np.maximum(c, _TINY)
    x = np.minimum(np.maximum(((cs - b) * (cs + b) + a * a) / (2.0 * cs), -a), a)
    y = np.sqrt(np.maximum((a - x) * (a + x), 0.0))
    alpha = np.arctan2(y, x)
    beta = np.arctan2(y, cs - x)
    # u − sin u written as a series for small u: b²(β − sin β cos β) = ½ b² (2β − sin 2β)
    # cancels almost all its digits in low orbit, where β ≈ a/b ≈ 0.004.
    two_beta = 2.0 * beta
    u2 = two_beta * two_beta
    small = two_beta < 0.1
    beta_term = 0.5 * select(
        small,
        two_beta * u2 * (1.0 / 6.0 - u2 * (1.0 / 120.0 - u2 * (1.0 / 5040.0 - u2 / 362880.0))),
        two_beta - np.sin(two_beta),
    )
    lens = a * a * (alpha - np.sin(alpha) * np.cos(alpha)) + b * b * beta_term
    partial = 1.0 - lens / (np.pi * a * a)
    annular = 1.0 - (b * b) / (a * a)
    factor = select(c >= a + b, 1.0, select(c <= b - a, 0.0, select(c <= a - b, annular, partial)))
    return np.minimum(np.maximum(factor, 0.0), 1.0)


# ----------------------------------------------------------------------------------
# Batched public functions
# ----------------------------------------------------------------------------------


def sun_position(t, epoch: str | _dt.datetime) -> np.ndarray:
    """The Sun's geocentric position (m) in the inertial world frame (mean equator and
    equinox of J2000) at ``t`` (s, any shape) after ``epoch`` (a UTC instant, as
    :func:`rigidrot_gym.physics.environment.earth.julian_date` takes it): shape ``t.shape + (3,)``.

    Raises:
        ValueError: if ``t`` is not real and finite, or ``epoch`` is not a UTC instant.
    """
    return np.stack(np.broadcast_arrays(*position(earth.julian_dates(t, epoch))), axis=-1)


def sun_direction(t, epoch: str | _dt.datetime) -> np.ndarray:
    """The unit vector from the Earth's centre towards the Sun, as :func:`sun_position`."""
    r = sun_position(t, epoch)
    return r / np.linalg.norm(r, axis=-1, keepdims=True)


def shadow_factors(
    r_sat, r_sun, radius_earth: float = earth.RADIUS, radius_sun: float = RADIUS
) -> float | np.ndarray:
    """The fraction of the Sun's disc visible from spacecraft at ``r_sat`` (..., 3) with the
    Sun at ``r_sun`` (..., 3), both in m from the Earth's centre in one frame (leading shapes
    broadcast): 1 in sunlight, 0 in the Earth's umbra, in between in its penumbra; a float
    for a single pair, else an array of the broadcast leading shape. The radii are in m;
    Basilisk's ``eclipse`` uses ``radius_earth=6378136.6`` and ``radius_sun=695000e3``.

    Raises:
        ValueError: naming the argument, for values that are not finite real (..., 3)
            arrays, radii that are not positive, shapes that do not broadcast, a spacecraft
            inside (or on) the Earth or inside the Sun.
    """
    radius_earth = validation.scalar(radius_earth, "radius_earth", positive=True)
    radius_sun = validation.scalar(radius_sun, "radius_sun", positive=True)
    r_sat = validation.vectors(r_sat, "r_sat", 3)
    r_sun = validation.vectors(r_sun, "r_sun", 3)
    shape = validation.batch_shape(r_sat=r_sat.shape[:-1], r_sun=r_sun.shape[:-1])
    r_sat = np.broadcast_to(r_sat, shape + (3,))
    r_sun = np.broadcast_to(r_sun, shape + (3,))
    inside = np.linalg.norm(r_sat, axis=-1) <= radius_earth
    if np.any(inside):
        first = r_sat[inside][0]
        raise ValueError(
            f"r_sat must lie outside the Earth (radius {radius_earth:.9g} m), got {first.tolist()} "
            f"at {np.linalg.norm(first):.9g} m from its centre"
        )
    if np.any(np.linalg.norm(r_sun - r_sat, axis=-1) <= radius_sun):
        raise ValueError(f"r_sat must lie outside the Sun (radius {radius_sun:.9g} m from r_sun)")
    factor = shadow_factor(
        tuple(np.moveaxis(r_sat, -1, 0)), tuple(np.moveaxis(r_sun, -1, 0)), radius_earth, radius_sun
    )
    factor = np.asarray(factor, dtype=np.float64).reshape(shape)
    return float(factor) if factor.ndim == 0 else factor

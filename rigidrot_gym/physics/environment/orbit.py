"""A Keplerian orbit about the Earth from classical elements, with an optional J₂ secular
drift of the node, the perigee and the mean anomaly.

Frame: the inertial world frame of :mod:`rigidrot_gym.physics.environment.earth` (ECI, mean equator
and equinox of J2000). The elements are those of that frame: the inclination i is measured
from its equator, the right ascension of the ascending node Ω from its x axis. Time: seconds
since the epoch at which the mean anomaly is M₀. Units: SI (m, m/s, rad, s).

Two-body motion is exact up to rounding: Kepler's equation is solved to a residual ≤ 1e-14
rad for e ≤ 0.99 (:data:`KEPLER_ITERATIONS`). With ``j2=True`` the elements are *mean*
elements whose Ω, ω and M advance at the first-order secular rates of J₂
(:func:`secular_rates`), while a, e and i stay constant.

Left out: J₂'s short-period terms (the osculating orbit oscillates about the mean one by
~km in position in LEO, within each orbit) and its second-order effects, higher zonal and
tesseral harmonics, the Moon and the Sun, drag and solar radiation pressure. Parabolic and
hyperbolic orbits (e ≥ 1) are refused.

References:
    D. A. Vallado, *Fundamentals of Astrodynamics and Applications*, 4th ed., 2013:
    Kepler's equation (§2.2, algorithm 2), COE2RV (algorithm 10), the J₂ secular rates
    (eq. 9-41) and sun-synchronous orbits (ch. 11).
    H. D. Curtis, *Orbital Mechanics for Engineering Students*: the perifocal frame and its
    rotation to the geocentric equatorial frame (ch. 4), the J₂ regression of the node and
    advance of the perigee (§4.7).
    J. M. A. Danby, T. M. Burkardt, "The solution of Kepler's equation I", *Celestial
    Mechanics* 31, 95 (1983): the starting value of Newton's method.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rigidrot_gym.physics.environment.earth import J2, MU, RADIUS, SECONDS_PER_DAY
from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable

# The mean motion of the Sun along the ecliptic: one tropical year of 365.2422 days.
TROPICAL_YEAR = 365.2422 * SECONDS_PER_DAY  # s
SUN_RATE = 2.0 * np.pi / TROPICAL_YEAR  # rad/s

# Newton's iterations on Kepler's equation, a fixed count so that the numpy path vectorises
# and the compiled path has no data-dependent exit. From Danby's start the largest residual
# |E − e sin E − M| over a dense grid of M ∈ [−π, π] (ends refined to 1e-12 rad) and e falls
# to rounding (4.4e-16) after 6 iterations for e ≤ 0.9 (after 5: 7.5e-13), after 7 for
# e ≤ 0.95 and after 8 for e ≤ 0.99 (after 7: 6.9e-10). 8 it is, two to spare at e ≤ 0.9;
# beyond 0.99 the residual grows (4e-11 at e = 0.995, 2e-6 at e = 0.999).
KEPLER_ITERATIONS = 8


class Elements(NamedTuple):
    """Classical (Keplerian) orbital elements at an epoch, in the inertial world frame.

    Build them with :func:`elements`, which checks them.

    Attributes:
        a: semi-major axis, m.
        e: eccentricity, dimensionless, 0 ≤ e < 1.
        i: inclination of the orbit plane to the equator, rad, in [0, π].
        raan: right ascension of the ascending node Ω, rad.
        argp: argument of perigee ω, from the ascending node in the direction of motion, rad.
        mean_anomaly: mean anomaly M₀ at the epoch (t = 0), rad.
    """

    a: float
    e: float
    i: float
    raan: float
    argp: float
    mean_anomaly: float


def elements(a: float, e: float, i: float, raan: float, argp: float, mean_anomaly: float) -> Elements:
    """Checked :class:`Elements` (units there).

    Raises:
        ValueError: naming the argument, if ``a`` is not a finite number above the Earth's
            equatorial radius, ``e`` not in [0, 1), ``i`` not in [0, π], an angle not finite,
            or the perigee a (1 − e) at or below the Earth's equatorial radius.
    """
    a = validation.scalar(a, "a")
    if not a > RADIUS:
        raise ValueError(
            f"a must be a semi-major axis above the Earth's equatorial radius {RADIUS} m, "
            f"got {validation.show(a)}"
        )
    e = validation.scalar(e, "e")
    if not 0.0 <= e < 1.0:
        raise ValueError(f"e must be an eccentricity in [0, 1) (an ellipse), got {validation.show(e)}")
    i = validation.scalar(i, "i")
    if not 0.0 <= i <= np.pi:
        raise ValueError(f"i must be an inclination in [0, π] rad, got {validation.show(i)}")
    raan = validation.scalar(raan, "raan")
    argp = validation.scalar(argp, "argp")
    mean_anomaly = validation.scalar(mean_anomaly, "mean_anomaly")
    perigee = a * (1.0 - e)
    if not perigee > RADIUS:
        raise ValueError(
            f"the perigee a (1 - e) must lie above the Earth's equatorial radius {RADIUS} m, got "
            f"{perigee!r} m from a = {a!r} m and e = {e!r}"
        )
    return Elements(a, e, i, raan, argp, mean_anomaly)


def _checked(el: Elements) -> Elements:
    if not isinstance(el, tuple) or len(el) != 6:
        raise ValueError(
            f"el must be Elements (a, e, i, raan, argp, mean_anomaly), got {validation.show(el)}"
        )
    return elements(*el)


def mean_motion(a: float) -> float:
    """The Keplerian mean motion n = √(μ/a³) (rad/s) of the semi-major axis ``a`` (m)."""
    a = validation.scalar(a, "a", positive=True)
    return float(np.sqrt(MU / a**3))


def period(a: float) -> float:
    """The Keplerian period 2π √(a³/μ) (s) of the semi-major axis ``a`` (m)."""
    return 2.0 * np.pi / mean_motion(a)


def secular_rates(el: Elements) -> tuple[float, float, float]:
    """The first-order secular rates (rad/s) of Ω, ω and M that J₂ causes (Vallado, 4th ed.,
    eq. 9-41; Curtis §4.7), with p = a (1 − e²) and n = √(μ/a³):

    * dΩ/dt = −(3/2) n J₂ (R/p)² cos i
    * dω/dt = (3/4) n J₂ (R/p)² (5 cos² i − 1)
    * dM/dt = n + (3/4) n J₂ (R/p)² √(1 − e²) (3 cos² i − 1)

    These are rates of *mean* elements: the osculating ones oscillate about them.
    """
    el = _checked(el)
    n = mean_motion(el.a)
    p = el.a * (1.0 - el.e**2)
    k = n * J2 * (RADIUS / p) ** 2
    c = np.cos(el.i)
    raan_rate = -1.5 * k * c
    argp_rate = 0.75 * k * (5.0 * c * c - 1.0)
    mean_rate = n + 0.75 * k * np.sqrt(1.0 - el.e**2) * (3.0 * c * c - 1.0)
    return float(raan_rate), float(argp_rate), float(mean_rate)


def sun_synchronous_inclination(a: float, e: float = 0.0) -> float:
    """The inclination (rad, retrograde: in (π/2, π]) at which J₂ turns the node at the Sun's
    mean motion, 2π per tropical year (365.2422 days), so that the orbit plane keeps its
    angle to the Sun (Vallado, 4th ed., ch. 11): from dΩ/dt of :func:`secular_rates`,
    cos i = −(2/3) (dΩ/dt)_sun / (J₂ (R/p)² n), p = a (1 − e²), n = √(μ/a³).

    Raises:
        ValueError: for a bad ``a`` or ``e`` (as :func:`elements`), or where no inclination
            gives that rate (a above ~12 350 km for a circular orbit: J₂ is too weak there).
    """
    el = elements(a, e, 0.0, 0.0, 0.0, 0.0)
    n = mean_motion(el.a)
    p = el.a * (1.0 - el.e**2)
    cosine = -(2.0 / 3.0) * SUN_RATE / (J2 * (RADIUS / p) ** 2 * n)
    if not -1.0 <= cosine <= 1.0:
        raise ValueError(
            f"no sun-synchronous inclination exists for a = {el.a!r} m and e = {el.e!r}: J2 turns the "
            f"node at most {SUN_RATE / abs(cosine):.6g} rad/s there, the Sun moves at {SUN_RATE:.6g} rad/s"
        )
    return float(np.arccos(cosine))


@jitable
def eccentric_anomaly(M, e):
    """The eccentric anomaly E (rad) with E − e sin E = M (Kepler's equation), by
    :data:`KEPLER_ITERATIONS` Newton iterations (Vallado, 4th ed., algorithm 2) from Danby's
    start E₀ = M + 0.85 e sgn(sin M); M (rad, any value) and e (0 ≤ e < 1) floats or arrays.

    E is in the same revolution as M (E − M is 2π-periodic and odd in M): M is reduced to
    [−π, π) for the iteration and the whole revolutions are added back.
    """
    turns = np.floor((M + np.pi) / (2.0 * np.pi))
    m = M - 2.0 * np.pi * turns
    E = m + 0.85 * e * np.sign(np.sin(m))
    for _ in range(KEPLER_ITERATIONS):
        E = E - (E - e * np.sin(E) - m) / (1.0 - e * np.cos(E))
    return E + 2.0 * np.pi * turns


@jitable
def state(a, e, i, raan, argp, M, mu):
    """Position (m) and velocity (m/s), two 3-tuples in the inertial frame, on the Kepler
    orbit of the elements a (m), e, i, raan, argp (rad) at the mean anomaly M (rad) about a
    body of gravitational parameter mu (m³/s²); any argument a float or an array:
    :func:`state_at` of :func:`eccentric_anomaly`.
    """
    return state_at(a, e, i, raan, argp, eccentric_anomaly(M, e), mu)


@jitable
def state_at(a, e, i, raan, argp, E, mu):
    """Position (m) and velocity (m/s) as :func:`state`, at the eccentric anomaly E (rad):
    the anomaly of a circular orbit is its mean anomaly, which spares Kepler's equation.

    In the perifocal frame (x to the perigee, z along the angular momentum) r = a (cos E − e,
    √(1 − e²) sin E, 0) and v = (√(μa)/|r|) (−sin E, √(1 − e²) cos E, 0); the perifocal axes P
    and Q in the inertial frame are the first two columns of R_z(Ω) R_x(i) R_z(ω) (Vallado,
    4th ed., algorithm 10, COE2RV; Curtis ch. 4).
    """
    cE, sE = np.cos(E), np.sin(E)
    b = np.sqrt(1.0 - e * e)
    x, y = a * (cE - e), a * b * sE
    # |r| = a (1 − e cos E) ≥ a (1 − e) > 0: the division is always defined.
    speed = np.sqrt(mu * a) / (a * (1.0 - e * cE))
    vx, vy = -speed * sE, speed * b * cE
    cO, sO = np.cos(raan), np.sin(raan)
    ci, si = np.cos(i), np.sin(i)
    cw, sw = np.cos(argp), np.sin(argp)
    p = (cO * cw - sO * sw * ci, sO * cw + cO * sw * ci, sw * si)
    q = (-cO * sw - sO * cw * ci, -sO * sw + cO * cw * ci, cw * si)
    r = (x * p[0] + y * q[0], x * p[1] + y * q[1], x * p[2] + y * q[2])
    v = (vx * p[0] + vy * q[0], vx * p[1] + vy * q[1], vx * p[2] + vy * q[2])
    return r, v


def position_velocity(el: Elements, t, j2: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Position r (..., 3), m, and velocity v (..., 3), m/s, in the inertial frame at the
    times ``t`` (..., seconds since the epoch of ``el``; a float gives shape (3,)).

    Without ``j2`` the orbit is the two-body Kepler orbit (μ of the Earth). With ``j2`` the
    elements are mean elements: Ω, ω and M advance at :func:`secular_rates`, a, e and i stay.
    The short-period J₂ terms are not modelled: the osculating orbit oscillates about this one
    by ~km in position in LEO (and its mean motion differs from √(μ/a³) by ~1e-3), so for a
    precise trajectory integrate the perturbed equations of motion instead.

    Raises:
        ValueError: for bad elements (as :func:`elements`), non-finite or non-real ``t``, or a
            ``j2`` that is not True or False.
    """
    el = _checked(el)
    j2 = validation.boolean(j2, "j2")
    t = validation.finite_floats(t, "t")
    if j2:
        raan_rate, argp_rate, mean_rate = secular_rates(el)
    else:
        raan_rate, argp_rate, mean_rate = 0.0, 0.0, mean_motion(el.a)
    r, v = state(
        el.a,
        el.e,
        el.i,
        el.raan + raan_rate * t,
        el.argp + argp_rate * t,
        el.mean_anomaly + mean_rate * t,
        MU,
    )
    return np.stack(np.broadcast_arrays(*r), axis=-1), np.stack(np.broadcast_arrays(*v), axis=-1)

"""The orbit every body flies: a Keplerian orbit about the Earth from classical elements
(optionally with the J₂ secular drift of Ω, ω and M), the library's
:mod:`~rigidrot_gym.physics.environment.orbit`. Each episode starts at the scenario's epoch at a mean
anomaly drawn uniform in [0, 2π); a body's position at its episode time t = k·dt (step k)
is :func:`position`. The world frame is the inertial frame of
:mod:`~rigidrot_gym.physics.environment.earth` (ECI); what the orbit carries (the magnetic field) reads
its positions.

The default orbit is a 6U CubeSat's: circular at 500 km, Sun-synchronous (97.40°, the
inclination :func:`~rigidrot_gym.physics.environment.orbit.sun_synchronous_inclination` gives at that
altitude), as rideshare launches place them.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.components.declaration import Component, Draw, State
from rigidrot_gym.attitude.settings import Check, ScenarioError, Table, bounded, flag, invalid, setting
from rigidrot_gym.physics.environment import earth
from rigidrot_gym.physics.environment import orbit as kepler
from rigidrot_gym.physics.plumbing.jit import jitable

# Entries of Equipment.orbit: the elements at the epoch (m, rad) and the secular rates of
# Ω, ω and M (rad/s; the two-body mean motion alone without J₂).
A, ECC, INCLINATION, RAAN, ARGP, RAAN_RATE, ARGP_RATE, MEAN_RATE = range(8)
ELEMENTS = 8


def _epoch(value, where: str) -> str:
    try:
        earth.julian_date(value)
    except ValueError:
        raise invalid(where, EPOCH, value) from None
    return value


EPOCH = "an ISO 8601 UTC instant such as '2026-01-01T00:00:00Z'"
epoch = Check(EPOCH, _epoch)


class OrbitTable(Table, key="orbit"):
    """A Keplerian orbit about the Earth, from classical elements in the inertial frame."""

    enabled: bool = setting(
        False,
        check=flag,
        flat="orbit",
        switch=True,
        doc="the bodies fly this orbit (what depends on position, the magnetic field, follows it)",
    )
    semi_major_axis: float = setting(
        earth.RADIUS + 500e3,
        check=bounded(1e9, positive=True),
        unit="m",
        flat="orbit_semi_major_axis",
        doc="a (the default: 500 km above the equatorial radius)",
    )
    eccentricity: float = setting(0.0, check=bounded(0.99), flat="orbit_eccentricity", doc="e (0: circular)")
    inclination_deg: float = setting(
        97.40,
        check=bounded(180.0),
        unit="°",
        flat="orbit_inclination_deg",
        doc="i, from the equator (the default: Sun-synchronous at 500 km)",
    )
    raan_deg: float = setting(
        0.0,
        check=bounded(360.0),
        unit="°",
        flat="orbit_raan_deg",
        doc="right ascension of the ascending node Ω",
    )
    argp_deg: float = setting(
        0.0, check=bounded(360.0), unit="°", flat="orbit_argp_deg", doc="argument of perigee ω"
    )
    epoch: str = setting(
        "2026-01-01T00:00:00Z",
        check=epoch,
        flat="orbit_epoch",
        doc="the UTC instant every episode starts at (the Earth's rotation angle and the field's epoch)",
    )
    j2: bool = setting(
        False, check=flag, flat="orbit_j2", doc="Ω, ω and M drift at J₂'s secular rates (mean elements)"
    )


def elements_of(table: OrbitTable) -> kepler.Elements:
    """The table's elements (mean anomaly 0: each episode draws its own).

    Raises:
        ValueError: as :func:`~rigidrot_gym.physics.environment.orbit.elements` (a perigee inside the Earth).
    """
    return kepler.elements(
        table.semi_major_axis,
        table.eccentricity,
        np.radians(table.inclination_deg),
        np.radians(table.raan_deg),
        np.radians(table.argp_deg),
        0.0,
    )


def constants(table: OrbitTable) -> np.ndarray:
    """Equipment.orbit: the elements and their rates (entries ``A`` … ``MEAN_RATE``);
    zeros when off (the pipeline then never reads them)."""
    out = np.zeros(ELEMENTS)
    if not table.enabled:
        return out
    el = elements_of(table)
    rates = kepler.secular_rates(el) if table.j2 else (0.0, 0.0, kepler.mean_motion(el.a))
    out[[A, ECC, INCLINATION, RAAN, ARGP]] = el.a, el.e, el.i, el.raan, el.argp
    out[[RAAN_RATE, ARGP_RATE, MEAN_RATE]] = rates
    return out


def start(anomaly: np.ndarray, rows: np.ndarray, uniforms: np.ndarray) -> None:
    """The mean anomaly at the episode start of ``rows``: uniform in [0, 2π) from their
    uniforms (R,)."""
    anomaly[rows] = 2.0 * np.pi * uniforms


@jitable
def position(equipment, t, i):
    """Body i's position (3-tuple, m, inertial frame) at its episode time ``t`` (s)."""
    r, _ = state(equipment, t, i)
    return r


@jitable
def state(equipment, t, i):
    """Body i's position (m) and velocity (m/s), 3-tuples in the inertial frame, at its
    episode time ``t`` (s); the velocity of the osculating ellipse (with J2, without the
    node's and perigee's drift, 10⁻⁶ of it in low orbit). On a circular orbit the eccentric
    anomaly is the mean anomaly: Kepler's equation, four fifths of the cost, is solved only
    for an ellipse."""
    o = equipment.orbit
    mean_anomaly = equipment.anomaly[i] + o[MEAN_RATE] * t
    e = o[ECC]
    anomaly = mean_anomaly if e == 0.0 else kepler.eccentric_anomaly(mean_anomaly, e)
    return kepler.state_at(
        o[A], e, o[INCLINATION], o[RAAN] + o[RAAN_RATE] * t, o[ARGP] + o[ARGP_RATE] * t, anomaly, earth.MU
    )


@jitable
def nadir_motion(equipment, t, i):
    """Where body i's nadir points at its episode time ``t`` (s), as the gravity gradient
    reads it: (u, u̇, 3μ/r³, P, Q) with r̂ = cos u P + sin u Q the direction from the Earth,
    u = ω + f the argument of latitude and u̇ = ω̇ + n a² √(1 − e²)/r² its rate (f the true
    anomaly, n the mean motion), P = (cos Ω, sin Ω, 0) the ascending node and Q = ĥ × P,
    ĥ the orbit normal (Vallado, 4th ed., §2.2 and algorithm 10). Exact for a circular
    orbit; on an ellipse u̇ and r are those of time t."""
    o = equipment.orbit
    mean_anomaly = equipment.anomaly[i] + o[MEAN_RATE] * t
    e = o[ECC]
    if e == 0.0:
        true_anomaly, r = mean_anomaly, o[A]
    else:
        E = kepler.eccentric_anomaly(mean_anomaly, e)
        half = 0.5 * E
        true_anomaly = 2.0 * np.arctan2(np.sqrt(1.0 + e) * np.sin(half), np.sqrt(1.0 - e) * np.cos(half))
        r = o[A] * (1.0 - e * np.cos(E))
    raan, inclination = o[RAAN] + o[RAAN_RATE] * t, o[INCLINATION]
    u = o[ARGP] + o[ARGP_RATE] * t + true_anomaly
    u_rate = o[ARGP_RATE] + o[MEAN_RATE] * o[A] ** 2 * np.sqrt(1.0 - e * e) / (r * r)
    cO, sO, ci, si = np.cos(raan), np.sin(raan), np.cos(inclination), np.sin(inclination)
    return u, u_rate, 3.0 * earth.MU / r**3, (cO, sO, 0.0), (-ci * sO, ci * cO, si)


def _valid_elements(s) -> None:
    if s.orbit:
        try:
            elements_of(s.flight)
        except ValueError as err:
            raise ScenarioError(f"table orbit: {err}") from None


def _read(f) -> bool:
    """The components that read the orbit: the field, the Sun and a moving target along it,
    the gravity gradient that follows it, the spacecraft's sensors and its surfaces."""
    return (
        f.orbit_gravity
        or f.magnetic_field
        or f.magnetorquers
        or f.moving_target
        or f.sun
        or f.gyro
        or f.star_tracker
        or f.magnetometer
        or f.sun_sensors
        or f.surfaces
    )


def _reset(episode) -> None:
    start(episode.equipment.anomaly, episode.rows, episode.draws["orbit.phase"])


COMPONENT = Component(
    name="orbit",
    summary="a Keplerian orbit about the Earth from classical elements (J2's secular drift optional)",
    table=OrbitTable,
    attribute="flight",  # not `orbit`: that is the switch's keyword name
    on=lambda s: s.orbit,
    switch="orbit.enabled",
    rules=(_valid_elements,),
    state=(
        State(
            "anomaly",
            "(N,) the orbit's mean anomaly at the episode start, rad",
            lambda b: np.zeros(b.bodies),
            _read,
        ),
        State(
            "orbit",
            "(ELEMENTS,) the orbit's elements and rates (entries A …)",
            lambda b: constants(b.scenario.flight),
            _read,
        ),
    ),
    reset=_reset,
    realism_block=True,
    draws=(Draw("phase", 1),),
)

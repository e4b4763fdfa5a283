"""The gravity-gradient torque of a circular orbit, 3n² r̂ × (J r̂) (Wertz 1978 §17.2):
r̂ is the direction from the Earth, turning at the orbit's mean motion n about world z
(the orbit normal), from a phase drawn per episode. With ``[orbit]`` (:func:`hold_orbit`)
it is the scenario's orbit's: 3μ/r³, r̂ turning in that orbit's plane from the body's
position at the period's start at its rate of then (exact on a circular orbit; on an
ellipse the strength and rate are held over the period). The torque itself is the library's
compiled term (:class:`rigidrot_gym.physics.rotation.torques.GravityGradient`), evaluated at every
integrator stage; this component holds its parameters.

A component in full, as the guide "How to add a component" (docs) describes: its
scenario table (:class:`GravityGradientTable`, ``[gravity_gradient]``), its per-episode
draw (:func:`start`), its constants (:func:`constants`) and its part of the control period
(:func:`hold`).
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.components import orbit
from rigidrot_gym.attitude.components.declaration import Component, Feature, State
from rigidrot_gym.attitude.settings import ScenarioError, Table, flag, positive, setting
from rigidrot_gym.physics.environment import earth
from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import torques


class GravityGradientTable(Table, key="gravity_gradient"):
    """The gravity gradient of a circular orbit about the Earth (orbit normal = world z)."""

    enabled: bool = setting(
        False,
        check=flag,
        flat="gravity_gradient",
        legacy=("disturbance.gravity_gradient",),
        switch=True,
        doc="the gravity-gradient torque 3n² r̂ × (J r̂), at every integrator stage",
    )
    orbit_altitude: float = setting(
        500e3,
        check=positive,
        unit="m",
        flat="orbit_altitude",
        legacy=("disturbance.orbit_altitude",),
        doc="of the circular orbit, above the Earth's equatorial radius (with [orbit]: that orbit's)",
    )


def mean_motion(altitude: float) -> float:
    """n = √(μ/R³) (rad/s) of a circular orbit ``altitude`` (m) above the equator's radius."""
    altitude = validation.scalar(altitude, "orbit_altitude", positive=True)
    return float(np.sqrt(earth.MU / (earth.RADIUS + altitude) ** 3))


def constants(table: GravityGradientTable, dt: float) -> tuple[float, float, float]:
    """3n² (1/s²), n (rad/s) and the orbit phase advance per control period ``dt`` (rad);
    zeros when off (the pipeline then never reads them)."""
    motion = mean_motion(table.orbit_altitude) if table.enabled else 0.0
    return 3.0 * motion**2, motion, motion * dt


def start(phase: np.ndarray, rows: np.ndarray, uniforms: np.ndarray) -> None:
    """The orbit phase at the episode start of ``rows``: uniform in [0, 2π) from their
    uniforms (R,)."""
    phase[rows] = 2.0 * np.pi * uniforms


@jitable
def hold(equipment, bodies, params, i):
    """Body i's gravity-gradient parameters: 3n², n, the orbit phase at its episode step,
    the orbit plane (world x and y) and its principal moments."""
    phase = equipment.phase[i] + equipment.phase_per_period * bodies.steps[i]
    _hold(
        params,
        equipment.gravity_rate,
        equipment.mean_motion,
        phase,
        (1.0, 0.0, 0.0),
        (0.0, 1.0, 0.0),
        bodies,
        i,
    )


@jitable
def hold_orbit(equipment, bodies, params, t, i):
    """Body i's gravity-gradient parameters along the scenario's orbit at its episode time
    ``t`` (s): 3μ/r³, the argument of latitude, its rate and the orbit plane of that time
    (:func:`~rigidrot_gym.attitude.components.orbit.nadir_motion`)."""
    u, rate, strength, p, q = orbit.nadir_motion(equipment, t, i)
    _hold(params, strength, rate, u, p, q, bodies, i)


@jitable
def _hold(params, strength, rate, phase, p, q, bodies, i):
    params[torques.GG_RATE, i], params[torques.GG_MOTION, i], params[torques.GG_PHASE, i] = (
        strength,
        rate,
        phase,
    )
    a = torques.GG_PLANE
    params[a, i], params[a + 1, i], params[a + 2, i] = p
    params[a + 3, i], params[a + 4, i], params[a + 5, i] = q
    g, m = torques.GG_MOMENTS, bodies.moments
    params[g, i], params[g + 1, i], params[g + 2, i] = m[0, i], m[1, i], m[2, i]


def _altitude_is_the_orbits(s) -> None:
    if s.orbit and s.gravity_gradient and s.orbit_altitude != GravityGradientTable.orbit_altitude:
        raise ScenarioError(
            "field gravity_gradient.orbit_altitude is the circular orbit's without [orbit]; with "
            f"orbit.enabled the gravity gradient follows that orbit: leave it out, got {s.orbit_altitude!r}"
        )


def _reset(episode) -> None:
    start(episode.equipment.phase, episode.rows, episode.draws["orbit.phase"])


def _constant(k: int):
    """The maker of entry k of :func:`constants`."""
    return lambda b: constants(b.scenario.gravity, b.scenario.dt)[k]


COMPONENT = Component(
    name="gravity_gradient",
    summary="the gravity-gradient torque 3n² r̂ × (J r̂) of a circular orbit, or of ``[orbit]``'s",
    table=GravityGradientTable,
    attribute="gravity",
    on=lambda s: s.gravity_gradient,
    switch="gravity_gradient.enabled",
    rules=(_altitude_is_the_orbits,),
    features=(
        Feature("gravity_gradient", lambda s, f: s.gravity_gradient, "3n² r̂ × (I r̂) of a circular orbit"),
        # the field reads the orbit whatever this says: a flag of its own would compile a
        # kernel per combination for nothing
        Feature(
            "orbit_gravity",
            lambda s, f: s.orbit and s.gravity_gradient,
            "the gravity gradient follows the scenario's orbit",
        ),
    ),
    state=(
        State(
            "phase",
            "(N,) orbit phase at the episode start, rad",
            lambda b: np.zeros(b.bodies),
            lambda f: f.gravity_gradient,
        ),
        State(
            "gravity_rate", "3n² of the gravity gradient, 1/s²", _constant(0), lambda f: f.gravity_gradient
        ),
        State("mean_motion", "n of its circular orbit, rad/s", _constant(1), lambda f: f.gravity_gradient),
        State(
            "phase_per_period",
            "the orbit phase advance per control period, rad",
            _constant(2),
            lambda f: f.gravity_gradient,
        ),
    ),
    reset=_reset,  # its phase is the orbit's draw: a circular orbit's phase is its mean anomaly
)

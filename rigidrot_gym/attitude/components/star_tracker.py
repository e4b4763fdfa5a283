"""A star tracker on each body: the library's :mod:`~rigidrot_gym.physics.sensors.star_tracker`
(noise-equivalent angles across and about the boresight, the boresight's mounting, NASA
42's exclusion cones about the Sun and beyond the Earth's limb).

Every ``period`` control periods (the first at an episode's start) it measures the body's
attitude at the period's end, unless the Sun or the Earth is inside its exclusion cone,
seen from the body's position on the orbit (:mod:`~rigidrot_gym.attitude.components.sunlight`);
without ``[orbit]`` nothing blinds it. Its last measurement is held between them, with a
flag that says whether it is this period's (the observation's column after the pending
action's and before the Sun sensors': :func:`~rigidrot_gym.attitude.task.observation_columns`).
The noise comes from the body's navigation stream.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rigidrot_gym.attitude import variates
from rigidrot_gym.attitude.components import orbit
from rigidrot_gym.attitude.components.declaration import Column, Component, Feature, State
from rigidrot_gym.attitude.settings import (
    PRESET,
    Table,
    choice,
    integer,
    non_negative,
    or_preset,
    or_preset_value,
    quaternion,
    setting,
)
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.sensors import star_tracker as tracker_model

_ARCSEC = np.pi / 180.0 / 3600.0  # rad


class TrackerModel(NamedTuple):
    """Equipment.tracker_model: its noise, mounting and exclusion cones, as the library's
    :class:`~rigidrot_gym.physics.sensors.star_tracker.StarTrackerModel` names them, its
    period and whether it sees the orbit's Sun and Earth (zeros without one)."""

    noise_across: float  # σ_a about each sensor axis across the boresight, rad
    noise_about: float  # σ_b about the boresight, rad
    mounting: tuple[float, float, float, float]  # the sensor frame to the body frame
    sun_exclusion: float  # half-angle of the cone about the Sun it is blind in, rad
    earth_exclusion: float  # how near the boresight may come to the Earth's limb, rad
    period: float  # control periods between measurements (a whole number)
    sees_orbit: bool  # an orbit places the Sun and the Earth (else nothing blinds it)


# Columns of Equipment.tracker: the last measured attitude (body to world), and 1 when it
# is this period's.
Q, FRESH = slice(0, 4), 4
STATE = 5
COLUMNS = 1


class StarTrackerTable(Table, key="star_tracker"):
    """A star tracker (the estimator's attitude updates; the observed attitude with
    ``navigation.observe`` "sensors")."""

    model: str = setting(
        "none",
        check=choice(("none", *tracker_model.PRESETS)),
        flat="star_tracker_model",
        switch=True,
        doc='"none" or a preset of physics.sensors.star_tracker: "42" (NASA 42: 2″, 2″, 20″; Sun 30°, Earth '
        "limb 10°); one more column, 1 when the period brought a measurement",
    )
    mounting: np.ndarray = setting(
        (1.0, 0.0, 0.0, 0.0),
        check=quaternion,
        flat="star_tracker_mounting",
        doc="the sensor frame to the body frame; the boresight is the sensor's +z",
    )
    period: int = setting(
        1, check=integer(1, 10**9), flat="star_tracker_period", doc="control periods between measurements"
    )
    noise_across_arcsec: float | str = setting(
        PRESET,
        check=or_preset(non_negative),
        unit="″",
        flat="star_tracker_noise_across_arcsec",
        doc="1σ noise-equivalent angle about each axis across the boresight (42's preset: 2)",
    )
    noise_about_arcsec: float | str = setting(
        PRESET,
        check=or_preset(non_negative),
        unit="″",
        flat="star_tracker_noise_about_arcsec",
        doc="1σ noise-equivalent angle about the boresight (42's preset: 20)",
    )


def model_of(table: StarTrackerTable) -> tracker_model.StarTrackerModel:
    """The library's model of the table's star tracker: the preset's, with the noise the
    table gives in its place and the table's mounting."""
    preset = tracker_model.PRESETS[table.model]

    return tracker_model.StarTrackerModel(
        noise_across=or_preset_value(table.noise_across_arcsec, _ARCSEC, preset.noise_across),
        noise_about=or_preset_value(table.noise_about_arcsec, _ARCSEC, preset.noise_about),
        mounting=tuple(table.mounting),
        sun_exclusion=preset.sun_exclusion,
        earth_exclusion=preset.earth_exclusion,
    )


def constants(table: StarTrackerTable, orbit_table: orbit.OrbitTable) -> TrackerModel:
    """Equipment.tracker_model (:func:`model_of`); zeros without one."""
    if table.model == "none":
        return TrackerModel(0.0, 0.0, (0.0, 0.0, 0.0, 0.0), 0.0, 0.0, 0.0, False)
    model = model_of(table)
    return TrackerModel(
        noise_across=model.noise_across,
        noise_about=model.noise_about,
        mounting=tuple(float(c) for c in table.mounting),
        sun_exclusion=model.sun_exclusion,
        earth_exclusion=model.earth_exclusion,
        period=float(table.period),
        sees_orbit=bool(orbit_table.enabled),
    )


def covariance(table: StarTrackerTable) -> np.ndarray:
    """(3, 3) the covariance of its error in the body frame, rad² (the estimator's R)."""
    return tracker_model.covariance(model_of(table))


@jitable
def measure(equipment, q, r, to_sun, step, normals, i):
    """Body i's measurement of its attitude ``q`` (4-tuple, body frame to world) at episode
    step ``step``, at the position ``r`` with the Sun along ``to_sun`` (3-tuples, world
    frame; read only with an orbit), if one is due and it sees the stars, into
    ``equipment.tracker[i]``; returns whether it measured. ``normals``: the step's normals
    of its navigation stream."""
    m, out = equipment.tracker_model, equipment.tracker
    mounting = m.mounting
    due = step % int(m.period) == 0
    if due and m.sees_orbit:
        due = tracker_model.blinded(q, mounting, r, to_sun, m.sun_exclusion, m.earth_exclusion) == 0.0
    out[i, FRESH] = 1.0 if due else 0.0
    if due:
        n = variates.TRACKER_NORMALS
        xi = (normals[n], normals[n + 1], normals[n + 2])
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = tracker_model.measure(
            q, mounting, m.noise_across, m.noise_about, xi
        )
    return due


@jitable
def hold(equipment, q, i):
    """Hold ``q`` (4-tuple) as body i's last measurement (the attitude known at an
    episode's start, until a first measurement)."""
    out = equipment.tracker
    out[i, 0], out[i, 1], out[i, 2], out[i, 3] = q


@jitable
def measured(equipment, i):
    """Body i's last measured attitude (4-tuple, body frame to world)."""
    m = equipment.tracker
    return (m[i, 0], m[i, 1], m[i, 2], m[i, 3])


@jitable
def observe(equipment, obs, column, i):
    """Body i's flag (1: this period measured) into ``obs[i, column]``."""
    obs[i, column] = equipment.tracker[i, FRESH]


def _observe_of(features):
    """The observation's hook: body i's flag of a fresh measurement."""
    if not features.star_tracker:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        observe(equipment, out.obs, column, i)
        return column + COLUMNS

    return write


COMPONENT = Component(
    name="star_tracker",
    summary="a star tracker: attitude measurements with its noise, mounting, exclusion cones and period",
    table=StarTrackerTable,
    on=lambda s: s.star_tracker_model != "none",
    switch="star_tracker.model",
    features=(
        Feature(
            "star_tracker",
            lambda s, f: s.star_tracker_model != "none",
            "a star tracker measures the attitude",
        ),
    ),
    state=(
        State(
            "tracker",
            "(N, STATE) the last measured attitude and its flag",
            lambda b: np.zeros((b.bodies if b.features.star_tracker else 0, STATE)),
            lambda f: f.star_tracker,
        ),
        State(
            "tracker_model",
            "its errors, mounting, cones, period (TrackerModel)",
            lambda b: constants(b.scenario.star_tracker, b.scenario.flight),
            lambda f: f.star_tracker,
            record=TrackerModel,
        ),
    ),
    navigation_normals=3,
    noisy="star_tracker",
    columns=(
        Column(
            "star_tracker_flag",
            "1 when the star tracker measured in this period, else 0",
            0.0,
            1.0,
            lambda s, actuators: COLUMNS if s.star_tracker_model != "none" else 0,
            "1",
            "``star_tracker_model``",
            unit="1 (a flag)",
        ),
    ),
    observe=_observe_of,
)

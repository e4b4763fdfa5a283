"""Coarse Sun sensors on each body: the library's :mod:`~rigidrot_gym.physics.sensors.sun_sensors`
(Basilisk's ``coarseSunSensor``: the cosine of the Sun's angle to each sensor's normal,
zero outside its field of view, scaled by (1 AU/r)² and the Earth's shadow, plus white
noise, clamped), at the end of each period, with the Sun of
:mod:`~rigidrot_gym.attitude.components.sunlight` seen from the body's position.

Their outputs over the scale (clipped to [0, 1]) are columns of the observation, one per
sensor, after the star tracker's flag and before the Sun's and the field's
(:func:`~rigidrot_gym.attitude.task.observation_columns`). With ``navigation.observe``
"estimate" the MEKF corrects its attitude with the Sun's direction the sensors give
(:func:`~rigidrot_gym.physics.sensors.sun_sensors.direction`: the least-squares direction over
the sensors lit above 5σ, wherever three non-coplanar ones are) against the ephemeris's,
taking each axis's error as white of std σ/ℓ, ℓ the output at normal incidence the least
squares found. The noise comes from the body's navigation stream.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rigidrot_gym.attitude import variates
from rigidrot_gym.attitude.components.declaration import Column, Component, Feature, Need, State
from rigidrot_gym.attitude.settings import ScenarioError, Table, bounded, choice, setting
from rigidrot_gym.physics.environment import sun
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qrotate_inv
from rigidrot_gym.physics.sensors import sun_sensors as sensor_model

MAX_SENSORS = 6  # the navigation stream holds six normals a step for them


class SunSensorModel(NamedTuple):
    """Equipment.sun_sensor_model: their response and errors, as the library's
    :class:`~rigidrot_gym.physics.sensors.sun_sensors.CoarseSunSensors` names them (zeros
    without sensors)."""

    cos_fov: float  # cosine of the field of view's half-angle
    kelly: float  # the Kelly factor of the cosine law's fall-off near the edge
    scale: float  # the output at normal incidence, 1 AU, in sunlight
    noise: float  # per-output white noise std
    lowest: float  # the least output
    highest: float  # the most output


class SunSensorTable(Table, key="sun_sensors"):
    """Coarse Sun sensors (need ``[orbit]``): one more column each."""

    model: str = setting(
        "none",
        check=choice(("none", *sensor_model.PRESETS)),
        flat="sun_sensor_model",
        switch=True,
        doc='"none" or a preset of physics.sensors.sun_sensors: "cube" (six, one on each face, 90° field of '
        "view); one more column per sensor, its output over its scale",
    )
    noise: float = setting(
        0.01,
        check=bounded(1.0),
        flat="sun_sensor_noise",
        doc="std of each output's white noise, as a share of its output at normal incidence",
    )


def sensors_of(table: SunSensorTable) -> sensor_model.CoarseSunSensors | None:
    """The preset with the table's noise; None without sensors."""
    if table.model == "none":
        return None
    preset = sensor_model.PRESETS[table.model]
    return sensor_model.CoarseSunSensors(
        preset.normals,
        field_of_view=preset.field_of_view,
        kelly=preset.kelly,
        scale=preset.scale,
        noise=table.noise * preset.scale,
        max_output=preset.max_output,
        min_output=preset.min_output,
    )


def constants(table: SunSensorTable) -> tuple[SunSensorModel, np.ndarray]:
    """Equipment.sun_sensor_model and the normals (k, 3)."""
    sensors = sensors_of(table)
    if sensors is None:
        return SunSensorModel(0.0, 0.0, 0.0, 0.0, 0.0, 0.0), np.zeros((0, 3))
    model = SunSensorModel(
        cos_fov=float(np.cos(sensors.field_of_view)),
        kelly=sensors.kelly,
        scale=sensors.scale,
        noise=sensors.noise,
        lowest=sensors.min_output,
        highest=sensors.max_output,
    )
    return model, np.ascontiguousarray(sensors.normals)


def count(table: SunSensorTable) -> int:
    """The sensors' number, k (0 without sensors)."""
    sensors = sensors_of(table)
    return 0 if sensors is None else sensors.count


@jitable
def read(equipment, q, to_sun, shadow, normals, i):
    """Body i's outputs at attitude ``q`` (4-tuple, body frame to world), with the Sun along
    ``to_sun`` (3-tuple, m, world frame) and the shadow factor ``shadow``, into
    ``equipment.sun_sensors[i]``; ``normals``: the step's normals of its navigation stream."""
    m, n, out = equipment.sun_sensor_model, equipment.sun_sensor_normals, equipment.sun_sensors
    k = n.shape[0]
    distance = vec.norm(to_sun)
    body = qrotate_inv(q, vec.scale(1.0 / distance, to_sun))
    for j in range(k):
        clean = sensor_model.response(
            (n[j, 0], n[j, 1], n[j, 2]), body, distance / sun.AU, shadow, m.cos_fov, m.kelly, m.scale
        )
        out[i, j] = min(max(clean + m.noise * normals[variates.SUN_SENSOR_NORMALS + j], m.lowest), m.highest)


@jitable
def direction(equipment, i):
    """The Sun's direction in body i's frame from its last outputs (3-tuple), and the
    variance the estimator takes for each axis of its error, (σ/ℓ)², ℓ the output at
    normal incidence the least squares found (:func:`~rigidrot_gym.physics.sensors.sun_sensors.direction`;
    the scale × (1 AU/r)² × ν: in the penumbra the same noise turns it further); a variance
    of 0 when three non-coplanar sensors do not read it above 5σ (a dark sensor over 3σ,
    one reading in 740, would halve its axis's component)."""
    m = equipment.sun_sensor_model
    unit, length = sensor_model.direction(
        equipment.sun_sensor_normals, equipment.sun_sensors[i], 5.0 * m.noise
    )
    return unit, (m.noise / length) ** 2 if length > 0.0 else 0.0


@jitable
def observe(equipment, obs, column, i):
    """Body i's outputs over their scale, clipped to [0, 1], into ``obs[i, column:column + k]``."""
    scale = equipment.sun_sensor_model.scale
    for j in range(equipment.sun_sensors.shape[1]):
        obs[i, column + j] = min(max(equipment.sun_sensors[i, j] / scale, 0.0), 1.0)


def _at_most_six(s) -> None:
    if count(s.sun_sensors) > MAX_SENSORS:
        raise ScenarioError(f"sun_sensors.model: at most {MAX_SENSORS} sensors")


def _observe_of(features):
    """The observation's hook: body i's Sun sensors' readings."""
    if not features.sun_sensors:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        observe(equipment, out.obs, column, i)
        return column + equipment.sun_sensors.shape[1]

    return write


COMPONENT = Component(
    name="sun_sensors",
    summary="coarse Sun sensors: cosine response (Kelly), field of view, noise, albedo-free",
    table=SunSensorTable,
    on=lambda s: s.sun_sensor_model != "none",
    switch="sun_sensors.model",
    needs=(Need("orbit", "the Sun it reads"),),
    rules=(_at_most_six,),
    features=(
        Feature("sun_sensors", lambda s, f: s.sun_sensor_model != "none", "coarse Sun sensors read the Sun"),
    ),
    state=(
        State(
            "sun_sensors",
            "(N, k) the coarse Sun sensors' last outputs",
            lambda b: np.zeros((b.bodies if b.features.sun_sensors else 0, count(b.scenario.sun_sensors))),
            lambda f: f.sun_sensors,
        ),
        State(
            "sun_sensor_model",
            "their response and errors (SunSensorModel)",
            lambda b: constants(b.scenario.sun_sensors)[0],
            lambda f: f.sun_sensors,
            record=SunSensorModel,
        ),
        State(
            "sun_sensor_normals",
            "(k, 3) their normals, body frame",
            lambda b: constants(b.scenario.sun_sensors)[1],
            lambda f: f.sun_sensors,
        ),
    ),
    navigation_normals=MAX_SENSORS,
    noisy="sun_sensors",
    columns=(
        Column(
            "sun_sensors",
            "each coarse Sun sensor's output over its scale (clipped to [0, 1])",
            0.0,
            1.0,
            lambda s, actuators: count(s.sun_sensors),
            "one per sensor",
            "``sun_sensor_model``",
            unit="the sensor's scale (its output at normal incidence, 1 AU, in sunlight)",
        ),
    ),
    observe=_observe_of,
)

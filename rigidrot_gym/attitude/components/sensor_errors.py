"""The sensors' calibration errors, drawn per episode: each sensor's mounting misalignment,
its scale factors and, for the coarse Sun sensors, a constant bias (a randomisation, seeded
by each body's generator, as every per-episode draw).

At each episode start every body draws, as standard normals times the ``[sensor_errors]``
table's 1σ values:

* a small rotation of each sensor from its nominal mounting, a rotation vector δ with each
  component N(0, σ_δ²) (``misalignment_deg``): the gyro's three axes, the magnetometer's
  three axes and each coarse Sun sensor's boresight turn together by R(δ), one δ per sensor
  (a boresight does not see the part of δ along it). A sensor reads a body-frame vector v
  along its turned axes: M v with M = R(δ)ᵀ (the direction-cosine matrix from the body frame
  to the sensor's, Basilisk's ``dcm_SB``), R(δ) the rotation by δ (exact, not linearised);
* a scale-factor error s per axis (gyro, magnetometer) or per sensor (Sun sensors),
  N(0, σ_s²) with σ_s in ppm;
* for each Sun sensor, a constant bias b, N(0, σ_b²) in output units (a share of the output at
  normal incidence). The gyro's bias (its Farrenkopf bias, drawn per episode with
  ``gyro.initial_bias_deg_per_hour`` and walking on) and the magnetometer's
  (``magnetometer.bias``) are those sensors' own, and stay theirs: they are not drawn twice.

What each sensor then measures, in the order of the model each is compared with:

* gyro: ω̃ = (I + S) M ω̄ + β + η, S = diag(s) (the usual scale-factor and misalignment
  model, e.g. Markley & Crassidis, *Fundamentals of Spacecraft Attitude Determination and
  Control*, 2014, ch. 4, here with the misalignment a rotation), then the gyro's own
  quantisation and full scale (:mod:`~rigidrot_gym.attitude.components.gyro`);
* magnetometer: b̃ = sat(quant((I + S)(M B + β + σ ξ))), the bias and the noise added in the
  sensor's axes before the scale factor, as Basilisk's ``magnetometer`` orders them
  (``applySensorErrors``: the noise and ``senBias``, then × ``scaleFactor``; its scale factor
  is one number for the three axes, so the test runs it once per axis);
* each Sun sensor: y = clamp((1 + s)(f γ + b + σ ξ)), γ the cosine response of
  :mod:`~rigidrot_gym.physics.sensors.sun_sensors` along the turned boresight R(δ) n̂
  (R(δ) n̂ · ŝ = n̂ · M ŝ), f the scale,
  the bias and the noise added before the scale factor, as Basilisk's ``coarseSunSensor``
  (``scaleFactor`` = f (1 + s), ``senBias`` = b / f; like it, the bias shows where the Sun is
  outside the field of view, and in eclipse).

The errors are the sensors', not the estimator's: the MEKF
(:mod:`~rigidrot_gym.attitude.components.navigation`) keeps its nominal model (unit scale,
the nominal axes and normals, no Sun-sensor bias), as a flight filter knows only its
calibration; the batch's ``info`` holds the drawn errors (true values) to measure it against.

Defaults, 1σ: misalignment 1 mrad (0.0573°; Safran/Sensonor STIM300 datasheet, gyro axis
misalignment 1 mrad), gyro scale factor 500 ppm (STIM300, scale-factor accuracy ±500 ppm,
read as 1σ; NASA 42's ``SC_Simple.txt`` gyro has 100 ppm), magnetometer scale factor 0.5 %
(Honeywell HMR2300 datasheet, accuracy < 0.5 % of full scale at ±1 gauss, read as 1σ of the
scale), Sun sensors' scale factor 1 % and bias 0.005 of the scale (no datasheet gives a
photodiode's calibration error; together with the misalignment, a cube of six gives a Sun
direction error of the order of the ±2° (3σ) of Bradford's coarse Sun sensor).

Left out: the Earth's albedo on the Sun sensors (Basilisk's ``albedo`` runs offline only
with its planet-average model, not with the CERES maps, so no match was attempted);
non-orthogonal axes (a misalignment per axis rather than per sensor); errors that change
within an episode.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude import variates
from rigidrot_gym.attitude.components import sun_sensors
from rigidrot_gym.attitude.components.declaration import Component, Draw, Feature, Info, State
from rigidrot_gym.attitude.settings import ScenarioError, Table, bounded, flag, setting
from rigidrot_gym.physics.environment import sun
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qrotate_inv
from rigidrot_gym.physics.sensors import magnetometer as magnetometer_model
from rigidrot_gym.physics.sensors import sun_sensors as sensor_model

# Columns of Equipment.gyro_errors and .magnetometer_errors: the rotation vector δ (rad), the
# scale-factor errors s, and the matrix the reading applies (row by row): (I + S) M for the
# gyro, M for the magnetometer (whose scale factor acts after its bias).
TURN, SCALE, MATRIX = slice(0, 3), slice(3, 6), slice(6, 15)
AXES = 15
# The last axis of Equipment.sun_sensor_errors: each sensor's δ, s, b and turned normal M n̂.
SUN_TURN, SUN_SCALE, SUN_BIAS, SUN_NORMAL = slice(0, 3), 3, 4, slice(5, 8)
SUN = 8
PPM = 1e-6


class SensorErrorsTable(Table, key="sensor_errors"):
    """The sensors' misalignment, scale factors and biases, drawn per episode (needs a gyro,
    a magnetometer or coarse Sun sensors); 1σ values."""

    enabled: bool = setting(
        False,
        check=flag,
        flat="sensor_errors",
        switch=True,
        doc="each body draws its sensors' errors at every episode start (the MEKF keeps its nominal model)",
    )
    misalignment_deg: float = setting(
        0.0573,
        check=bounded(10.0),
        unit="deg",
        flat="sensor_misalignment_deg",
        doc="per-axis std of each sensor's mounting rotation: the gyro's, the magnetometer's, each Sun "
        "sensor's boresight (STIM300: 1 mrad)",
    )
    gyro_scale_factor_ppm: float = setting(
        500.0,
        check=bounded(1e5),
        unit="ppm",
        flat="gyro_scale_factor_ppm",
        doc="std of the gyro's scale-factor error, per axis (STIM300: ±500 ppm)",
    )
    magnetometer_scale_factor_ppm: float = setting(
        5000.0,
        check=bounded(1e5),
        unit="ppm",
        flat="magnetometer_scale_factor_ppm",
        doc="std of the magnetometer's scale-factor error, per axis, applied after its bias (HMR2300: 0.5 %)",
    )
    sun_sensor_scale_factor_ppm: float = setting(
        10000.0,
        check=bounded(1e5),
        unit="ppm",
        flat="sun_sensor_scale_factor_ppm",
        doc="std of each coarse Sun sensor's scale-factor error, applied after its bias",
    )
    sun_sensor_bias: float = setting(
        0.005,
        check=bounded(1.0),
        flat="sun_sensor_bias",
        doc="std of each coarse Sun sensor's constant bias, a share of its output at normal incidence",
    )


def axes(turn: np.ndarray) -> np.ndarray:
    """M = R(δ)ᵀ (..., 3, 3) of rotation vectors δ (..., 3), rad: the direction-cosine matrix
    from the body frame to the axes turned by δ (what a sensor turned by δ reads of a
    body-frame vector)."""
    return np.swapaxes(quat.to_matrix(quat.from_rotvec(turn)), -1, -2)


def _rows(on: bool, bodies: int, *shape: int) -> np.ndarray:
    return np.zeros((bodies if on else 0, *shape))


def _reset(episode) -> None:
    """Each starting body's errors, from its draws."""
    s, e, rows, d = episode.batch.scenario, episode.equipment, episode.rows, episode.draws
    turn = np.radians(s.sensor_misalignment_deg)
    if e.gyro_errors.shape[0]:
        delta, scale = (
            turn * d["sensor_errors.gyro_turn"],
            s.gyro_scale_factor_ppm * PPM * d["sensor_errors.gyro_scale"],
        )
        e.gyro_errors[rows, TURN], e.gyro_errors[rows, SCALE] = delta, scale
        e.gyro_errors[rows, MATRIX] = ((1.0 + scale)[:, :, None] * axes(delta)).reshape(-1, 9)
    if e.magnetometer_errors.shape[0]:
        delta = turn * d["sensor_errors.magnetometer_turn"]
        scale = s.magnetometer_scale_factor_ppm * PPM * d["sensor_errors.magnetometer_scale"]
        e.magnetometer_errors[rows, TURN], e.magnetometer_errors[rows, SCALE] = delta, scale
        e.magnetometer_errors[rows, MATRIX] = axes(delta).reshape(-1, 9)
    if e.sun_sensor_errors.shape[0]:
        k = e.sun_sensor_errors.shape[1]
        delta = turn * d["sensor_errors.sun_turn"].reshape(-1, sun_sensors.MAX_SENSORS, 3)[:, :k]
        scale = s.sun_sensor_scale_factor_ppm * PPM * d["sensor_errors.sun_scale"][:, :k]
        bias = s.sun_sensor_bias * e.sun_sensor_model.scale * d["sensor_errors.sun_bias"][:, :k]
        turned = np.einsum("rkij,kj->rki", np.swapaxes(axes(delta), -1, -2), e.sun_sensor_normals)
        out = e.sun_sensor_errors
        out[rows, :, SUN_TURN], out[rows, :, SUN_NORMAL] = delta, turned
        out[rows, :, SUN_SCALE], out[rows, :, SUN_BIAS] = scale, bias


@jitable
def _apply(m, i, v):
    """Row i's 3 × 3 matrix (columns MATRIX of ``m``) times the 3-tuple ``v``."""
    return (
        m[i, 6] * v[0] + m[i, 7] * v[1] + m[i, 8] * v[2],
        m[i, 9] * v[0] + m[i, 10] * v[1] + m[i, 11] * v[2],
        m[i, 12] * v[0] + m[i, 13] * v[1] + m[i, 14] * v[2],
    )


@jitable
def turned_rate(equipment, rate, i):
    """(I + S) M ω: what body i's gyro axes, turned and scaled, read of the body rate ``rate``
    (3-tuple, rad/s), before the gyro's own errors."""
    return _apply(equipment.gyro_errors, i, rate)


@jitable
def read_magnetometer(equipment, field_body, normals, i):
    """Body i's magnetometer with its errors: sat(quant((1 + s_k)((M B)_k + β_k + σ ξ_k))) on
    each axis k, of the body-frame field ``field_body`` (3-tuple, T), into
    ``equipment.magnetometer[i, READING]``; ``normals``: the step's of its navigation stream
    (the same as :func:`~rigidrot_gym.attitude.components.magnetometer.read` takes)."""
    m, out, e = equipment.magnetometer_model, equipment.magnetometer, equipment.magnetometer_errors
    n = variates.MAGNETOMETER_NORMALS
    sensed = _apply(e, i, field_body)
    for k in range(3):
        value = (1.0 + e[i, 3 + k]) * (sensed[k] + out[i, k] + m.noise * normals[n + k])
        out[i, 3 + k] = magnetometer_model.quantise_clip(value, m.quantum, m.saturation)


@jitable
def read_sun_sensors(equipment, q, to_sun, shadow, normals, i):
    """Body i's coarse Sun sensors with their errors: clamp((1 + s)(f γ + b + σ ξ)) each, γ along
    the turned normal,
    at attitude ``q`` with the Sun along ``to_sun`` (3-tuple, m, world frame) and the shadow
    factor ``shadow``, into ``equipment.sun_sensors[i]`` (the arguments of
    :func:`~rigidrot_gym.attitude.components.sun_sensors.read`)."""
    m, e, out = equipment.sun_sensor_model, equipment.sun_sensor_errors, equipment.sun_sensors
    distance = vec.norm(to_sun)
    body = qrotate_inv(q, vec.scale(1.0 / distance, to_sun))
    for j in range(out.shape[1]):
        clean = sensor_model.response(
            (e[i, j, 5], e[i, j, 6], e[i, j, 7]), body, distance / sun.AU, shadow, m.cos_fov, m.kelly, m.scale
        )
        value = (1.0 + e[i, j, 3]) * (clean + e[i, j, 4] + m.noise * normals[variates.SUN_SENSOR_NORMALS + j])
        out[i, j] = min(max(value, m.lowest), m.highest)


def _a_sensor(s) -> None:
    if s.sensor_errors and s.gyro_model == s.magnetometer_model == s.sun_sensor_model == "none":
        raise ScenarioError(
            "sensor_errors.enabled needs gyro.model, magnetometer.model or sun_sensors.model "
            "(the sensors whose errors it draws), got none of them"
        )


def _on(sensor: str):
    return lambda f: f.sensor_errors and getattr(f, sensor)


COMPONENT = Component(
    name="sensor_errors",
    summary="the sensors' misalignment, scale factors and Sun-sensor biases, drawn per episode",
    table=SensorErrorsTable,
    attribute="calibration",  # not `sensor_errors`: that is the switch's keyword name
    on=lambda s: s.sensor_errors,
    switch="sensor_errors.enabled",
    rules=(_a_sensor,),
    features=(
        Feature(
            "sensor_errors",
            lambda s, f: s.sensor_errors,
            "the sensors read through their misalignment, scale factors and biases",
        ),
    ),
    state=(
        State(
            "gyro_errors",
            "(N, AXES) the gyro's δ, s and (I + S) M",
            lambda b: _rows(b.features.sensor_errors and b.features.gyro, b.bodies, AXES),
            _on("gyro"),
        ),
        State(
            "magnetometer_errors",
            "(N, AXES) the magnetometer's δ, s and M",
            lambda b: _rows(b.features.sensor_errors and b.features.magnetometer, b.bodies, AXES),
            _on("magnetometer"),
        ),
        State(
            "sun_sensor_errors",
            "(N, k, SUN) each coarse Sun sensor's δ, s, b and turned normal",
            lambda b: _rows(
                b.features.sensor_errors and b.features.sun_sensors,
                b.bodies,
                sun_sensors.count(b.scenario.sun_sensors),
                SUN,
            ),
            _on("sun_sensors"),
        ),
    ),
    reset=_reset,
    keeps_digests=True,
    # a fixed layout, so that a sensor's errors do not depend on which others the body has
    draws=(
        Draw("gyro_turn", 3, normal=True),
        Draw("gyro_scale", 3, normal=True),
        Draw("magnetometer_turn", 3, normal=True),
        Draw("magnetometer_scale", 3, normal=True),
        Draw("sun_turn", 3 * sun_sensors.MAX_SENSORS, normal=True),
        Draw("sun_scale", sun_sensors.MAX_SENSORS, normal=True),
        Draw("sun_bias", sun_sensors.MAX_SENSORS, normal=True),
    ),
    info=(
        Info(
            "gyro_misalignment",
            "(N, 3) the gyro's rotation vector δ from the body axes, rad",
            _on("gyro"),
            lambda e: e.gyro_errors[:, TURN],
        ),
        Info(
            "gyro_scale_factor",
            "(N, 3) its scale-factor errors s",
            _on("gyro"),
            lambda e: e.gyro_errors[:, SCALE],
        ),
        Info(
            "magnetometer_misalignment",
            "(N, 3) the magnetometer's rotation vector δ from the body axes, rad",
            _on("magnetometer"),
            lambda e: e.magnetometer_errors[:, TURN],
        ),
        Info(
            "magnetometer_scale_factor",
            "(N, 3) its scale-factor errors s",
            _on("magnetometer"),
            lambda e: e.magnetometer_errors[:, SCALE],
        ),
        Info(
            "sun_sensor_misalignment",
            "(N, k, 3) each coarse Sun sensor's rotation vector δ, rad",
            _on("sun_sensors"),
            lambda e: e.sun_sensor_errors[:, :, SUN_TURN],
        ),
        Info(
            "sun_sensor_scale_factor",
            "(N, k) each one's scale-factor error s",
            _on("sun_sensors"),
            lambda e: e.sun_sensor_errors[:, :, SUN_SCALE],
        ),
        Info(
            "sun_sensor_bias",
            "(N, k) each one's bias b, output units",
            _on("sun_sensors"),
            lambda e: e.sun_sensor_errors[:, :, SUN_BIAS],
        ),
    ),
)

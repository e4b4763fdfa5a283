"""The sensors' calibration errors drawn per episode (``[sensor_errors]``), against what does
not depend on their code: the magnetometer's reading against Basilisk's ``magnetometer`` and
a coarse Sun sensor's output against Basilisk's ``coarseSunSensor``, both run for real on the
env's field, Sun, attitude and drawn errors; the gyro's reading against the closed form
(I + S) R(δ)ᵀ ω with scipy's rotation of the drawn δ; the draws' statistics against their
declared 1σ; and, off, nothing changed: the digest recorded before the component, the
episode bit for bit, the MEKF's configuration."""

from __future__ import annotations

import numpy as np
import pytest
from reference import integrate_rates
from scipy.spatial.transform import Rotation

from rigidrot_gym.attitude.batch import AttitudeBatch
from rigidrot_gym.attitude.components import gyro, magnetometer, sensor_errors
from rigidrot_gym.attitude.components.magnetometer import MagnetometerModel
from rigidrot_gym.attitude.data import equipment_fields, features_of
from rigidrot_gym.attitude.scenario import ScenarioError, find
from rigidrot_gym.physics.environment import orbit as kepler
from rigidrot_gym.physics.environment import sun
from rigidrot_gym.physics.rotation import quaternion as quat

# A 6U CubeSat in a Sun-synchronous orbit with NASA 42's gyro and magnetometer and a cube of
# coarse Sun sensors; the gyro quiet (no walks, pulses or bias) and the Sun sensors noiseless,
# so that their readings are their errors' closed forms.
QUIET = {
    "gyro_arw_deg_per_sqrt_hour": 0.0,
    "gyro_bias_stability_deg_per_hour": 0.0,
    "gyro_pulse_arcsec": 0.0,
    "gyro_initial_bias_deg_per_hour": 0.0,
    "sun_sensor_model": "cube",
    "sun_sensor_noise": 0.0,
}
# Errors far above the integration's and the round-off's, so that a wrong order shows.
LARGE = {
    "sensor_errors": True,
    "sensor_misalignment_deg": 2.0,
    "gyro_scale_factor_ppm": 2e4,
    "magnetometer_scale_factor_ppm": 3e4,
    "magnetometer_bias": 2e-6,
    "sun_sensor_scale_factor_ppm": 3e4,
    "sun_sensor_bias": 0.02,
}
# Basilisk's astronomical unit (astroConstants.h, AU2M), m: 7 m short of the IAU's.
BASILISK_AU = 149597870693.0


def _batch(overrides: dict, n: int, seed: int = 0) -> AttitudeBatch:
    batch = AttitudeBatch(find("RigidRot/MagDetumbleSensed-v0").with_overrides(**{**QUIET, **overrides}), n)
    batch.rngs = [np.random.default_rng([seed, i]) for i in range(n)]
    batch.reset()
    return batch


def _steps(batch: AttitudeBatch, count: int, seed: int = 1) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(count):
        batch.step(rng.uniform(-1.0, 1.0, (batch.num_bodies, batch.actuators.count)).astype(np.float32))


def _dcm(turn: np.ndarray) -> np.ndarray:
    """R(δ)ᵀ by scipy: the direction-cosine matrix from the body frame to axes turned by δ."""
    return np.swapaxes(Rotation.from_rotvec(turn).as_matrix(), -1, -2)


def _basilisk_tam(field_n, sigma_bn, dcm_sb, bias, scale: float, limit: float) -> np.ndarray:
    """Basilisk's ``magnetometer``, one tick, noise off (its default: a std ≤ 0 switches it off)."""
    from Basilisk.architecture import messaging
    from Basilisk.simulation import magnetometer as tam_module
    from Basilisk.utilities import SimulationBaseClass, macros

    sim = SimulationBaseClass.SimBaseClass()
    sim.CreateNewProcess("sensors").addTask(sim.CreateNewTask("task", macros.sec2nano(1.0)))
    tam = tam_module.Magnetometer()
    tam.dcm_SB = dcm_sb.tolist()
    tam.senBias = list(bias)
    tam.scaleFactor = scale
    tam.maxOutput, tam.minOutput = limit, -limit
    sim.AddModelToTask("task", tam)
    field = messaging.MagneticFieldMsgPayload()
    field.magField_N = list(field_n)
    state = messaging.SCStatesMsgPayload()
    state.sigma_BN = list(sigma_bn)
    # The messages must outlive the run: the module reads them through pointers.
    messages = (messaging.MagneticFieldMsg().write(field), messaging.SCStatesMsg().write(state))
    tam.magInMsg.subscribeTo(messages[0])
    tam.stateInMsg.subscribeTo(messages[1])
    recorder = tam.tamDataOutMsg.recorder()  # the output is written only with a subscriber
    sim.AddModelToTask("task", recorder)
    sim.InitializeSimulation()
    sim.ConfigureStopTime(0)
    sim.ExecuteSimulation()
    return np.asarray(recorder.tam_S)[0]


@pytest.mark.engines
def test_the_magnetometer_with_its_drawn_errors_is_basilisks():
    """After 3 periods, 40 bodies: the component's reading with the env's drawn misalignment,
    scale factors and bias (the magnetometer's own ``magnetometer_bias``), noise and quanta
    off, against Basilisk's module on the env's field and attitude. Its scale factor is one
    number for the three axes: axis k is read from a run with scale factor 1 + s_k."""
    pytest.importorskip("Basilisk")
    from Basilisk.utilities import RigidBodyKinematics as rbk

    batch = _batch(LARGE, 40)
    _steps(batch, 3)
    e, info = batch._equipment, batch.extras()
    q, _ = batch.body_state()
    limit = e.magnetometer_model.saturation
    quiet = e._replace(
        magnetometer=e.magnetometer.copy(), magnetometer_model=MagnetometerModel(0.0, 2e-6, 0.0, limit)
    )
    worst, moved = 0.0, 0.0
    for i in range(batch.num_bodies):
        field = e.field[i]
        sensor_errors.read_magnetometer(quiet, tuple(quat.rotate_inverse(q[i], field)), np.zeros(64), i)
        ours = quiet.magnetometer[i, magnetometer.READING]
        dcm = _dcm(info["magnetometer_misalignment"][i])
        bias, scale = e.magnetometer[i, magnetometer.BIAS], info["magnetometer_scale_factor"][i]
        theirs = [
            _basilisk_tam(field, rbk.EP2MRP(q[i]), dcm, bias, 1.0 + scale[k], limit)[k] for k in range(3)
        ]
        worst = max(worst, np.max(np.abs(ours - theirs)) / np.linalg.norm(field))
        moved = max(moved, np.max(np.abs(ours - quat.rotate_inverse(q[i], field))) / np.linalg.norm(field))
    assert worst < 1e-15, worst
    assert moved > 0.05  # the errors matter: 2° and 3 % move the reading by far more


def test_the_envs_magnetometer_reads_its_errors_closed_form_with_its_noise():
    """The compiled reading of NASA 42's magnetometer (1 µT noise, 1 µT quanta) against
    (I + S)(R(δ)ᵀ B + β): the residual has the std √(σ² + q²/12) and no mean."""
    batch = _batch(LARGE, 200, seed=3)
    e, info = batch._equipment, batch.extras()
    residuals = []
    for _ in range(10):
        _steps(batch, 1, seed=len(residuals))
        q, _ = batch.body_state()
        body = quat.rotate_inverse(q, e.field)
        turned = np.einsum("nij,nj->ni", _dcm(info["magnetometer_misalignment"]), body)
        closed = (1.0 + info["magnetometer_scale_factor"]) * (turned + e.magnetometer[:, magnetometer.BIAS])
        residuals.append(e.magnetometer[:, magnetometer.READING] - closed)
    residuals = np.concatenate(residuals)
    model = e.magnetometer_model
    assert residuals.std() == pytest.approx(np.hypot(model.noise, model.quantum / np.sqrt(12)), rel=0.05)
    assert abs(residuals.mean()) < 5 * residuals.std() / np.sqrt(residuals.size)


def _position(batch: AttitudeBatch, t: float) -> np.ndarray:
    """Each body's position at episode time t, from the library's numpy orbit."""
    s = batch.scenario
    el = kepler.elements(
        s.orbit_semi_major_axis,
        0.0,
        np.radians(s.orbit_inclination_deg),
        np.radians(s.orbit_raan_deg),
        0.0,
        0.0,
    )
    return np.array(
        [kepler.position_velocity(el._replace(mean_anomaly=m), t)[0] for m in batch._equipment.anomaly]
    )


def _basilisk_css(nominal, turned, sigma_bn, r_bn_n, r_sun_n, illumination, scale, bias) -> float:
    """Basilisk's ``coarseSunSensor``, one tick, noise off: its boresight set by
    ``setUnitDirectionVectorWithPerturbation`` (θ first) in a platform frame whose x axis is
    the ``nominal`` normal, the perturbation that of the ``turned`` one."""
    from Basilisk.architecture import messaging
    from Basilisk.simulation import coarseSunSensor
    from Basilisk.utilities import SimulationBaseClass, macros

    sim = SimulationBaseClass.SimBaseClass()
    sim.CreateNewProcess("sensors").addTask(sim.CreateNewTask("task", macros.sec2nano(1.0)))
    side = np.cross(nominal, [0.0, 0.0, 1.0] if abs(nominal[2]) < 0.9 else [1.0, 0.0, 0.0])
    side /= np.linalg.norm(side)
    dcm_pb = np.array([nominal, side, np.cross(nominal, side)])
    p = dcm_pb @ turned
    css = coarseSunSensor.CoarseSunSensor()
    css.dcm_PB = dcm_pb.tolist()
    css.theta, css.phi = 0.0, 0.0
    css.setUnitDirectionVectorWithPerturbation(np.arctan2(p[1], p[0]), np.arcsin(p[2]))
    css.fov = np.pi / 2.0
    css.scaleFactor = scale
    css.senBias = bias
    css.maxOutput, css.minOutput = 1e9, 0.0  # the preset's clamp: at 0 only
    sun_state = messaging.SpicePlanetStateMsgPayload()
    sun_state.PositionVector = list(r_sun_n)
    state = messaging.SCStatesMsgPayload()
    state.r_BN_N = list(r_bn_n)
    state.sigma_BN = list(sigma_bn)
    eclipse = messaging.EclipseMsgPayload()
    eclipse.illuminationFactor = illumination
    messages = (
        messaging.SpicePlanetStateMsg().write(sun_state),
        messaging.SCStatesMsg().write(state),
        messaging.EclipseMsg().write(eclipse),
    )
    css.sunInMsg.subscribeTo(messages[0])
    css.stateInMsg.subscribeTo(messages[1])
    css.sunEclipseInMsg.subscribeTo(messages[2])
    sim.AddModelToTask("task", css)
    recorder = css.cssDataOutMsg.recorder()
    sim.AddModelToTask("task", recorder)
    sim.InitializeSimulation()
    sim.ConfigureStopTime(0)
    sim.ExecuteSimulation()
    return float(np.asarray(recorder.OutputData)[0])


@pytest.mark.engines
def test_a_coarse_sun_sensors_output_with_its_drawn_errors_is_basilisks():
    """After 2 periods, 25 bodies × 6 sensors: the env's outputs (noiseless) with the drawn
    boresight turns, scale factors and biases against Basilisk's module on the same Sun,
    position, shadow factor and attitude (our Sun and position from the library's numpy
    ephemeris and orbit; Basilisk's AU is 7 m short of ours, so its Sun is placed at the same
    distance in its AU)."""
    pytest.importorskip("Basilisk")
    from Basilisk.utilities import RigidBodyKinematics as rbk

    batch = _batch(LARGE, 25, seed=5)
    _steps(batch, 2)
    e, info, s = batch._equipment, batch.extras(), batch.scenario
    q, _ = batch.body_state()
    t = 2 * s.dt
    r = _position(batch, t)
    r_sun = sun.sun_position(t, s.orbit_epoch)
    shadow = sun.shadow_factors(r, r_sun)
    nominal = np.array(e.sun_sensor_normals)  # scipy reads only writable arrays
    worst, dark, lit = 0.0, 0, 0
    for i in range(batch.num_bodies):
        to_sun = r_sun - r[i]
        distance = np.linalg.norm(to_sun)
        basilisk_sun = r[i] + to_sun * (BASILISK_AU / sun.AU)  # the same (1 AU/r)² in its AU
        for j in range(nominal.shape[0]):
            turned = Rotation.from_rotvec(info["sun_sensor_misalignment"][i, j]).apply(nominal[j])
            scale = e.sun_sensor_model.scale * (1.0 + info["sun_sensor_scale_factor"][i, j])
            bias = info["sun_sensor_bias"][i, j] / e.sun_sensor_model.scale
            theirs = _basilisk_css(
                nominal[j], turned, rbk.EP2MRP(q[i]), r[i], basilisk_sun, shadow[i], scale, bias
            )
            worst = max(worst, abs(e.sun_sensors[i, j] - theirs))
            seen = np.dot(turned, quat.rotate_inverse(q[i], to_sun / distance)) > 0.0 and shadow[i] > 0.0
            lit, dark = lit + int(seen), dark + int(not seen)
    assert worst < 1e-14, worst
    assert lit >= 50 and dark >= 50, (lit, dark)  # both sides of the field of view's edge


def test_the_gyro_reads_its_errors_closed_form():
    """The quiet gyro's first reading is of the start rates, exactly: (I + S) R(δ)ᵀ ω to
    round-off; after each torque-free period, of the mean rate over it (DOP853's ∫ω dt / Δt),
    within the integration's error, and far from the error-free reading."""
    batch = _batch(LARGE, 20, seed=7)
    e, info, dt = batch._equipment, batch.extras(), batch.scenario.dt
    axes = (1.0 + info["gyro_scale_factor"])[:, :, None] * _dcm(info["gyro_misalignment"])
    _, w = batch.body_state()
    closed = np.einsum("nij,nj->ni", axes, w)
    np.testing.assert_allclose(e.gyro[:, gyro.READING], closed, rtol=0, atol=4e-16 * np.abs(w).max())
    for _ in range(3):
        q0, w0 = batch.body_state()
        ends = [integrate_rates(q0[i], w0[i], batch.inertia()[i], dt) for i in range(batch.num_bodies)]
        batch.step(np.zeros((batch.num_bodies, 3), dtype=np.float32))  # the rods off
        rate = np.array([end[2] for end in ends]) / dt
        closed = np.einsum("nij,nj->ni", axes, rate)
        off = np.abs(e.gyro[:, gyro.READING] - closed).max()
        effect = np.abs(closed - rate).max()
        assert off < 1e-5 * effect, (off, effect)


def test_the_draws_have_their_declared_std_repeat_with_the_seed_and_change_between_episodes():
    """2,000 bodies: each error's sample std within 5σ of its sampling error (σ/√(2n)) of the
    declared 1σ, its mean within 5σ/√n of 0; the same seeds draw the same errors, the next
    episode others."""
    n = 2000
    batch = _batch({"sensor_errors": True}, n, seed=11)
    s, info = batch.scenario, batch.extras()
    declared = {
        "gyro_misalignment": np.radians(s.sensor_misalignment_deg),
        "magnetometer_misalignment": np.radians(s.sensor_misalignment_deg),
        "sun_sensor_misalignment": np.radians(s.sensor_misalignment_deg),
        "gyro_scale_factor": s.gyro_scale_factor_ppm * 1e-6,
        "magnetometer_scale_factor": s.magnetometer_scale_factor_ppm * 1e-6,
        "sun_sensor_scale_factor": s.sun_sensor_scale_factor_ppm * 1e-6,
        "sun_sensor_bias": s.sun_sensor_bias * batch._equipment.sun_sensor_model.scale,
    }
    first = {}
    for name, sigma in declared.items():
        x = np.asarray(info[name]).ravel()
        assert abs(x.std() / sigma - 1.0) < 5.0 / np.sqrt(2 * x.size), (name, x.std(), sigma)
        assert abs(x.mean()) < 5.0 * sigma / np.sqrt(x.size), (name, x.mean())
        first[name] = np.asarray(info[name]).copy()
    # each sensor's own draws: no two are the same numbers
    assert not np.allclose(first["gyro_misalignment"], first["magnetometer_misalignment"])
    again = _batch({"sensor_errors": True}, 3, seed=11)
    for name in declared:
        np.testing.assert_array_equal(again.extras()[name], first[name][:3])
    again.reset()
    for name in declared:
        assert np.all(again.extras()[name] != first[name][:3]), name


def test_off_by_default_it_changes_no_digest_and_at_zero_no_number():
    # Recorded on b9043f8, before this components (surfaces, thrusters and these
    # errors, each declared keeps_digests): a scenario that leaves them at their defaults
    # keeps its digest.
    assert (
        find("RigidRot/Reorient-v0").digest()
        == "8e6b8a29168745c2360aafdffd1268f17c11181bf2ab1452e93a52d0f63e716d"
    )
    sensed = find("RigidRot/MagDetumbleSensed-v0")
    assert sensed.digest() == "245ad91659d4d1c84ab8a0825fce2e111ad5c4902eabb9b01db6373c338af56b"
    assert not sensed.sensor_errors and not features_of(sensed).sensor_errors
    assert not {"gyro_errors", "magnetometer_errors", "sun_sensor_errors"} & set(
        equipment_fields(features_of(sensed))
    )
    # On with every σ at 0 (the turns exact identities, the scales exactly 1): the first
    # episode's readings and observations are those of the errors off, bit for bit.
    zero = {
        "sensor_misalignment_deg": 0.0,
        "gyro_scale_factor_ppm": 0.0,
        "magnetometer_scale_factor_ppm": 0.0,
        "sun_sensor_scale_factor_ppm": 0.0,
        "sun_sensor_bias": 0.0,
        "sun_sensor_noise": 0.01,
        "gyro_arw_deg_per_sqrt_hour": "preset",
    }
    off, on = _batch(zero, 5, seed=13), _batch({**zero, "sensor_errors": True}, 5, seed=13)
    for _ in range(4):
        np.testing.assert_array_equal(on.obs, off.obs)
        for name in ("gyro", "magnetometer", "sun_sensors"):
            np.testing.assert_array_equal(getattr(on._equipment, name), getattr(off._equipment, name))
        _steps(on, 1, seed=3)
        _steps(off, 1, seed=3)


def test_the_mekf_keeps_its_nominal_model():
    base = {
        "star_tracker_model": "42",
        "observe": "estimate",
        "sun_sensor_model": "cube",
        "magnetometer_bias": 1e-6,
    }
    scenario = find("RigidRot/NadirPoint-v0").with_overrides(**base)
    off = AttitudeBatch(scenario, 2)._equipment
    on = AttitudeBatch(scenario.with_overrides(sensor_errors=True), 2)._equipment
    for name in ("estimator_model", "gyro_model", "magnetometer_model", "sun_sensor_model"):
        assert getattr(on, name) == getattr(off, name), name
    np.testing.assert_array_equal(on.sun_sensor_normals, off.sun_sensor_normals)
    assert on.covariance.shape == off.covariance.shape  # no state for the errors


@pytest.mark.parametrize(
    ("keyword", "value", "expected"),
    [
        ("sensor_errors", "yes", "true or false"),
        ("sensor_misalignment_deg", -1.0, "a number ≥ 0.0"),
        ("sensor_misalignment_deg", 11.0, r"a number in \[0, 10\]"),
        ("gyro_scale_factor_ppm", float("nan"), "a finite number"),
        ("magnetometer_scale_factor_ppm", 2e5, r"a number in \[0, 100000\]"),
        ("sun_sensor_scale_factor_ppm", "big", "a finite number"),
        ("sun_sensor_bias", 1.5, r"a number in \[0, 1\]"),
    ],
)
def test_bad_values_are_named(keyword, value, expected):
    with pytest.raises(ScenarioError, match=rf"override {keyword}: expected {expected}, got"):
        find("RigidRot/MagDetumbleSensed-v0").with_overrides(**{keyword: value})


def test_it_needs_a_sensor():
    with pytest.raises(ScenarioError, match=r"sensor_errors\.enabled needs gyro\.model, magnetometer\.model"):
        find("RigidRot/Reorient-v0").with_overrides(sensor_errors=True)

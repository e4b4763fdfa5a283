"""The gyro, the star tracker and the MEKF inside the env's control period, against what
does not depend on them: the gyro's readings against the mean rates of the true motion
(scipy's rotations) and its model's declared errors; the star tracker's errors against its
declared covariance, its outages against the geometry of the library's numpy orbit and Sun;
the estimate's consistency (NEES inside its χ² bounds, errors inside ±3σ) over many bodies,
through outages; and the observation against the sensors and the estimate it shows."""

from __future__ import annotations

import re

import numpy as np
import pytest
from reference import integrate_rates, world_to_body
from scipy import stats
from scipy.spatial.transform import Rotation

from rigidrot_gym.attitude.batch import AttitudeBatch
from rigidrot_gym.attitude.components import gyro, magnetometer, navigation, star_tracker
from rigidrot_gym.attitude.scenario import ScenarioError, find
from rigidrot_gym.physics.environment import earth, sun
from rigidrot_gym.physics.environment import orbit as kepler
from rigidrot_gym.physics.estimation import mekf
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.sensors.gyro import PRESETS as GYROS
from rigidrot_gym.physics.sensors.magnetometer import PRESETS as MAGNETOMETERS
from rigidrot_gym.physics.sensors.star_tracker import PRESETS as TRACKERS

SENSORS = {"gyro_model": "42", "star_tracker_model": "42"}
# The tracker looks along body −x, turned 30° about body z: not a principal axis.
MOUNTING = quat.multiply(
    quat.from_rotvec(np.array([0.0, 0.0, np.radians(30.0)])),
    quat.from_rotvec(np.array([0.0, -np.pi / 2, 0.0])),
)


def _batch(overrides: dict, n: int, seed: int = 0, scenario: str = "RigidRot/Slew-v0") -> AttitudeBatch:
    batch = AttitudeBatch(find(scenario).with_overrides(**overrides), n)
    batch.rngs = [np.random.default_rng([seed, i]) for i in range(n)]
    batch.reset()
    return batch


def _rotation(q: np.ndarray) -> Rotation:
    return Rotation.from_quat(quat.to_scalar_last(q))


def _actions(batch: AttitudeBatch, rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(-1.0, 1.0, (batch.num_bodies, batch.actuators.count)).astype(np.float32)


def test_the_gyro_reads_the_mean_rate_over_each_period_with_its_declared_errors():
    batch = _batch({**SENSORS, "max_episode_steps": 1000}, 400)
    s, model = batch.scenario, GYROS["42"]
    g = batch._equipment.gyro
    start_bias = g[:, gyro.BIAS].copy()
    q_before, _ = batch.body_state()
    rng = np.random.default_rng(1)
    residuals, walk = [], []
    for _ in range(40):
        bias_before = g[:, gyro.BIAS].copy()
        batch.step(_actions(batch, rng))
        q_after, _ = batch.body_state()
        mean_rate = (_rotation(q_before).inv() * _rotation(q_after)).as_rotvec() / s.dt
        residuals.append(g[:, gyro.READING] - mean_rate - 0.5 * (bias_before + g[:, gyro.BIAS]))
        walk.append(g[:, gyro.BIAS] - bias_before)
        q_before = q_after
    residuals, walk = np.array(residuals), np.array(walk)
    # White noise √(σ_v²/Δt + σ_u² Δt/12), plus the 1″ pulses' error, (c_k−1 − c_k)/Δt with c
    # uniform in ±q/2: variance q²/(6 Δt²).
    white = np.sqrt(model.arw**2 / s.dt + model.rrw**2 * s.dt / 12 + model.quantum**2 / (6 * s.dt**2))
    assert residuals.std() == pytest.approx(white, rel=0.03)
    assert abs(residuals.mean()) < 4 * white / np.sqrt(residuals.size)
    assert walk.std() == pytest.approx(model.rrw * np.sqrt(s.dt), rel=0.03)
    assert start_bias.std() == pytest.approx(np.radians(s.gyro_initial_bias_deg_per_hour) / 3600, rel=0.1)


def _quiet_gyro(overrides: dict, n: int) -> AttitudeBatch:
    """MagDetumbleSensed-v0 (a 6U CubeSat tumbling at up to 10°/s about each axis, NASA 42's gyro)
    with ``overrides``, its gyro's errors switched off (no walks, pulses or bias): its
    readings are the mean rates it is fed."""
    quiet = {
        "gyro_arw_deg_per_sqrt_hour": 0.0,
        "gyro_bias_stability_deg_per_hour": 0.0,
        "gyro_pulse_arcsec": 0.0,
        "gyro_initial_bias_deg_per_hour": 0.0,
    }
    batch = AttitudeBatch(find("RigidRot/MagDetumbleSensed-v0").with_overrides(**overrides, **quiet), n)
    batch.rngs = [np.random.default_rng([20, i]) for i in range(n)]
    batch.reset()
    return batch


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("ni,ni->n", a, b) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


def _free_readings(batch: AttitudeBatch, periods: int) -> tuple[float, float, float]:
    """Over ``periods`` periods of zero action (the rods off: the torque-free tumbler), the
    largest error of the quiet gyro's readings against the mean rate (1/Δt) ∫ω dt by DOP853
    from each period's start, that of the motion itself, and the largest turn |ω| Δt."""
    n, dt = batch.num_bodies, batch.scenario.dt
    errors, motion, turns = [], [], []
    for _ in range(periods):
        q0, w0 = batch.body_state()
        ends = [integrate_rates(q0[i], w0[i], batch.inertia()[i], dt) for i in range(n)]
        batch.step(np.zeros((n, 3), dtype=np.float32))
        reading = batch._equipment.gyro[:, gyro.READING]
        mean_rate = np.array([end[2] for end in ends]) / dt
        errors.append(np.abs(reading - mean_rate).max())
        motion.append(np.abs(batch.body_state()[1] - np.array([end[1] for end in ends])).max())
        assert _cosines(reading, mean_rate).min() > 1.0 - 1e-6  # the same direction
        turns.append(np.linalg.norm(w0, axis=-1).max() * dt)
    return max(errors), max(motion), max(turns)


@pytest.mark.parametrize(("dt", "substeps"), [(1.0, 2), (5.0, 2), (5.0, 10), (30.0, 60)])
def test_the_gyro_reads_the_mean_body_rate_over_each_period(dt, substeps):
    # At 30 s some bodies turn by more than π a period, where the rotation between the two
    # attitudes no longer tells the turn.
    errors, motion, turn = _free_readings(_quiet_gyro({"dt": dt, "substeps": substeps}, 40), 3)
    white = GYROS["42"].arw / np.sqrt(dt)  # σ_v/√Δt, the readings' white noise
    # Far below the noise, or, where rk4's sub-steps of 2.5 s keep the motion itself only
    # within 2e-5 rad/s of the true one, as close as the motion it reads.
    assert errors < 0.05 * white + 2.0 * motion
    assert (turn > np.pi) == (dt == 30.0)


def test_the_gyro_reads_the_mean_rate_across_the_magnetorquers_duty_cycle():
    # The rods switch on half-way (the second of two sub-steps of 2 s), where ω̇ jumps; a
    # slow tumbler, so that the rods' torque shows beside the rule's and rk4's errors.
    n, dt = 20, 4.0
    overrides = {"dt": dt, "substeps": 2, "magnetorquer_duty_cycle": 0.5, "start_rate_spread": 0.02}
    batch = _quiet_gyro(overrides, n)
    max_dipole = batch.scenario.magnetorquer_max_dipole
    rng = np.random.default_rng(21)
    white = GYROS["42"].arw / np.sqrt(dt)
    moved = []
    for _ in range(3):
        q0, w0 = batch.body_state()
        inertia, field = batch.inertia(), batch._equipment.field.copy()  # held over the period
        action = rng.choice([-1.0, 1.0], (n, 3)).astype(np.float32)
        batch.step(action)
        for i in range(n):
            dipole = action[i] * max_dipole

            def rods(t, q, w, dipole=dipole, b=field[i]):
                return np.cross(dipole, world_to_body(q, b))

            q_half, w_half, off = integrate_rates(q0[i], w0[i], inertia[i], dt / 2)
            _, _, on = integrate_rates(q_half, w_half, inertia[i], dt / 2, torque=rods)
            _, _, free = integrate_rates(q0[i], w0[i], inertia[i], dt)
            mean_rate, reading = (off + on) / dt, batch._equipment.gyro[i, gyro.READING]
            assert np.abs(reading - mean_rate).max() < 0.05 * white
            moved.append(np.linalg.norm(mean_rate - free / dt))
    assert np.median(moved) > 2 * white  # the rods turn it by far more than the readings may err


@pytest.mark.engines
@pytest.mark.parametrize("engine", ["mujoco_rk4", "pybullet"])
def test_on_an_engine_the_gyro_reads_the_mean_rate_from_the_periods_ends(engine):
    # An engine gives the state at the period's end only: the corrected trapezoid rule over
    # the period (h = Δt = 1 s) errs by h⁴/720 |ω⁽⁴⁾| ~ 1e-7 rad/s on this tumbler, besides
    # the engine's own error in the motion, which the reading may share.
    errors, motion, _ = _free_readings(_quiet_gyro({"integrator": engine}, 20), 3)
    assert errors < 0.05 * GYROS["42"].arw + 2.0 * motion


def _position(batch: AttitudeBatch, t: float) -> np.ndarray:
    """Each body's position at episode time t, from the library's numpy orbit."""
    s = batch.scenario
    out = []
    for anomaly in batch._equipment.anomaly:
        el = kepler.elements(
            s.orbit_semi_major_axis,
            0.0,
            np.radians(s.orbit_inclination_deg),
            np.radians(s.orbit_raan_deg),
            0.0,
            0.0,
        )
        r, _ = kepler.position_velocity(el._replace(mean_anomaly=anomaly), t)
        out.append(r)
    return np.array(out)


def _angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    cos = np.einsum("ni,ni->n", a, b) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return np.arccos(np.clip(cos, -1.0, 1.0))


def test_the_star_tracker_has_its_declared_errors_and_is_blinded_where_the_geometry_says():
    overrides = {
        **SENSORS,
        "orbit": True,
        "star_tracker_mounting": MOUNTING.tolist(),
        "max_episode_steps": 1000,
    }
    batch = _batch(overrides, 600, seed=2)
    s, model = batch.scenario, TRACKERS["42"]
    tracker = batch._equipment.tracker
    rng = np.random.default_rng(3)
    errors, outages, near_edge = [], 0, 0
    for step in range(1, 41):
        batch.step(_actions(batch, rng))
        q, _ = batch.body_state()
        t = step * s.dt
        r = _position(batch, t)
        to_sun = sun.sun_position(t, s.orbit_epoch) - r
        boresight = _rotation(q).apply(quat.rotate(MOUNTING, np.array([0.0, 0.0, 1.0])))
        sun_margin = _angle(boresight, to_sun) - model.sun_exclusion
        limb = np.arcsin(earth.RADIUS / np.linalg.norm(r, axis=-1))
        earth_margin = _angle(boresight, -r) - (limb + model.earth_exclusion)
        blinded = (sun_margin < 0) | (earth_margin < 0)
        clear = np.minimum(np.abs(sun_margin), np.abs(earth_margin)) > 1e-9
        near_edge += int((~clear).sum())
        fresh = tracker[:, star_tracker.FRESH] == 1.0
        np.testing.assert_array_equal(fresh[clear], ~blinded[clear])
        outages += int(blinded.sum())
        measured = tracker[fresh, star_tracker.Q]
        errors.append((_rotation(q[fresh]).inv() * _rotation(measured)).as_rotvec())
    assert 0.05 < outages / (40 * batch.num_bodies) < 0.95 and near_edge < 5
    errors = np.concatenate(errors)
    expected = star_tracker.covariance(s.star_tracker)
    sample = np.cov(errors.T)
    # Each variance within 5 standard errors (√(2/n) relative), in the sensor frame.
    m = quat.to_matrix(MOUNTING)
    in_sensor = m.T @ sample @ m
    declared = np.array([model.noise_across, model.noise_across, model.noise_about]) ** 2
    np.testing.assert_allclose(np.diag(in_sensor), declared, rtol=5 * np.sqrt(2 / len(errors)))
    np.testing.assert_allclose(sample, expected, atol=5 * np.sqrt(2 / len(errors)) * declared.max())


def _errors(batch: AttitudeBatch) -> tuple[np.ndarray, np.ndarray]:
    """The estimate's errors (N, 6) against the truth, and its covariances (N, 6, 6)."""
    e = batch._equipment
    q, _ = batch.body_state()
    estimate = mekf.Estimate(e.estimate[:, navigation.Q], e.estimate[:, navigation.BIAS], e.covariance)
    return mekf.errors(estimate, q, e.gyro[:, gyro.BIAS]), e.covariance.copy()


VECTOR_SENSORS = {"magnetic_field": True, "magnetometer_model": "42", "sun_sensor_model": "cube"}


@pytest.mark.slow
@pytest.mark.parametrize("vectors", [False, True], ids=["tracker", "tracker-magnetometer-sun-sensors"])
def test_the_estimate_in_the_loop_is_consistent_through_star_tracker_outages(vectors):
    overrides = {
        **SENSORS,
        **(VECTOR_SENSORS if vectors else {}),
        "observe": "estimate",
        "orbit": True,
        "star_tracker_mounting": MOUNTING.tolist(),
        "gyro_initial_bias_deg_per_hour": 20.0,
        "max_episode_steps": 1000,
    }
    n = 300
    batch = _batch(overrides, n, seed=4)
    rng = np.random.default_rng(5)
    nees, inside, total, outages = [], 0, 0, 0
    first_bias = None  # the mean |Δβ| at the start
    for step in range(300):
        if step:
            batch.step(_actions(batch, rng))
        errors, covariances = _errors(batch)
        first_bias = np.abs(errors[:, 3:]).mean() if first_bias is None else first_bias
        nees.append(np.einsum("ni,nij,nj->n", errors, np.linalg.inv(covariances), errors).mean())
        sigma = np.sqrt(np.diagonal(covariances, axis1=-2, axis2=-1))
        inside += int((np.abs(errors) <= 3 * sigma).sum())
        total += errors.size
        outages += int((batch._equipment.tracker[:, star_tracker.FRESH] == 0.0).sum())
    nees = np.array(nees)
    low, high = (stats.chi2.ppf(p, 6 * n) / n for p in (0.005, 0.995))
    assert np.mean((nees >= low) & (nees <= high)) >= 0.95, nees.mean()
    assert inside / total >= 0.99
    assert outages > 0.05 * 300 * n
    # The bias, 20°/h at the start, is learnt to a few percent of that in 300 s by the median
    # body (not by those whose tracker has been blinded since the start).
    assert np.median(np.abs(errors[:, 3:])) < 0.05 * first_bias


def test_the_magnetometer_and_the_sun_sensors_read_the_true_field_and_sun_with_their_errors():
    overrides = {**VECTOR_SENSORS, "orbit": True, "sun": True, "max_episode_steps": 1000}
    batch = _batch(overrides, 300, seed=8)
    e, s = batch._equipment, batch.scenario
    rng = np.random.default_rng(9)
    field_residuals, sensor_residuals = [], []
    normals = np.vstack([np.eye(3), -np.eye(3)])
    for step in range(1, 21):
        batch.step(_actions(batch, rng))
        q, _ = batch.body_state()
        field = _rotation(q).inv().apply(e.field)
        field_residuals.append(e.magnetometer[:, magnetometer.READING] - field)
        t = step * s.dt
        r = _position(batch, t)
        to_sun = sun.sun_position(t, s.orbit_epoch) - r
        distance = np.linalg.norm(to_sun, axis=-1)
        shadow = sun.shadow_factors(r, sun.sun_position(t, s.orbit_epoch))
        body = _rotation(q).inv().apply(to_sun / distance[:, None])
        clean = np.maximum(body @ normals.T, 0.0) * (shadow * (sun.AU / distance) ** 2)[:, None]
        lit = clean > 0.05  # away from the clamp at zero
        sensor_residuals.append((e.sun_sensors - clean)[lit])
    model = MAGNETOMETERS["42"]
    field_residuals = np.concatenate(field_residuals)
    # White noise of 1 µT, then rounded to whole µT: √(σ² + q²/12).
    assert field_residuals.std() == pytest.approx(
        np.hypot(model.noise, model.quantum / np.sqrt(12)), rel=0.05
    )
    assert np.abs(field_residuals.mean()) < 5e-8
    sensor_residuals = np.concatenate(sensor_residuals)
    assert sensor_residuals.std() == pytest.approx(s.sun_sensor_noise, rel=0.05)
    assert np.abs(sensor_residuals.mean()) < 5 * s.sun_sensor_noise / np.sqrt(sensor_residuals.size)
    # What the observation shows: the Sun sensors' outputs before the Sun's 4 and the
    # field's 3 columns.
    np.testing.assert_allclose(batch.obs[:, -13:-7], np.clip(e.sun_sensors, 0, 1), atol=1e-7)


def test_the_observation_shows_the_estimate_or_the_sensors():
    for observed in ("estimate", "sensors"):
        batch = _batch({**SENSORS, "observe": observed}, 20, seed=6)
        rng = np.random.default_rng(7)
        for _ in range(3):
            batch.step(_actions(batch, rng))
        e = batch._equipment
        reading = e.gyro[:, gyro.READING]
        if observed == "estimate":
            q, w = e.estimate[:, navigation.Q], reading - e.estimate[:, navigation.BIAS]
        else:
            q, w = e.tracker[:, star_tracker.Q], reading
        error = quat.multiply(quat.conjugate(batch.target), q)
        error *= np.where(error[:, :1] < 0, -1.0, 1.0)
        np.testing.assert_allclose(batch.obs[:, :4], error, atol=1e-7)
        np.testing.assert_allclose(batch.obs[:, 4:7], w / batch.scenario.max_rate, atol=1e-7)
        np.testing.assert_array_equal(batch.obs[:, 7], e.tracker[:, star_tracker.FRESH])
        # The truth differs from what is shown, by about the sensors' errors.
        q_true, _ = batch.body_state()
        assert 0 < quat.angle_between(q, q_true).max() < np.radians(0.1)


def test_a_body_senses_the_same_alone_or_in_a_batch():
    overrides = {**SENSORS, "observe": "estimate", "orbit": True}
    alone = AttitudeBatch(find("RigidRot/Slew-v0").with_overrides(**overrides), 1)
    together = AttitudeBatch(find("RigidRot/Slew-v0").with_overrides(**overrides), 3)
    alone.rngs = [np.random.default_rng(11)]
    together.rngs = [np.random.default_rng(s) for s in (10, 11, 12)]
    alone.reset()
    together.reset()
    actions = np.random.default_rng(0).uniform(-1, 1, (5, 3, 3)).astype(np.float32)
    for a in actions:
        alone.step(a[1:2])
        together.step(a)
    for name in ("gyro", "tracker", "estimate", "covariance"):
        np.testing.assert_array_equal(
            getattr(alone._equipment, name)[0], getattr(together._equipment, name)[1]
        )
    np.testing.assert_array_equal(alone.obs[0], together.obs[1])


def test_what_the_estimate_needs_is_named():
    base = find("RigidRot/Slew-v0")
    with pytest.raises(
        ScenarioError,
        match=re.escape('navigation.observe "estimate" needs gyro.model and star_tracker.model'),
    ):
        base.with_overrides(observe="estimate", gyro_model="42")
    with pytest.raises(ScenarioError, match=re.escape('navigation.observe "sensors" needs')):
        base.with_overrides(observe="sensors", star_tracker_model="42")
    with pytest.raises(ScenarioError, match="replaces the \\[sensors\\] table's Gaussian noise"):
        base.with_overrides(observe="estimate", rate_noise=1e-3, **SENSORS)

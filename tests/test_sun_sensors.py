"""Coarse Sun sensors against Basilisk's ``coarseSunSensor`` run for real (random attitudes
and normals, sensors outside the field of view, the Kelly factor, a Sun not at 1 AU, an
eclipse factor, the clamp), the direction estimate against the true direction and against
Basilisk's ``cssWlsEst``, its noise against the small-angle bound, the jitable response
compiled by numba, and every refused argument."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from rigidrot_gym.physics.environment.sun import AU
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.sensors.sun_sensors import (
    PRESETS,
    CoarseSunSensors,
    readings,
    response,
    sun_direction,
)

# Basilisk's astronomical unit (astroConstants.h, AU2M), m: 7 m short of the IAU's.
BASILISK_AU = 149597870693.0
CUBE = PRESETS["cube"]


def _unit(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    v = rng.normal(size=(*shape, 3))
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def _basilisk_outputs(sensors: CoarseSunSensors, sigma_bn, r_bn_n, r_sun_n, illumination: float):
    """Each sensor's output from Basilisk's ``coarseSunSensor``, one tick, noise off."""
    from Basilisk.architecture import messaging
    from Basilisk.simulation import coarseSunSensor
    from Basilisk.utilities import SimulationBaseClass, macros

    sim = SimulationBaseClass.SimBaseClass()
    sim.CreateNewProcess("sensors").addTask(sim.CreateNewTask("task", macros.sec2nano(1.0)))
    sun = messaging.SpicePlanetStateMsgPayload()
    sun.PositionVector = list(r_sun_n)
    state = messaging.SCStatesMsgPayload()
    state.r_BN_N = list(r_bn_n)
    state.sigma_BN = list(sigma_bn)
    eclipse = messaging.EclipseMsgPayload()
    eclipse.illuminationFactor = illumination
    # The messages must outlive the run: the modules read them through pointers.
    messages = (
        messaging.SpicePlanetStateMsg().write(sun),
        messaging.SCStatesMsg().write(state),
        messaging.EclipseMsg().write(eclipse),
    )
    modules, recorders = [], []
    for normal in sensors.normals:
        css = coarseSunSensor.CoarseSunSensor()
        css.nHat_B = normal.tolist()
        css.fov = sensors.field_of_view
        css.kellyFactor = sensors.kelly
        css.scaleFactor = sensors.scale
        css.maxOutput = sensors.max_output
        css.minOutput = sensors.min_output
        css.sunInMsg.subscribeTo(messages[0])
        css.stateInMsg.subscribeTo(messages[1])
        css.sunEclipseInMsg.subscribeTo(messages[2])
        sim.AddModelToTask("task", css)
        recorder = css.cssDataOutMsg.recorder()
        sim.AddModelToTask("task", recorder)
        modules.append(css)
        recorders.append(recorder)
    sim.InitializeSimulation()
    sim.ConfigureStopTime(0)
    sim.ExecuteSimulation()
    assert modules[0].kPower == 2.0  # Basilisk's default exponent, the one modelled
    return np.array([np.asarray(r.OutputData)[0] for r in recorders])


@pytest.mark.engines
@pytest.mark.parametrize(
    ("fov_deg", "kelly", "scale", "low", "high", "illumination"),
    [
        (60.0, 0.1, 2.5, 0.0, 1e6, 0.4),  # Basilisk's default field of view, a Kelly factor, an eclipse
        (90.0, 0.0, 1.0, 0.0, 1e6, 1.0),  # 42's cube: full sunlight, no Kelly factor
        (100.0, 0.05, 3.0, -10.0, 0.4, 0.4),  # beyond 90°: negative outputs let through, a clip at 0.4
    ],
)
def test_each_sensors_output_is_basilisks(fov_deg, kelly, scale, low, high, illumination):
    """30 random attitudes × 10 random normals, the Sun 1.37 AU from a spacecraft in low
    orbit; outputs compared to the last bits."""
    pytest.importorskip("Basilisk")
    from Basilisk.utilities import RigidBodyKinematics as rbk

    rng = np.random.default_rng(int(fov_deg))
    r_sun = np.array([1.1, -0.75, 0.33]) * BASILISK_AU
    worst, dark, lit, clipped, negative = 0.0, 0, 0, 0, 0
    for q in quat.random(rng, (30,)):
        sensors = CoarseSunSensors(
            _unit(rng, (10,)),
            field_of_view=np.radians(fov_deg),
            kelly=kelly,
            scale=scale,
            max_output=high,
            min_output=low,
        )
        r_sc = _unit(rng, ()) * 7.0e6
        theirs = _basilisk_outputs(sensors, np.asarray(rbk.EP2MRP(q)), r_sc, r_sun, illumination)
        to_sun = r_sun - r_sc
        distance = np.linalg.norm(to_sun)
        ours = readings(
            quat.rotate_inverse(q, to_sun / distance),
            distance * (AU / BASILISK_AU),  # the same distance in Basilisk's AU
            illumination,
            sensors,
            np.random.default_rng(0),
        )
        worst = max(worst, np.max(np.abs(theirs - ours)) / scale)
        dark += int(np.sum(theirs == 0.0))
        lit += int(np.sum(theirs > 0.0))
        clipped += int(np.sum(theirs == high))
        negative += int(np.sum(theirs < 0.0))
    assert worst < 1e-15, worst
    assert dark >= 50 and lit >= 50, (dark, lit)  # both sides of the field of view's edge
    assert (clipped >= 5) == (high < 10.0), clipped
    assert (negative >= 5) == (low < 0.0), negative  # beyond 90°, in the field of view


@pytest.mark.engines
def test_basilisks_noise_is_white_with_its_declared_sigma_times_the_scale_as_ours():
    """Basilisk's ``senNoiseStd`` at its default settings, 3000 ticks, facing the Sun at 1 AU
    with the clamp opened: (output − scale) has the std scale × senNoiseStd and the lag-one
    autocorrelation 0, within 5 standard errors; ours, declared in output units, the same."""
    pytest.importorskip("Basilisk")
    from Basilisk.architecture import messaging
    from Basilisk.simulation import coarseSunSensor
    from Basilisk.utilities import SimulationBaseClass, macros

    sigma, scale, n = 0.01, 2.0, 3000
    sim = SimulationBaseClass.SimBaseClass()
    sim.CreateNewProcess("sensors").addTask(sim.CreateNewTask("task", macros.sec2nano(1.0)))
    css = coarseSunSensor.CoarseSunSensor()
    css.nHat_B = [1.0, 0.0, 0.0]
    css.senNoiseStd = sigma
    css.scaleFactor = scale
    css.minOutput = -1e6
    sim.AddModelToTask("task", css)
    sun = messaging.SpicePlanetStateMsgPayload()
    sun.PositionVector = [BASILISK_AU, 0.0, 0.0]
    messages = (
        messaging.SpicePlanetStateMsg().write(sun),
        messaging.SCStatesMsg().write(messaging.SCStatesMsgPayload()),
    )
    css.sunInMsg.subscribeTo(messages[0])
    css.stateInMsg.subscribeTo(messages[1])
    recorder = css.cssDataOutMsg.recorder()
    sim.AddModelToTask("task", recorder)
    sim.InitializeSimulation()
    sim.ConfigureStopTime(macros.sec2nano(n - 1.0))
    sim.ExecuteSimulation()
    noise = np.asarray(recorder.OutputData) - scale
    assert noise.shape == (n,)
    assert np.std(noise) == pytest.approx(scale * sigma, rel=5.0 / np.sqrt(2 * n))
    assert np.mean(noise[1:] * noise[:-1]) / np.mean(noise**2) == pytest.approx(0.0, abs=5.0 / np.sqrt(n))
    sensors = CoarseSunSensors([[1.0, 0.0, 0.0]], scale=scale, noise=scale * sigma, min_output=-1e6)
    ours = (
        readings(np.tile([1.0, 0.0, 0.0], (n, 1)), AU, 1.0, sensors, np.random.default_rng(9))[:, 0] - scale
    )
    assert np.std(ours) == pytest.approx(scale * sigma, rel=5.0 / np.sqrt(2 * n))


def test_a_cube_recovers_the_suns_direction_exactly_without_noise():
    rng = np.random.default_rng(1)
    s = _unit(rng, (5000,))
    distance = rng.uniform(0.98, 1.02, 5000) * AU
    shadow = rng.uniform(0.05, 1.0, 5000)
    y = readings(s, distance, shadow, CUBE, rng)
    assert np.all(np.sum(y > 0.0, axis=-1) == 3)  # a generic direction lights three faces
    estimate, valid = sun_direction(y, CUBE)
    assert np.all(valid)
    assert np.max(np.linalg.norm(estimate - s, axis=-1)) < 1e-12
    # along an axis one face is lit (and two in a coordinate plane): no estimate
    estimate, valid = sun_direction(readings(np.eye(3), AU, 1.0, CUBE, rng), CUBE)
    assert not np.any(valid)
    np.testing.assert_array_equal(estimate, 0.0)
    estimate, valid = sun_direction(readings([0.6, 0.8, 0.0], AU, 1.0, CUBE, rng), CUBE)
    assert not valid and np.all(estimate == 0.0)
    # none in eclipse
    y = readings(s[:10], AU, 0.0, CUBE, rng)
    np.testing.assert_array_equal(y, 0.0)
    assert not np.any(sun_direction(y, CUBE)[1])


def test_a_noisy_cube_points_within_the_small_angle_bound():
    """Three lit faces of readings c ŝ_i + σ ξ_i: the estimate's angle from ŝ has the mean
    square 2 (σ/c)² (the noise across the line of sight, two axes) to first order."""
    sigma, n = 0.002, 40_000
    sensors = CoarseSunSensors(CUBE.normals, noise=sigma)
    rng = np.random.default_rng(2)
    s = _unit(rng, (4 * n,))
    s = s[np.all(np.abs(s) > 0.2, axis=-1)][:n]  # every lit face well above the threshold
    assert len(s) == n
    y = readings(s, AU, 1.0, sensors, rng)
    estimate, valid = sun_direction(y, sensors, threshold=5.0 * sigma)
    assert np.all(valid)
    angle = np.arccos(np.clip(np.sum(estimate * s, axis=-1), -1.0, 1.0))
    ratio = np.mean(angle**2) / (2.0 * sigma**2)
    # angle² / (σ²) is χ² with 2 degrees of freedom: its mean's relative standard error is 1/√n
    assert ratio == pytest.approx(1.0, abs=5.0 / np.sqrt(n))
    # the noise itself: the dark faces read max(σξ, 0), half of them 0
    dark = y[s @ CUBE.normals.T < 0.0]
    assert np.mean(dark == 0.0) == pytest.approx(0.5, abs=5.0 * 0.5 / np.sqrt(dark.size))
    assert np.sqrt(np.mean(dark**2)) == pytest.approx(sigma / np.sqrt(2.0), rel=5.0 / np.sqrt(dark.size))


@pytest.mark.engines
def test_the_estimate_is_basilisks_cssWlsEst():
    """Ten sensors of random normals, noisy readings: Basilisk's ``cssWlsEst`` (useWeights
    off, the same threshold) against ours wherever three or more are lit."""
    pytest.importorskip("Basilisk")
    from Basilisk.architecture import messaging
    from Basilisk.fswAlgorithms import cssWlsEst
    from Basilisk.utilities import SimulationBaseClass, macros

    rng = np.random.default_rng(3)
    worst, compared = 0.0, 0
    for _ in range(25):
        sensors = CoarseSunSensors(_unit(rng, (10,)), field_of_view=np.radians(80.0), noise=0.02)
        y = readings(_unit(rng, ()), AU, 1.0, sensors, rng)
        ours, valid = sun_direction(y, sensors, threshold=0.05)
        sim = SimulationBaseClass.SimBaseClass()
        sim.CreateNewProcess("fsw").addTask(sim.CreateNewTask("task", macros.sec2nano(1.0)))
        module = cssWlsEst.cssWlsEst()
        module.useWeights = False
        module.sensorUseThresh = 0.05
        sim.AddModelToTask("task", module)
        units = []
        for normal in sensors.normals:
            unit = messaging.CSSUnitConfigMsgPayload()
            unit.nHat_B = normal.tolist()
            unit.CBias = 1.0
            units.append(unit)
        config = messaging.CSSConfigMsgPayload()
        config.nCSS = sensors.count
        config.cssVals = units
        data = messaging.CSSArraySensorMsgPayload()
        data.CosValue = y.tolist()
        messages = (messaging.CSSConfigMsg().write(config), messaging.CSSArraySensorMsg().write(data))
        module.cssConfigInMsg.subscribeTo(messages[0])
        module.cssDataInMsg.subscribeTo(messages[1])
        recorder = module.navStateOutMsg.recorder()
        sim.AddModelToTask("task", recorder)
        sim.InitializeSimulation()
        sim.ConfigureStopTime(0)
        sim.ExecuteSimulation()
        if not valid:
            continue
        theirs = np.asarray(recorder.vehSunPntBdy)[0]
        worst = max(worst, np.linalg.norm(theirs - ours))
        compared += 1
    assert compared >= 15, compared
    assert worst < 1e-13, worst


def test_response_compiles_and_agrees_with_the_numpy_path():
    @numba.njit
    def compiled(normals, suns, distance_au, shadow, cos_fov, kelly, scale):
        out = np.empty((suns.shape[0], normals.shape[0]))
        for i in range(suns.shape[0]):
            for j in range(normals.shape[0]):
                out[i, j] = response(
                    (normals[j, 0], normals[j, 1], normals[j, 2]),
                    (suns[i, 0], suns[i, 1], suns[i, 2]),
                    distance_au[i],
                    shadow[i],
                    cos_fov,
                    kelly,
                    scale,
                )
        return out

    rng = np.random.default_rng(4)
    normals, suns = _unit(rng, (7,)), _unit(rng, (300,))
    distance_au, shadow = rng.uniform(0.3, 5.0, 300), rng.uniform(0.0, 1.0, 300)
    for cos_fov, kelly, scale in ((0.5, 0.1, 2.0), (0.0, 0.0, 1.0), (-0.2, 1e-11, 0.7)):
        numpy_path = response(
            tuple(normals.T),
            tuple(suns.T[:, :, None]),
            distance_au[:, None],
            shadow[:, None],
            cos_fov,
            kelly,
            scale,
        )
        np.testing.assert_array_equal(
            compiled(normals, suns, distance_au, shadow, cos_fov, kelly, scale), numpy_path
        )
    # and the front door is the response plus the (here zero) noise, clamped
    sensors = CoarseSunSensors(normals, field_of_view=np.arccos(0.5), kelly=0.1, scale=2.0, max_output=1.5)
    front = readings(suns, distance_au * AU, shadow, sensors, rng)
    inner = compiled(normals, suns, distance_au, shadow, 0.5, 0.1, 2.0)
    # the front door normalises sun_body and divides the distance by the AU: a few ulps
    np.testing.assert_allclose(front, np.clip(inner, 0.0, 1.5), rtol=2e-15, atol=0)


def _rng():
    return np.random.default_rng()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda: CoarseSunSensors([1.0, 0.0, 0.0]),
            r"normals must have shape \(k, 3\) with k ≥ 1, got shape \(3,\)",
        ),
        (lambda: CoarseSunSensors(np.zeros((0, 3))), r"normals must have shape \(k, 3\)"),
        (lambda: CoarseSunSensors([[1.0, 0.0, np.nan]]), "normals must be finite"),
        (
            lambda: CoarseSunSensors([[1.0, 0.1, 0.0]]),
            r"normals must be unit vectors, got \[1.0, 0.1, 0.0\] \(row 0\)",
        ),
        (lambda: CoarseSunSensors([["1", "0", "0"]]), "normals must be real numbers"),
        (lambda: CoarseSunSensors(CUBE.normals, field_of_view=0.0), r"field_of_view must be in \(0, π\]"),
        (lambda: CoarseSunSensors(CUBE.normals, field_of_view=3.5), r"field_of_view must be in \(0, π\]"),
        (
            lambda: CoarseSunSensors(CUBE.normals, field_of_view=np.inf),
            "field_of_view must be a finite number",
        ),
        (lambda: CoarseSunSensors(CUBE.normals, kelly=-0.1), "kelly must be a finite number ≥ 0"),
        (lambda: CoarseSunSensors(CUBE.normals, noise=np.nan), "noise must be a finite number"),
        (lambda: CoarseSunSensors(CUBE.normals, scale=0.0), "scale must be a positive finite number"),
        (
            lambda: CoarseSunSensors(CUBE.normals, max_output=0.0),
            r"max_output must be a number above min_output",
        ),
        (lambda: CoarseSunSensors(CUBE.normals, max_output=np.nan), "max_output must be a number above"),
        (lambda: CoarseSunSensors(CUBE.normals, min_output=-np.inf), "min_output must be a finite number"),
        (lambda: readings([1.0, 0.0], AU, 1.0, CUBE, _rng()), r"sun_body must have shape \(\.\.\., 3\)"),
        (lambda: readings([1.0, 0.0, np.nan], AU, 1.0, CUBE, _rng()), "sun_body must be finite"),
        (
            lambda: readings([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]], AU, 1.0, CUBE, _rng()),
            "sun_body must be unit",
        ),
        (lambda: readings([1.0, 0.0, 0.0], 0.0, 1.0, CUBE, _rng()), "distance must be positive"),
        (lambda: readings([1.0, 0.0, 0.0], np.inf, 1.0, CUBE, _rng()), "distance must be finite"),
        (lambda: readings([1.0, 0.0, 0.0], "1 AU", 1.0, CUBE, _rng()), "distance must be real"),
        (lambda: readings([1.0, 0.0, 0.0], AU, 1.5, CUBE, _rng()), r"shadow must lie in \[0, 1\], got 1.5"),
        (lambda: readings([1.0, 0.0, 0.0], AU, [-0.1], CUBE, _rng()), r"shadow must lie in \[0, 1\]"),
        (lambda: readings([1.0, 0.0, 0.0], AU, np.nan, CUBE, _rng()), "shadow must be finite"),
        (
            lambda: readings(np.eye(3), np.full(2, AU), 1.0, CUBE, _rng()),
            r"batch shapes do not broadcast together: sun_body \(3,\), distance \(2,\)",
        ),
        (lambda: readings([1.0, 0.0, 0.0], AU, 1.0, "cube", _rng()), "sensors must be CoarseSunSensors"),
        (lambda: readings([1.0, 0.0, 0.0], AU, 1.0, CUBE, 3), "rng must be a numpy.random.Generator"),
        (lambda: sun_direction(np.zeros(6), "cube"), "sensors must be CoarseSunSensors"),
        (
            lambda: sun_direction(np.zeros(5), CUBE),
            r"readings must have shape \(\.\.\., 6\), got shape \(5,\)",
        ),
        (lambda: sun_direction(np.full(6, np.nan), CUBE), "readings must be finite"),
        (lambda: sun_direction(np.zeros(6), CUBE, threshold=-0.1), "threshold must be a finite number ≥ 0"),
        (lambda: sun_direction(np.zeros(6), CUBE, threshold="0"), "threshold must be a finite number"),
    ],
)
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()

"""The magnetometer against Basilisk's ``magnetometer`` module run for real (the field turned
into the body frame through σ_BN, a bias and saturation), its noise's statistics against the
declared σ, the quantiser's whole quanta, the clip, NASA 42's preset, the jitable reading
compiled by numba, and every refused argument."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.sensors.magnetometer import PRESETS, MagnetometerModel, read, readings


def _basilisk_reading(field_n: np.ndarray, sigma_bn: np.ndarray, bias: np.ndarray, limit: float):
    """Basilisk's ``magnetometer`` one tick (noise off, dcm_SB = I, scale factor its default)
    on the inertial field ``field_n`` at the attitude σ_BN ``sigma_bn``; also the module's
    scale factor."""
    from Basilisk.architecture import messaging
    from Basilisk.simulation import magnetometer
    from Basilisk.utilities import SimulationBaseClass, macros

    sim = SimulationBaseClass.SimBaseClass()
    sim.CreateNewProcess("sensors").addTask(sim.CreateNewTask("task", macros.sec2nano(1.0)))
    tam = magnetometer.Magnetometer()
    tam.senBias = bias.tolist()
    tam.maxOutput = limit
    tam.minOutput = -limit
    tam.dcm_SB = np.eye(3).tolist()
    sim.AddModelToTask("task", tam)
    field = messaging.MagneticFieldMsgPayload()
    field.magField_N = field_n.tolist()
    state = messaging.SCStatesMsgPayload()
    state.sigma_BN = sigma_bn.tolist()
    # The messages must outlive the run: the module reads them through pointers.
    messages = (messaging.MagneticFieldMsg().write(field), messaging.SCStatesMsg().write(state))
    tam.magInMsg.subscribeTo(messages[0])
    tam.stateInMsg.subscribeTo(messages[1])
    recorder = tam.tamDataOutMsg.recorder()
    sim.AddModelToTask("task", recorder)
    sim.InitializeSimulation()
    sim.ConfigureStopTime(0)
    sim.ExecuteSimulation()
    return np.asarray(recorder.tam_S)[0], tam.scaleFactor


@pytest.mark.engines
def test_the_noise_free_reading_is_basilisks():
    """40 random attitudes, fields of ~30 µT and biases of ~2 µT, clipped at ±35 µT (about a
    fifth of the axes clip): Basilisk's tam_S against ours to the last bits."""
    pytest.importorskip("Basilisk")
    from Basilisk.utilities import RigidBodyKinematics as rbk

    rng = np.random.default_rng(21)
    limit = 35e-6
    model = MagnetometerModel(noise=0.0, saturation=limit)
    worst, clipped = 0.0, 0
    for q in quat.random(rng, (40,)):
        field_n = rng.normal(scale=3e-5, size=3)
        bias = rng.normal(scale=2e-6, size=3)
        theirs, scale_factor = _basilisk_reading(field_n, np.asarray(rbk.EP2MRP(q)), bias, limit)
        assert scale_factor == 1.0  # Basilisk's default: no scale factor error, as ours
        ours = readings(quat.rotate_inverse(q, field_n), model, np.random.default_rng(0), bias=bias)
        worst = max(worst, np.max(np.abs(theirs - ours)) / np.linalg.norm(field_n))
        clipped += int(np.sum(np.abs(theirs) == limit))
        np.testing.assert_array_equal(np.abs(ours) <= limit, True)
    assert worst < 1e-15, worst
    assert clipped >= 10, clipped  # the clip was exercised, and agreed


@pytest.mark.engines
def test_basilisks_noise_is_white_with_its_declared_sigma_as_ours():
    """Basilisk's ``senNoiseStd`` (through its GaussMarkov utility) at its default settings,
    3000 ticks: the sample std is σ and the lag-one autocorrelation 0, within 5 standard errors,
    the model ours follows."""
    pytest.importorskip("Basilisk")
    from Basilisk.architecture import messaging
    from Basilisk.simulation import magnetometer
    from Basilisk.utilities import SimulationBaseClass, macros

    sigma, n = 1e-6, 3000
    sim = SimulationBaseClass.SimBaseClass()
    sim.CreateNewProcess("sensors").addTask(sim.CreateNewTask("task", macros.sec2nano(1.0)))
    tam = magnetometer.Magnetometer()
    tam.senNoiseStd = [sigma] * 3
    sim.AddModelToTask("task", tam)
    messages = (
        messaging.MagneticFieldMsg().write(messaging.MagneticFieldMsgPayload()),
        messaging.SCStatesMsg().write(messaging.SCStatesMsgPayload()),
    )
    tam.magInMsg.subscribeTo(messages[0])
    tam.stateInMsg.subscribeTo(messages[1])
    recorder = tam.tamDataOutMsg.recorder()
    sim.AddModelToTask("task", recorder)
    sim.InitializeSimulation()
    sim.ConfigureStopTime(macros.sec2nano(n - 1.0))
    sim.ExecuteSimulation()
    noise = np.asarray(recorder.tam_S)  # the field is 0: the readings are the noise
    assert noise.shape == (n, 3)
    np.testing.assert_allclose(noise.std(axis=0), sigma, rtol=5.0 / np.sqrt(2 * n))
    lag = np.mean(noise[1:] * noise[:-1], axis=0) / np.mean(noise**2, axis=0)
    np.testing.assert_allclose(lag, 0.0, atol=5.0 / np.sqrt(n))
    ours = readings(np.zeros((n, 3)), MagnetometerModel(noise=sigma), np.random.default_rng(9))
    np.testing.assert_allclose(ours.std(axis=0), sigma, rtol=5.0 / np.sqrt(2 * n))


def test_noise_and_bias_have_the_declared_statistics():
    model = MagnetometerModel(noise=2e-7, bias_std=5e-7)
    n = 200_000
    bias = np.array([1e-6, -2e-6, 3e-7])
    measured = readings(np.tile([2e-5, -1e-5, 4e-5], (n, 1)), model, np.random.default_rng(3), bias=bias)
    error = measured - np.array([2e-5, -1e-5, 4e-5])
    # sample std's standard error σ/√(2n) = 0.16 %; the mean's σ/√n; 5 of each
    np.testing.assert_allclose(error.std(axis=0), model.noise, rtol=5.0 / np.sqrt(2 * n))
    np.testing.assert_allclose(error.mean(axis=0), bias, rtol=0, atol=5.0 * model.noise / np.sqrt(n))
    # the axes' noises are independent: correlations within 5/√n
    corr = np.corrcoef(error.T)
    assert np.max(np.abs(corr - np.eye(3))) < 5.0 / np.sqrt(n)
    drawn = model.biases(np.random.default_rng(4), (n,))
    assert drawn.shape == (n, 3)
    np.testing.assert_allclose(drawn.std(axis=0), model.bias_std, rtol=5.0 / np.sqrt(2 * n))
    np.testing.assert_allclose(drawn.mean(axis=0), 0.0, atol=5.0 * model.bias_std / np.sqrt(n))


def test_nasa_42s_magnetometer_reads_whole_microtesla_within_half_of_one():
    preset = PRESETS["42"]
    assert (preset.noise, preset.quantum, preset.saturation, preset.bias_std) == (1e-6, 1e-6, 60e-6, 0.0)
    field = np.random.default_rng(5).uniform(-55e-6, 55e-6, size=(20_000, 3))
    pulsed = readings(field, preset, np.random.default_rng(6))
    exact = readings(field, MagnetometerModel(noise=preset.noise), np.random.default_rng(6))
    counts = pulsed / preset.quantum
    np.testing.assert_allclose(counts, np.round(counts), rtol=0, atol=1e-9)
    assert np.max(np.abs(pulsed - exact)) <= 0.5 * preset.quantum * (1 + 1e-9)
    assert np.max(np.abs(pulsed - exact)) > 0.49 * preset.quantum  # the quantiser does act
    # the noise is the declared 1 µT: the unquantised error's std within 5 standard errors
    assert np.std(exact - field) == pytest.approx(1e-6, rel=5.0 / np.sqrt(2 * exact.size))


def test_readings_saturate():
    model = MagnetometerModel(noise=0.0, saturation=60e-6)
    measured = readings([[59e-6, -61e-6, 1e-3], [-1e-3, 0.0, 60e-6]], model, np.random.default_rng(0))
    np.testing.assert_array_equal(measured, [[59e-6, -60e-6, 60e-6], [-60e-6, 0.0, 60e-6]])
    # a bias pushes a reading into the clip, and the quantised reading never exceeds it
    biased = readings([[55e-6, 0.0, 0.0]], PRESETS["42"], np.random.default_rng(1), bias=[10e-6, 0.0, 0.0])
    assert biased[0, 0] == 60e-6


def test_read_compiles_and_agrees_with_the_numpy_path():
    @numba.njit
    def compiled(field, bias, noise, quantum, saturation, xi):
        out = np.empty_like(field)
        for i in range(field.shape[0]):
            b = read(
                (field[i, 0], field[i, 1], field[i, 2]),
                (bias[0], bias[1], bias[2]),
                noise,
                quantum,
                saturation,
                (xi[i, 0], xi[i, 1], xi[i, 2]),
            )
            out[i, 0], out[i, 1], out[i, 2] = b
        return out

    rng = np.random.default_rng(7)
    field = rng.uniform(-70e-6, 70e-6, size=(500, 3))
    bias = np.array([1e-6, -3e-6, 0.5e-6])
    for model in (PRESETS["42"], MagnetometerModel(noise=3e-7)):
        xi = np.random.default_rng(8).standard_normal(field.shape)
        ours = readings(field, model, np.random.default_rng(8), bias=bias)
        np.testing.assert_array_equal(
            compiled(field, bias, model.noise, model.quantum, model.saturation, xi), ours
        )


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: MagnetometerModel(noise=-1e-6), "noise must be a finite number ≥ 0, got -1e-06"),
        (lambda: MagnetometerModel(noise=0.0, bias_std=float("nan")), "bias_std must be a finite number"),
        (lambda: MagnetometerModel(noise=0.0, quantum="1e-6"), "quantum must be a finite number"),
        (lambda: MagnetometerModel(noise=0.0, saturation=0.0), "saturation must be a positive number or inf"),
        (lambda: MagnetometerModel(noise=0.0, saturation=[1.0, 2.0]), "saturation must be a positive number"),
        (lambda: MagnetometerModel(noise=True), "noise must be a finite number, got True"),
        (lambda: PRESETS["42"].biases("seed"), "rng must be a numpy.random.Generator"),
        (lambda: PRESETS["42"].biases(np.random.default_rng(), (2.0,)), r"shape must be an integer"),
        (lambda: PRESETS["42"].biases(np.random.default_rng(), "2"), "shape must be a tuple of integers"),
        (
            lambda: readings(np.zeros((2, 4)), PRESETS["42"], np.random.default_rng()),
            r"field_body must have shape",
        ),
        (
            lambda: readings([[0.0, np.nan, 0.0]], PRESETS["42"], np.random.default_rng()),
            "field_body must be finite",
        ),
        (
            lambda: readings(["a", "b", "c"], PRESETS["42"], np.random.default_rng()),
            "field_body must be real",
        ),
        (lambda: readings(np.zeros(3), "42", np.random.default_rng()), "model must be a MagnetometerModel"),
        (lambda: readings(np.zeros(3), PRESETS["42"], 0), "rng must be a numpy.random.Generator"),
        (
            lambda: readings(np.zeros((2, 3)), PRESETS["42"], np.random.default_rng(), bias=np.zeros((4, 3))),
            r"bias must broadcast to field_body's shape \(2, 3\), got shape \(4, 3\)",
        ),
        (
            lambda: readings(np.zeros(3), PRESETS["42"], np.random.default_rng(), bias=[0.0, np.inf, 0.0]),
            "bias must be finite",
        ),
        (
            lambda: readings(np.zeros(3), PRESETS["42"], np.random.default_rng(), bias=[0.0, 0.0]),
            "bias must have",
        ),
    ],
)
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()

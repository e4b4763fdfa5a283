"""The gyro model against its statistics: the Allan deviation of long records (computed by
allantools, IEEE 952's overlapping estimator) against σ²(τ) = σ_v²/τ + σ_u² τ/3, its
slopes −½ and +½, NASA 42's preset levels, and the quantiser's bound on the angle."""

from __future__ import annotations

import allantools
import numpy as np
import pytest

from rigidrot_gym.physics.sensors.gyro import PRESETS, GyroModel, readings

DEG_PER_HOUR = np.pi / 180.0 / 3600.0  # rad/s


def _allan(model: GyroModel, samples: int, dt: float, taus: np.ndarray, seed: int) -> np.ndarray:
    """The overlapping Allan deviation of one axis's readings at rest, at ``taus`` (s)."""
    measured, _ = readings(np.zeros((samples, 1, 3)), dt, model, np.random.default_rng(seed))
    _, deviation, _, _ = allantools.oadev(measured[:, 0, 0], rate=1.0 / dt, data_type="freq", taus=taus)
    return deviation


def test_the_allan_deviation_falls_then_rises_at_the_declared_levels():
    # Levels chosen so that both walks show in 2e6 samples: they cross at √3 σ_v/σ_u ≈ 173 s.
    model = GyroModel(arw=1e-3, rrw=1e-5)
    short, long = np.array([1.0, 2.0, 4.0, 8.0, 16.0]), np.array([1e4, 2e4, 4e4])
    deviation = _allan(model, 2_000_000, 1.0, np.concatenate([short, long]), seed=1)
    expected = model.allan_deviation(np.concatenate([short, long]))
    # statistical error of the estimate ~ 1/√(2 N/τ): 0.3 % at 16 s, ~10 % at 4e4 s
    np.testing.assert_allclose(deviation[:5], expected[:5], rtol=0.01)
    np.testing.assert_allclose(deviation[5:], expected[5:], rtol=0.25)
    falling = np.polyfit(np.log(short), np.log(deviation[:5]), 1)[0]
    rising = np.polyfit(np.log(long), np.log(deviation[5:]), 1)[0]
    assert falling == pytest.approx(-0.5, abs=0.01)
    assert rising == pytest.approx(0.5, abs=0.15)


def test_nasa_42s_gyro_has_its_angle_random_walk_and_bias_stability():
    gyro = PRESETS["42"]
    unquantised = GyroModel(gyro.arw, gyro.rrw)
    # ARW 0.07°/√h: σ(τ) = σ_v/√τ where the rate walk is negligible (it crosses at 73 min)
    taus = np.array([1.0, 10.0, 100.0])
    deviation = _allan(unquantised, 400_000, 1.0, taus, seed=2)
    arw = 0.07 * np.pi / 180.0 / 60.0  # rad/√s
    np.testing.assert_allclose(deviation, arw / np.sqrt(taus), rtol=0.03)
    # bias stability 0.1°/h over 1 h: the bias's spread after an hour, over 20,000 gyros
    _, bias = readings(np.zeros((60, 20_000, 3)), 60.0, unquantised, np.random.default_rng(3))
    assert np.std(bias[-1]) == pytest.approx(0.1 * DEG_PER_HOUR, rel=0.01)


def test_quantised_readings_are_whole_pulses_within_half_a_pulse_of_the_angle():
    gyro = PRESETS["42"]
    rates = np.random.default_rng(4).normal(scale=0.01, size=(5000, 2, 3))
    exact, _ = readings(rates, 0.1, GyroModel(gyro.arw, gyro.rrw), np.random.default_rng(5))
    pulsed, _ = readings(rates, 0.1, gyro, np.random.default_rng(5))
    pulses = pulsed * 0.1 / gyro.quantum
    np.testing.assert_allclose(pulses, np.round(pulses), rtol=0, atol=1e-6)
    drift = np.cumsum((pulsed - exact) * 0.1, axis=0)
    assert np.max(np.abs(drift)) <= 0.5 * gyro.quantum * (1 + 1e-9)
    assert np.max(np.abs(drift)) > 0.4 * gyro.quantum  # the quantiser does act


def test_readings_saturate_at_full_scale():
    gyro = GyroModel(arw=0.0, rrw=0.0, full_scale=0.1)
    rates = np.array([[[0.05, -0.3, 0.2]]])
    measured, _ = readings(rates, 1.0, gyro, np.random.default_rng(0))
    np.testing.assert_array_equal(measured, [[[0.05, -0.1, 0.1]]])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: GyroModel(arw=-1e-6, rrw=0.0), "arw must be a finite number ≥ 0"),
        (lambda: GyroModel(arw=0.0, rrw=float("nan")), "rrw must be a finite number"),
        (lambda: GyroModel(arw=0.0, rrw=0.0, full_scale=0.0), "full_scale must be a positive number"),
        (lambda: readings(np.zeros((3, 3)), 0.0, PRESETS["42"], np.random.default_rng()), "dt must be"),
        (
            lambda: readings(np.zeros(3), 1.0, PRESETS["42"], np.random.default_rng()),
            r"rates must have shape \(T",
        ),
        (
            lambda: readings(
                np.zeros((2, 4, 3)), 1.0, PRESETS["42"], np.random.default_rng(), bias=np.zeros(3)
            ),
            r"bias must have shape \(4, 3\)",
        ),
        (
            lambda: readings(np.zeros((2, 3)), 1.0, PRESETS["42"], None),
            "rng must be a numpy.random.Generator",
        ),
        (
            lambda: readings(np.zeros((2, 3)), 1.0, PRESETS["42"], 7),
            "rng must be a numpy.random.Generator, got 7",
        ),
        (
            lambda: readings(np.zeros((2, 3)), 1.0, PRESETS["42"], np.random.RandomState(0)),
            "rng must be a numpy.random.Generator",
        ),
    ],
)
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("shape", [(0, 3), (0, 4, 3)])
def test_no_periods_give_empty_readings(shape):
    measured, ends = readings(np.zeros(shape), 1.0, PRESETS["42"], np.random.default_rng(0))
    assert measured.shape == ends.shape == shape

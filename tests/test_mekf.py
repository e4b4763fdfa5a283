"""The MEKF against what does not depend on it: its transition and process noise against
the matrix exponential of the error's dynamics and Van Loan's integral (scipy), its steady
covariance against the discrete Riccati equation (scipy), and its consistency over Monte
Carlo runs: the normalised estimation-error squared (NEES) inside its χ² bounds, the errors
inside ±3σ, convergence from a wrong bias, coasting through star-tracker outages. The
truth is a body turning at constant rates, read by the library's gyro model; the star
tracker's noise is drawn here."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from scipy import stats

from rigidrot_gym.physics.estimation import mekf
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.sensors.gyro import PRESETS, GyroModel, readings

ARCSEC = np.pi / 180.0 / 3600.0
DEG_PER_HOUR = np.pi / 180.0 / 3600.0
TRACKER = np.diag([2.0 * ARCSEC, 2.0 * ARCSEC, 20.0 * ARCSEC]) ** 2  # NASA 42's star tracker


def _cross(w: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _dynamics(rate: np.ndarray) -> np.ndarray:
    """F of δϑ̇ = −[ω̂×] δϑ − Δβ, Δβ̇ = 0."""
    f = np.zeros((6, 6))
    f[:3, :3] = -_cross(rate)
    f[:3, 3:] = -np.eye(3)
    return f


@pytest.mark.parametrize("rate", [(0.0, 0.0, 0.0), (1e-5, -2e-5, 3e-6), (0.3, -0.2, 0.5), (2.0, 1.0, -3.0)])
def test_the_transition_is_the_exponential_of_the_error_dynamics(rate):
    rate, dt = np.array(rate), 0.7
    phi = np.empty((6, 6))
    mekf.transition(tuple(rate), dt, phi)
    np.testing.assert_allclose(phi, scipy.linalg.expm(_dynamics(rate) * dt), rtol=0, atol=1e-14)


def test_the_process_noise_is_van_loans_integral_at_rest():
    gyro, dt = GyroModel(arw=3e-4, rrw=2e-6), 5.0
    g = np.diag([-1.0, -1.0, -1.0, 1.0, 1.0, 1.0])
    spectral = np.diag([gyro.arw**2] * 3 + [gyro.rrw**2] * 3)
    f = _dynamics(np.zeros(3))
    # Van Loan (1978): expm([[−F, G Qc Gᵀ], [0, Fᵀ]] Δt) = [[·, Φ⁻¹Q], [0, Φᵀ]].
    block = np.block([[-f, g @ spectral @ g.T], [np.zeros((6, 6)), f.T]]) * dt
    e = scipy.linalg.expm(block)
    expected = e[6:, 6:].T @ e[:6, 6:]
    estimate = mekf.Estimate(np.array([1.0, 0.0, 0.0, 0.0]), np.zeros(3), np.zeros((6, 6)))
    after = mekf.propagate(estimate, np.zeros(3), dt, gyro)
    np.testing.assert_allclose(after.covariance, expected, rtol=1e-12, atol=1e-30)


def test_the_steady_covariance_solves_the_discrete_riccati_equation():
    gyro, dt, sigma = GyroModel(arw=1e-4, rrw=1e-6), 1.0, 5e-5
    estimate = mekf.initial(np.array([1.0, 0.0, 0.0, 0.0]), 1e-2, 1e-3)
    for _ in range(3000):  # at rest, measured where estimated: P alone moves
        estimate = mekf.propagate(estimate, np.zeros(3), dt, gyro)
        estimate = mekf.correct_attitude(estimate, estimate.attitude, sigma**2 * np.eye(3))
    # One axis: x = (θ, β), Φ = [[1, −Δt], [0, 1]], H = [1, 0].
    phi = np.array([[1.0, -dt], [0.0, 1.0]])
    q = np.array(
        [
            [gyro.arw**2 * dt + gyro.rrw**2 * dt**3 / 3, -0.5 * gyro.rrw**2 * dt**2],
            [-0.5 * gyro.rrw**2 * dt**2, gyro.rrw**2 * dt],
        ]
    )
    h = np.array([[1.0, 0.0]])
    prior = scipy.linalg.solve_discrete_are(phi.T, h.T, q, np.array([[sigma**2]]))
    posterior = prior - prior @ h.T @ np.linalg.inv(h @ prior @ h.T + sigma**2) @ h @ prior
    for axis in range(3):
        axis_block = estimate.covariance[np.ix_([axis, axis + 3], [axis, axis + 3])]
        np.testing.assert_allclose(axis_block, posterior, rtol=1e-9)
    assert np.abs(estimate.covariance[:3, :3] - np.diag(np.diag(estimate.covariance[:3, :3]))).max() == 0.0


def _tracker_reading(q: np.ndarray, rng: np.random.Generator, covariance: np.ndarray) -> np.ndarray:
    """q ⊗ exp(½ v), v ~ N(0, covariance) in the body frame."""
    v = rng.multivariate_normal(np.zeros(3), covariance, size=q.shape[:-1])
    return quat.multiply(q, quat.exp(0.5 * v))


def _run(
    gyro: GyroModel,
    steps: int,
    runs: int,
    seed: int,
    *,
    dt: float = 1.0,
    bias_std: float = 3.0 * DEG_PER_HOUR,
    true_bias: np.ndarray | None = None,
    tracker_every: int = 1,
    outage: range = range(0),
    vectors: bool = False,
):
    """Monte Carlo runs of a body at constant rates: the errors (steps, runs, 6) and the
    covariances (steps, runs, 6, 6) after each step's update."""
    rng = np.random.default_rng(seed)
    rate = np.array([0.02, -0.01, 0.015])
    q0 = quat.random(rng, (runs,))
    beta0 = (
        rng.normal(0.0, bias_std, (runs, 3)) if true_bias is None else np.broadcast_to(true_bias, (runs, 3))
    )
    measured, ends = readings(np.broadcast_to(rate, (steps, runs, 3)), dt, gyro, rng, bias=beta0)
    start_error = rng.normal(0.0, 1e-3, (runs, 3))
    estimate = mekf.initial(quat.multiply(q0, quat.exp(0.5 * start_error)), 1e-3, bias_std)
    references = np.array([[0.3, -0.5, 0.81], [-0.7, 0.1, 0.2]])
    references /= np.linalg.norm(references, axis=1, keepdims=True)
    vector_std = 2e-3
    errors, covariances = [], []
    for k in range(steps):
        estimate = mekf.propagate(estimate, measured[k], dt, gyro)
        q = quat.multiply(q0, quat.exp(0.5 * rate * dt * (k + 1)))
        if k % tracker_every == tracker_every - 1 and k not in outage:
            estimate = mekf.correct_attitude(estimate, _tracker_reading(q, rng, TRACKER), TRACKER)
        if vectors:
            for r in references:
                body = quat.rotate_inverse(q, np.broadcast_to(r, (runs, 3)))
                reading = body + rng.normal(0.0, vector_std, (runs, 3))
                estimate = mekf.correct_vector(estimate, reading, np.broadcast_to(r, (runs, 3)), vector_std)
        errors.append(mekf.errors(estimate, q, ends[k]))
        covariances.append(estimate.covariance)
    return np.array(errors), np.array(covariances)


def _nees(errors: np.ndarray, covariances: np.ndarray) -> np.ndarray:
    """The NEES of each step averaged over the runs."""
    return np.einsum("tri,trij,trj->tr", errors, np.linalg.inv(covariances), errors).mean(axis=1)


def _bounds(runs: int, probability: float = 0.99) -> tuple[float, float]:
    """The two-sided interval of χ²(6M)/M."""
    tail = (1.0 - probability) / 2.0
    return stats.chi2.ppf(tail, 6 * runs) / runs, stats.chi2.ppf(1.0 - tail, 6 * runs) / runs


def _within_three_sigma(errors: np.ndarray, covariances: np.ndarray) -> float:
    sigma = np.sqrt(np.diagonal(covariances, axis1=-2, axis2=-1))
    return float(np.mean(np.abs(errors) <= 3.0 * sigma))


@pytest.mark.slow
def test_the_nees_of_nasa_42s_gyro_and_star_tracker_lies_in_its_chi_square_bounds():
    runs = 200
    errors, covariances = _run(PRESETS["42"], 600, runs, seed=3)
    nees = _nees(errors, covariances)
    low, high = _bounds(runs)
    inside = np.mean((nees >= low) & (nees <= high))
    assert inside >= 0.97, (inside, nees.mean())
    assert nees.mean() == pytest.approx(6.0, rel=0.05)
    assert _within_three_sigma(errors, covariances) >= 0.99


@pytest.mark.slow
def test_the_filter_converges_from_a_wrong_bias():
    # A poor gyro whose bias (0.1°/s on each axis) the filter starts at zero, told 0.2°/s.
    gyro = GyroModel(arw=1e-4, rrw=1e-6)
    true_bias = np.full(3, 0.1 * np.pi / 180.0)
    errors, covariances = _run(
        gyro, 400, 100, seed=5, bias_std=0.2 * np.pi / 180.0, true_bias=true_bias, tracker_every=2
    )
    bias_error = np.abs(errors[:, :, 3:])
    assert bias_error[0].max() > 0.5 * true_bias[0]
    # Down to the bias's own wander (σ_u = 1e-6 rad/s^{3/2} between updates): 1 % of it.
    assert np.sqrt(np.mean(bias_error[-1] ** 2)) < 0.01 * true_bias[0]
    assert _within_three_sigma(errors, covariances) >= 0.99
    nees = _nees(errors[50:], covariances[50:])
    low, high = _bounds(100)
    assert np.mean((nees >= low) & (nees <= high)) >= 0.95


@pytest.mark.slow
def test_it_coasts_through_a_star_tracker_outage_and_recovers():
    gyro, runs = GyroModel(arw=1e-4, rrw=1e-6), 200
    outage = range(200, 500)
    errors, covariances = _run(gyro, 700, runs, seed=7, outage=outage)
    sigma = np.sqrt(np.diagonal(covariances, axis1=-2, axis2=-1))[:, 0, :3]
    # Without updates the attitude's variance grows by at least σ_v² per second.
    assert sigma[outage[-1], 0] ** 2 - sigma[outage[0], 0] ** 2 >= gyro.arw**2 * (len(outage) - 1)
    assert sigma[outage[-1], 0] > 20.0 * sigma[outage[0] - 1, 0]
    # ... and falls back to where it was before within a few updates after.
    assert sigma[outage[-1] + 10, 0] < 1.5 * sigma[outage[0] - 1, 0]
    nees = _nees(errors, covariances)
    low, high = _bounds(runs)
    assert np.mean((nees[outage] >= low) & (nees[outage] <= high)) >= 0.97
    assert _within_three_sigma(errors, covariances) >= 0.99


@pytest.mark.slow
def test_two_measured_vectors_alone_keep_it_consistent():
    runs = 200
    errors, covariances = _run(
        GyroModel(arw=1e-4, rrw=1e-6), 300, runs, seed=11, outage=range(300), vectors=True
    )
    nees = _nees(errors[20:], covariances[20:])
    low, high = _bounds(runs)
    assert np.mean((nees >= low) & (nees <= high)) >= 0.95
    # Two vectors of 2e-3 rad noise fix every axis to about 1e-3 rad or better.
    assert np.sqrt(covariances[-1, 0, :3, :3].diagonal()).max() < 2e-3


def test_the_front_doors_refuse_bad_input_and_leave_the_estimate_alone():
    estimate = mekf.initial(np.array([[1.0, 0.0, 0.0, 0.0]] * 2), 1e-3, 1e-5)
    before = [a.copy() for a in estimate]
    gyro = PRESETS["42"]
    with pytest.raises(ValueError, match="readings"):
        mekf.propagate(estimate, np.zeros((3, 3)), 1.0, gyro)
    with pytest.raises(ValueError, match="readings"):
        mekf.propagate(estimate, np.full((2, 3), np.nan), 1.0, gyro)
    with pytest.raises(ValueError, match="dt"):
        mekf.propagate(estimate, np.zeros((2, 3)), 0.0, gyro)
    with pytest.raises(ValueError, match="gyro"):
        mekf.propagate(estimate, np.zeros((2, 3)), 1.0, "42")
    with pytest.raises(ValueError, match="covariance"):
        mekf.correct_attitude(estimate, estimate.attitude, -np.eye(3))
    with pytest.raises(ValueError, match="measured"):
        mekf.correct_attitude(estimate, np.zeros((2, 4)), np.eye(3))
    with pytest.raises(ValueError, match="reference"):
        mekf.correct_vector(estimate, np.zeros((2, 3)), np.zeros((3, 3)), 1.0)
    with pytest.raises(ValueError, match="std"):
        mekf.correct_vector(estimate, np.zeros((2, 3)), np.ones((2, 3)), 0.0)
    with pytest.raises(ValueError, match="estimate"):
        mekf.propagate((1, 2, 3), np.zeros((2, 3)), 1.0, gyro)
    with pytest.raises(ValueError, match="attitude_std"):
        mekf.initial(np.array([1.0, 0.0, 0.0, 0.0]), 0.0, 1e-5)
    for kept, now in zip(before, estimate, strict=True):
        np.testing.assert_array_equal(kept, now)

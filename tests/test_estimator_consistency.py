"""The MEKF in the loop is consistent over every initial error its scenario accepts and with
a magnetometer bias drawn per episode, and says so through ``info``: the NEES of the
estimate that ``info`` reports, against the truth taken with scipy's rotations, lies inside
its χ² band over Monte Carlo runs (Bar-Shalom, Li & Kirubarajan 2001, §5.4.2); a star
tracker's fix corrects a large error exactly (a closed-form rotation)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats
from scipy.spatial.transform import Rotation

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv
from rigidrot_gym.attitude.scenario import ScenarioError
from rigidrot_gym.physics.estimation import mekf
from rigidrot_gym.physics.rotation import quaternion as quat

N = 100  # bodies per Monte Carlo run
ARCSEC = np.radians(1.0 / 3600.0)


def _rotation(q: np.ndarray) -> Rotation:
    return Rotation.from_quat(quat.to_scalar_last(q))


def _nees(envs, info: dict) -> np.ndarray:
    """Each body's εᵀ P⁻¹ ε from what ``info`` reports and the true attitude."""
    q, _ = envs.unwrapped.batch.body_state()
    # δϑ: the rotation vector of q̂* ⊗ q, in the body frame
    attitude = (_rotation(info["estimated_attitude"]).inv() * _rotation(q)).as_rotvec()
    errors = [attitude, info["gyro_bias"] - info["estimated_gyro_bias"]]
    if "estimated_magnetometer_bias" in info:
        errors.append(info["magnetometer_bias"] - info["estimated_magnetometer_bias"])
    e = np.concatenate(errors, axis=1)
    return np.einsum("ni,ni->n", e, np.linalg.solve(info["estimate_covariance"], e[..., None])[..., 0])


def _band(states: int) -> tuple[float, float]:
    """The 99 % band of the mean NEES over N bodies."""
    return tuple(stats.chi2.ppf(p, states * N) / N for p in (0.005, 0.995))


def _runs(overrides: dict, steps: tuple[int, ...]):
    """(step, mean NEES, info) at each of ``steps`` of N bodies of NadirPoint-v0 under zero
    actions."""
    envs = gym.make_vec("RigidRot/NadirPoint-v0", num_envs=N, **overrides)
    _, info = envs.reset(seed=list(range(N)))
    out = [(0, _nees(envs, info).mean(), info)]
    action = np.zeros(envs.action_space.shape)
    for k in range(1, max(steps) + 1):
        _, _, terminated, truncated, info = envs.step(action)
        assert not (terminated | truncated).any()  # every row's NEES is of one episode
        if k in steps:
            out.append((k, _nees(envs, info).mean(), info))
    envs.close()
    return out


@pytest.mark.slow
@pytest.mark.parametrize("sigma_deg", [1.0, 10.0, 30.0])
def test_the_estimate_is_consistent_over_every_initial_error_the_scenario_accepts(sigma_deg):
    # 30° is the largest estimator_initial_attitude_deg allowed: before the fix the NEES was
    # 9.5e5 after the first star-tracker fix (the small-angle residual left θ − 2 sin(θ/2)).
    low, high = _band(6)
    for step, nees, info in _runs({"estimator_initial_attitude_deg": sigma_deg}, (1, 10, 100, 300)):
        assert low <= nees <= high, (step, nees)
        assert info["estimate_covariance"].shape == (N, 6, 6)


@pytest.mark.slow
def test_a_magnetometer_bias_drawn_per_episode_is_estimated_consistently():
    # The tracker measures at the start only: the magnetometer then holds the attitude, its
    # 5 µT bias (five times its noise) a constant the filter must learn, not white noise
    # (NEES 65 for 6 before).
    overrides = {"magnetometer_bias": 5e-6, "star_tracker_period": 10**9}
    low, high = _band(9)
    runs = _runs(overrides, (1, 100, 1000, 2000))
    for step, nees, info in runs:
        assert low <= nees <= high, (step, nees)
        assert info["estimate_covariance"].shape == (N, 9, 9)
    info = runs[-1][2]
    error = info["magnetometer_bias"] - info["estimated_magnetometer_bias"]
    assert np.sqrt(np.mean(error**2)) < 0.1e-6  # learnt to a fiftieth of its prior std


def test_a_star_tracker_fix_corrects_a_large_error_exactly():
    # P₀ of 30° per axis, a fix of 2″: the estimate must land on the measurement to within the
    # measurement's weight, (2″)²/(30°)² of the way, at any angle.
    sigma, noise = np.radians(30.0), 2.0 * ARCSEC
    for angle_deg in (10.0, 30.0, 90.0, 170.0):
        axis = np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])
        truth = quat.from_rotvec(np.radians(angle_deg) * axis)
        estimate = mekf.initial([1.0, 0.0, 0.0, 0.0], sigma, 1e-6)
        fixed = mekf.correct_attitude(estimate, truth, noise**2 * np.eye(3))
        left = (_rotation(fixed.attitude).inv() * _rotation(truth)).magnitude()
        assert left < 1e-3 * ARCSEC, (angle_deg, left / ARCSEC)
        # and its covariance now the measurement's
        np.testing.assert_allclose(np.diag(fixed.covariance)[:3], noise**2, rtol=1e-6)


def test_the_residual_of_an_attitude_is_its_rotation_vector_at_any_angle():
    rng = np.random.default_rng(3)
    for _ in range(100):
        q = quat.normalize(rng.normal(size=4))
        turn = rng.normal(size=3)
        turn *= rng.uniform(0.0, np.pi - 1e-6) / np.linalg.norm(turn)
        measured = quat.multiply(q, quat.from_rotvec(turn))
        np.testing.assert_allclose(mekf.attitude_residual(tuple(q), tuple(measured)), turn, atol=1e-12)


def test_perfect_sun_sensors_are_refused_where_the_filter_would_weigh_them():
    with pytest.raises(ScenarioError, match=r"sun_sensors\.noise must be positive.*got 0\.0"):
        gym.make("RigidRot/NadirPoint-v0", sun_sensor_noise=0.0)
    # without the estimator a perfect sensor is fine
    env = gym.make("RigidRot/NadirPoint-v0", sun_sensor_noise=0.0, observe="sensors")
    env.close()


def test_info_carries_the_estimate_as_the_single_env_and_every_row_of_the_vector_env():
    env = gym.make("RigidRot/NadirPoint-v0")
    envs = gym.make_vec("RigidRot/NadirPoint-v0", num_envs=3)
    _, info = env.reset(seed=2)
    _, infos = envs.reset(seed=[0, 1, 2])
    action = np.full(env.action_space.shape, 0.3)
    for _ in range(3):
        _, _, _, _, info = env.step(action)
        _, _, _, _, infos = envs.step(np.tile(action, (3, 1)))
    for key in ("estimated_attitude", "estimated_gyro_bias", "estimate_covariance", "gyro_bias"):
        np.testing.assert_array_equal(info[key], infos[key][2])
        assert infos[f"_{key}"].all()
    # the covariance is symmetric and positive definite, the attitude a unit quaternion
    p = info["estimate_covariance"]
    np.testing.assert_array_equal(p, p.T)
    assert np.linalg.eigvalsh(p).min() > 0.0
    assert np.linalg.norm(info["estimated_attitude"]) == pytest.approx(1.0, abs=1e-12)
    # the info's arrays are copies: a later step does not change them
    kept = info["estimate_covariance"].copy()
    env.step(action)
    np.testing.assert_array_equal(info["estimate_covariance"], kept)
    env.close()
    envs.close()
    sb3 = AttitudeSB3VecEnv(2, "RigidRot/NadirPoint-v0")
    sb3.reset()
    infos = sb3.step(np.zeros((2, 7)))[3]
    for info in infos:
        assert info["estimate_covariance"].shape == (6, 6) and info["estimated_attitude"].shape == (4,)
    sb3.close()


def test_nees_is_the_closed_form_and_bad_calls_name_their_argument():
    # At q̂ = 1 with P = diag(σ_θ² I, σ_β² I), a truth turned by a about x with bias b:
    # εᵀ P⁻¹ ε = a²/σ_θ² + |b|²/σ_β².
    sigma_theta, sigma_beta, a, b = 0.01, 1e-5, 0.03, np.array([1e-5, -2e-5, 0.0])
    estimate = mekf.initial([1.0, 0.0, 0.0, 0.0], sigma_theta, sigma_beta)
    truth = quat.from_rotvec([a, 0.0, 0.0])
    assert mekf.nees(estimate, truth, b) == pytest.approx(
        (a / sigma_theta) ** 2 + (b @ b) / sigma_beta**2, rel=1e-12
    )
    with pytest.raises(ValueError, match="estimate must be an Estimate, got None"):
        mekf.nees(None, truth, b)
    with pytest.raises(
        ValueError, match=r"attitude must have the estimate's shape \(4,\), got shape \(2, 4\)"
    ):
        mekf.errors(estimate, np.tile(truth, (2, 1)), b)

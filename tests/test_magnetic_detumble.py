"""The orbit, the geomagnetic field and the magnetorquers in the env's pipeline, and the
magnetic detumbling task with its B-dot baseline.

The field the env observes is checked against the library's checked numpy functions
(orbit.position_velocity, geomagnetic.field_inertial), themselves checked against
Basilisk's modules (test_orbit, test_geomagnetic); the magnetorquers' effect over a step
against DOP853 (tests/reference.solve) with τ = m × R(q)ᵀ B; B-dot's detumbling time
against the closed-form estimate of its linear phase.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from reference import body_to_world, solve, world_to_body
from scipy.optimize import minimize_scalar

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.attitude.scenario import ScenarioError, find
from rigidrot_gym.control import CONTROLLERS, BDot, QuaternionFeedback
from rigidrot_gym.control.bdot import avanzini_gain
from rigidrot_gym.physics.environment import geomagnetic
from rigidrot_gym.physics.environment import orbit as kepler
from rigidrot_gym.tools.bench.control import run_episodes

ID = "RigidRot/MagDetumble-v0"
EPOCH = "2026-01-01T00:00:00Z"
A = 6378137.0 + 500e3
FIELD_SCALE = 6e-5  # T: the observation's field columns are B_body over this
MAX_DIPOLE = 0.2  # A·m² per rod
# The 6U box of the scenario file: 12 kg, 0.1 × 0.226 × 0.34 m, I = m/12 (b² + c², ...).
J = 12.0 / 12.0 * np.diag([0.226**2 + 0.34**2, 0.1**2 + 0.34**2, 0.1**2 + 0.226**2])


def _elements() -> kepler.Elements:
    return kepler.elements(A, 0.0, np.radians(97.40), 0.0, 0.0, 0.0)


def _library_field(anomaly: float, t: float) -> np.ndarray:
    """B (T, inertial) at the episode time t of an episode that started at mean anomaly
    ``anomaly`` at the epoch, by the library's checked numpy path."""
    r, _ = kepler.position_velocity(_elements()._replace(mean_anomaly=anomaly), t)
    return geomagnetic.field_inertial(r, t, EPOCH)


def _observed_field(env, obs) -> np.ndarray:
    """The observation's field turned back into the world frame, T."""
    return body_to_world(env.attitude, obs[-3:].astype(np.float64) * FIELD_SCALE)


def _fit_anomaly(field0: np.ndarray) -> float:
    """The start's mean anomaly whose field at t = 0 is ``field0``: a grid, then refined."""
    grid = np.linspace(0.0, 2.0 * np.pi, 4001)
    r, _ = kepler.position_velocity(_elements(), grid / kepler.mean_motion(A))
    fields = geomagnetic.field_inertial(r, 0.0, EPOCH)
    best = grid[np.argmin(np.linalg.norm(fields - field0, axis=-1))]
    fit = minimize_scalar(
        lambda m: np.linalg.norm(_library_field(m, 0.0) - field0),
        bounds=(best - 0.01, best + 0.01),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return float(fit.x)


def test_observed_field_follows_the_orbit_and_the_turning_earth():
    env = gym.make(ID).unwrapped
    obs, _ = env.reset(seed=3)
    assert obs.shape == (10,)
    field0 = _observed_field(env, obs)
    assert 1.5e-5 < np.linalg.norm(field0) < 5e-5  # LEO at 500 km: 18–47 µT
    anomaly = _fit_anomaly(field0)
    # float32 observations: ~1e-7 relative to the scale
    np.testing.assert_allclose(field0, _library_field(anomaly, 0.0), rtol=0, atol=2e-11)
    # 1,200 steps (20 min, a fifth of an orbit) later, without refitting: the body has
    # moved along the orbit and the Earth has turned under it.
    for _ in range(1200):
        obs, *_ = env.step(np.zeros(3))
    later = _observed_field(env, obs)
    np.testing.assert_allclose(later, _library_field(anomaly, 1200.0), rtol=0, atol=2e-11)
    assert np.linalg.norm(later - field0) > 1e-5  # it did change


def test_magnetorquers_torque_is_the_dipole_across_the_held_field():
    env = gym.make(ID).unwrapped
    obs, _ = env.reset(seed=5, options={"rate": [0.05, -0.03, 0.04]})
    q0, w0 = env.attitude.copy(), env.body_rates.copy()
    field = _observed_field(env, obs)  # the field of the period's start, held in the world frame
    action = np.array([0.7, -1.0, 0.4])
    dipole = action * MAX_DIPOLE
    env.step(action.astype(np.float32))
    q_ref, w_ref = solve(
        q0, w0, J, [0.0, 1.0], torque=lambda t, q, w: np.cross(dipole, world_to_body(q, field))
    )
    _, w_free = solve(q0, w0, J, [0.0, 1.0])
    moved = np.linalg.norm(w_ref[-1] - w_free[-1])
    assert moved > 1e-5  # the rods' torque shows: ~8 µN·m over a second on ~0.1 kg·m²
    # rk4 at 0.5 s sub-steps; the observation's float32 field bounds the rest
    assert np.linalg.norm(env.body_rates - w_ref[-1]) < 1e-4 * moved
    assert min(np.linalg.norm(env.attitude - q_ref[-1]), np.linalg.norm(env.attitude + q_ref[-1])) < 1e-8


def test_bdot_detumbles_every_episode_within_the_linear_phase_estimate():
    # With k = 2 n (1 + sin ξ_m) J_min (Avanzini & Giulietti 2012) and an isotropic field
    # direction in the tumbling body, ⟨|ω × b|²⟩ = (2/3)|ω|², so the slowest axis (J_max)
    # decays as exp(−(2/3)(k/J_max) t) once the rods no longer saturate; the estimate of
    # the time from |ω₀| to the tolerance ω_f is (3/2)(J_max/k) ln(|ω₀|/ω_f).
    scenario = find(ID)
    k = avanzini_gain(scenario)
    assert 2.0 * kepler.mean_motion(A) * J[2, 2] < k < 4.0 * kepler.mean_motion(A) * J[2, 2]
    seeds = range(12)
    episodes, _ = run_episodes(BDot.for_scenario(scenario), scenario, seeds)
    assert all(e.success for e in episodes)
    starts = []
    for seed in seeds:
        env = gym.make(ID).unwrapped
        env.reset(seed=seed)
        starts.append(np.linalg.norm(env.body_rates))
    estimate = 1.5 * J[0, 0] / k * np.log(np.array(starts) / scenario.rate_tolerance)
    ratio = np.array([e.settling_time for e in episodes]) / estimate
    # Saturated rods at the start slow it down, the faster axes speed it up: the median
    # of the measured times sits within a factor of two of the estimate.
    assert 0.5 < np.median(ratio) < 2.0
    assert all(e.settling_time < 2 * kepler.period(A) for e in episodes)


def test_bdot_command_is_the_cross_product_law_clipped_per_rod():
    law = BDot(gain=3e-4, max_dipole=[0.2, 0.1, 0.2], max_rate=0.5)
    omega = np.array([0.01, -0.02, 0.005])
    field = np.array([2e-5, -1e-5, 3e-5])
    expected = 3e-4 * np.cross(omega, field / np.linalg.norm(field)) / np.linalg.norm(field)
    obs = np.concatenate([[1.0, 0, 0, 0], omega / 0.5, field / FIELD_SCALE]).astype(np.float32)
    action, _ = law.predict(obs)
    np.testing.assert_allclose(action, np.clip(expected / [0.2, 0.1, 0.2], -1, 1), rtol=1e-5, atol=1e-7)
    # the torque m × B it commands takes energy out: ω · (m × B) = −k |ω × b|² < 0
    assert omega @ np.cross(expected, field) < 0


def test_controllers_apply_to_their_own_actuators_only():
    magnetic, plain = find(ID), find("RigidRot/Reorient-v0")
    assert CONTROLLERS["bdot"](plain) is None
    assert CONTROLLERS["quaternion_feedback"](magnetic) is None
    assert isinstance(CONTROLLERS["bdot"](magnetic), BDot)
    with pytest.raises(ValueError, match="magnetorquers"):
        QuaternionFeedback.for_scenario(magnetic, natural_frequency=0.5)
    with pytest.raises(ValueError, match="scenario must have magnetorquers"):
        BDot.for_scenario(plain)


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"magnetic_field": False}, "magnetorquers.enabled needs magnetic_field.enabled"),
        ({"orbit": False}, "magnetic_field.enabled needs orbit.enabled"),
        ({"orbit_semi_major_axis": 6.0e6}, "above the Earth's equatorial radius"),
        ({"orbit_epoch": "2031-06-01T00:00:00Z"}, "must lie in 2020–2030"),
        ({"orbit_epoch": "noon"}, "ISO 8601 UTC instant"),
        ({"orbit_eccentricity": 1.0}, r"orbit.eccentricity: expected a number in \[0, 0.99\]"),
        ({"magnetorquer_max_dipole": [0.2, 0.0, 0.2]}, "magnetorquer_max_dipole: expected a list of 3"),
    ],
)
def test_bad_spacecraft_settings_are_named(overrides, match):
    with pytest.raises(ScenarioError, match=match):
        gym.make(ID, **overrides)


def test_with_a_delay_the_pending_action_comes_before_the_field():
    # columns: 7, then the pending action (3), then the field (3)
    env = gym.make(ID, actuation_delay=True).unwrapped
    obs, _ = env.reset(seed=1)
    assert obs.shape == (13,)
    np.testing.assert_array_equal(obs[7:10], 0.0)
    action = np.array([0.25, -0.5, 1.0], dtype=np.float32)
    obs, *_ = env.step(action)
    np.testing.assert_array_equal(obs[7:10], action)
    field = _observed_field(env, obs)
    assert 1.5e-5 < np.linalg.norm(field) < 5e-5
    obs, *_ = env.step(np.zeros(3, dtype=np.float32))
    np.testing.assert_array_equal(obs[7:10], np.zeros(3))


def test_plain_ids_observe_no_field():
    assert gym.make("RigidRot/Reorient-v0").observation_space.shape == (7,)
    assert gym.make(ID).observation_space.shape == (10,)


def test_with_a_duty_cycle_the_rods_act_only_at_the_periods_end():
    # 0.75 of a 1 s period on 4 sub-steps: off for the first 0.25 s ("measure"), then on.
    env = gym.make(ID, substeps=4, magnetorquer_duty_cycle=0.75).unwrapped
    obs, _ = env.reset(seed=5, options={"rate": [0.05, -0.03, 0.04]})
    q0, w0 = env.attitude.copy(), env.body_rates.copy()
    field = _observed_field(env, obs)
    dipole = np.array([0.7, -1.0, 0.4]) * MAX_DIPOLE
    env.step((dipole / MAX_DIPOLE).astype(np.float32))
    q_off, w_off = solve(q0, w0, J, [0.0, 0.25])  # free while the magnetometer measures
    q_ref, w_ref = solve(
        q_off[-1], w_off[-1], J, [0.0, 0.75], torque=lambda t, q, w: np.cross(dipole, world_to_body(q, field))
    )
    _, w_free = solve(q0, w0, J, [0.0, 1.0])
    moved = np.linalg.norm(w_ref[-1] - w_free[-1])
    assert moved > 1e-5
    assert np.linalg.norm(env.body_rates - w_ref[-1]) < 1e-4 * moved
    assert min(np.linalg.norm(env.attitude - q_ref[-1]), np.linalg.norm(env.attitude + q_ref[-1])) < 1e-8


def test_a_duty_cycle_needs_whole_sub_steps_and_the_librarys_methods():
    with pytest.raises(ScenarioError, match=r"magnetorquer_duty_cycle × substeps must be a whole number"):
        gym.make(ID, magnetorquer_duty_cycle=0.7)  # × 2 sub-steps
    with pytest.raises(ValueError, match="cannot switch the magnetorquers within it"):
        gym.make(ID, magnetorquer_duty_cycle=0.5, integrator="pybullet")

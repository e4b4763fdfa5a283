"""A target that moves: nadir pointing, the orbit's LVLH frame as the target.

The env's target is checked against the LVLH axes built from the library's numpy orbit
(``orbit.position_velocity``, itself checked against Basilisk in test_orbit): ô₃ = −r̂,
ô₂ = −(r × v)/|r × v|; a free body started in that frame with its rate stays in it (on a
circular orbit the frame turns at the constant rate n about a fixed axis, which is a
torque-free motion of a body about a principal axis); quaternion feedback with the
target's rate fed forward holds nadir, and without it lags by the closed form's error.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.attitude.scenario import ScenarioError
from rigidrot_gym.control import QuaternionFeedback
from rigidrot_gym.physics.environment import orbit as kepler
from rigidrot_gym.physics.rotation import quaternion as quat

ID = "RigidRot/MagDetumble-v0"
A = 6378137.0 + 500e3
# The 6U box of the scenario file: 12 kg, 0.1 × 0.226 × 0.34 m, I = m/12 (b² + c², ...).
J = 12.0 / 12.0 * np.diag([0.226**2 + 0.34**2, 0.1**2 + 0.34**2, 0.1**2 + 0.226**2])
# Nadir pointing with the body's own torquers: no rods, no field, no ending on success.
NADIR = {
    "target_attitude": "nadir",
    "magnetorquers": False,
    "magnetic_field": False,
    "success_hold_steps": 0,
}


def _lvlh(el: kepler.Elements, t: float) -> np.ndarray:
    """(3, 3) the LVLH axes ô₁, ô₂, ô₃ (columns) of the library's orbit at time t."""
    r, v = kepler.position_velocity(el, t)
    down = -r / np.linalg.norm(r)
    normal = np.cross(r, v)
    back = -normal / np.linalg.norm(normal)
    return np.stack([np.cross(back, down), back, down], axis=-1)


def test_the_target_is_the_lvlh_frame_of_the_orbit():
    # An inclined, eccentric orbit: the frame's rate changes along it.
    orbit = {"orbit_eccentricity": 0.02, "orbit_inclination_deg": 51.6, "orbit_raan_deg": 30.0}
    env = gym.make(ID, **NADIR, **orbit, orbit_argp_deg=40.0).unwrapped
    env.reset(seed=2)
    el = kepler.elements(A, 0.02, np.radians(51.6), np.radians(30.0), np.radians(40.0), 0.0)

    def axes_at(anomaly: float, t: float) -> np.ndarray:
        return _lvlh(el._replace(mean_anomaly=anomaly), t)

    first = quat.to_matrix(env.target)
    # the episode's mean anomaly at the start, from where the target points at t = 0:
    # r̂ = −ô₃ gives the argument of latitude u, then the true, eccentric and mean anomalies
    node = np.array([np.cos(el.raan), np.sin(el.raan), 0.0])
    across = np.cross([np.sin(el.raan) * np.sin(el.i), -np.cos(el.raan) * np.sin(el.i), np.cos(el.i)], node)
    up = -first[:, 2]
    true_anomaly = np.arctan2(up @ across, up @ node) - el.argp
    E = 2.0 * np.arctan(np.sqrt((1.0 - el.e) / (1.0 + el.e)) * np.tan(0.5 * true_anomaly))
    anomaly = E - el.e * np.sin(E)
    np.testing.assert_allclose(first, axes_at(anomaly, 0.0), rtol=0, atol=1e-12)
    for _ in range(900):  # 15 min, a sixth of the orbit, without refitting
        env.step(np.zeros(3, dtype=np.float32))
    np.testing.assert_allclose(quat.to_matrix(env.target), axes_at(anomaly, 900.0), rtol=0, atol=1e-12)


def test_a_free_body_turning_with_the_frame_stays_in_it():
    env = gym.make(
        ID, **NADIR, start_attitude="near_target", start_max_angle_deg=0.0, start_rate_spread=0.0
    ).unwrapped
    obs, info = env.reset(seed=5)
    n = kepler.mean_motion(A)
    # The start rates are relative to the target's: the body turns at n about −ô₂ (its y).
    np.testing.assert_allclose(env.body_rates, [0.0, -n, 0.0], rtol=0, atol=1e-15)
    assert info["pointing_error_deg"] < 1e-12 and info["rate"] < 1e-15
    for _ in range(3000):
        obs, _, terminated, _, info = env.step(np.zeros(3, dtype=np.float32))
        assert not terminated
    # RK4's truncation error over 3000 steps of 0.5 s at n t ~ 3.3 rad: far below 1e-9 deg
    assert info["pointing_error_deg"] < 1e-9 and info["rate"] < 1e-15
    np.testing.assert_allclose(obs[4:7], 0.0, atol=1e-12)


def test_feedforward_holds_nadir_where_feedback_alone_lags():
    # A body whose principal axes are 20° off the LVLH axes must be pushed to turn with the
    # frame: ω_r × J ω_r ≠ 0. Feedback on the rate error alone leaves that torque out, and
    # its stiffness balances it: δq_v = −K⁻¹ (ω_r × J ω_r), an offset of 2|δq_v| rad.
    turn = quat.to_matrix(quat.from_rotvec([np.radians(20.0), 0.0, 0.0]))
    inertia = turn @ J @ turn.T
    env_kwargs = {**NADIR, "inertia": inertia, "start_attitude": "near_target", "start_max_angle_deg": 20.0}
    scenario = gym.make(ID, **env_kwargs).unwrapped.scenario
    tracking = QuaternionFeedback.for_scenario(scenario, natural_frequency=0.05)
    n = kepler.mean_motion(A)
    np.testing.assert_allclose(tracking.target_rate, [0.0, -n, 0.0], rtol=1e-15)
    sun = gym.make(ID, **{**env_kwargs, "target_attitude": "sun"}).unwrapped.scenario
    np.testing.assert_array_equal(QuaternionFeedback.for_scenario(sun, 0.05).target_rate, 0.0)
    lagging = QuaternionFeedback.critically_damped(
        scenario.inertia, 0.05, **QuaternionFeedback.limits_of(scenario)
    )
    errors = {}
    for name, controller in (("tracking", tracking), ("lagging", lagging)):
        env = gym.make(ID, **env_kwargs).unwrapped
        obs, info = env.reset(seed=1)
        assert info["pointing_error_deg"] > 5.0
        for _ in range(1500):  # 25 min: 10 times the closed loop's 1/(ζ ωn)
            obs, _, _, _, info = env.step(controller.predict(obs)[0])
        errors[name] = info["pointing_error_deg"]
    omega_r = np.array([0.0, -n, 0.0])
    offset = 2.0 * np.linalg.norm(np.linalg.solve(lagging.stiffness, np.cross(omega_r, inertia @ omega_r)))
    np.testing.assert_allclose(np.radians(errors["lagging"]), offset, rtol=0.05)
    assert errors["tracking"] < 0.01 * errors["lagging"]


def test_nadir_needs_an_orbit_and_cannot_be_fixed_at_reset():
    with pytest.raises(ScenarioError, match=r"target\.attitude 'nadir' needs orbit\.enabled"):
        gym.make("RigidRot/Reorient-v0", target_attitude="nadir")
    env = gym.make(ID, **NADIR)
    env.reset(seed=0)
    before = env.unwrapped.attitude.copy()
    with pytest.raises(ValueError, match=r"options\['target'\] cannot fix a target that moves"):
        env.reset(seed=1, options={"target": [1.0, 0.0, 0.0, 0.0]})
    np.testing.assert_array_equal(env.unwrapped.attitude, before)

"""The Sun and the Earth's shadow in the env's observation.

What the env observes is checked against the library's numpy path (``sun.sun_position``,
``sun.shadow_factors``, ``orbit.position_velocity``; themselves checked against astropy and
Basilisk's ``eclipse`` in test_sun and test_orbit), at the body's position read back from a
nadir target; the time in shadow over an orbit against the closed form of a cylindrical
shadow.
"""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
from reference import body_to_world

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.attitude.scenario import ScenarioError
from rigidrot_gym.physics.environment import earth, sun
from rigidrot_gym.physics.environment import orbit as kepler
from rigidrot_gym.physics.rotation import quaternion as quat

ID = "RigidRot/MagDetumble-v0"
A = 6378137.0 + 500e3
EPOCH = "2026-01-01T00:00:00Z"
INCLINATION = np.radians(97.40)
# A noon-midnight Sun-synchronous orbit on the epoch's day: the node at the Sun's right
# ascension (281.3° on 1 January), so the orbit crosses the Earth's shadow every time.
RAAN_DEG = 281.3
SUNLIT = {
    "sun": True,
    "target_attitude": "nadir",
    "magnetorquers": False,
    "magnetic_field": False,
    "success_hold_steps": 0,
    "orbit_raan_deg": RAAN_DEG,
}


def _anomaly_from_target(target: np.ndarray, el: kepler.Elements) -> float:
    """The circular orbit's mean anomaly at the start from the nadir target at t = 0 (its
    third axis points down): the argument of latitude u of r̂, less ω."""
    node = np.array([np.cos(el.raan), np.sin(el.raan), 0.0])
    normal = np.array([np.sin(el.raan) * np.sin(el.i), -np.cos(el.raan) * np.sin(el.i), np.cos(el.i)])
    up = -quat.to_matrix(target)[:, 2]
    return float(np.arctan2(up @ np.cross(normal, node), up @ node) - el.argp)


def test_the_observed_sun_and_shadow_are_the_librarys():
    env = gym.make(ID, **SUNLIT).unwrapped
    obs, _ = env.reset(seed=6)
    assert obs.shape == (7 + 4,)
    el = kepler.elements(A, 0.0, INCLINATION, np.radians(RAAN_DEG), 0.0, 0.0)
    el = el._replace(mean_anomaly=_anomaly_from_target(env.target, el))
    seen = {"sunlit": 0, "umbra": 0, "penumbra": 0}
    for step in range(6000):  # a little more than an orbit
        if step % 20 == 0 or 0.0 < obs[10] < 1.0:
            r, _ = kepler.position_velocity(el, float(step))
            s = sun.sun_position(float(step), EPOCH)
            direction = (s - r) / np.linalg.norm(s - r)
            observed = body_to_world(env.attitude, obs[7:10].astype(np.float64))
            np.testing.assert_allclose(observed, direction, rtol=0, atol=3e-7)  # float32 columns
            assert obs[10] == pytest.approx(sun.shadow_factors(r, s), abs=1e-7)
            seen["umbra" if obs[10] == 0.0 else "sunlit" if obs[10] == 1.0 else "penumbra"] += 1
        obs, *_ = env.step(np.zeros(3, dtype=np.float32))
    assert min(seen.values()) > 0, seen  # every kind of light was checked


def test_the_time_in_shadow_is_the_cylinders():
    # A cylindrical shadow of the Earth's radius R hides a circular orbit of radius a for
    # the fraction acos(√(a² − R²) / (a cos β)) / π of its period, β the Sun's angle to the
    # orbit's plane; the cone's umbra is narrower and its penumbra wider, by 0.27° of arc.
    env = gym.make(ID, **SUNLIT).unwrapped
    obs, _ = env.reset(seed=2)
    period = kepler.period(A)
    steps = int(period)
    dark = np.zeros(steps)
    for k in range(steps):
        obs, *_ = env.step(np.zeros(3, dtype=np.float32))
        dark[k] = 1.0 - obs[10]
    s = sun.sun_direction(0.5 * period, EPOCH)
    normal = np.array(
        [
            np.sin(np.radians(RAAN_DEG)) * np.sin(INCLINATION),
            -np.cos(np.radians(RAAN_DEG)) * np.sin(INCLINATION),
            np.cos(INCLINATION),
        ]
    )
    beta = np.arcsin(s @ normal)
    cylinder = np.arccos(np.sqrt(A**2 - earth.RADIUS**2) / (A * np.cos(beta))) / np.pi
    assert dark.mean() == pytest.approx(cylinder, abs=0.001)  # measured: 8e-5
    assert 0.3 < cylinder < 0.4


def test_the_sun_needs_an_orbit():
    with pytest.raises(ScenarioError, match=r"sun\.enabled needs orbit\.enabled"):
        gym.make("RigidRot/Reorient-v0", sun=True)


def test_the_sun_target_points_body_z_at_the_sun_with_x_along_the_equator():
    env = gym.make(
        ID, **{**SUNLIT, "target_attitude": "sun"}, start_attitude="near_target", start_max_angle_deg=0.0
    ).unwrapped
    _, info = env.reset(seed=3, options={"rate": [0.0, 0.0, 0.0]})  # at rest in the world
    axes = [quat.to_matrix(env.target)]
    rates = [info["rate"]]
    for _ in range(2):
        *_, info = env.step(np.zeros(3, dtype=np.float32))
        axes.append(quat.to_matrix(env.target))
        rates.append(info["rate"])
    # body z at the Sun: from the Earth's centre within the orbit's parallax, a/AU = 4.6e-5
    earth_centred = sun.sun_direction(1.0, EPOCH)
    assert np.arccos(min(axes[1][:, 2] @ earth_centred, 1.0)) < A / sun.AU
    assert abs(axes[1][2, 0]) < 1e-15  # x along the equator
    # the target's rate (what a body at rest sees as its rate) against the frame's own turn
    # from t = 0 to t = 2 s: a rotation of 2e-7 × 2 rad, read to 1e-16 / 4e-7
    turn = quat.as_rotvec(quat.from_matrix(axes[0].T @ axes[2])) / 2.0
    assert 1e-7 < np.linalg.norm(turn) < 3e-7  # the year's 2e-7 rad/s and the parallax's
    # the env's ±60 s central difference: (n h)²/6 of the parallax's share (measured 5e-6)
    assert rates[1] == pytest.approx(np.linalg.norm(turn), rel=1e-4)


def test_the_sun_kept_per_step_is_the_ephemeris_at_each_steps_time():
    # Every body at episode step k sees the Sun of time k·dt: kept once per batch
    # (sunlight.along_steps), it is the ephemeris's own (the numpy path of the library).
    from rigidrot_gym.attitude.components import sunlight
    from rigidrot_gym.attitude.scenario import find

    flight = find("RigidRot/NadirPoint-v0").flight
    kept = sunlight.along_steps(flight, 1.0, 3000)
    assert kept.shape == (3001, 3)
    expected = sun.sun_position(np.arange(3001) * 1.0, flight.epoch)
    np.testing.assert_allclose(kept, expected, rtol=1e-12)  # the last bits: FMA contraction
    assert sunlight.along_steps(dataclasses.replace(flight, enabled=False), 1.0, 5).shape == (0, 3)


def test_steps_past_the_kept_ones_compute_the_same_sun(monkeypatch):
    # An episode longer than the kept steps computes its later steps' Sun in the period:
    # the same numbers, so the readings and the estimate do not change at the boundary.
    from rigidrot_gym.attitude.components import sunlight

    def run() -> list[np.ndarray]:
        env = gym.make_vec("RigidRot/NadirPoint-v0", num_envs=3, vectorization_mode="vector_entry_point")
        obs, _ = env.reset(seed=5)
        seen = [obs]
        for _ in range(12):
            obs, *_ = env.step(np.full((3, env.single_action_space.shape[0]), 0.3, dtype=np.float32))
            seen.append(obs)
        env.close()
        return seen

    kept = run()
    monkeypatch.setattr(sunlight, "KEPT_STEPS", 4)
    computed = run()
    for a, b in zip(kept, computed, strict=True):
        assert a.tobytes() == b.tobytes()

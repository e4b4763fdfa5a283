"""The observation's columns as the env lists them (``observation_columns()``, the table of
its docstring) are the ones it fills: for every registered id, and for one with every block
(NadirPoint-v0 with the Sun and a delay), each block holds what an independent quantity
says it holds, step after step: the true attitude error and rates (exactly where the truth
is observed), the wheels' true momenta over their limits, the action just given, a flag
of 0 or 1, Sun sensors lit as a cube of them must be by one Sun, a unit vector to the Sun,
a field of the geomagnetic dipole's strength."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import rigidrot_gym
from rigidrot_gym.attitude.env import AttitudeEnv
from rigidrot_gym.physics.actuators import reaction_wheels

CASES = [(env_id, {}) for env_id in rigidrot_gym.ENV_IDS]
EVERY_BLOCK = (
    "RigidRot/NadirPoint-v0",
    {"sun": True, "actuation_delay": True, "wheel_fault": "stop", "faults_hidden": False},
)
STEPS = 12


def _rotation(q: np.ndarray) -> Rotation:
    return Rotation.from_quat(np.roll(np.asarray(q, dtype=np.float64), -1))  # scalar first → last


def _angle_deg(q1: np.ndarray, q2: np.ndarray) -> float:
    return float(np.degrees(2.0 * np.arccos(min(abs(np.dot(q1, q2)) / np.linalg.norm(q1), 1.0))))


def _wheel_limit(s) -> float:
    if s.wheel_model == "ideal":
        return s.wheel_max_momentum
    return reaction_wheels.PRESETS[s.wheel_model].max_momentum


def _check(env, obs: np.ndarray, blocks: dict[str, slice], action: np.ndarray | None, before) -> None:
    """``before``: the true attitude at the step's start (None after a reset)."""
    s = env.scenario
    clean = s.observe == "truth" and not (s.attitude_noise_deg or s.rate_noise or s.rate_bias)
    error = np.concatenate([obs[blocks["error_w"]], obs[blocks["error_xyz"]]])
    truth = np.roll((_rotation(env.target).inv() * _rotation(env.attitude)).as_quat(canonical=True), 1)
    assert error[0] >= 0.0 and np.linalg.norm(error) == pytest.approx(1.0, abs=1e-6)
    if clean:
        np.testing.assert_allclose(error, truth, atol=1e-6)
    elif s.observe == "sensors" and s.star_tracker_model == "none":  # nothing measures it
        np.testing.assert_allclose(error, [1.0, 0.0, 0.0, 0.0], atol=1e-6)
    else:  # a star tracker's noise (0.02°), or the estimate's error
        assert _angle_deg(error, truth) < 3.0
    rates = obs[blocks["rates"]] * s.max_rate
    if clean:
        np.testing.assert_allclose(rates, np.clip(env.body_rates, -s.max_rate, s.max_rate), atol=1e-6)
    elif s.observe == "truth":  # white noise and a bias per episode, each of std σ per axis
        np.testing.assert_allclose(rates, env.body_rates, atol=5.0 * (s.rate_noise + s.rate_bias))
    else:  # a gyro's: the mean rate over the period (the start's at a reset), ± a moving target's 1e-3
        turn = None if before is None else (_rotation(before).inv() * _rotation(env.attitude)).as_rotvec()
        np.testing.assert_allclose(rates, env.body_rates if turn is None else turn / s.dt, atol=3e-3)
    if "wheel_momenta" in blocks:
        np.testing.assert_allclose(
            obs[blocks["wheel_momenta"]], np.clip(env.wheel_momentum / _wheel_limit(s), -1, 1), atol=1e-6
        )
    if "pending_action" in blocks:
        pending = np.zeros(env.action_space.shape) if action is None else np.clip(action, -1, 1)
        np.testing.assert_array_equal(obs[blocks["pending_action"]], pending)
    if "star_tracker_flag" in blocks:
        assert obs[blocks["star_tracker_flag"]][0] in (0.0, 1.0)
    if "sun_sensors" in blocks:
        # six sensors facing ±x, ±y, ±z, each seeing its hemisphere: one Sun lights at most
        # one of each opposite pair, with cosines whose squares sum to 1, at (1 AU/r)² =
        # 1.03 in January; in the Earth's shadow none (noise of 0.01, clamped at 0)
        lit = obs[blocks["sun_sensors"]].astype(np.float64)
        assert np.all(np.minimum(lit[:3], lit[3:]) < 0.05), lit
        assert np.linalg.norm(lit) < 0.05 or 0.95 < np.linalg.norm(lit) < 1.1, lit
    if "sun" in blocks:
        sun = obs[blocks["sun"]].astype(np.float64)
        assert np.linalg.norm(sun[:3]) == pytest.approx(1.0, abs=1e-6) and 0.0 <= sun[3] <= 1.0
        if "sun_sensors" in blocks and sun[3] == 1.0:
            cosines = np.clip(np.concatenate([sun[:3], -sun[:3]]), 0.0, None)
            expected = np.minimum(1.035 * cosines, 1.0)
            np.testing.assert_allclose(obs[blocks["sun_sensors"]], expected, atol=0.05)
    if "magnetic_field" in blocks:
        # the dipole at 500 km: 24 µT over the equator to 48 µT over the poles
        assert 18.0 < np.linalg.norm(obs[blocks["magnetic_field"]]) * 60.0 < 55.0


@pytest.mark.parametrize(("env_id", "overrides"), [*CASES, EVERY_BLOCK])
def test_the_listed_columns_hold_what_they_say(env_id, overrides):
    env = gym.make(env_id, **overrides).unwrapped
    listed = env.observation_columns()
    blocks = {block.name: block.columns for block in listed}
    assert len(blocks) == len(listed)
    # one after the other from column 0 to the last, none left out
    assert [b.columns.start for b in listed] == [0] + [b.columns.stop for b in listed[:-1]]
    assert listed[-1].columns.stop == env.observation_space.shape[0]
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=1)  # NadirPoint: in sunlight, the Sun away from the tracker's cone
    _check(env, obs, blocks, None, None)
    flags = []
    for _ in range(STEPS):
        action = rng.uniform(-0.6, 0.6, env.action_space.shape).astype(np.float32)
        before = env.attitude
        obs, _, terminated, truncated, _ = env.step(action)
        _check(env, obs, blocks, action, before)
        for block in listed:
            assert np.all((block.low <= obs[block.columns]) & (obs[block.columns] <= block.high)), block
        if "star_tracker_flag" in blocks:
            flags.append(obs[blocks["star_tracker_flag"]][0])
        assert not (terminated or truncated)
    if flags:
        assert 1.0 in flags  # it measures


def test_the_vector_env_lists_the_columns_of_its_rows():
    env_id, overrides = EVERY_BLOCK
    single = gym.make(env_id, **overrides).unwrapped
    vector = gym.make_vec(env_id, num_envs=2, **overrides).unwrapped
    assert vector.observation_columns() == single.observation_columns()


def test_the_docstring_table_lists_every_block_in_column_order():
    env_id, overrides = EVERY_BLOCK
    listed = gym.make(env_id, **overrides).unwrapped.observation_columns()
    lines = [line.strip() for line in AttitudeEnv.__doc__.splitlines()]
    first = lines.index("| Columns | Observation | Unit | Added by | Min | Max |") + 2
    rows = lines[first : lines.index("", first)]
    assert [row.split(" | ")[1] for row in rows] == [block.meaning for block in listed]
    assert [row.split(" | ")[2] for row in rows] == [block.unit for block in listed]

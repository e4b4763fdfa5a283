"""The attitude-control environment: API conformance, determinism, the vector env's rows,
its physics against DOP853, reward and episode-end rules, and bad input."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from reference import angle, solve
from scipy.spatial.transform import Rotation

import rigidrot_gym
from rigidrot_gym.attitude.env import AttitudeEnv
from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv
from rigidrot_gym.attitude.scenario import ScenarioError, find, load
from rigidrot_gym.physics.rotation import integrators

IDS = rigidrot_gym.ENV_IDS


def test_at_least_the_three_required_scenarios_are_registered():
    assert {"RigidRot/Reorient-v0", "RigidRot/Detumble-v0", "RigidRot/Slew-v0"} <= set(IDS)
    slew = find("RigidRot/Slew-v0")
    assert np.max(np.abs(slew.inertia - np.diag(np.diag(slew.inertia)))) > 0.1  # non-diagonal


@pytest.mark.parametrize("env_id", IDS)
def test_gymnasium_env_checker(env_id):
    # its render check opens every declared mode, "human" (a GUI window) included, which a
    # headless machine cannot; test_env_render checks the "rgb_array" frames
    check_env(gym.make(env_id).unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id", IDS)
def test_sb3_env_checker(env_id):
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    sb3_check_env(gym.make(env_id), warn=True)


def test_make_with_module_prefix_in_a_fresh_interpreter():
    code = (
        "import gymnasium as gym; e = gym.make('rigidrot_gym:RigidRot/Reorient-v0'); "
        "print(e.reset(seed=0)[0].shape)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "(7,)"


def _rollout(env, seed, actions):
    obs, _ = env.reset(seed=seed)
    records = [obs]
    for a in actions:
        obs, reward, terminated, truncated, _ = env.step(a)
        records.append(np.concatenate([obs, [reward, terminated, truncated]]))
        if terminated or truncated:
            obs, _ = env.reset()
            records.append(obs)
    return records


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_gives_bitwise_identical_trajectories(env_id):
    size = gym.make(env_id).action_space.shape[0]
    actions = np.random.default_rng(0).uniform(-1, 1, size=(300, size)).astype(np.float32)
    a = _rollout(gym.make(env_id), 42, actions)
    b = _rollout(gym.make(env_id), 42, actions)
    c = _rollout(gym.make(env_id), 43, actions)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[0], c[0])


@pytest.mark.parametrize("env_id", IDS)
def test_vector_row_equals_single_env_with_the_same_seed(env_id):
    n, seed = 3, 11
    max_steps = 40  # short episodes so that next-step autoresets happen in the window
    vec = gym.make_vec(env_id, num_envs=n, max_episode_steps=max_steps)
    singles = [gym.make(env_id, max_episode_steps=max_steps) for _ in range(n)]
    size = vec.single_action_space.shape[0]
    actions = np.random.default_rng(1).uniform(-1.2, 1.2, size=(130, n, size)).astype(np.float32)
    obs, info = vec.reset(seed=seed)
    single_obs = [env.reset(seed=seed + i)[0] for i, env in enumerate(singles)]
    np.testing.assert_array_equal(obs, np.stack(single_obs))
    pending = [False] * n  # the single env must reset on the step after an episode end
    for step_actions in actions:
        obs, reward, terminated, truncated, info = vec.step(step_actions)
        for i, env in enumerate(singles):
            if pending[i]:
                o, _ = env.reset()
                r, te, tr = 0.0, False, False
                pending[i] = False
            else:
                o, r, te, tr, inf = env.step(step_actions[i])
                assert info["pointing_error_deg"][i] == inf["pointing_error_deg"]
                pending[i] = te or tr
            np.testing.assert_array_equal(obs[i], o)
            assert (reward[i], terminated[i], truncated[i]) == (r, te, tr)
    assert any(pending) or vec.unwrapped.batch.steps.max() < max_steps  # resets were exercised


def test_vector_env_autoreset_mode_and_spaces():
    vec = gym.make_vec("RigidRot/Reorient-v0", num_envs=5)
    assert vec.metadata["autoreset_mode"] == gym.vector.AutoresetMode.NEXT_STEP
    assert vec.observation_space.shape == (5, 7) and vec.action_space.shape == (5, 3)
    obs, _ = vec.reset(seed=[1, 2, 3, 4, 5])
    assert obs.shape == (5, 7) and obs.dtype == np.float32
    assert vec.single_observation_space.contains(obs[0])
    with pytest.raises(ValueError, match=r"actions must have shape \(5, 3\)"):
        vec.step(np.zeros((4, 3)))


# ----------------------------------------------------------------------- physics


def test_env_physics_match_dop853_with_piecewise_constant_torque():
    env = gym.make("RigidRot/Slew-v0").unwrapped  # a non-diagonal inertia tensor
    scenario = env.scenario
    q0 = np.array([0.9, 0.1, -0.3, 0.3]) / np.linalg.norm([0.9, 0.1, -0.3, 0.3])
    w0 = np.array([0.02, -0.05, 0.03])
    env.reset(seed=0, options={"attitude": q0, "rate": w0})
    rng = np.random.default_rng(5)
    q, w = q0, w0
    for _ in range(20):
        a = rng.uniform(-1, 1, 3)
        env.step(a.astype(np.float32))
        tau = np.clip(a.astype(np.float32), -1, 1) * scenario.max_torque
        q_ref, w_ref = solve(q, w, scenario.inertia, [scenario.dt], torque=lambda t, q, w, tau=tau: tau)
        q, w = q_ref[-1], w_ref[-1]
    # RK4 with dt = 0.25 s / 2 substeps over 5 s: ~1e-8 per step at these rates.
    assert angle(env.attitude, q) < 1e-7
    assert np.max(np.abs(env.body_rates - w)) < 1e-7


def test_observation_entries_match_their_definition():
    env = gym.make("RigidRot/Reorient-v0").unwrapped
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, target = Rotation.random(random_state=rng), Rotation.random(random_state=rng)
        w = rng.uniform(-0.5, 0.5, 3)
        obs, info = env.reset(
            options={"attitude": np.roll(q.as_quat(), 1), "rate": w, "target": np.roll(target.as_quat(), 1)}
        )
        error = np.roll((target.inv() * q).as_quat(canonical=True), 1)  # scalar first, w ≥ 0
        np.testing.assert_allclose(obs[:4], error, atol=1e-6)
        np.testing.assert_allclose(obs[4:], np.clip(w / env.scenario.max_rate, -1, 1), atol=1e-6)
        assert info["pointing_error_deg"] == pytest.approx(
            np.degrees((target.inv() * q).magnitude()), abs=1e-9
        )
        assert info["rate"] == pytest.approx(np.linalg.norm(w))


@pytest.mark.parametrize("wheels", [None, "pyramid"])
def test_reward_follows_the_documented_formula_and_bounds(wheels):
    """r = −(w_θ θ/π + w_ω min(|ω|/ω_max, 1) + w_u |a|²/n) + w_s inside, n = 3 torques or
    4 wheels."""
    env = gym.make("RigidRot/Reorient-v0", **({"wheel_layout": wheels} if wheels else {}))
    s, n = env.unwrapped.scenario, env.action_space.shape[0]
    low, high = env.unwrapped.reward_range
    assert (low, high) == (
        -(s.reward_angle + s.reward_rate + s.reward_torque + s.reward_unsafe),
        s.reward_success,
    )
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(50):
        a = rng.uniform(-2, 2, n).astype(np.float32)
        _, reward, _, _, info = env.step(a)
        clipped = np.clip(a, -1, 1)
        expected = (
            -(
                s.reward_angle * np.radians(info["pointing_error_deg"]) / np.pi
                + s.reward_rate * min(info["rate"] / s.max_rate, 1.0)
                + s.reward_torque * np.sum(clipped.astype(float) ** 2) / n
            )
            + s.reward_success * info["in_tolerance"]
        )
        assert reward == pytest.approx(expected, abs=1e-12)
        assert low <= reward <= high


@pytest.mark.parametrize("scenario", ["RigidRot/Reorient-v0", "RigidRot/Slew-v0"])
def test_energy_reward_is_the_kinetic_energy_the_step_removed(scenario):
    """With only w_E: r = w_E clip((E − E′)/E_max, −1, 1), E = ½ ωᵀJω of the true state
    before and after the step (body frame, the env's own tensor: Slew's is not diagonal),
    E_max = ½ J_max ω_max²; the bounds widen by w_E both ways."""
    weights = {"reward_angle": 0.0, "reward_rate": 0.0, "reward_torque": 0.0, "reward_success": 0.0}
    env = gym.make(scenario, **weights, reward_energy=7.0).unwrapped
    s = env.scenario
    assert env.reward_range == (-(s.reward_unsafe + 7.0), 7.0)
    env.reset(seed=1, options={"rate": [0.1, -0.2, 0.15]})
    inertia = env.inertia
    e_max = 0.5 * np.linalg.eigvalsh(inertia).max() * s.max_rate**2
    rng = np.random.default_rng(1)
    signs = set()
    for _ in range(30):
        before = 0.5 * env.body_rates @ inertia @ env.body_rates
        _, reward, terminated, _, _ = env.step(rng.uniform(-1, 1, 3).astype(np.float32))
        after = 0.5 * env.body_rates @ inertia @ env.body_rates
        assert not terminated
        assert reward == pytest.approx(7.0 * np.clip((before - after) / e_max, -1, 1), rel=1e-9, abs=1e-15)
        signs.add(np.sign(reward))
    assert signs == {-1.0, 1.0}  # random torques both add and remove energy
    # a free body keeps its energy: the term is what the actions did, up to RK4's error
    env.step(np.zeros(3, dtype=np.float32))
    _, reward, *_ = env.step(np.zeros(3, dtype=np.float32))
    assert abs(reward) < 1e-9 * 7.0


def test_out_of_range_actions_are_clipped():
    a = gym.make("RigidRot/Reorient-v0")
    b = gym.make("RigidRot/Reorient-v0")
    a.reset(seed=2)
    b.reset(seed=2)
    oa = a.step(np.array([5.0, -7.0, 0.3], dtype=np.float32))
    ob = b.step(np.array([1.0, -1.0, 0.3], dtype=np.float32))
    np.testing.assert_array_equal(oa[0], ob[0])


def test_success_hold_terminates_and_unsafe_rate_terminates():
    env = gym.make("RigidRot/Reorient-v0")
    target = np.array([0.0, 1.0, 0.0, 0.0])
    _, info = env.reset(seed=0, options={"attitude": target, "target": target, "rate": [0.0, 0.0, 0.0]})
    # Inside the tolerance from the start, but the task's success is the hold: only on
    # the step that completes it, which ends the episode.
    assert info["in_tolerance"] and not info["is_success"] and info["pointing_error_deg"] < 1e-9
    hold = env.unwrapped.scenario.success_hold_steps
    for k in range(1, hold + 1):
        _, reward, terminated, truncated, info = env.step(np.zeros(3, dtype=np.float32))
        assert info["in_tolerance"] and reward > 0.9
        assert info["is_success"] == terminated == (k == hold) and not truncated
    limit = env.unwrapped.scenario.max_rate
    env.reset(seed=0, options={"rate": [0.0, 0.0, 0.98 * limit]})
    terminated = False
    for _ in range(20):
        _, reward, terminated, _, info = env.step(np.array([0.0, 0.0, 1.0], dtype=np.float32))
        if terminated:
            break
    assert terminated and info["rate"] > limit and reward < -env.unwrapped.scenario.reward_unsafe + 1


def test_truncation_after_max_episode_steps():
    env = gym.make("RigidRot/Detumble-v0", max_episode_steps=7)
    env.reset(seed=0)
    flags = [env.step(np.zeros(3, dtype=np.float32))[3] for _ in range(7)]
    assert flags == [False] * 6 + [True]


# A body that turns unsafe on the 3rd step under full x torque: it starts at rest, and
# 0.01 N·m on 0.08 kg·m² for 0.6 s spins it past 0.06 rad/s (0.075 rad/s).
UNSAFE_AT_3 = {"max_rate": 0.06, "start_rate": [0.0, 0.0, 0.0], "start_rate_spread": 0.0}
FULL_X = np.array([1.0, 0.0, 0.0], dtype=np.float32)


def test_a_termination_on_the_limit_step_is_truncated_too_in_every_env_class():
    """Gymnasium's rule (its ``TimeLimit``): the step that reaches the limit is truncated,
    whether or not it also terminates; the scenario's own limit follows it."""
    flags = {}
    wrapped = gym.make("RigidRot/Reorient-v0", max_episode_steps=3, **UNSAFE_AT_3)  # TimeLimit
    own = AttitudeEnv("RigidRot/Reorient-v0", max_episode_steps=3, **UNSAFE_AT_3)  # the scenario's
    for name, env in (("TimeLimit", wrapped), ("scenario", own)):
        env.reset(seed=0)
        flags[name] = [env.step(FULL_X)[2:4] for _ in range(3)]
    sync = gym.vector.SyncVectorEnv(
        [lambda: gym.make("RigidRot/Reorient-v0", max_episode_steps=3, **UNSAFE_AT_3)] * 2
    )
    native = gym.make_vec("RigidRot/Reorient-v0", num_envs=2, max_episode_steps=3, **UNSAFE_AT_3)
    for name, env in (("SyncVectorEnv", sync), ("native", native)):
        env.reset(seed=0)
        steps = [env.step(np.tile(FULL_X, (2, 1)))[2:4] for _ in range(3)]
        flags[name] = [(bool(te[0]), bool(tr[0])) for te, tr in steps]
    expected = [(False, False), (False, False), (True, True)]
    assert flags == dict.fromkeys(flags, expected)
    # stable-baselines3's convention: done, and not a time-out (DummyVecEnv's rule)
    adapter = AttitudeSB3VecEnv(2, "RigidRot/Reorient-v0", max_episode_steps=3, **UNSAFE_AT_3)
    adapter.reset()
    for _ in range(3):
        _, _, dones, infos = adapter.step(np.tile(FULL_X, (2, 1)))
    assert dones.all() and not any(info["TimeLimit.truncated"] for info in infos)


@pytest.mark.parametrize("limit", [3, 4, 5])
def test_vector_rows_equal_single_envs_through_terminations_on_the_limit_step(limit):
    """Rows that terminate on the limit step, before it, after it or not at all, then
    autoreset: full x torque is unsafe on step 3, half of it on step 5."""
    n = 3
    vec = gym.make_vec("RigidRot/Reorient-v0", num_envs=n, max_episode_steps=limit, **UNSAFE_AT_3)
    singles = [AttitudeEnv("RigidRot/Reorient-v0", max_episode_steps=limit, **UNSAFE_AT_3) for _ in range(n)]
    actions = np.array([FULL_X, 0.5 * FULL_X, 0.0 * FULL_X])
    vec.reset(seed=5)
    for i, env in enumerate(singles):
        env.reset(seed=5 + i)
    pending, seen = [False] * n, set()
    for _ in range(2 * limit + 2):
        obs, reward, terminated, truncated, _ = vec.step(actions)
        for i, env in enumerate(singles):
            if pending[i]:
                o, _ = env.reset()
                r, te, tr = 0.0, False, False
            else:
                o, r, te, tr, _ = env.step(actions[i])
            pending[i] = te or tr
            seen.add((te, tr))
            np.testing.assert_array_equal(obs[i], o)
            assert (reward[i], terminated[i], truncated[i]) == (r, te, tr)
    assert (True, limit in (3, 5)) in seen and (False, True) in seen


def test_overrides_reach_the_dynamics():
    env = gym.make(
        "RigidRot/Reorient-v0", integrator="nielsen_krenk", dt=0.05, substeps=3, max_torque=[1, 2, 3]
    )
    s = env.unwrapped.scenario
    assert (s.integrator, s.dt, s.substeps) == ("nielsen_krenk", 0.05, 3)
    w0 = np.array([0.3, -0.2, 0.1])
    env.reset(seed=0, options={"attitude": [1, 0, 0, 0], "rate": w0})
    for _ in range(4):
        env.step(np.array([1.0, 1.0, 1.0], dtype=np.float32))
    q_ref, w_ref = solve([1, 0, 0, 0], w0, s.inertia, [0.2], torque=lambda t, q, w: np.array([1.0, 2.0, 3.0]))
    # Second order with h = 1/60 s at |ω| ≈ 10 rad/s: error ~ 1e-3 of the rates, not O(1).
    np.testing.assert_allclose(env.unwrapped.body_rates, w_ref[-1], rtol=2e-3)
    assert angle(env.unwrapped.attitude, q_ref[-1]) < 2e-3


# ----------------------------------------------------------------------- bad input


def test_nan_action_raises_and_loses_no_state():
    env = gym.make("RigidRot/Reorient-v0")
    reference = gym.make("RigidRot/Reorient-v0")
    env.reset(seed=9)
    reference.reset(seed=9)
    with pytest.raises(ValueError, match=r"action must be finite, got \[nan, 0.0, 0.0\]"):
        env.step(np.array([np.nan, 0.0, 0.0], dtype=np.float32))
    with pytest.raises(ValueError, match="action must be finite"):
        env.step(np.array([0.0, np.inf, 0.0], dtype=np.float32))
    a = np.array([0.3, -0.2, 0.1], dtype=np.float32)
    np.testing.assert_array_equal(env.step(a)[0], reference.step(a)[0])


def test_invalid_integrator_name_lists_the_valid_names():
    with pytest.raises(
        ValueError,
        match=r"override integrator: expected a registered integrator \(euler, .*rk4.*\), got 'rk5'",
    ):
        gym.make("RigidRot/Reorient-v0", integrator="rk5")
    with pytest.raises(ValueError, match=r"expected an integrator that accepts a torque"):
        gym.make("RigidRot/Reorient-v0", integrator="exact")
    assert "rk4" in integrators.names()


def test_unknown_override_and_bad_values():
    with pytest.raises(ValueError, match=r"unknown scenario field\(s\) \['dtt'\]; valid names: inertia, id"):
        gym.make("RigidRot/Reorient-v0", dtt=0.1)
    with pytest.raises(ValueError, match=r"override dt: expected a positive number, got -0.1"):
        gym.make("RigidRot/Reorient-v0", dt=-0.1)
    with pytest.raises(ValueError, match=r"override max_torque: expected a list of 3 positive finite"):
        gym.make("RigidRot/Reorient-v0", max_torque=[1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"override inertia.*triangle inequality"):
        gym.make("RigidRot/Reorient-v0", inertia=[1.0, 1.0, 3.0])
    # Valid alone, in conflict with the file's other fields: the override is named first.
    with pytest.raises(
        ValueError, match=r"^override\(s\) max_rate=1.05 of .*detumble.toml: start rates up to"
    ):
        gym.make("RigidRot/Detumble-v0", max_rate=1.05)


def test_bad_reset_options():
    env = gym.make("RigidRot/Reorient-v0")
    with pytest.raises(ValueError, match=r"unknown reset option\(s\) \['atitude'\]"):
        env.reset(options={"atitude": [1, 0, 0, 0]})
    with pytest.raises(ValueError, match=r"options\['attitude'\] must be a unit quaternion"):
        env.reset(options={"attitude": [2, 0, 0, 0]})
    with pytest.raises(ValueError, match=r"options\['rate'\] must be finite"):
        env.reset(options={"rate": [0, np.nan, 0]})


def test_step_before_reset_raises():
    with pytest.raises(RuntimeError, match="reset"):
        gym.make("RigidRot/Reorient-v0").unwrapped.step(np.zeros(3, dtype=np.float32))


REORIENT = (Path(rigidrot_gym.__file__).resolve().parents[1] / "envs" / "reorient.toml").read_text()


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (
            ("max_torque = [0.01, 0.01, 0.01]", "max_torque = [0.01, 0.01]"),
            r"field actuator.max_torque: expected",
        ),
        (("dt = 0.2", 'dt = "fast"'), r"field simulation.dt: expected a finite number"),
        (("dt = 0.2 ", "dtt = 0.2 "), r"unknown key\(s\) \['simulation.dtt'\]"),
        (('integrator = "rk4"', 'integrator = "rk5"'), r"field simulation.integrator"),
        (("moments = [0.08, 0.10, 0.05]", "moments = [0.08, 0.10, 0.20]"), r"field body.moments: .*triangle"),
        (("[body]\nmoments = [0.08, 0.10, 0.05]", "[body]"), r"give exactly one of moments, tensor, parts"),
        (
            ('attitude = "random"\nrate', 'attitude = "sideways"\nrate'),
            r"field start.attitude: expected one of",
        ),
        (
            ("max_rate = 1.5", "max_rate = 0.005"),
            r"tolerance.rate \(0.01\) must be below termination.max_rate",
        ),
        (
            ("max_episode_steps = 250", "max_episode_steps = 0"),
            r"simulation.max_episode_steps: expected an integer",
        ),
        (("[reward]", "[rewards]"), r"unknown key\(s\) \['rewards'\]"),
    ],
)
def test_malformed_scenario_file_names_the_file_and_field(tmp_path, edit, match):
    old, new = edit
    assert old in REORIENT
    path = tmp_path / "broken.toml"
    path.write_text(REORIENT.replace(old, new, 1))
    with pytest.raises(ScenarioError, match=rf"broken.toml: .*{match}|broken.toml.*{match}"):
        load(path)


def test_malformed_part_is_named(tmp_path):
    text = (Path(rigidrot_gym.__file__).resolve().parents[1] / "envs" / "slew.toml").read_text()
    path = tmp_path / "parts.toml"
    path.write_text(text.replace("radius = 0.2", "radius = -0.2"))
    with pytest.raises(ScenarioError, match=r"parts.toml: field body.parts\[3\]: radius must be positive"):
        load(path)
    path.write_text(text.replace('shape = "thin_plate"', 'shape = "thin_disc"', 1))
    with pytest.raises(ScenarioError, match=r"body.parts\[1\].shape: expected one of"):
        load(path)
    path.write_text("id = 'x'\n[body\n")
    with pytest.raises(ScenarioError, match=r"parts\.toml: not valid TOML"):
        load(path)

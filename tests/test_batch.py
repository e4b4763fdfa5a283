"""No lost state: a call that raises leaves the env exactly as it was (its whole state
compared before and after), a reset without a seed goes on with the seeded streams, rows
awaiting their autoreset are not integrated, and copies continue in lockstep.

References: the env's own state before the call (tests/envstate.py walks all of it), an
env that never saw the failing call, Gymnasium's ``SyncVectorEnv`` and SB3's
``DummyVecEnv`` over single envs."""

from __future__ import annotations

import copy
import pickle

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from envstate import assert_same_state, shared_arrays, state
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import DummyVecEnv

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.attitude.autoreset import Autoreset
from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv
from rigidrot_gym.attitude.vector_env import AttitudeVectorEnv
from rigidrot_gym.physics.rotation.integrators import ConvergenceError

ONES = np.ones(3, dtype=np.float32)


def _outputs(result) -> list[np.ndarray]:
    """A step's or reset's return values as arrays (info flattened), for exact comparison."""
    *values, info = result
    flat = [np.asarray(v) for v in values]
    return flat + [np.asarray(info[k]) for k in sorted(info)]


def _assert_same_outputs(a, b) -> None:
    for x, y in zip(_outputs(a), _outputs(b), strict=True):
        np.testing.assert_array_equal(x, y)


# ----------------------------------------------------------------------- a step that raises


@pytest.mark.parametrize(
    ("env_id", "overrides", "action"),
    [
        ("RigidRot/Detumble-v0", {"integrator": "rkn", "dt": 6.31}, ONES),  # NaN (issue 12, item 2)
        ("RigidRot/Detumble-v0", {"integrator": "rk4", "dt": 20.0}, ONES),  # |q| collapses to 0
        ("RigidRot/Slew-v0", {"dt": 200.0}, ONES),  # |q| collapses to 0
        ("RigidRot/Reorient-v0", {"max_torque": [1e300] * 3}, ONES),  # ω × Jω overflows
        # the same through the realism options' compiled step
        ("RigidRot/Reorient-v0", {"max_torque": [1e300] * 3, "actuator_noise": 0.1}, ONES),
    ],
)
def test_a_diverging_step_raises_naming_dt_substeps_and_integrator_and_changes_nothing(
    env_id, overrides, action
):
    env = gym.make(env_id, **overrides).unwrapped
    env.reset(seed=0)
    for _ in range(3):
        before = state(env)
        try:
            env.step(action)
        except ValueError as err:
            message = str(err)
            break
    else:
        pytest.fail("the step never diverged")
    s = env.scenario
    assert f"integrator {s.integrator!r}" in message
    assert f"dt = {s.dt:g} s" in message and f"substeps = {s.substeps}" in message
    assert_same_state(before, state(env))


def test_after_a_diverging_step_the_env_goes_on_like_one_that_never_took_it():
    # a torque limit of 1e300 N·m overflows ω × Jω at full torque, not at zero torque
    env, reference = (gym.make("RigidRot/Reorient-v0", max_torque=[1e300] * 3) for _ in range(2))
    _assert_same_outputs(env.reset(seed=3), reference.reset(seed=3))
    with pytest.raises(ValueError, match="too large"):
        env.step(ONES)
    for a in np.random.default_rng(0).uniform(-1e-300, 1e-300, size=(20, 3)):
        _assert_same_outputs(env.step(a), reference.step(a))


@pytest.mark.parametrize("realism", [{}, {"actuator_noise": 0.1}], ids=["plain", "realism"])
def test_the_vector_env_raises_for_one_diverging_row_and_changes_no_row(realism):
    n = 4
    vec = AttitudeVectorEnv(n, "RigidRot/Reorient-v0", max_torque=[1e300] * 3, **realism)
    reference = AttitudeVectorEnv(n, "RigidRot/Reorient-v0", max_torque=[1e300] * 3, **realism)
    _assert_same_outputs(vec.reset(seed=5), reference.reset(seed=5))
    actions = np.zeros((n, 3), dtype=np.float32)
    actions[2] = 1.0  # row 2 diverges
    before = state(vec)
    with pytest.raises(ValueError, match=r"for env 2 with dt = 0.2 s and substeps = 1"):
        vec.step(actions)
    assert_same_state(before, state(vec))
    for _ in range(5):
        quiet = np.zeros((n, 3), dtype=np.float32)
        _assert_same_outputs(vec.step(quiet), reference.step(quiet))


@pytest.mark.parametrize("realism", [{}, {"actuator_noise": 0.1}], ids=["plain", "realism"])
def test_a_step_that_does_not_converge_changes_nothing_and_a_retry_fails_alike(realism):
    env = gym.make("RigidRot/Reorient-v0", integrator="nielsen_krenk", dt=100.0, **realism).unwrapped
    env.reset(seed=0)
    before = state(env)
    for _ in range(2):  # a retry must not apply another unconverged step
        with pytest.raises(ConvergenceError):
            env.step(ONES)
        assert_same_state(before, state(env))


BAD_ACTIONS = {
    "nan": lambda m: np.r_[np.nan, np.zeros(m - 1)].astype(np.float32),
    "one-too-many": lambda m: np.zeros(m + 1),
    "row": lambda m: np.zeros((1, m)),
    "column": lambda m: np.zeros((m, 1)),
    "strings": lambda m: np.array(["a"] * m),
    "complex": lambda m: np.zeros(m, dtype=complex),
    "objects": lambda m: np.array([None] * m),
}


@pytest.mark.parametrize("bad", BAD_ACTIONS)
@pytest.mark.parametrize("env_id", ["RigidRot/Reorient-v0", "RigidRot/WheelReorient-v0"])
def test_a_bad_action_changes_nothing(env_id, bad):
    env = gym.make(env_id).unwrapped
    env.reset(seed=1)
    env.step(np.full(env.action_space.shape, 0.5, dtype=np.float32))
    before = state(env)
    with pytest.raises(ValueError, match="action"):
        env.step(BAD_ACTIONS[bad](env.action_space.shape[0]))
    assert_same_state(before, state(env))


# ----------------------------------------------------------------------- resets


def test_vector_reset_without_a_seed_goes_on_with_the_seeded_streams():
    # reference: Gymnasium's SyncVectorEnv over single envs, which repeats exactly
    n, env_id = 3, "RigidRot/Reorient-v0"
    sync = gym.vector.SyncVectorEnv([lambda: gym.make(env_id) for _ in range(n)])
    runs = []
    for _ in range(2):
        vec = gym.make_vec(env_id, num_envs=n)
        runs.append([vec.reset(seed=0)[0], vec.reset()[0], vec.reset()[0]])
    expected = [sync.reset(seed=0)[0], sync.reset()[0], sync.reset()[0]]
    for run in runs:
        for got, want in zip(run, expected, strict=True):
            np.testing.assert_array_equal(got, want)


def test_a_failing_vector_reset_keeps_the_generators():
    n = 3
    vec, reference = AttitudeVectorEnv(n), AttitudeVectorEnv(n)
    vec.reset(seed=7)
    reference.reset(seed=7)
    before = state(vec)
    for bad in ({"rate": [0, np.nan, 0]}, {"target": "random"}, ["attitude"]):
        with pytest.raises(ValueError, match="options"):
            vec.reset(options=bad)
    with pytest.raises(ValueError, match="seed"):
        vec.reset(seed=1.5)
    assert_same_state(before, state(vec))
    _assert_same_outputs(vec.reset(), reference.reset())


def test_a_failing_reset_neither_reseeds_nor_resets():
    env, reference = gym.make("RigidRot/Reorient-v0").unwrapped, gym.make("RigidRot/Reorient-v0").unwrapped
    _assert_same_outputs(env.reset(seed=4), reference.reset(seed=4))
    before = state(env)
    with pytest.raises(ValueError, match=r"options\['attitude'\]"):
        env.reset(seed=99, options={"attitude": [2.0, 0.0, 0.0, 0.0]})
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)
    assert_same_state(before, state(env))
    _assert_same_outputs(env.reset(), reference.reset())


def test_sb3_reset_with_one_bad_option_resets_no_env():
    adapter = AttitudeSB3VecEnv(3)
    adapter.seed(2)
    adapter.reset()
    adapter.step(np.full((3, 3), 0.3, dtype=np.float32))
    before = state(adapter)
    adapter.set_options([{}, {}, {"rate": [np.inf, 0.0, 0.0]}])
    with pytest.raises(ValueError, match=r"options\['rate'\]"):
        adapter.reset()
    adapter.set_options(None)
    after = state(adapter)
    assert_same_state(before, after)


def test_sb3_env_method_reset_resets_only_the_selected_envs():
    # reference: DummyVecEnv over single envs, whose env_method calls each env's reset
    n, env_id = 3, "RigidRot/Reorient-v0"
    adapter = AttitudeSB3VecEnv(n, env_id)
    dummy = DummyVecEnv([lambda: gym.make(env_id) for _ in range(n)])
    adapter.seed(11)
    dummy.seed(11)
    np.testing.assert_array_equal(adapter.reset(), dummy.reset())
    actions = np.full((n, 3), 0.2, dtype=np.float32)
    np.testing.assert_array_equal(adapter.step(actions)[0], dummy.step(actions)[0])
    got = adapter.env_method("reset", indices=[1])
    want = dummy.env_method("reset", indices=[1])
    np.testing.assert_array_equal(got[0][0], want[0][0])
    for _ in range(3):  # every env, reset or not, goes on like DummyVecEnv's
        np.testing.assert_array_equal(adapter.step(actions)[0], dummy.step(actions)[0])


# ----------------------------------------------------------------------- autoreset rows


def test_rows_awaiting_autoreset_are_not_integrated():
    # PyBullet refuses a step that turns more than π/4: a row that ended above max_rate
    # would raise at every later step if it were integrated again (issue 12, item 8)
    n, env_id = 3, "RigidRot/Reorient-v0"
    kwargs = {"integrator": "pybullet", "dt": 0.52, "start_rate": [1.4, 0.0, 0.0], "start_rate_spread": 0.0}
    vec = gym.make_vec(env_id, num_envs=n, **kwargs)
    sync = gym.vector.SyncVectorEnv([lambda: gym.make(env_id, **kwargs) for _ in range(n)])
    _assert_same_outputs(vec.reset(seed=0), sync.reset(seed=0))
    push = np.tile([1.0, 0.0, 0.0], (n, 1)).astype(np.float32)
    ended = np.zeros(n, dtype=bool)
    resets = 0
    for _ in range(8):
        # rows being reset ignore their action, a NaN included (SyncVectorEnv gets zeros)
        actions = np.where(ended[:, None], np.nan, push).astype(np.float32)
        got = vec.step(actions)
        _assert_same_outputs(got, sync.step(np.nan_to_num(actions)))
        resets += int(ended.sum())
        ended = got[2] | got[3]
    assert resets >= 2 * n  # rows ended above max_rate (1.53 rad/s · 0.52 s > π/4) and restarted


@pytest.mark.parametrize("realism", [{}, {"actuator_noise": 0.1}], ids=["plain", "realism"])
def test_the_two_autoreset_modes_restart_the_same_episodes(realism):
    # One mechanism, the mode its parameter: SAME_STEP hands back at the ending step what
    # NEXT_STEP hands back at the next (the new episode's first observation), and the
    # ended episode's last observation as final_obs; the compiled restarts (plain) and
    # numpy's (realism) alike.
    n, overrides = 4, {"max_episode_steps": 3, **realism}
    next_step = AttitudeVectorEnv(n, "RigidRot/Reorient-v0", **overrides)
    same_step = AttitudeVectorEnv(n, "RigidRot/Reorient-v0", **overrides)
    autoreset = Autoreset(same_step.batch, AutoresetMode.SAME_STEP)
    next_step.reset(seed=5)
    same_step.reset(seed=5)
    actions = np.random.default_rng(5).uniform(-1.2, 1.2, size=(3, n, 3)).astype(np.float32)
    for a in actions:
        obs, reward, terminated, truncated, _ = next_step.step(a)
        result = autoreset.step(a)
        np.testing.assert_array_equal(result.reward, reward)
        np.testing.assert_array_equal(autoreset.ended, terminated | truncated)
    assert autoreset.ended.all()  # every episode ended by its time limit at the third step
    np.testing.assert_array_equal(autoreset.restarted, np.arange(n))
    np.testing.assert_array_equal(autoreset.final_obs, obs)
    restarted = next_step.step(np.full((n, 3), np.nan, dtype=np.float32))  # the rows restart
    np.testing.assert_array_equal(result.obs, restarted[0])
    assert not restarted[1].any() and not (restarted[2] | restarted[3]).any()  # reward 0, no flags
    with pytest.raises(ValueError, match="mode"):
        Autoreset(same_step.batch, "same-step")


def test_a_nan_action_in_a_row_being_reset_is_ignored():
    n = 3
    vec = AttitudeVectorEnv(n, "RigidRot/Reorient-v0", max_episode_steps=2)
    reference = AttitudeVectorEnv(n, "RigidRot/Reorient-v0", max_episode_steps=2)
    _assert_same_outputs(vec.reset(seed=0), reference.reset(seed=0))
    zeros = np.zeros((n, 3), dtype=np.float32)
    for _ in range(2):
        _assert_same_outputs(vec.step(zeros), reference.step(zeros))
    nans = np.full((n, 3), np.nan, dtype=np.float32)  # every row is being reset: ignored
    _assert_same_outputs(vec.step(nans), reference.step(zeros))
    with pytest.raises(ValueError, match="finite"):
        vec.step(nans)  # now they are stepped


@pytest.mark.parametrize("refusal", ["nan", "diverging"])
@pytest.mark.parametrize("realism", [{}, {"actuator_noise": 0.1}], ids=["plain", "realism"])
def test_a_refused_step_draws_no_new_episode_for_the_rows_waiting_to_restart(realism, refusal):
    # bodies that start on target, some slow enough (≤ 0.01 rad/s) to succeed at once and
    # end at the first step, the others not; the next step, which would restart the ended
    # ones, is refused for a live row's action (a NaN, or 1e300 N·m, which diverges)
    n = 6
    kwargs = {
        "max_torque": [1e300] * 3,
        "start_attitude": "near_target",
        "start_max_angle_deg": 0.0,
        "success_hold_steps": 1,
        **realism,
    }
    vec = AttitudeVectorEnv(n, "RigidRot/Reorient-v0", **kwargs)
    reference = AttitudeVectorEnv(n, "RigidRot/Reorient-v0", **kwargs)
    _assert_same_outputs(vec.reset(seed=8), reference.reset(seed=8))
    zeros = np.zeros((n, 3), dtype=np.float32)
    got = vec.step(zeros)
    _assert_same_outputs(got, reference.step(zeros))
    ended = got[2] | got[3]
    assert ended.any() and not ended.all(), ended
    live = int(np.argmin(ended))
    bad = zeros.copy()
    bad[live] = np.nan if refusal == "nan" else 1.0
    before = state(vec)
    with pytest.raises(ValueError, match=rf"env {live}"):
        vec.step(bad)
    assert_same_state(before, state(vec))
    for _ in range(3):  # the restarts, then steps, as the env that never saw the refused call
        _assert_same_outputs(vec.step(zeros), reference.step(zeros))


def test_step_after_close_raises():
    vec = gym.make_vec("RigidRot/Reorient-v0", num_envs=2)
    vec.reset(seed=0)
    vec.close()
    with pytest.raises(RuntimeError, match="closed"):
        vec.step(np.zeros((2, 3), dtype=np.float32))
    with pytest.raises(RuntimeError, match="closed"):
        vec.reset(seed=0)
    vec.close()  # closing twice is fine


# ----------------------------------------------------------------------- copies

REALISM = {
    "wheels-pyramid": {"wheel_layout": "pyramid"},
    "wheels-orthogonal": {"wheel_layout": "orthogonal", "wheel_terminate_on_saturation": True},
    "actuator-noise": {"actuator_noise": 0.1},
    "delay": {"actuation_delay": True},
    "constant-disturbance": {"disturbance_constant": 1e-3},
    "random-walk": {"disturbance_random_walk": 1e-3, "disturbance_correlation_time": 5.0},
    "gravity-gradient": {"gravity_gradient": True},
    "attitude-noise": {"attitude_noise_deg": 0.5},
    "rate-noise-and-bias": {"rate_noise": 1e-3, "rate_bias": 1e-3},
    "randomized-body": {
        "randomize_inertia": 0.2,
        "randomize_inertia_rotation_deg": 10.0,
        "randomize_torque": 0.2,
    },
    "randomized-start": {"randomize_start": 0.3},
}
COPIES = {
    "deepcopy": copy.deepcopy,
    "pickle": lambda env: pickle.loads(pickle.dumps(env)),
    "cloudpickle": lambda env: cloudpickle.loads(cloudpickle.dumps(env)),
}


@pytest.mark.parametrize("option", [*REALISM, "WheelReorient-v0"])
def test_no_state_array_is_a_view_of_another(option):
    env_id = "RigidRot/WheelReorient-v0" if option == "WheelReorient-v0" else "RigidRot/Reorient-v0"
    batch = AttitudeVectorEnv(3, env_id, **REALISM.get(option, {})).batch
    assert shared_arrays(batch) == []  # a copy would separate them (issue 12, item 4)


@pytest.mark.parametrize("how", COPIES)
@pytest.mark.parametrize("option", ["plain", *REALISM, "WheelReorient-v0"])
@pytest.mark.slow
def test_a_copy_taken_mid_episode_continues_in_lockstep(option, how):
    # "plain": the one compiled step, which restarts rows from its table of the generators'
    # addresses (a copy must draw from its own generators, not the original's)
    env_id = "RigidRot/WheelReorient-v0" if option == "WheelReorient-v0" else "RigidRot/Reorient-v0"
    overrides = {**REALISM.get(option, {}), "max_episode_steps": 12}  # episodes end and restart
    single = gym.make(env_id, **overrides).unwrapped
    vec = AttitudeVectorEnv(3, env_id, **overrides)
    rng = np.random.default_rng(0)
    size = single.action_space.shape[0]
    actions = rng.uniform(-1.2, 1.2, size=(40, 3, size)).astype(np.float32)
    single.reset(seed=1)
    vec.reset(seed=1)
    for a in actions[:9]:
        single.step(a[0])
        vec.step(a)
    single_copy, vec_copy = COPIES[how](single), COPIES[how](vec)
    assert_same_state(state(single), state(single_copy))
    assert_same_state(state(vec), state(vec_copy))
    for a in actions[9:]:
        for env, twin, act in ((single, single_copy, a[0]), (vec, vec_copy, a)):
            result = env.step(act)
            _assert_same_outputs(result, twin.step(act))
            if env is single and (result[2] or result[3]):
                _assert_same_outputs(env.reset(), twin.reset())


@pytest.mark.parametrize("how", COPIES)
def test_a_copys_info_shows_its_own_estimate_not_the_originals(how):
    # The info entries are views the batch makes once (result.extras_views), some of them
    # slices (q̂ of the estimate's state): a copy of the batch must make its own, of its own
    # arrays, or it would report the original's estimate.
    env = AttitudeVectorEnv(2, "RigidRot/NadirPoint-v0")
    env.reset(seed=3)
    batch = env.batch
    twin = COPIES[how](batch)
    before = batch.extras()["estimated_attitude"].copy()
    for _ in range(3):
        twin.step(np.full((2, env.single_action_space.shape[0]), 0.5, dtype=np.float32))
    now = twin._equipment.estimate[:, :4]  # the twin's q̂, as the MEKF holds it
    assert not np.array_equal(now, before)  # its estimate moved on
    np.testing.assert_array_equal(twin.extras()["estimated_attitude"], now)
    np.testing.assert_array_equal(twin.info(1)["estimated_attitude"], now[1])
    np.testing.assert_array_equal(batch.extras()["estimated_attitude"], before)  # the original's untouched


# ----------------------------------------------------------------------- threads


def _episode(make, seed: int, steps: int = 80) -> list[np.ndarray]:
    env = make()
    out = _outputs(env.reset(seed=seed))
    rng = np.random.default_rng(seed)
    shape = env.action_space.shape
    for _ in range(steps):
        result = env.step(rng.uniform(-1.2, 1.2, size=shape).astype(np.float32))
        out += _outputs(result)
        if np.ndim(result[2]) == 0 and (result[2] or result[3]):
            out += _outputs(env.reset())
    if getattr(env, "render_mode", None) == "rgb_array":
        out.append(np.asarray(env.render()))
    env.close()
    return out


def test_independent_envs_in_threads_match_sequential_runs():
    # reference: the same runs one after the other, in this thread
    from concurrent.futures import ThreadPoolExecutor

    makers = [
        lambda: gym.make("RigidRot/WheelReorient-v0"),
        lambda: gym.make("RigidRot/Slew-v0", integrator="nielsen_krenk"),
        lambda: AttitudeVectorEnv(8, "RigidRot/WheelReorient-v0"),
        lambda: gym.make(
            "RigidRot/Detumble-v0", render_mode="rgb_array", render_options={"width": 32, "height": 24}
        ),
    ]
    jobs = [(make, seed) for seed in (0, 1) for make in makers]
    sequential = [_episode(make, seed) for make, seed in jobs]
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        threaded = list(pool.map(lambda job: _episode(*job), jobs))
    for a, b in zip(sequential, threaded, strict=True):
        for x, y in zip(a, b, strict=True):
            np.testing.assert_array_equal(x, y)

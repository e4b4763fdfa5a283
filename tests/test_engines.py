"""Every engine variant as an env integrator; threads, copies and pickles; missing extras;
runs that raise; and what two engines share."""

from __future__ import annotations

import copy
import gc
import pickle
import sys
import threading

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import DependencyNotInstalled
from reference import angle, solve

import rigidrot_gym  # noqa: F401  (registers the ids and the engine methods)
from rigidrot_gym.engines import bullet
from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.propagate import propagate
from rigidrot_gym.physics.rotation.torques import Loads

pytest.importorskip("mujoco")
pytest.importorskip("Basilisk")

pytestmark = pytest.mark.engines

ENV = "RigidRot/Reorient-v0"
VARIANTS = [
    "pybullet",
    "pybullet_maximal",
    "mujoco_euler",
    "mujoco_implicitfast",
    "mujoco_implicit",
    "mujoco_rk4",
    "basilisk_rk4",
    "basilisk_rkf45",
    "basilisk_rkf78",
]
FOURTH_ORDER = {"mujoco_rk4", "basilisk_rk4", "basilisk_rkf45", "basilisk_rkf78"}
ACTIONS = np.random.default_rng(0).uniform(-1, 1, (40, 3)).astype(np.float32)


def test_one_registered_name_per_variant():
    assert [n for n in integrators.names() if n.startswith(("pybullet", "mujoco", "basilisk"))] == VARIANTS
    with pytest.raises(ValueError, match="has no option"):
        propagate([1, 0, 0, 0], [0, 0, 1], [1, 2, 3], 0.01, 1, method="pybullet", maximal_coordinates=1)


def _episode(env, seed: int, actions=ACTIONS) -> np.ndarray:
    obs, _ = env.reset(seed=seed)
    out = [obs]
    for a in actions:
        out.append(env.step(a)[0])
    return np.array(out)


@pytest.mark.parametrize("method", VARIANTS)
def test_env_runs_on_every_variant_and_agrees_with_rk4(method):
    engine = gym.make(ENV, integrator=method)
    accurate = gym.make(ENV)
    _episode(engine, 3, ACTIONS[:20])
    _episode(accurate, 3, ACTIONS[:20])
    gap = angle(engine.unwrapped.attitude, accurate.unwrapped.attitude)
    # 2 s of rates ~0.1 rad/s at h = 25 ms: first order ~1e-4 rad apart; the rest agree
    # to their truncation error (the action is a body torque held over each period).
    assert gap < (1e-7 if method in FOURTH_ORDER else 1e-2)
    assert gap > 0 or method in FOURTH_ORDER


def _concurrently(work, arguments) -> None:
    """``work(a)`` for each of ``arguments``, each in its own thread, all at once, switching
    threads as often as Python can."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(a,)) for a in arguments]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)


@pytest.mark.parametrize("method", ["pybullet", "mujoco_implicitfast", "basilisk_rk4"])
def test_two_threads_step_two_envs_as_a_sequential_run_does(method):
    """Engine state is per thread: two envs stepped from two threads at once give the
    sequential run's observations bit for bit (a shared client mixed them up, by up to
    1.8 rad/s)."""
    seeds = (1, 2)
    sequential = {s: _episode(gym.make(ENV, integrator=method), s) for s in seeds}
    results, errors = {}, []
    start = threading.Barrier(len(seeds))

    def work(seed):
        try:
            env = gym.make(ENV, integrator=method)
            start.wait()
            results[seed] = _episode(env, seed)
        except BaseException as err:  # reported below, not lost in the thread
            errors.append(err)

    _concurrently(work, seeds)
    assert not errors, errors
    for s in seeds:
        assert np.array_equal(results[s], sequential[s])


# Two bodies on different tumbles, 3 s at h = 0.01 s, and the largest attitude error a
# variant may have against DOP853 there: first order ~ h T |ω|² / 2 ~ 2e-2 rad (measured
# 6.5e-3 … 8e-3), fourth order ~ h⁴ T |ω|⁵ ~ 1e-8 rad (measured 2e-10).
BODIES = (
    (quat.normalize([0.9, 0.2, -0.3, 0.25]), np.array([0.4, 1.1, -0.3])),
    (quat.normalize([0.1, -0.7, 0.5, 0.4]), np.array([-0.7, 0.2, 0.9])),
)
THREAD_ERROR = {"pybullet": 3e-2, "pybullet_maximal": 3e-2, "mujoco_implicitfast": 3e-2, "basilisk_rk4": 1e-7}


@pytest.mark.parametrize("method", list(THREAD_ERROR))
def test_two_threads_propagating_at_once_get_the_sequential_and_the_true_answer(method):
    """propagate(...) on an engine variant from two threads at once (switching threads
    as often as Python can): each body's trajectory equals the one run alone, bit for bit,
    and lies within the variant's truncation error of DOP853's."""
    inertia = np.array([1.0, 2.0, 3.0])

    def run(body):
        return propagate(*body, inertia, 0.01, 300, method=method)

    sequential = [run(body) for body in BODIES]
    results, errors = {}, []
    start = threading.Barrier(len(BODIES))

    def work(i):
        try:
            start.wait()
            results[i] = run(BODIES[i])
        except BaseException as err:  # reported below, not lost in the thread
            errors.append(err)

    _concurrently(work, range(len(BODIES)))
    assert not errors, errors
    for i, (q0, w0) in enumerate(BODIES):
        assert np.array_equal(results[i].q, sequential[i].q)
        assert np.array_equal(results[i].omega, sequential[i].omega)
        q_ref, _ = solve(q0, w0, inertia, results[i].t)
        assert np.max(angle(results[i].q, q_ref)) < THREAD_ERROR[method]


@pytest.mark.parametrize("method", ["pybullet", "mujoco_rk4", "basilisk_rk4"])
def test_copies_and_pickles_of_an_env_share_and_close_nothing(method):
    env = gym.make(ENV, integrator=method)
    reference = gym.make(ENV, integrator=method)
    first = _episode(env, 5, ACTIONS[:10])
    assert np.array_equal(first, _episode(reference, 5, ACTIONS[:10]))
    clones = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    for clone in clones:
        clone.step(ACTIONS[0])
        clone.close()
    del clones
    gc.collect()
    if method == "pybullet":
        import pybullet

        assert pybullet.isConnected(bullet.simulator().client)
    rest = [env.step(a)[0] for a in ACTIONS[10:]]
    expected = [reference.step(a)[0] for a in ACTIONS[10:]]
    assert np.array_equal(rest, expected)


@pytest.mark.parametrize(
    ("method", "module", "extra"),
    [
        ("pybullet", "pybullet", "render"),
        ("mujoco_rk4", "mujoco", "mujoco"),
        ("basilisk_rk4", "Basilisk.simulation", "basilisk"),
    ],
)
def test_a_missing_engine_names_its_extra(monkeypatch, method, module, extra):
    monkeypatch.setitem(sys.modules, module, None)  # makes the import fail
    raised = []

    def work():  # a fresh thread has no engine state yet: it imports the engine
        try:
            propagate([1, 0, 0, 0], [0, 0, 1], [1, 2, 3], 0.01, 1, method=method)
        except BaseException as err:
            raised.append(err)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert len(raised) == 1 and isinstance(raised[0], DependencyNotInstalled), raised
    assert f"rigidrot-gym[{extra}]" in str(raised[0])


@pytest.mark.parametrize(
    ("method", "omega", "torque", "h"),
    [
        ("pybullet", [0.0, 0.0, 10.0], [0.0, 0.0, 50.0], 0.05),
        ("mujoco_euler", [0.5, 20.0, 0.5], [0.0, 0.0, 0.0], 0.05),
    ],
)
def test_a_run_that_raises_leaves_the_state_as_it_was(method, omega, torque, h):
    """PyBullet's rotation clamp is reached at step 7, MuJoCo's Euler blows up later."""
    m = integrators.get(method)
    state = np.zeros((1, 8))
    state[0, :4], state[0, 4:7] = quat.from_rotvec([0.3, 0.2, -0.1]), omega
    before = state.copy()
    params = np.zeros((1, 24))
    params[0, :3] = torque
    traj, stats = m.buffers(1, 200, record=False)
    with pytest.raises(ValueError):
        m.run(
            state,
            np.array([[1.0, 2.0, 3.0]]),
            Loads(params),
            0.0,
            h,
            200,
            1,
            m.pack_options({}),
            False,
            traj,
            stats,
        )
    assert np.array_equal(state, before)


def test_mujoco_euler_is_pybullets_multibody_step_and_implicitfast_its_rigid_body_step():
    """Two independent engines, the same discrete schemes: semi-implicit Euler with the
    gyroscopic term explicit (also under torque), and with it linearly implicit, one
    Newton step (torque-free; a torque enters Bullet's rigid body before its gyroscopic
    solve and MuJoCo's inside it, so torqued runs differ at O(h²) per step)."""
    rng = np.random.default_rng(2)
    q0, w0, moments = quat.random(rng, (4,)), rng.normal(size=(4, 3)), [1.0, 2.0, 3.0]
    tau = np.array([0.1, 0.2, 0.0])
    a = propagate(q0, w0, moments, 0.01, 300, method="pybullet", torque=tau)
    b = propagate(q0, w0, moments, 0.01, 300, method="mujoco_euler", torque=tau)
    assert np.max(angle(a.q, b.q)) < 1e-12 and np.max(np.abs(a.omega - b.omega)) < 1e-12
    c = propagate(q0, w0, moments, 0.01, 300, method="pybullet_maximal")
    d = propagate(q0, w0, moments, 0.01, 300, method="mujoco_implicitfast")
    assert np.max(angle(c.q, d.q)) < 1e-12 and np.max(np.abs(c.omega - d.omega)) < 1e-12
    # ... and the test can tell the schemes apart.
    assert np.max(angle(propagate(q0, w0, moments, 0.01, 300, method="mujoco_euler").q, d.q)) > 1e-3

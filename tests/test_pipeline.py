"""The pieces of the compiled control period against independent references.

* the pointing error's arctangent (Cephes' ``atan`` after one division, in branch-free
  selects) against the C library's ``atan2`` (numpy's ``arctan2``), to one unit in the last
  place, over unit quaternions and the reduction's boundaries;
* the uniforms of a reset drawn through ``bit_generator.ctypes`` in one compiled call
  against each generator's own ``Generator.random``, value for value, for a mix of bit
  generators, and the generators' states after the draw;
* a plain env's step and reset: one compiled kernel per method, loaded from numba's on-disk
  cache in a second process (no compilation at all);
* ``num_threads=2``: rows spread over three blocks of bodies, the last one partial, each
  the single env's bit for bit through autoresets, the caller's numba thread setting put
  back, and the settings it cannot take refused;
* rows that autoreset while most of the batch goes on (observed on their own, not as the
  whole batch with the others waiting) against single envs, bit for bit;
* the arrays a vector env's step or reset returns (handed out uncopied) against copies
  taken when they were returned: later steps, autoresets, resets and a refused step leave
  them as they were.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numba
import numpy as np
import pytest
from compilations import COUNT_COMPILATIONS
from numba import njit

from rigidrot_gym.attitude import data, pipeline, starts
from rigidrot_gym.attitude.components.evaluation import half_angle


@njit(error_model="numpy")
def _half_angles(sin_half, cos_half, out):
    for i in range(sin_half.size):
        out[i] = half_angle(sin_half[i], cos_half[i])


def test_half_angle_is_atan2_to_one_ulp():
    q = np.random.default_rng(7).normal(size=(100_000, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    s, c = np.linalg.norm(q[:, 1:], axis=1), np.abs(q[:, 0])
    # the reduction's boundaries (x = 0.66, tan 3π/8), the ends, and tiny and huge ratios
    edges = np.array([0.66, np.nextafter(0.66, 1), 2.414213562373095, 2.4142135623730954, 1.0, 1e-300, 1e300])
    s = np.concatenate([s, [0.0, 1.0, 1e-300, 1e-8, 1.0], edges, np.ones(7)])
    c = np.concatenate([c, [1.0, 0.0, 1.0, 1.0, 1e-300], np.ones(7), 1.0 / edges])
    got = np.empty_like(s)
    _half_angles(s, c, got)
    # the C library's atan2, one value at a time: numpy's own arctan2 takes a SIMD routine on
    # CPUs with AVX-512, itself up to 1 ulp from the C library's
    expected = np.array([math.atan2(y, x) for y, x in zip(s.tolist(), c.tolist(), strict=True)])
    ulps = np.abs(got - expected) / np.spacing(np.maximum(expected, np.finfo(float).tiny))
    assert ulps.max() <= 1.0, (
        s[ulps.argmax()],
        c[ulps.argmax()],
        got[ulps.argmax()],
        expected[ulps.argmax()],
    )
    assert got[-19] == 0.0 and got[-18] == np.pi / 2


@pytest.mark.parametrize(
    ("env_id", "count"), [("RigidRot/Reorient-v0", 12), ("RigidRot/WheelReorient-v0", 36)]
)
def test_reset_uniforms_are_each_generators_own_draws(env_id, count):
    kinds = (np.random.PCG64, np.random.MT19937, np.random.Philox, np.random.SFC64)
    scenario = gym.make(env_id).unwrapped.scenario
    for rows in (1, 3, 200):
        rngs = [np.random.Generator(kinds[i % len(kinds)](1000 + i)) for i in range(rows)]
        twins = [np.random.Generator(kinds[i % len(kinds)](1000 + i)) for i in range(rows)]
        for _ in range(2):
            law = starts.start_law(scenario)
            variates = starts.start_states(law, starts.variate_count(scenario), rngs)[3]
            assert np.array_equal(variates, np.array([twin.random(count) for twin in twins]))
            # the generators moved on exactly as the twins did
            assert [repr(r.bit_generator.state) for r in rngs] == [repr(t.bit_generator.state) for t in twins]


_FIRST_STEP = """
import numpy as np, gymnasium as gym, rigidrot_gym
"""
_FIRST_STEP += (
    COUNT_COMPILATIONS
    + """
env = gym.make("RigidRot/Reorient-v0", integrator="{method}")
env.reset(seed=0)
env.step(np.zeros(3, dtype=np.float32))
vec = gym.make_vec("RigidRot/Reorient-v0", num_envs=32, integrator="{method}")
vec.reset(seed=0)
vec.step(np.zeros((32, 3), dtype=np.float32))
print(len(compiled))
"""
)


@pytest.mark.slow
def test_a_plain_env_loads_its_kernels_from_the_cache(tmp_path):
    environment = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    counts = []
    for _ in range(2):
        result = subprocess.run(
            [sys.executable, "-c", _FIRST_STEP.format(method="euler")],
            env=environment,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert result.returncode == 0, result.stderr
        counts.append(int(result.stdout.split()[-1]))
    assert counts[0] > 0 and counts[1] == 0, counts


# Two scenarios whose kernels differ by one feature (a saturated wheel ends the episode),
# stepped with actions that saturate the wheels; prints a digest of each run, in order.
_SATURATING = """
import hashlib, sys
import numpy as np, gymnasium as gym, rigidrot_gym
for ends in map(int, sys.argv[1:]):
    env = gym.make("RigidRot/Reorient-v0", wheel_layout="pyramid", wheel_max_momentum=0.004,
                   wheel_terminate_on_saturation=bool(ends), max_episode_steps=25)
    env.reset(seed=7)
    h = hashlib.sha256()
    for a in np.random.default_rng(0).uniform(-1.3, 1.3, (60, 4)).astype(np.float32):
        obs, reward, terminated, truncated, _ = env.step(a)
        h.update(obs.tobytes() + np.float64(reward).tobytes() + bytes([terminated, truncated]))
        if terminated or truncated:
            env.reset()
    print(ends, h.hexdigest())
"""


def _saturating(cache: Path, *ends: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", _SATURATING, *map(str, ends)],
        env={**os.environ, "NUMBA_CACHE_DIR": str(cache)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _digests(child: subprocess.Popen) -> dict[str, str]:
    """The child's digest of each run, by its scenario ("0", "1")."""
    out, err = child.communicate(timeout=600)
    assert child.returncode == 0, err
    return dict(line.split() for line in out.splitlines())


@pytest.mark.slow
def test_kernels_compiled_in_two_processes_each_run_their_own_code_from_the_cache(tmp_path):
    """Numba names a compiled function by its qualified name and a per-process counter: two
    processes compiling two scenarios' kernels (closures of one factory) in the same order
    gave their components the same symbols, and one process loading both from the cache ran
    the first's code for the second (a saturated wheel did not end the episode). Each
    scenario's run, compiled alone in a fresh process, is the reference."""
    first = [_saturating(tmp_path / f"fresh{ends}", ends) for ends in (0, 1)]
    reference = {**_digests(first[0]), **_digests(first[1])}
    assert reference["0"] != reference["1"]  # the feature changes the run
    shared = tmp_path / "shared"
    compiling = [_saturating(shared, ends) for ends in (0, 1)]  # at once: the same counters
    for child in compiling:
        _digests(child)
    for order in ((0, 1), (1, 0)):
        loaded = _digests(_saturating(shared, *order))
        assert loaded == reference, order


@pytest.mark.parametrize(
    ("threads", "block"),
    [
        (1, pipeline.BLOCK),
        pytest.param(
            2,
            pipeline.THREAD_BLOCK,
            marks=pytest.mark.skipif(
                numba.config.NUMBA_NUM_THREADS < 2, reason="numba has one thread on this machine"
            ),
        ),
    ],
)
def test_each_row_of_a_vector_env_moves_as_the_single_env(threads, block):
    n, seed, max_steps = 2 * block + 37, 5, 12  # short episodes: autoresets in the window
    vec = gym.make_vec("RigidRot/Reorient-v0", num_envs=n, max_episode_steps=max_steps, num_threads=threads)
    rows = (0, block - 1, block, n - 1)  # both sides of a block's edge, and the last
    singles = {i: gym.make("RigidRot/Reorient-v0", max_episode_steps=max_steps) for i in rows}
    # large actions: some rows spin past the rate limit and end early
    actions = np.random.default_rng(2).uniform(-1.2, 1.2, size=(30, n, 3)).astype(np.float32)
    obs, _ = vec.reset(seed=seed)
    for i, env in singles.items():
        np.testing.assert_array_equal(obs[i], env.reset(seed=seed + i)[0])
    numba.set_num_threads(1)
    pending = dict.fromkeys(rows, False)
    for step_actions in actions:
        obs, reward, terminated, truncated, _ = vec.step(step_actions)
        assert numba.get_num_threads() == 1
        for i, env in singles.items():
            if pending[i]:
                o, r, te, tr = env.reset()[0], 0.0, False, False
            else:
                o, r, te, tr, _ = env.step(step_actions[i])
            pending[i] = te or tr
            np.testing.assert_array_equal(obs[i], o)
            assert (reward[i], terminated[i], truncated[i]) == (r, te, tr)
    assert any(pending.values()) or vec.unwrapped.batch.steps.max() < max_steps
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


@pytest.mark.parametrize(
    ("env_id", "kwargs", "message"),
    [
        ("RigidRot/Reorient-v0", {"num_threads": 0}, "num_threads must be an integer in"),
        ("RigidRot/Reorient-v0", {"num_threads": numba.config.NUMBA_NUM_THREADS + 1}, "num_threads must be"),
        ("RigidRot/Reorient-v0", {"num_threads": 2.0}, "num_threads must be an integer in"),
        (
            "RigidRot/WheelReorient-v0",
            {"num_threads": 2},
            "num_threads must be 1 for a scenario with realism",
        ),
        ("RigidRot/Reorient-v0", {"num_threads": 2, "integrator": "pybullet"}, "num_threads must be 1 for"),
    ],
)
def test_threads_it_cannot_use_are_refused(env_id, kwargs, message):
    if kwargs["num_threads"] == 2 and numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread on this machine")
    with pytest.raises(ValueError, match=message):
        gym.make_vec(env_id, num_envs=4, **kwargs)


def test_returned_arrays_are_never_written_again():
    n = 5
    vec = gym.make_vec("RigidRot/Reorient-v0", num_envs=n, max_episode_steps=3)
    rng = np.random.default_rng(4)
    kept = []  # (returned array, its copy when returned)

    def keep(obs, info, *rest):
        arrays = [obs, *rest, *(v for v in info.values())]
        kept.extend((a, a.copy()) for a in arrays)

    obs, info = vec.reset(seed=1)
    keep(obs, info)
    ended = 0
    for _ in range(8):  # episodes of 3 steps: autoresets on the steps after they end
        obs, reward, terminated, truncated, info = vec.step(rng.uniform(-1, 1, (n, 3)).astype(np.float32))
        keep(obs, info, reward, terminated, truncated)
        ended += int((terminated | truncated).sum())
    assert ended >= n
    bad = np.zeros((n, 3), dtype=np.float32)
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="action must be finite"):
        vec.step(bad)
    keep(*vec.reset(seed=2))
    vec.step(np.zeros((n, 3), dtype=np.float32))
    for returned, copy in kept:
        np.testing.assert_array_equal(returned, copy)


def test_only_the_kernels_that_create_arrays_count_references():
    # Numba refuses to compile a kernel without its reference-counted memory (NRT) that
    # creates an array: the passes draw into the batch's own scratch, and only numba's
    # reductions over threads (and each thread's normals) need it.
    def counted(env) -> bool:
        return env.unwrapped.batch._kernel.targetoptions.get("_nrt", True)

    for env_id in ("RigidRot/Reorient-v0", "RigidRot/WheelReorient-v0", "RigidRot/NadirPoint-v0"):
        assert not counted(gym.make(env_id)), env_id
        assert not counted(gym.make_vec(env_id, num_envs=3)), env_id
    assert counted(gym.make_vec("RigidRot/Reorient-v0", num_envs=4, num_threads=2))
    # a restarting body's uniforms are drawn into its column of these rows
    assert data.VARIATES.stop - data.VARIATES.start == starts.BASE_VARIATES


def test_a_few_rows_autoresetting_equal_single_envs():
    n, seed, max_steps = 8, 3, 50
    vec = gym.make_vec("RigidRot/Reorient-v0", num_envs=n, max_episode_steps=max_steps)
    singles = [gym.make("RigidRot/Reorient-v0", max_episode_steps=max_steps) for _ in range(n)]
    # rows 0 and 1 spin up at full torque and end early (past 1.5 rad/s after ≈ 30 steps),
    # the others run on to the step limit
    actions = np.zeros((70, n, 3), dtype=np.float32)
    actions[:, :2] = 1.0
    obs, _ = vec.reset(seed=seed)
    for i, env in enumerate(singles):
        np.testing.assert_array_equal(obs[i], env.reset(seed=seed + i)[0])
    pending, resets = [False] * n, []
    for step_actions in actions:
        obs, reward, terminated, truncated, info = vec.step(step_actions)
        resets.append([i for i in range(n) if pending[i]])
        for i, env in enumerate(singles):
            if pending[i]:
                (o, inf), r, te, tr = env.reset(), 0.0, False, False
            else:
                o, r, te, tr, inf = env.step(step_actions[i])
            pending[i] = te or tr
            np.testing.assert_array_equal(obs[i], o)
            assert (reward[i], terminated[i], truncated[i]) == (r, te, tr)
            assert info["pointing_error_deg"][i] == inf["pointing_error_deg"]
    # a step that resets a few rows only (fewer than half), and one that resets most
    assert any(0 < len(rows) < n // 2 for rows in resets), resets
    assert any(len(rows) >= n // 2 for rows in resets), resets


def test_generators_are_one_per_body_and_needed_before_a_restart():
    # The compiled autoreset reads each body's generator from a table of their addresses:
    # a wrong count must be refused, not read past its end.
    from rigidrot_gym.attitude.batch import AttitudeBatch
    from rigidrot_gym.attitude.env import resolve_scenario

    batch = AttitudeBatch(resolve_scenario("RigidRot/Reorient-v0", {}), 3)
    with pytest.raises(RuntimeError, match="rngs"):
        batch.reset()
    with pytest.raises(ValueError, match=r"rngs must be 3 numpy Generators.*got 2 items"):
        batch.rngs = [np.random.default_rng(0)] * 2
    with pytest.raises(ValueError, match=r"rngs must be 3 .*int"):
        batch.rngs = [np.random.default_rng(0), np.random.default_rng(1), 7]
    assert batch.rngs == ()
    batch.rngs = [np.random.default_rng(i) for i in range(3)]
    batch.reset()
    # each body drew its start's 12 uniforms from its own generator, and nothing else
    for i, rng in enumerate(batch.rngs):
        twin = np.random.default_rng(i)
        twin.random(12)
        assert rng.bit_generator.state == twin.bit_generator.state


def _records(n: int, rng: np.random.Generator, principal_axes: bool):
    """Bodies at random states and targets, principal frames turned or not, and the
    records of an observation (no step) of them."""
    from rigidrot_gym.attitude import data
    from rigidrot_gym.attitude.actuators import Actuators
    from rigidrot_gym.attitude.batch import features_of
    from rigidrot_gym.attitude.components.declaration import Build
    from rigidrot_gym.attitude.env import resolve_scenario
    from rigidrot_gym.attitude.starts import start_law
    from rigidrot_gym.attitude.task import rules_of
    from rigidrot_gym.physics.rotation import quaternion as quat

    scenario = resolve_scenario("RigidRot/Reorient-v0", {})
    q = quat.normalize(rng.normal(size=(n, 4)))
    state = np.zeros((8, n))
    state[0:4], state[4:7] = q.T, rng.uniform(-2.0, 2.0, (3, n))  # some beyond the rate limit
    principal = (
        np.tile([[1.0], [0.0], [0.0], [0.0]], n)
        if principal_axes
        else quat.normalize(rng.normal(size=(n, 4))).T
    )
    bodies = data.Bodies(
        state=state,
        moments=np.tile([[0.08], [0.10], [0.05]], n),
        principal=np.ascontiguousarray(principal),
        target=np.ascontiguousarray(quat.normalize(rng.normal(size=(n, 4))).T),
        limits=np.full((3, n), 0.01),
        steps=np.zeros(n, dtype=np.int64),
        hold=np.zeros(n, dtype=np.int64),
        sources=np.zeros((2, 0), dtype=np.uint64),
    )
    # Every component's state as the batch builds it (each declares its own), for the
    # realism components the test switches on: inert on Reorient-v0, which sets none of them.
    features = features_of(scenario)._replace(
        rotated_frames=not principal_axes, disturbances=True, actuator_noise=True
    )
    equipment = data.equipment_of(Build(scenario, n, Actuators.of(scenario), features))
    call = data.Period(
        action=np.zeros((n, 3), dtype=np.float32),
        waiting=np.zeros(n, dtype=bool),
        stepped=False,
        restart=False,
        substeps=scenario.substeps,
        dt=scenario.dt,
        options=np.zeros(0),
    )
    return scenario, call, bodies, equipment, rules_of(scenario), start_law(scenario)


def test_the_turns_between_frames_are_compiled_where_a_body_frame_is_not_principal():
    from rigidrot_gym.attitude.batch import features_of
    from rigidrot_gym.attitude.env import resolve_scenario

    def off_diagonal(scenario) -> bool:
        return bool(np.any(scenario.inertia != np.diag(np.diag(scenario.inertia))))

    reorient, slew = (resolve_scenario(f"RigidRot/{name}", {}) for name in ("Reorient-v0", "Slew-v0"))
    turned = resolve_scenario("RigidRot/Reorient-v0", {"randomize_inertia_rotation_deg": 10.0})
    assert not off_diagonal(reorient) and off_diagonal(slew)
    assert not features_of(reorient).rotated_frames
    assert features_of(slew).rotated_frames and features_of(turned).rotated_frames
    # the turns are no realism component: Slew-v0's actuators stay the plain torquers
    assert not features_of(slew).realistic


@pytest.mark.parametrize("principal_axes", [True, False])
def test_one_evaluation_for_every_path(principal_axes):
    """The observation, reward and flags of the same states through the plain pipeline, a
    pipeline with realism components (inert here), and an engine's second part: bit for
    bit the same, and the documented definitions (scipy's rotations, the reward formula)."""
    from scipy.spatial.transform import Rotation

    from rigidrot_gym.attitude import data
    from rigidrot_gym.attitude.data import Features
    from rigidrot_gym.physics.rotation import integrators

    n = 300  # two blocks of the pipeline's passes
    scenario, call, bodies, equipment, rules, law = _records(n, np.random.default_rng(8), principal_axes)
    step = integrators.get("rk4").step
    plain = Features(*([False] * len(Features._fields)))._replace(rotated_frames=not principal_axes)
    realistic = plain._replace(disturbances=True, actuator_noise=True)
    kernels = {
        "plain": pipeline.kernel_of(step, plain),
        "realistic": pipeline.kernel_of(step, realistic),
        "engine": pipeline.kernel_of(None, plain, "after"),
    }
    results = {}
    for name, kernel in kernels.items():
        carried = data.carried(n, 3)
        for field in ("state", "moments", "principal", "target", "limits"):
            np.copyto(getattr(carried, field), getattr(bodies, field))
        np.copyto(carried.staged, bodies.state)  # the engine's part reads the staged states
        out = (
            np.zeros((n, 7), dtype=np.float32),
            np.zeros((data.VALUES, n)),
            np.ones((data.FLAGS, n), dtype=bool),
        )
        per_call, settings = tuple(call)[:5], tuple(call)[5:]
        features = realistic if name == "realistic" else plain
        realism = data.passed(equipment, features)
        counts = kernel(per_call, settings, tuple(carried), realism, data.pack(rules, law), out)
        assert counts == (0, 0, 0)
        results[name] = out
    for name in ("realistic", "engine"):
        assert np.array_equal(results[name][0], results["plain"][0]), name
        assert np.array_equal(results[name][1], results["plain"][1]), name
        assert np.array_equal(results[name][2], results["plain"][2]), name
    obs, values, flags = results["plain"]
    # the reference: body-frame attitude q_p B*, its error from the target, the rates B ω_p B*
    b = Rotation.from_quat(np.roll(bodies.principal.T, -1, axis=1))
    q = Rotation.from_quat(np.roll(bodies.state[0:4].T, -1, axis=1)) * b.inv()
    error = Rotation.from_quat(np.roll(bodies.target.T, -1, axis=1)).inv() * q
    dq = np.roll(error.as_quat(canonical=True), 1, axis=1)  # w ≥ 0
    w_body = b.apply(bodies.state[4:7].T)
    np.testing.assert_allclose(obs[:, 0:4], dq, atol=1e-6)
    np.testing.assert_allclose(obs[:, 4:7], np.clip(w_body / scenario.max_rate, -1, 1), atol=1e-6)
    angle, rate = error.magnitude(), np.linalg.norm(bodies.state[4:7], axis=0)
    np.testing.assert_allclose(values[data.POINTING_DEG], np.degrees(angle), atol=1e-9)
    inside = (angle <= np.radians(scenario.pointing_tolerance_deg)) & (rate <= scenario.rate_tolerance)
    reward = (
        -(
            scenario.reward_angle * angle / np.pi
            + scenario.reward_rate * np.minimum(rate / scenario.max_rate, 1.0)
        )
        + scenario.reward_success * inside
        - scenario.reward_unsafe * (rate > scenario.max_rate)
    )
    np.testing.assert_allclose(values[data.REWARD], reward, atol=1e-9)
    assert not flags[data.TERMINATED].any() and not flags[data.SUCCESS].any()  # no step: no flags
    assert np.array_equal(flags[data.IN_TOLERANCE], inside)
    assert (rate > scenario.max_rate).any()  # the unsafe term was exercised


def test_records_of_numbers_travel_packed_and_come_back_field_by_field():
    """Rules and StartLaw travel together as a float and an int array: every field back, by name,
    in numpy mode and in compiled code, for every built-in scenario."""
    from rigidrot_gym.attitude import data
    from rigidrot_gym.attitude.scenario import builtin
    from rigidrot_gym.attitude.task import rules_of

    unpack = data.unpacker(data.Rules, data.StartLaw)

    @njit
    def rebuild(floats, ints):
        rule_values, law_values = unpack(floats, ints)
        return data.Rules(*rule_values), data.StartLaw(*law_values)

    for scenario in builtin():
        records = (rules_of(scenario), starts.start_law(scenario))
        packed = data.pack(*records)
        assert tuple(type(r)(*values) for r, values in zip(records, unpack(*packed), strict=True)) == records
        assert rebuild(*packed) == records
        for record in records:  # a record alone
            assert type(record)(*data.unpacker(type(record))(*data.pack(record))[0]) == record

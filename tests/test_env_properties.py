"""Properties of the env API over random inputs (hypothesis).

Random valid inputs (any id, any integrator that takes a torque, any mix of realism
options, control periods, seeds and actions, in range or far out of it) keep the
invariants: every observation inside its Box, every reward finite and inside
``reward_range``, info finite; or a ``ValueError`` / ``ConvergenceError`` that leaves the
env exactly as it was. Row i of the vector env equals a single env bit for bit; a copy
continues in lockstep. Random invalid inputs raise a ``ValueError`` that names the
argument, and change nothing.

Profiles (tests/conftest.py): a few derandomised examples in CI;
``HYPOTHESIS_PROFILE=long`` for many random ones (profiles in ``tests/conftest.py``).
"""

from __future__ import annotations

import copy
import pickle

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from envstate import assert_same_state, state
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rigidrot_gym
from rigidrot_gym.attitude.arguments import RESET_OPTIONS
from rigidrot_gym.attitude.scenario import FIELDS, find
from rigidrot_gym.attitude.vector_env import AttitudeVectorEnv
from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.physics.rotation.integrators import ConvergenceError

IDS = rigidrot_gym.ENV_IDS
TORQUE_METHODS = [n for n in integrators.names() if integrators.get(n).accepts_torque]
REALISM = st.fixed_dictionaries(
    {},
    optional={
        "wheel_layout": st.sampled_from(["orthogonal", "pyramid"]),
        "wheel_terminate_on_saturation": st.booleans(),
        "actuator_noise": st.floats(0.0, 0.5),
        "actuation_delay": st.booleans(),
        "disturbance_constant": st.floats(0.0, 1e-3),
        "disturbance_random_walk": st.floats(0.0, 1e-3),
        "gravity_gradient": st.booleans(),
        "attitude_noise_deg": st.floats(0.0, 5.0),
        "rate_noise": st.floats(0.0, 1e-2),
        "rate_bias": st.floats(0.0, 1e-2),
        "randomize_inertia": st.floats(0.0, 0.5),
        "randomize_inertia_rotation_deg": st.floats(0.0, 30.0),
        "randomize_torque": st.floats(0.0, 0.5),
        "randomize_start": st.floats(0.0, 0.3),
    },
)


@st.composite
def configs(draw) -> tuple[str, dict]:
    """An id and valid overrides: integrator, control period, substeps, realism options."""
    env_id = draw(st.sampled_from(IDS))
    overrides = {"integrator": draw(st.sampled_from(TORQUE_METHODS)), **draw(REALISM)}
    scenario = find(env_id)
    if scenario.thruster_layout != "none":  # they fly the body alone, on a library method
        overrides.pop("wheel_layout", None)
        overrides.pop("wheel_terminate_on_saturation", None)
        own = [m for m in TORQUE_METHODS if isinstance(integrators.get(m), integrators.ComponentMethod)]
        overrides["integrator"] = draw(st.sampled_from(own))
    if scenario.observe != "truth":  # its sensors replace the [sensors] table's Gaussian noise
        for name in ("attitude_noise_deg", "rate_noise", "rate_bias"):
            overrides.pop(name, None)
    if not scenario.magnetorquers:  # (with them, the orbit carries their field)
        overrides["orbit"] = draw(st.booleans())
    if overrides.get("orbit", scenario.orbit):
        overrides["sun"] = draw(st.booleans())
        if draw(st.booleans()):
            overrides["target_attitude"] = "nadir"
    own_limits = (scenario.wheel_max_torque, scenario.wheel_max_momentum) != (0.01, 0.05)
    if "wheel_layout" in overrides and not own_limits and draw(st.booleans()):
        overrides["wheel_model"] = draw(st.sampled_from(["HR16", "RWP015", "RW0"]))
    if draw(st.booleans()):
        overrides["dt"] = draw(st.sampled_from([0.02, 0.1, 0.5, 2.0]))
        overrides["substeps"] = draw(st.integers(1, 3))
    own_method = isinstance(integrators.get(overrides["integrator"]), integrators.ComponentMethod)
    if scenario.magnetorquers and own_method and draw(st.booleans()):  # the rods on for k of the sub-steps
        substeps = overrides.get("substeps", scenario.substeps)
        overrides["magnetorquer_duty_cycle"] = draw(st.integers(1, substeps)) / substeps
    return env_id, overrides


# in range, beyond it (clipped) and far beyond it; always finite
ACTION_VALUES = st.one_of(st.floats(-1.5, 1.5), st.floats(-1e30, 1e30), st.sampled_from([-1.0, 0.0, 1.0]))
SEEDS = st.integers(0, 2**32)


def actions_for(steps: int, *shape: int):
    return hnp.arrays(np.float64, (steps, *shape), elements=ACTION_VALUES)


def _check_outputs(env, obs, reward=0.0, info=None) -> None:
    assert env.observation_space.contains(obs), obs
    low, high = env.unwrapped.reward_range
    assert np.isfinite(reward) and low <= reward <= high, (reward, low, high)
    for value in (info or {}).values():
        assert np.all(np.isfinite(np.asarray(value, dtype=float)))


# Nearly every example of the properties over configs() is a combination of components of
# its own, whose kernel compiles for 7-20 s: these three run 2/5 of the profile's examples
# (10 of the CI profile's 25; they were 7-11 minutes of CPU of a CI run's 37), the "long"
# profile 800.
FEWER = settings(max_examples=max(1, settings.default.max_examples * 2 // 5))


@FEWER
@given(config=configs(), seed=SEEDS, actions=actions_for(25, 7))
def test_valid_inputs_keep_the_invariants(config, seed, actions):
    env_id, overrides = config
    env = gym.make(env_id, **overrides)
    obs, info = env.reset(seed=seed)
    _check_outputs(env, obs, info=info)
    size = env.action_space.shape[0]
    for a in actions:
        before = state(env.unwrapped)
        try:
            obs, reward, terminated, truncated, info = env.step(a[:size])
        except (ValueError, ConvergenceError) as err:
            # a step too large for the motion (or a refused engine step): nothing changed
            assert isinstance(err, ConvergenceError) or "dt" in str(err) or "step" in str(err)
            assert_same_state(before, state(env.unwrapped))
            return
        _check_outputs(env, obs, reward, info)
        if terminated or truncated:
            obs, info = env.reset()
            _check_outputs(env, obs, info=info)


@FEWER
@given(
    config=configs(),
    n=st.integers(1, 3),
    seed=SEEDS,
    limit=st.integers(2, 9),
    actions=actions_for(20, 3, 7),
)
def test_vector_row_i_equals_a_single_env(config, n, seed, limit, actions):
    env_id, overrides = config
    scenario = find(env_id).with_overrides(**overrides, max_episode_steps=limit)
    vec = AttitudeVectorEnv(n, scenario)
    singles = [gym.make(env_id, scenario=scenario) for _ in range(n)]
    obs, _ = vec.reset(seed=seed)
    for i, env in enumerate(singles):
        np.testing.assert_array_equal(obs[i], env.reset(seed=seed + i)[0])
    size = vec.single_action_space.shape[0]
    pending = [False] * n
    for step_actions in actions[:, :n, :size]:
        try:
            obs, reward, terminated, truncated, _ = vec.step(step_actions.astype(np.float32))
        except (ValueError, ConvergenceError):
            return  # covered by the single-env property: nothing changed
        for i, env in enumerate(singles):
            if pending[i]:
                o, r, te, tr = env.reset()[0], 0.0, False, False
            else:
                o, r, te, tr, _ = env.step(step_actions[i].astype(np.float32))
            pending[i] = te or tr
            np.testing.assert_array_equal(obs[i], o)
            assert (reward[i], terminated[i], truncated[i]) == (r, te, tr)


COPIES = [
    copy.deepcopy,
    lambda env: pickle.loads(pickle.dumps(env)),
    lambda env: cloudpickle.loads(cloudpickle.dumps(env)),
]


@given(
    config=configs(),
    seed=SEEDS,
    how=st.sampled_from(COPIES),
    at=st.integers(0, 10),
    actions=actions_for(25, 2, 7),
)
@pytest.mark.slow
@FEWER
def test_copies_continue_in_lockstep(config, seed, how, at, actions):
    env_id, overrides = config
    scenario = find(env_id).with_overrides(**overrides, max_episode_steps=8)
    single, vec = gym.make(env_id, scenario=scenario).unwrapped, AttitudeVectorEnv(2, scenario)
    single.reset(seed=seed)
    vec.reset(seed=seed)
    size = single.action_space.shape[0]
    try:
        for k, a in enumerate(actions[:, :, :size].astype(np.float32)):
            if k == at:
                twins = how(single), how(vec)
            if k >= at:
                for original, twin, act in ((single, twins[0], a[0]), (vec, twins[1], a)):
                    got, want = original.step(act), twin.step(act)
                    for x, y in zip(got[:4], want[:4], strict=True):
                        np.testing.assert_array_equal(x, y)
                    if original is single and (got[2] or got[3]):
                        np.testing.assert_array_equal(single.reset()[0], twins[0].reset()[0])
            else:
                ended = single.step(a[0])[2:4]
                if any(ended):
                    single.reset()
                vec.step(a)
    except (ValueError, ConvergenceError):
        return


# ----------------------------------------------------------------------- invalid inputs

_VALID_STRINGS = {"random", "near_target", "nadir", "none", "orthogonal", "pyramid", *integrators.names()}
INVALID_VALUES = st.one_of(
    st.none(),
    st.sampled_from([float("nan"), float("inf"), -float("inf"), 10**400, 1j, b"1"]),
    st.floats(max_value=-1e-9, allow_nan=False, allow_infinity=False),
    st.complex_numbers(allow_nan=False, allow_infinity=False).filter(lambda z: z.imag != 0),
    st.text(max_size=4).filter(lambda s: s not in _VALID_STRINGS),
    st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=5, max_size=6),
    st.dictionaries(st.text(max_size=2), st.integers(), min_size=1, max_size=2),
)
FIELD_NAMES = sorted(set(FIELDS) - {"id", "description"})


@given(env_id=st.sampled_from(IDS), field=st.sampled_from(FIELD_NAMES), value=INVALID_VALUES)
def test_an_invalid_override_names_the_field(env_id, field, value):
    # gym.make takes max_episode_steps itself (Gymnasium's TimeLimit); None means "the
    # scenario's" for the vector env
    if field == "max_episode_steps" and value is None:
        return
    makers = [lambda: AttitudeVectorEnv(2, env_id, **{field: value})]
    if field != "max_episode_steps":
        makers.append(lambda: gym.make(env_id, **{field: value}))
    for make in makers:
        try:
            make()
        except ValueError as err:
            # a value out of its range names the override; one that breaks a relation
            # between fields (rate tolerance below max_rate) names the fields' keys
            assert f"override {field}" in str(err) or FIELDS[field][0] in str(err), str(err)
        else:
            raise AssertionError(f"{field}={value!r} was accepted")


BAD_ACTIONS = st.one_of(
    hnp.arrays(np.float64, hnp.array_shapes(max_dims=3, max_side=5).filter(lambda s: s not in [(3,), (4,)])),
    hnp.arrays(np.complex128, st.sampled_from([(3,), (4,)])),
    hnp.arrays(hnp.unicode_string_dtypes(max_len=2), st.sampled_from([(3,), (4,)])),
    st.sampled_from([[np.nan, 0.0, 0.0, 0.0], [0.0, np.inf, 0.0, 0.0], [0.0, 0.0, -np.inf, 0.0]]),
)


@given(env_id=st.sampled_from(IDS), seed=SEEDS, bad=BAD_ACTIONS)
def test_an_invalid_action_names_the_action_and_changes_nothing(env_id, seed, bad):
    env = gym.make(env_id).unwrapped
    env.reset(seed=seed)
    if isinstance(bad, list):
        bad = np.array(bad[: env.action_space.shape[0]])
    before = state(env)
    try:
        env.step(bad)
    except ValueError as err:
        assert "action" in str(err)
    else:
        raise AssertionError(f"action {bad!r} was accepted")
    assert_same_state(before, state(env))


BAD_OPTIONS = st.one_of(
    st.dictionaries(st.text(max_size=3).filter(lambda k: k not in RESET_OPTIONS), st.none(), min_size=1),
    st.fixed_dictionaries({"attitude": INVALID_VALUES}),
    st.fixed_dictionaries({"target": st.one_of(INVALID_VALUES, st.just([2.0, 0.0, 0.0, 0.0]))}),
    st.fixed_dictionaries({"rate": INVALID_VALUES}),
    st.lists(st.integers(), min_size=1, max_size=3),
    st.text(min_size=1, max_size=3),
)


@given(env_id=st.sampled_from(IDS), seed=SEEDS, options=BAD_OPTIONS, vector=st.booleans())
def test_invalid_reset_options_name_the_options_and_change_nothing(env_id, seed, options, vector):
    env = AttitudeVectorEnv(2, env_id) if vector else gym.make(env_id).unwrapped
    env.reset(seed=seed)
    before = state(env)
    try:
        env.reset(seed=seed + 1, options=options)
    except ValueError as err:
        assert "option" in str(err), str(err)
    else:
        raise AssertionError(f"options {options!r} were accepted")
    assert_same_state(before, state(env))


@given(
    env_id=st.sampled_from(IDS),
    bad=st.one_of(
        st.integers(max_value=-1),
        st.floats(allow_nan=True),
        st.text(max_size=3),
        st.booleans(),
        st.lists(st.integers(0, 10), min_size=3, max_size=4),
    ),
    vector=st.booleans(),
)
def test_invalid_seeds_name_the_seed_and_change_nothing(env_id, bad, vector):
    env = AttitudeVectorEnv(2, env_id) if vector else gym.make(env_id).unwrapped
    env.reset(seed=5)
    before = state(env)
    try:
        env.reset(seed=bad)
    except ValueError as err:
        assert "seed" in str(err), str(err)
    else:
        raise AssertionError(f"seed {bad!r} was accepted")
    assert_same_state(before, state(env))

"""The batch's kernels called past numba's dispatch (:class:`rigidrot_gym.physics.plumbing.jit.DirectCalls`)
read each argument as the type of the overload they were given, unchecked: every call, on
every path a batch takes, must have exactly the argument types that its key's first call had
(what numba's own ``typeof`` gives them), or the kernel would read memory as the wrong type.

Each Equipment field that travels into a kernel is one a component reads
(:data:`rigidrot_gym.attitude.data.EQUIPMENT_READERS`); a field left behind is None there,
so a component that read it would not compile (every id compiles in the suite).
"""

from __future__ import annotations

import copy
import pickle

import gymnasium as gym
import numba
import numpy as np
import pytest

from rigidrot_gym.attitude import data
from rigidrot_gym.attitude.batch import AttitudeBatch, features_of
from rigidrot_gym.attitude.env import resolve_scenario
from rigidrot_gym.physics.plumbing.jit import DirectCalls


@pytest.fixture
def typed_calls(monkeypatch) -> list:
    """Every DirectCalls call checked: its arguments' numba types are those of the first call
    with its key (per DirectCalls object). Yields the list of (key, types) checked."""
    first: dict[tuple[int, object], tuple] = {}
    checked: list = []
    call = DirectCalls.__call__

    def checking(self, key, args):
        types = tuple(numba.typeof(arg) for arg in args)
        expected = first.setdefault((id(self), key), types)
        assert types == expected, f"key {key!r}: called with {types}, first with {expected}"
        checked.append((key, types))
        return call(self, key, args)

    monkeypatch.setattr(DirectCalls, "__call__", checking)
    return checked


def _steps(env, actions, seed=0):
    env.reset(seed=seed)
    out = []
    for action in actions:
        obs, reward, terminated, truncated, _ = env.step(action)
        out.append((obs, reward))
        if terminated or truncated:
            env.reset()
    return out


def _actions(shape, dtype, count=6, seed=1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, shape).astype(dtype) for _ in range(count)]


@pytest.mark.parametrize(
    ("env_id", "variants"), [("RigidRot/Reorient-v0", True), ("RigidRot/WheelReorient-v0", False)]
)
def test_every_path_of_a_single_env_calls_with_its_keys_types(typed_calls, env_id, variants):
    env = gym.make(env_id)
    shape = env.action_space.shape
    reference = _steps(gym.make(env_id), _actions(shape, np.float32))
    runs = [_actions(shape, np.float32)]
    if variants:  # float64, a strided view, a read-only array: keys (and kernels) of their own
        frozen = _actions(shape, np.float32)
        for a in frozen:
            a.flags.writeable = False
        runs += [
            _actions(shape, np.float64),
            [np.repeat(a, 2)[::2] for a in _actions(shape, np.float32)],
            frozen,
        ]
    for actions in runs:
        _steps(env, actions)
    env.reset(seed=0, options={"rate": [0.01, 0.0, 0.0]})
    # a copy and an unpickled env make their own direct calls, and continue bit for bit
    twin, thawed = copy.deepcopy(env.unwrapped), pickle.loads(pickle.dumps(env.unwrapped))
    a = _actions(shape, np.float32, 1)[0]
    expected = copy.deepcopy(env.unwrapped).step(a)[0]
    for other in (twin, thawed):
        np.testing.assert_array_equal(other.step(a)[0], expected)
    # the same numbers as a fresh env stepped the same way
    again = _steps(env, _actions(shape, np.float32))
    assert [(o.tobytes(), r) for o, r in again] == [(o.tobytes(), r) for o, r in reference]
    assert len({key for key, _ in typed_calls}) >= (4 if variants else 2)
    calls = env.unwrapped.batch._calls[0]
    assert calls._last is not calls.dispatcher  # past the dispatcher: the point of it


def test_a_vector_env_autoresetting_rows_and_an_engine_call_with_their_keys_types(typed_calls):
    env = gym.make_vec("RigidRot/Reorient-v0", num_envs=5, vectorization_mode="vector_entry_point")
    env.reset(seed=0)
    for action in _actions((5, 3), np.float32, 40):
        env.step(action)  # random actions end some episodes: autoresets of some rows
    env.reset(seed=1, options={"rate": [0.0, 0.01, 0.0]})
    engine = gym.make("RigidRot/Reorient-v0", integrator="pybullet", substeps=5)
    _steps(engine, _actions((3,), np.float32))
    assert len(engine.unwrapped.batch._calls) == 2  # the parts before and after the engine
    assert typed_calls


def test_the_equipment_that_travels_is_what_the_components_read():
    assert tuple(data.EQUIPMENT_READERS) == data.Equipment._fields
    plain = features_of(resolve_scenario("RigidRot/Reorient-v0", {}))
    assert data.equipment_fields(plain) == ()
    full = features_of(resolve_scenario("RigidRot/NadirPoint-v0", {}))
    fields = data.equipment_fields(full)
    # NadirPoint has no delay, no multiplicative noise, no Gaussian [sensors] table
    assert {"pending", "actuator_noise", "bias", "attitude_noise"}.isdisjoint(fields)
    assert {"wheel_model", "gyro", "tracker", "covariance", "magnetometer", "sun_sensors"} <= set(fields)
    # Each travels as itself, a model's record as one float array, rebuilt as the record.
    equipment = AttitudeBatch(resolve_scenario("RigidRot/NadirPoint-v0", {}), 2)._equipment
    passed = data.passed(equipment, full)
    assert {name for name, value in zip(fields, passed, strict=True) if name in data.RECORDS} >= {
        "gyro_model",
        "tracker_model",
        "estimator_model",
    }
    records = [p for name, p in zip(fields, passed, strict=True) if name in data.RECORDS]
    assert all(isinstance(p, np.ndarray) and p.dtype == np.float64 and p.ndim == 1 for p in records)
    values = data.equipment_expander(fields)(passed)
    assert [name for name, v in zip(data.Equipment._fields, values, strict=True) if v is not None] == list(
        fields
    )
    for name in fields:
        rebuilt = values[data.Equipment._fields.index(name)]
        if name in data.RECORDS:
            assert type(rebuilt) is data.RECORDS[name] and rebuilt == getattr(equipment, name), name
        else:
            assert rebuilt is getattr(equipment, name), name

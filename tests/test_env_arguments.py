"""Clear errors and one source of truth: every argument of the env API is checked against
its real range (a ``ValueError`` naming it, never an ``OverflowError``, a numba typing
error or a hang), scenarios are checked however they are built, and the scenario's
``max_episode_steps`` is the episode limit everywhere.

References: the documented contract (argument names and ranges), the scenario files read
by ``tomllib`` directly, and envs built the plain way."""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import rigidrot_gym
from rigidrot_gym.attitude.env import AttitudeEnv
from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv
from rigidrot_gym.attitude.scenario import Scenario, ScenarioError, find, load
from rigidrot_gym.attitude.vector_env import AttitudeVectorEnv

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ENVS = Path(rigidrot_gym.__file__).resolve().parents[1] / "envs"
REORIENT = (ENVS / "reorient.toml").read_text()
ZERO = np.zeros(3, dtype=np.float32)
EYE = "[[1, 0, 0], [0, 1, 0], [0, 0, 1]]"


def _file(tmp_path: Path, text: str, name: str = "custom.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _episode_length(env, cap: int = 1000) -> int:
    """Steps until truncation, from rest far from the target (nothing terminates)."""
    env.reset(
        seed=0, options={"attitude": [0.0, 1.0, 0.0, 0.0], "target": [1.0, 0.0, 0.0, 0.0], "rate": ZERO}
    )
    for k in range(1, cap + 1):
        _, _, terminated, truncated, _ = env.step(ZERO)
        assert not terminated
        if truncated:
            return k
    return -1


# ----------------------------------------------------------------------- the episode limit


def test_the_scenario_file_sets_the_episode_limit_everywhere(tmp_path):
    path = _file(tmp_path, REORIENT.replace("max_episode_steps = 250", "max_episode_steps = 13"))
    assert _episode_length(gym.make("RigidRot/Reorient-v0", scenario=str(path))) == 13
    assert _episode_length(gym.make("RigidRot/Reorient-v0", scenario=path)) == 13
    assert _episode_length(AttitudeEnv(path)) == 13
    vec = gym.make_vec("RigidRot/Reorient-v0", num_envs=2, scenario=str(path))
    sync = gym.make_vec("RigidRot/Reorient-v0", num_envs=2, scenario=str(path), vectorization_mode="sync")
    adapter = AttitudeSB3VecEnv(2, path)
    for batch in (vec, sync):
        batch.reset(seed=0)
        flags = [batch.step(np.zeros((2, 3), dtype=np.float32))[3] for _ in range(13)]
        assert [f.all() for f in flags] == [False] * 12 + [True]
    adapter.reset()
    dones = [adapter.step(np.zeros((2, 3), dtype=np.float32))[3] for _ in range(13)]
    assert [d[0]["TimeLimit.truncated"] for d in dones] == [False] * 12 + [True]


def test_a_longer_limit_than_the_ids_is_honoured(tmp_path):
    path = _file(tmp_path, REORIENT.replace("max_episode_steps = 250", "max_episode_steps = 260"))
    env = gym.make("RigidRot/Reorient-v0", scenario=str(path))
    assert env.spec.max_episode_steps == 260
    assert _episode_length(env) == 260


def test_another_scenario_brings_its_own_limit():
    slew = tomllib.loads((ENVS / "slew.toml").read_text())["simulation"]["max_episode_steps"]
    env = gym.make("RigidRot/Reorient-v0", scenario="RigidRot/Slew-v0")
    assert env.spec.max_episode_steps == slew == 240
    env.reset(seed=0)
    steps, truncated = 0, False
    while not truncated:
        _, _, terminated, truncated, _ = env.step(ZERO)
        assert not terminated
        steps += 1
    assert steps == slew
    vec = gym.make_vec("RigidRot/Reorient-v0", 2, scenario="RigidRot/Slew-v0")
    assert vec.unwrapped.scenario.max_episode_steps == 240


@pytest.mark.parametrize("env_id", rigidrot_gym.ENV_IDS)
def test_registered_limits_are_the_files(env_id):
    stem = find(env_id).source
    expected = tomllib.loads(Path(stem).read_text())["simulation"]["max_episode_steps"]
    assert gym.make(env_id).spec.max_episode_steps == expected
    assert gym.make_vec(env_id, 2).unwrapped.scenario.max_episode_steps == expected


def test_gym_make_max_episode_steps_still_shortens():
    env = gym.make("RigidRot/Reorient-v0", max_episode_steps=5)
    assert env.spec.max_episode_steps == 5 and _episode_length(env) == 5


@pytest.mark.parametrize("bad", [-5, 0, 1.5, 10**30, True, "10"])
def test_vector_and_sb3_max_episode_steps_are_checked_like_gym_make(bad):
    pattern = r"max_episode_steps: expected an integer in \[1, 9223372036854775807\]"
    with pytest.raises(ValueError, match=pattern):
        gym.make_vec("RigidRot/Reorient-v0", num_envs=2, max_episode_steps=bad)
    with pytest.raises(ValueError, match=pattern):
        AttitudeSB3VecEnv(2, max_episode_steps=bad)


# ----------------------------------------------------------------------- integer ranges


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("substeps", 2**63 - 1, r"\[1, 100000\]"),
        ("substeps", 10**30, r"\[1, 100000\]"),
        ("substeps", 0, r"\[1, 100000\]"),
        ("substeps", 2.0, r"\[1, 100000\]"),
        ("success_hold_steps", 10**30, r"\[0, 9223372036854775807\]"),
        ("success_hold_steps", -1, r"\[0, 9223372036854775807\]"),
        ("max_episode_steps", 2**63, r"\[1, 9223372036854775807\]"),
    ],
)
def test_integer_fields_are_checked_against_their_range(field, value, expected):
    start = time.perf_counter()
    with pytest.raises(ValueError, match=rf"override {field}: expected an integer in {expected}"):
        AttitudeEnv(**{field: value})
    with pytest.raises(ValueError, match=rf"{field}"):
        AttitudeVectorEnv(2, **{field: value})
    assert time.perf_counter() - start < 5.0  # refused, not run


def test_num_envs_is_checked():
    for bad in (0, -1, 1.0, True, 2**40):
        with pytest.raises(ValueError, match=r"num_envs must be an integer in \[1, "):
            AttitudeVectorEnv(bad)


# ----------------------------------------------------------------------- scenarios built directly


def test_scenarios_built_directly_are_checked():
    s = find("RigidRot/Reorient-v0")
    for changes, field in [
        ({"dt": -0.2}, "simulation.dt"),
        ({"substeps": 0}, "simulation.substeps"),
        ({"integrator": "exact"}, "simulation.integrator"),
        ({"max_rate": -1.0}, "termination.max_rate"),
        ({"reward_angle": 1e308}, "reward.angle"),
        ({"start_rate": [0.0, np.nan, 0.0]}, "start.rate"),
        ({"inertia": np.ones((2, 3, 3))}, "body"),
    ]:
        with pytest.raises(ScenarioError, match=rf"reorient.toml: field {field}"):
            dataclasses.replace(s, **changes)
    fields = {f.name: getattr(s, f.name) for f in dataclasses.fields(Scenario)}
    with pytest.raises(ScenarioError, match=r"field simulation.substeps"):
        Scenario(**{**fields, "substeps": 10**30})


def test_reward_weights_keep_the_reward_bounds_finite_in_float32():
    env = AttitudeEnv(reward_angle=1e37, reward_rate=1e37, reward_torque=1e37, reward_unsafe=1e37)
    low, high = env.reward_range
    assert np.isfinite(np.float32(low)) and np.isfinite(np.float32(high))
    with pytest.raises(
        ValueError, match=r"override reward_unsafe: expected a number in \[0, 1e\+37\], got 1e\+308"
    ):
        AttitudeEnv(reward_unsafe=1e308)


def test_float32_and_integer_numbers_are_accepted_like_floats():
    a = gym.make("RigidRot/Reorient-v0", dt=np.float32(0.1), max_torque=np.array([1, 2, 3], dtype=np.int32))
    b = gym.make("RigidRot/Reorient-v0", dt=float(np.float32(0.1)), max_torque=[1.0, 2.0, 3.0])
    assert a.unwrapped.scenario.dt == b.unwrapped.scenario.dt
    oa, ob = a.reset(seed=0)[0], b.reset(seed=0)[0]
    np.testing.assert_array_equal(oa, ob)
    for _ in range(5):
        np.testing.assert_array_equal(a.step(ZERO + 0.3)[0], b.step(ZERO + 0.3)[0])


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("dt", True),
        ("dt", "0.1"),
        ("dt", 10**400),
        ("dt", 5e-324),
        ("max_torque", ["1", "2", "3"]),
        ("max_torque", [True, 1.0, 1.0]),
        ("max_torque", [10**400, 1.0, 1.0]),
        ("start_rate", [1j, 0.0, 0.0]),
        ("attitude_noise_deg", 1e308),
        ("rate_noise", 1e300),
        ("integrator", 4),
        ("wheel_layout", ["pyramid"]),
    ],
)
def test_bad_override_values_name_the_field(field, value):
    with pytest.raises(ValueError, match=rf"override {field}: expected"):
        AttitudeEnv(**{field: value})


# ----------------------------------------------------------------------- scenario files


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"\xef\xbb\xbf" + REORIENT.encode(), r"byte-order mark"),
        (REORIENT.encode().replace(b"# Rest-to-rest", b"# Rest\xff-to-rest"), r"not valid UTF-8 .* line 1"),
        (
            REORIENT.replace("substeps = 1", "substeps = 99999999999999999999999").encode(),
            r"field simulation.substeps",
        ),
        (REORIENT.replace("dt = 0.2 ", "dt = 1e999 ").encode(), r"field simulation.dt: expected a finite"),
        (
            REORIENT.replace("dt = 0.2 ", f"dt = {10**400} ").encode(),
            r"field simulation.dt: expected a finite",
        ),
        (
            REORIENT.replace("max_torque = [0.01, 0.01, 0.01]", "max_torque = [1e400, 0.01, 0.01]").encode(),
            r"field actuator.max_torque",
        ),
        (
            REORIENT.replace("moments = [0.08, 0.10, 0.05]", f"tensor = [{EYE}, {EYE}]").encode(),
            r"field body.tensor: expected one 3 × 3 tensor",
        ),
        (
            REORIENT.replace("moments = [0.08, 0.10, 0.05]", "moments = [true, 1, 1]").encode(),
            r"field body.moments: expected a list of 3",
        ),
    ],
    ids=[
        "bom",
        "invalid-utf8",
        "int-overflow",
        "float-overflow",
        "huge-int",
        "huge-in-list",
        "several-tensors",
        "bool",
    ],
)
def test_malformed_files_name_the_file_and_the_field(tmp_path, content, match):
    path = tmp_path / "broken.toml"
    path.write_bytes(content)
    with pytest.raises(ScenarioError, match=rf"broken.toml: .*{match}"):
        load(path)
    with pytest.raises(ValueError, match=r"broken.toml"):
        gym.make("RigidRot/Reorient-v0", scenario=str(path))


def test_a_part_dimension_must_be_a_number(tmp_path):
    text = (ENVS / "slew.toml").read_text()
    assert "radius = 0.2" in text
    for bad in ("true", '"0.2"', "[0.2]"):
        path = _file(tmp_path, text.replace("radius = 0.2", f"radius = {bad}"), "parts.toml")
        with pytest.raises(ScenarioError, match=r"parts.toml: field body.parts\[3\](\.|: )radius"):
            load(path)


def test_a_missing_file_is_not_found_rather_than_unknown(tmp_path):
    with pytest.raises(ScenarioError, match=r"scenario file 'missing.toml' not found"):
        find("missing.toml")
    with pytest.raises(ScenarioError, match=r"not found"):
        gym.make("RigidRot/Reorient-v0", scenario=tmp_path / "missing.toml")
    with pytest.raises(ScenarioError, match=r"unknown scenario 'RigidRot/Nope-v0'; built-in"):
        find("RigidRot/Nope-v0")
    with pytest.raises(ScenarioError, match=r"scenario must be"):
        find(3)


# ----------------------------------------------------------------------- actions, options, seeds


@pytest.mark.parametrize(
    ("action", "match"),
    [
        (np.zeros(4), r"action must have shape \(3,\), got shape \(4,\)"),
        (np.zeros((1, 3)), r"action must have shape \(3,\), got shape \(1, 3\)"),
        (np.zeros((3, 1)), r"action must have shape \(3,\), got shape \(3, 1\)"),
        (np.zeros(3, dtype=complex), r"action must be an array of shape \(3,\) of real numbers"),
        (np.array(["a", "b", "c"]), r"action must be an array of shape \(3,\) of real numbers"),
        (np.array([0.0, None, 0.0]), r"action must be an array of shape \(3,\) of real numbers"),
        ([[0.0], [0.0, 0.0]], r"action must be an array of shape \(3,\)"),
    ],
)
def test_bad_actions_name_the_action(action, match):
    env = gym.make("RigidRot/Reorient-v0").unwrapped
    env.reset(seed=0)
    with pytest.raises(ValueError, match=match):
        env.step(action)


def test_every_real_dtype_the_action_space_contains_is_accepted():
    env, reference = gym.make("RigidRot/Reorient-v0").unwrapped, gym.make("RigidRot/Reorient-v0").unwrapped
    env.reset(seed=0)
    reference.reset(seed=0)
    for action in (np.array([0.5, -0.25, 1.0], dtype=np.float16), np.array([1, 0, -1], dtype=np.int16)):
        assert env.action_space.contains(action)
        np.testing.assert_array_equal(env.step(action)[0], reference.step(action.astype(np.float64))[0])


def test_vector_and_sb3_actions_must_have_the_batch_shape():
    vec = AttitudeVectorEnv(2)
    vec.reset(seed=0)
    adapter = AttitudeSB3VecEnv(2)
    adapter.reset()
    for bad in (np.zeros(6), np.zeros((3, 2)), np.zeros((2, 3, 1))):
        with pytest.raises(ValueError, match=r"actions must have shape \(2, 3\)"):
            vec.step(bad)
        with pytest.raises(ValueError, match=r"actions must have shape \(2, 3\)"):
            adapter.step(bad)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"target": "random"}, r"options\['target'\] must be a unit quaternion \[w, x, y, z\].*got 'random'"),
        ({"attitude": [1.0, 0.0, 0.0]}, r"options\['attitude'\] must be a unit quaternion"),
        ({"attitude": [[1.0, 0.0, 0.0, 0.0]]}, r"options\['attitude'\] must be a unit quaternion"),
        ({"rate": [0.0, 0.0, 1j]}, r"options\['rate'\] must be finite"),
        ({"rate": "fast"}, r"options\['rate'\] must be finite"),
        ([("rate", [0, 0, 0])], r"options must be a dict"),
        ("attitude", r"options must be a dict"),
        ({"atitude": [1, 0, 0, 0]}, r"unknown reset option\(s\) \['atitude'\]"),
    ],
)
def test_bad_reset_options_name_the_option(options, match):
    for env in (gym.make("RigidRot/Reorient-v0").unwrapped, AttitudeVectorEnv(2)):
        with pytest.raises(ValueError, match=match):
            env.reset(seed=0, options=options)


@pytest.mark.parametrize("seed", [1.5, -1, "0", True, [0, 1, 2], [0, 1.5]])
def test_bad_seeds_name_the_seed(seed):
    with pytest.raises(ValueError, match=r"seed"):
        AttitudeVectorEnv(2).reset(seed=seed)
    if not isinstance(seed, list):
        with pytest.raises(ValueError, match=r"seed must be None or an integer ≥ 0"):
            gym.make("RigidRot/Reorient-v0").unwrapped.reset(seed=seed)


def test_numpy_integer_seeds_work_like_python_ints():
    a, b = AttitudeVectorEnv(2), AttitudeVectorEnv(2)
    np.testing.assert_array_equal(a.reset(seed=np.int64(3))[0], b.reset(seed=3)[0])
    np.testing.assert_array_equal(a.reset(seed=[np.uint8(1), None])[0][0], b.reset(seed=[1, 2])[0][0])


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"widht": 64}, r"unknown render option\(s\) \['widht'\]"),
        ({"width": 0}, r"width must be an integer in \[1, 16384\]"),
        ({"height": 10**30}, r"height must be an integer in \[1, 16384\]"),
        ({"camera_distance": "far"}, r"camera_distance must be a finite positive number"),
        ({"camera_yaw": True}, r"camera_yaw must be a finite number"),
        ([("width", 3)], r"render_options must be a dict"),
    ],
)
def test_bad_render_options_fail_at_construction(options, match):
    # before PyBullet is involved: nothing has been drawn yet
    with pytest.raises(ValueError, match=match):
        gym.make("RigidRot/Reorient-v0", render_mode="rgb_array", render_options=options)
    with pytest.raises(ValueError, match=match):
        gym.make_vec("RigidRot/Reorient-v0", num_envs=2, render_mode="rgb_array", render_options=options)


def test_integrator_options_must_be_a_dict():
    with pytest.raises(ValueError, match=r"integrator_options must be a dict or None"):
        AttitudeEnv(integrator="nielsen_krenk", integrator_options=[("tol", 1e-9)])

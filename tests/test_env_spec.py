"""Gymnasium's conventions for every registered id: its passive env checker finds nothing
to warn about (warnings raised as errors), the registered spec survives a JSON round trip
and makes the same env, and a version is a version (no id is out of date)."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec, parse_env_id
from gymnasium.utils.passive_env_checker import (
    check_action_space,
    check_observation_space,
    env_reset_passive_checker,
    env_step_passive_checker,
)

import rigidrot_gym

IDS = rigidrot_gym.ENV_IDS


@pytest.mark.parametrize("env_id", IDS)
def test_passive_env_checker_warns_of_nothing(env_id):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = gym.make(env_id)  # wrapped in gymnasium's PassiveEnvChecker
        check_observation_space(env.observation_space)
        check_action_space(env.action_space)
        env.reset(seed=0)
        env.step(env.action_space.sample())  # the wrapper checks the first reset and step
        inner = env.unwrapped
        env_reset_passive_checker(inner, seed=1)
        for _ in range(20):  # and here every step, not only the first
            env_step_passive_checker(inner, inner.action_space.sample())
        env.close()


@pytest.mark.parametrize("env_id", IDS)
def test_spec_round_trips_through_json(env_id):
    registered = gym.spec(env_id)
    assert EnvSpec.from_json(registered.to_json()) == registered
    env = gym.make(env_id)
    restored = EnvSpec.from_json(env.spec.to_json())
    assert restored == env.spec
    twin = gym.make(restored)
    first, _ = env.reset(seed=7)
    second, _ = twin.reset(seed=7)
    action = env.action_space.sample()
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(env.step(action)[0], twin.step(action)[0])


def test_no_two_ids_are_versions_of_one_name():
    # In Gymnasium a version is the same task with changed results, and gym.make warns that
    # every version but the highest is "out of date": another task takes a name of its own.
    names = [parse_env_id(env_id)[:2] for env_id in IDS]
    assert len(set(names)) == len(names), sorted(names)


@pytest.mark.parametrize("env_id", IDS)
def test_no_id_is_out_of_date(env_id):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gym.make(env_id).close()
    assert not [w for w in caught if "out of date" in str(w.message)]

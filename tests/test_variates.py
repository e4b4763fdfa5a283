"""The vectorising stream's normals (``random_stream`` 1) against numpy: its logarithm,
sine and cosine within a few units in the last place of the C library's, its normals
those of the C library's Box–Muller from the same uniforms to 4e-15, their law standard
normal (Kolmogorov–Smirnov, moments, no correlation within a pair or between pairs),
and an env's noise the same law on both streams."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from scipy import stats

from rigidrot_gym.attitude import variates
from rigidrot_gym.attitude.vector_env import AttitudeVectorEnv


def test_the_logarithm_is_within_two_units_in_the_last_place():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.random(1_000_000), 2.0 ** -np.arange(1, 54), 1.0 - 2.0 ** -np.arange(1, 54)])
    x = np.clip(x, 2.0**-53, 1.0 - 2.0**-53)  # 1 − u of the stream's uniforms, u ∈ [0, 1)
    reference = np.log(x)
    error = np.abs(variates._log_unit(x) - reference) / np.spacing(np.abs(reference))
    assert error.max() <= 2.0
    assert variates._log_unit(np.array([1.0]))[0] == 0.0


def test_the_sine_and_cosine_of_a_turn_are_within_1e_15():
    u = np.concatenate([np.random.default_rng(1).random(1_000_000), np.arange(16) / 16.0, [1.0 - 2.0**-53]])
    c, s = variates._turn_sincos(u)
    np.testing.assert_allclose(c, np.cos(2 * np.pi * u), rtol=0, atol=1e-15)
    np.testing.assert_allclose(s, np.sin(2 * np.pi * u), rtol=0, atol=1e-15)


@numba.njit
def _both(keys, steps, pairs):
    fast = np.empty((2 * pairs, keys.shape[0]))
    variates.block_normals(keys, np.uint64(0), steps, 0, 0, pairs, fast, 0, keys.shape[0])
    slow = np.empty_like(fast)
    for p in range(pairs):
        for i in range(keys.shape[0]):
            slow[2 * p, i], slow[2 * p + 1, i] = variates.counter_normals(keys[i], steps[i], p, pairs)
    return fast, slow


def test_the_vectorised_normals_are_the_c_librarys_box_muller_of_the_same_uniforms():
    rng = np.random.default_rng(2)
    n = 200_000
    keys = variates.keys_of(rng.random(n))
    fast, slow = _both(keys, rng.integers(0, 10**6, n), 7)
    np.testing.assert_allclose(fast, slow, rtol=0, atol=4e-15 * np.abs(slow).max())
    assert stats.kstest(fast.ravel(), "norm").pvalue > 1e-3
    z = fast.ravel()
    assert abs(z.mean()) < 5 / np.sqrt(z.size) and abs(z.var() - 1.0) < 5 * np.sqrt(2 / z.size)
    correlation = np.corrcoef(fast)
    assert np.abs(correlation - np.eye(14)).max() < 5 / np.sqrt(n)


@pytest.mark.slow
def test_the_noise_of_an_env_has_the_same_law_on_both_streams():
    # WheelReorient's gyro bias (drawn at reset) and white noise (per step): the observed
    # rates at rest differ from the truth by N(b, σ²) on both streams.
    spread = {}
    for stream in (0, 1):
        env = AttitudeVectorEnv(
            num_envs=2000, scenario="RigidRot/WheelReorient-v0", randomize_start=0.0, random_stream=stream
        )
        env.reset(seed=3)
        noise = []
        for _ in range(5):
            obs, *_ = env.step(np.zeros((2000, 4), dtype=np.float32))
            noise.append(obs[:, 4:7] * env.scenario.max_rate - env.batch.body_state()[1])
        noise = np.array(noise)
        spread[stream] = (noise - noise.mean(axis=0)).std()
    s = AttitudeVectorEnv(num_envs=1, scenario="RigidRot/WheelReorient-v0").scenario
    for stream, value in spread.items():
        assert value == pytest.approx(s.rate_noise * np.sqrt(4 / 5), rel=0.03), stream

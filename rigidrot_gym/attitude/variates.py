"""Random variates from uniforms: normals by Box–Muller, and counter-based uniforms for
per-step noise.

A vector env cannot call N generators at every step (a Python loop over the bodies).
Each body instead draws a key from its own generator at reset; number j of its step k
is then output k·K + j + 1 of SplitMix64 seeded with that key (Steele, Lea & Flood,
OOPSLA 2014): a pure function of (key, k, j), so a body's noise is the same whether it
steps alone or in a batch, and all randomness still descends from its generator.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.physics.jit import jitable

# Pairs of standard normals per body and step of the counter-based stream, and the
# first pair of each use: actuator noise (up to 4 wheels), sensors (attitude and rate
# noise, 3 each), random-walk disturbance (3).
STEP_PAIRS = 7
ACTUATOR_PAIRS, SENSOR_PAIRS, DISTURBANCE_PAIRS = 0, 2, 5
# The spacecraft's sensors and estimator draw from a second stream of each body, keyed
# by its key mixed with this constant (the first stream's numbers, and so every id that
# has no such sensor, stay as they were), NAVIGATION_PAIRS pairs a step. The normals of
# a step, by their index (each use starts a pair): the gyro's bias step N_u (0–2) and
# white noise N_v (3–5), the star tracker's (6–8), the magnetometer's (10–12), six coarse
# Sun sensors' (14–19); at an episode's start (step 0), the gyro's bias (20–22), the
# estimate's attitude error (24–26) and the magnetometer's bias (28–30).
NAVIGATION_SALT = np.uint64(0x5EC0DE5A7E111735)
NAVIGATION_PAIRS = 16
GYRO_NORMALS, TRACKER_NORMALS, MAGNETOMETER_NORMALS, SUN_SENSOR_NORMALS = 0, 6, 10, 14
START_BIAS_NORMALS, START_ERROR_NORMALS, START_MAGNETOMETER_NORMALS = 20, 24, 28

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = (np.uint64(s) for s in (30, 27, 31, 11))
_ULP = 2.0**-53


@jitable
def normal_pair(u0, u1):
    """Two independent standard normals (r cos φ, r sin φ) of two uniforms on [0, 1)
    (Box–Muller; 1 − u0 ∈ (0, 1] keeps the logarithm finite)."""
    radius = np.sqrt(-2.0 * np.log1p(-u0))
    phase = 2.0 * np.pi * u1
    return radius * np.cos(phase), radius * np.sin(phase)


def box_muller(u: np.ndarray) -> np.ndarray:
    """(..., 2k) uniforms on [0, 1) → (..., 2k) independent standard normals: the cosines
    of the k pairs (u₀, u₁), (u₂, u₃) … first, then their sines."""
    return np.concatenate(normal_pair(u[..., 0::2], u[..., 1::2]), axis=-1)


def keys_of(u: np.ndarray) -> np.ndarray:
    """(...) uint64 keys from uniforms on [0, 1) (their 53 random bits)."""
    return (np.asarray(u) * 2.0**53).astype(np.uint64)


@jitable
def splitmix_uniform(key, index):
    """Output ``index`` (≥ 1, uint64) of SplitMix64 seeded with ``key`` (uint64), as a
    uniform on [0, 1) (its top 53 bits). Scalars or arrays."""
    z = key + index * _GAMMA  # uint64 wraps modulo 2⁶⁴, as SplitMix64 needs
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    z = z ^ (z >> _S31)
    return (z >> _S11) * _ULP


@jitable
def counter_normals(key, counter, pair, pairs):
    """Standard normals 2·``pair`` and 2·``pair`` + 1 of the 2·``pairs`` of step
    ``counter`` of stream ``key`` (scalars): Box–Muller of that step's uniforms
    2·``pair`` and 2·``pair`` + 1 (the numbers j of step k are SplitMix64 outputs
    k·K + j + 1, K = 2·``pairs``)."""
    first = np.uint64(counter) * np.uint64(2 * pairs) + np.uint64(2 * pair + 1)
    return normal_pair(splitmix_uniform(key, first), splitmix_uniform(key, first + np.uint64(1)))


@jitable
def navigation_normals(key, counter, first, out):
    """Normals ``first`` … ``first + len(out) − 1`` (``first`` even) of step ``counter`` of
    body ``key``'s navigation stream into ``out``."""
    stream = key ^ NAVIGATION_SALT
    for k in range(0, out.shape[0], 2):
        pair = counter_normals(stream, counter, (first + k) // 2, NAVIGATION_PAIRS)
        out[k] = pair[0]
        if k + 1 < out.shape[0]:
            out[k + 1] = pair[1]

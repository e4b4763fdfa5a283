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

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1, _MIX2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = (np.uint64(s) for s in (30, 27, 31, 11))


def box_muller(u: np.ndarray) -> np.ndarray:
    """(..., 2k) uniforms on [0, 1) → (..., 2k) independent standard normals."""
    radius = np.sqrt(-2.0 * np.log1p(-u[..., 0::2]))  # 1 − u ∈ (0, 1]: finite logarithm
    phase = 2.0 * np.pi * u[..., 1::2]
    return np.concatenate([radius * np.cos(phase), radius * np.sin(phase)], axis=-1)


def keys_of(u: np.ndarray) -> np.ndarray:
    """(...) uint64 keys from uniforms on [0, 1) (their 53 random bits)."""
    return (np.asarray(u) * 2.0**53).astype(np.uint64)


def counter_uniforms(keys: np.ndarray, counters: np.ndarray, count: int) -> np.ndarray:
    """(N, count) uniforms on [0, 1): numbers 0 … count−1 of step ``counters`` (N,) of
    the streams ``keys`` (N,) uint64."""
    index = counters.astype(np.uint64)[:, None] * np.uint64(count) + np.arange(1, count + 1, dtype=np.uint64)
    z = keys[:, None] + index * _GAMMA  # uint64 arrays wrap modulo 2⁶⁴, as SplitMix64 needs
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    z = z ^ (z >> _S31)
    return (z >> _S11).astype(np.float64) * 2.0**-53


def counter_normals(keys: np.ndarray, counters: np.ndarray, count: int) -> np.ndarray:
    """(N, count) standard normals (``count`` even) of step ``counters`` of the streams
    ``keys``; see :func:`counter_uniforms`."""
    return box_muller(counter_uniforms(keys, counters, count))

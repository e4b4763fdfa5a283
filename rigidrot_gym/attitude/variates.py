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

from rigidrot_gym.physics.plumbing.jit import jitable, select

# Each body's per-step noise: pairs of standard normals of its counter-based stream, and
# normals of a second stream for the spacecraft's sensors and estimator, keyed by its key
# mixed with NAVIGATION_SALT (the first stream's numbers, and so every id that has no such
# sensor, stay as they were), always drawn by the vectorising draw (block_normals). How
# many each component takes is in its declaration; where they lie follows from the list
# (declaration.noise_layout), read by the names below on first use (the components' modules
# import this one): the main stream's pairs per step and the first pair of each use
# (actuator noise, up to 4 wheels; sensors, attitude and rate noise, 3 each; random-walk
# disturbance, 3), and the navigation stream's pairs per step and the first normal of each
# use (each starts a pair): the gyro's bias step N_u and white noise N_v (0–5), the star
# tracker's (6–8), the magnetometer's (10–12), six coarse Sun sensors' (14–19); at an
# episode's start (step 0), the gyro's bias (20–22), the estimate's attitude error (24–26)
# and the magnetometer's bias (28–30).
_LAYOUT = {
    "STEP_PAIRS": "step_pairs",
    "ACTUATOR_PAIRS": "actuator_noise.step",
    "SENSOR_PAIRS": "sensors.step",
    "DISTURBANCE_PAIRS": "disturbances.step",
    "NAVIGATION_PAIRS": "navigation_pairs",
    "GYRO_NORMALS": "gyro.navigation",
    "TRACKER_NORMALS": "star_tracker.navigation",
    "MAGNETOMETER_NORMALS": "magnetometer.navigation",
    "SUN_SENSOR_NORMALS": "sun_sensors.navigation",
    "START_BIAS_NORMALS": "gyro.start",
    "START_ERROR_NORMALS": "navigation.start",
    "START_MAGNETOMETER_NORMALS": "magnetometer.start",
}


def __getattr__(name: str) -> int:
    """The noise layout's places by the names the compiled code reads: those of
    ``_LAYOUT``, or any of ``components.NOISE`` with its dot written ``__``
    (``variates.thrusters__step``: a new component reads its own without an edit here)."""
    # Dunder names (the import system's probes) never load the list: it may be loading.
    if name in _LAYOUT or ("__" in name and not name.startswith("_")):
        from rigidrot_gym.attitude.components import NOISE

        key = _LAYOUT.get(name, name.replace("__", "."))
        if key in NOISE:
            return NOISE[key]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


NAVIGATION_SALT = np.uint64(0x5EC0DE5A7E111735)

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


# The vectorising stream (``random_stream`` 1): Box–Muller with the logarithm, sine and
# cosine as branch-free polynomials, which the compiler vectorises across bodies (the C
# library's functions, called one body at a time, cannot be). Within 2 units in the last
# place of numpy's: an env taking it changes its results in their last bits only.
_LN2_HI, _LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10  # fdlibm's split ln 2
_SQRT_HALF = 0.7071067811865476
# 2/(2k+1), k = 1 … 11: ln m = 2 atanh(s) = 2 (s + s³/3 + s⁵/5 + …), |s| ≤ 0.1716.
_ATANH = tuple(2.0 / (2 * k + 1) for k in range(1, 12))
# Taylor coefficients of sin (x^(2k+1)/(2k+1)!) and cos (x^(2k)/(2k)!) to x^17 and x^18
# on |x| ≤ π/4: the first term left out is below 3e-17.
_SIN = tuple((-1.0) ** k / float(np.prod(np.arange(1, 2 * k + 2, dtype=np.float64))) for k in range(1, 9))
_COS = tuple((-1.0) ** k / float(np.prod(np.arange(1, 2 * k + 1, dtype=np.float64))) for k in range(1, 10))


@jitable
def _log_unit(x):
    """ln x for x in [2⁻⁵³, 1], branch-free: x = m 2^e by halvings and doublings chosen by
    comparisons (selects), m in [√½, √2), then 2 atanh((m − 1)/(m + 1)) by its series."""
    m, e = x, 0.0 * x
    small = m < 2.0**-32
    m, e = select(small, m * 2.0**32, m), select(small, e - 32.0, e)
    small = m < 2.0**-16
    m, e = select(small, m * 2.0**16, m), select(small, e - 16.0, e)
    small = m < 2.0**-8
    m, e = select(small, m * 2.0**8, m), select(small, e - 8.0, e)
    small = m < 2.0**-4
    m, e = select(small, m * 2.0**4, m), select(small, e - 4.0, e)
    small = m < 2.0**-2
    m, e = select(small, m * 4.0, m), select(small, e - 2.0, e)
    small = m < 0.5
    m, e = select(small, m * 2.0, m), select(small, e - 1.0, e)
    small = m < _SQRT_HALF  # m in [½, 1): into [√½, √2)
    m, e = select(small, m * 2.0, m), select(small, e - 1.0, e)
    t = (m - 1.0) / (m + 1.0)
    z = t * t
    a = _ATANH
    series = a[0] + z * (
        a[1]
        + z
        * (
            a[2]
            + z
            * (a[3] + z * (a[4] + z * (a[5] + z * (a[6] + z * (a[7] + z * (a[8] + z * (a[9] + z * a[10])))))))
        )
    )
    return e * _LN2_HI + (2.0 * t + t * z * series + e * _LN2_LO)


@jitable
def _turn_sincos(u):
    """(cos 2πu, sin 2πu) for u in [0, 1), branch-free: the quarter turn n = ⌊4u⌋ picked
    by selects, the polynomials on the remaining angle in [−π/4, π/4)."""
    quarter = np.floor(4.0 * u)
    x = (4.0 * u - quarter - 0.5) * (0.5 * np.pi)  # the angle past the quarter's middle
    z = x * x
    a, b = _SIN, _COS
    s = x + x * z * (
        a[0] + z * (a[1] + z * (a[2] + z * (a[3] + z * (a[4] + z * (a[5] + z * (a[6] + z * a[7]))))))
    )
    c = 1.0 + z * (
        b[0]
        + z * (b[1] + z * (b[2] + z * (b[3] + z * (b[4] + z * (b[5] + z * (b[6] + z * (b[7] + z * b[8])))))))
    )
    # The quarter's middle, (n + ½) π/2: cos and sin of it are (±1, ±1)/√2.
    cm = select(quarter < 0.5, 1.0, select(quarter < 2.5, -1.0, 1.0)) * _SQRT_HALF
    sm = select(quarter < 1.5, 1.0, -1.0) * _SQRT_HALF
    return cm * c - sm * s, sm * c + cm * s


@jitable
def fast_normal_pair(u0, u1):
    """Two independent standard normals of two uniforms on [0, 1), as :func:`normal_pair`
    (Box–Muller), with the logarithm, sine and cosine as branch-free polynomials that
    vectorise: the same law, numbers within a few units in the last place of its."""
    radius = np.sqrt(-2.0 * _log_unit(1.0 - u0))
    c, s = _turn_sincos(u1)
    return radius * c, radius * s


@jitable
def block_normals(keys, salt, steps, add, pair, pairs, out, lo, hi):
    """Normals 2·``pair`` … of step ``steps[i]`` + ``add`` of stream ``keys[i]`` ^ ``salt``
    (numbered as :func:`counter_normals` numbers them, ``pairs`` pairs a step) of bodies
    ``lo`` … ``hi`` − 1 into ``out[:, i − lo]`` (as many rows as ``out`` has, an even
    number), by :func:`fast_normal_pair`: one loop over the bodies per pair, which
    vectorises. Compiled code only."""
    for p in range(out.shape[0] // 2):
        offset = np.uint64(2 * (pair + p) + 1)
        for j in range(hi - lo):  # from 0: a loop that starts at a variable does not vectorise
            key = keys[lo + j] ^ salt
            first = np.uint64(steps[lo + j] + add) * np.uint64(2 * pairs) + offset
            z0, z1 = fast_normal_pair(
                splitmix_uniform(key, first), splitmix_uniform(key, first + np.uint64(1))
            )
            out[2 * p, j] = z0
            out[2 * p + 1, j] = z1

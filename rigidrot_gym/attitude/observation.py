"""Compiled kernels for what the agent observes: the error quaternion and body rates (with
sensor noise if asked), wheel momenta and the pending action of a delayed actuator.

The pointing angle θ = 2 atan2(|δq_xyz|, |δq_w|) is finished by :func:`half_angle`, an
arctangent of branch-free arithmetic that vectorises over bodies (a loop that calls the C
library's ``atan2`` does not).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rigidrot_gym.attitude.task import OBS_SIZE, REWARD, TERMINATED
from rigidrot_gym.attitude.variates import SENSOR_PAIRS, STEP_PAIRS, counter_normals
from rigidrot_gym.physics import vector as vec
from rigidrot_gym.physics.jit import jitable, select
from rigidrot_gym.physics.quaternion import qconj, qexp, qmul, qrotate, qrotate_inv

# Rows of the intermediate results between the two kernels.
SIN_HALF, COS_HALF = range(2)

# Cephes ``atan`` (S. L. Moshier, Cephes Math Library 2.8, atan.c): atan x = x + x z P(z)/Q(z),
# z = x², on [0, 0.66] after reduction by π/2 − atan(1/x) or π/4 + atan((x − 1)/(x + 1)).
_ATAN_P = (
    -8.750608600031904122785e-1,
    -1.615753718733365076637e1,
    -7.500855792314704667340e1,
    -1.228866684490136173410e2,
    -6.485021904942025371773e1,
)
_ATAN_Q = (
    2.485846490142306297962e1,
    1.650270098316988542046e2,
    4.328810604912902668951e2,
    4.853903996359136964868e2,
    1.945506571482613964425e2,
)
_TAN_3PI_8 = 2.41421356237309504880
_MOREBITS = 6.123233995736765886130e-17  # π/2 − fl(π/2)


@jitable
def half_angle(sin_half, cos_half):
    """atan2(``sin_half``, ``cos_half``) ∈ [0, π/2] for non-negative arguments, not both zero,
    within a few units in the last place of the C library's (Cephes' ``atan`` after one
    division; selects instead of branches)."""
    x = sin_half / cos_half
    big = x > _TAN_3PI_8
    middle = x > 0.66
    r = select(big, -1.0 / x, select(middle, (x - 1.0) / (x + 1.0), x))
    base = select(big, 0.5 * np.pi, select(middle, 0.25 * np.pi, 0.0))
    extra = select(big, _MOREBITS, select(middle, 0.5 * _MOREBITS, 0.0))
    z = r * r
    p = (((_ATAN_P[0] * z + _ATAN_P[1]) * z + _ATAN_P[2]) * z + _ATAN_P[3]) * z + _ATAN_P[4]
    q = ((((z + _ATAN_Q[0]) * z + _ATAN_Q[1]) * z + _ATAN_Q[2]) * z + _ATAN_Q[3]) * z + _ATAN_Q[4]
    return base + ((r * (z * p / q) + r) + extra)


@njit(cache=True, error_model="numpy")
def sense(state, principal, keys, steps, after, noise, bias, rows, sensed):
    """The state of the bodies ``rows`` as the sensors report it at episode step
    ``steps + after``: attitude turned by a small random body rotation (per-axis std
    ``noise[0]``, rad), rates plus ``bias`` and white noise (std ``noise[1]``, rad/s). In
    principal axes, as the kernels read it (B* v B for a body-frame vector v)."""
    attitude_std, rate_std = noise
    for i in rows:
        key, step = keys[i], steps[i] + after
        p0 = counter_normals(key, step, SENSOR_PAIRS, STEP_PAIRS)
        p1 = counter_normals(key, step, SENSOR_PAIRS + 1, STEP_PAIRS)
        p2 = counter_normals(key, step, SENSOR_PAIRS + 2, STEP_PAIRS)
        xi, eta = (p0[0], p0[1], p1[0]), (p1[1], p2[0], p2[1])
        b = vec.row4(principal, i)
        turn = qrotate_inv(b, vec.scale(attitude_std, xi))
        rate_error = qrotate_inv(b, vec.axpy(rate_std, eta, vec.row3(bias, i)))
        q = qmul(vec.row4(state, i), qexp(vec.scale(0.5, turn)))
        w = vec.add((state[i, 4], state[i, 5], state[i, 6]), rate_error)
        sensed[i, 0], sensed[i, 1], sensed[i, 2], sensed[i, 3] = q
        sensed[i, 4], sensed[i, 5], sensed[i, 6] = w
        for k in range(7, state.shape[1]):
            sensed[i, k] = state[i, k]


@njit(cache=True, error_model="numpy")
def observe_actuators(rows, wheel_momenta, max_momentum, pending, end_on_saturation, saturated, obs, out):
    """Wheel momenta h_w / h_max (columns ``OBS_SIZE`` on) and the pending action (the
    last columns) of the bodies ``rows`` in their observations; with
    ``end_on_saturation`` (0, or the unsafe penalty), a saturated wheel ends the episode
    as unsafe (terminated; a truncation on the same step stands)."""
    wheels, delayed = wheel_momenta.shape[1], pending.shape[1]
    first_pending = obs.shape[1] - delayed
    for i in rows:
        for k in range(wheels):
            obs[i, OBS_SIZE + k] = wheel_momenta[i, k] / max_momentum[k]
        for k in range(delayed):
            obs[i, first_pending + k] = pending[i, k]
        if end_on_saturation and saturated[i] and not out[i, TERMINATED]:
            out[i, REWARD] -= end_on_saturation
            out[i, TERMINATED] = 1.0


@jitable
def body_frame(state, principal, principal_axes, i):
    """Attitude q = q_p ⊗ B* and rates ω = B ω_p of body i in its own body frame
    (the state itself when every body's frame is ``principal_axes``)."""
    q = (state[i, 0], state[i, 1], state[i, 2], state[i, 3])
    w = (state[i, 4], state[i, 5], state[i, 6])
    if principal_axes:
        return q, w
    b = vec.row4(principal, i)
    return qmul(q, qconj(b)), qrotate(b, w)


@jitable
def attitude_error(q, target):
    """δq = target* ⊗ q with w ≥ 0 (4-tuple), and the sine and cosine of half the pointing
    error, |δq_xyz| and |δq_w|."""
    error = qmul(qconj(target), q)
    sign = select(error[0] < 0.0, -1.0, 1.0)
    signed = (sign * error[0], sign * error[1], sign * error[2], sign * error[3])
    return signed, vec.norm((error[1], error[2], error[3])), abs(error[0])


@jitable
def scaled_rates(w, inv_max_rate):
    """ω / ω_max clipped to [-1, 1] (3-tuple)."""
    return (
        min(max(w[0] * inv_max_rate, -1.0), 1.0),
        min(max(w[1] * inv_max_rate, -1.0), 1.0),
        min(max(w[2] * inv_max_rate, -1.0), 1.0),
    )


@jitable
def error_observation(q, w, target, inv_max_rate):
    """One body's observation (:func:`attitude_error`'s δq, :func:`scaled_rates`) as a
    7-tuple, and the sine and cosine of half its pointing error."""
    dq, sin_half, cos_half = attitude_error(q, target)
    rates = scaled_rates(w, inv_max_rate)
    return (dq[0], dq[1], dq[2], dq[3], rates[0], rates[1], rates[2]), sin_half, cos_half


@njit(cache=True, error_model="numpy")
def observe(state, principal, principal_axes, target, max_rate, rows, obs, half):
    """Observation (float32) of the bodies ``rows``, and the sine and cosine of half
    their pointing error, |δq_xyz| and |δq_w|, into ``half`` (3, N)."""
    inv_max_rate = 1.0 / max_rate
    for i in rows:
        q, w = body_frame(state, principal, principal_axes, i)
        o, half[SIN_HALF, i], half[COS_HALF, i] = error_observation(q, w, vec.row4(target, i), inv_max_rate)
        for k in range(7):
            obs[i, k] = o[k]

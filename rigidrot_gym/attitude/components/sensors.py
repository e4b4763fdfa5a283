"""Noisy attitude and rate sensors: the observed attitude is the true one turned by a small
random body rotation (a star tracker, per-axis std σ_θ), the observed rates the true ones
plus a bias drawn per episode and white noise (a gyro, std σ_ω). The noise is drawn from
the body's counter-based stream (:mod:`~rigidrot_gym.attitude.variates`) at its episode
step, so a body's readings are the same whether it steps alone or in a batch (by the C
library's functions, or, with ``random_stream`` 1, by the pipeline's vectorising draw). The reward
and flags see the truth."""

from __future__ import annotations

from rigidrot_gym.attitude.variates import SENSOR_PAIRS, STEP_PAIRS, counter_normals
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qexp, qmul, qrotate_inv


@jitable
def normals(key, step):
    """The six normals of a body's counter-based stream (``key``) its sensors draw at
    episode step ``step``: the attitude's three, then the rates' three."""
    p0 = counter_normals(key, step, SENSOR_PAIRS, STEP_PAIRS)
    p1 = counter_normals(key, step, SENSOR_PAIRS + 1, STEP_PAIRS)
    p2 = counter_normals(key, step, SENSOR_PAIRS + 2, STEP_PAIRS)
    return (p0[0], p0[1], p1[0]), (p1[1], p2[0], p2[1])


@jitable
def sense(state, principal, equipment, xi, eta, i, sensed):
    """Body i's state as its sensors report it with the standard normals ``xi`` (the
    attitude's) and ``eta`` (the rates'; both its stream's at the episode step:
    :func:`normals`), into column i of ``sensed`` (8, N): in principal axes, as the kernels
    read states (B* v B for a body-frame vector v)."""
    attitude_std, rate_std = equipment.attitude_noise, equipment.rate_noise
    b = (principal[0, i], principal[1, i], principal[2, i], principal[3, i])
    turn = qrotate_inv(b, vec.scale(attitude_std, xi))
    rate_error = qrotate_inv(b, vec.axpy(rate_std, eta, vec.row3(equipment.bias, i)))
    q = qmul((state[0, i], state[1, i], state[2, i], state[3, i]), qexp(vec.scale(0.5, turn)))
    w = vec.add((state[4, i], state[5, i], state[6, i]), rate_error)
    sensed[0, i], sensed[1, i], sensed[2, i], sensed[3, i] = q
    sensed[4, i], sensed[5, i], sensed[6, i] = w
    sensed[7, i] = state[7, i]

"""Compiled per-step kernels from the action to the torques held over a control period.

The action a ∈ [-1, 1]ⁿ (clipped) becomes actuator torques u = a ⊙ u_max (ideal torquers,
τ = u, or reaction wheels, τ = −A u; :mod:`rigidrot_gym.attitude.actuators`), after the
optional delay, noise and wheel momentum limits, plus the disturbance torques; at the end of
the period the wheel momenta and the random-walk disturbance move on. Per body, in a fixed
order of operations, so that row i of a batch repeats a single env bit for bit.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rigidrot_gym.attitude.actuators import limit_by_momentum
from rigidrot_gym.attitude.disturbances import ornstein_uhlenbeck
from rigidrot_gym.attitude.variates import ACTUATOR_PAIRS, DISTURBANCE_PAIRS, STEP_PAIRS, counter_normals
from rigidrot_gym.physics import torques
from rigidrot_gym.physics import vector as vec
from rigidrot_gym.physics.jit import jitable
from rigidrot_gym.physics.quaternion import qrotate_inv


@jitable
def first_nonfinite(action):
    """The first body whose action holds a NaN or an infinity, or -1."""
    for i in range(action.shape[0]):
        for k in range(action.shape[1]):
            if not np.isfinite(action[i, k]):
                return i
    return -1


@jitable
def hold_torque(tau, principal, params, i):
    """Store body i's body-frame torque τ in principal axes as its held torque."""
    tau = qrotate_inv(vec.row4(principal, i), tau)
    params[i, torques.BODY], params[i, torques.BODY + 1], params[i, torques.BODY + 2] = tau


@njit(cache=True, error_model="numpy")
def apply_action(action, max_torque, principal, params, clipped):
    """Ideal torquers, no realism options: τ_body = clip(a, -1, 1) ⊙ τ_max, held.

    Returns the first body whose action is not finite (then nothing is written), or -1.
    """
    bad = first_nonfinite(action)
    if bad >= 0:
        return bad
    for i in range(action.shape[0]):
        a = (
            min(max(action[i, 0], -1.0), 1.0),
            min(max(action[i, 1], -1.0), 1.0),
            min(max(action[i, 2], -1.0), 1.0),
        )
        clipped[i, 0], clipped[i, 1], clipped[i, 2] = a
        hold_torque(vec.mul(a, vec.row3(max_torque, i)), principal, params, i)
    return -1


@njit(cache=True, error_model="numpy")
def clip_actions(action, clipped):
    """clip(a, -1, 1) into ``clipped``; returns the first body whose action is not
    finite (then nothing is written), or -1."""
    bad = first_nonfinite(action)
    if bad >= 0:
        return bad
    for i in range(action.shape[0]):
        for k in range(action.shape[1]):
            clipped[i, k] = min(max(action[i, k], -1.0), 1.0)
    return -1


@njit(cache=True, error_model="numpy")
def actuate(
    clipped, pending, delay, noise, keys, steps, max_torque, wheels, wheel_momenta, max_momentum, dt, commands
):
    """Actuator torques u (N, n), N·m, of the clipped actions a: with ``delay`` the
    pending action acts and a waits in ``pending``; u = a ⊙ u_max, times (1 + σ ξ) with
    actuator ``noise`` σ and clipped to the limit; wheel torques cut by the momentum limit
    (:func:`limit_by_momentum`)."""
    xi = (0.0, 0.0)
    for i in range(clipped.shape[0]):
        for k in range(clipped.shape[1]):
            a = clipped[i, k]
            if delay:
                a, pending[i, k] = pending[i, k], a
            u = a * max_torque[i, k]
            if noise:
                if k % 2 == 0:
                    xi = counter_normals(keys[i], steps[i], ACTUATOR_PAIRS + k // 2, STEP_PAIRS)
                u = u * (1.0 + noise * xi[k % 2])
                u = min(max(u, -max_torque[i, k]), max_torque[i, k])
            if wheels:
                u = limit_by_momentum(u, wheel_momenta[i, k], max_momentum[k], dt)
            commands[i, k] = u


@njit(cache=True, error_model="numpy")
def load_torques(commands, wheel_momenta, axes, sign, principal, disturbances, phase, steps, params, wheels):
    """Held body torque τ = sign · A u + d (body frame) of actuator torques u (N, n)
    about the columns of ``axes`` A (3, n), plus the disturbances d, the sum of
    ``disturbances`` (2, N, 3); with ``wheels`` also the wheel momentum h = A h_w and its
    rate A u of the torque model. ``phase`` (N,) and the phase advance per step (a
    scalar, 0 without gravity gradient) give the orbit phase at step ``steps``. Per body,
    in a fixed order of operations (a matrix product's summation order depends on the
    batch size, and row i of a batch must repeat a single env bit for bit)."""
    phase_start, phase_per_step = phase
    for i in range(commands.shape[0]):
        b = vec.row4(principal, i)
        tau = vec.add(vec.row3(disturbances[0], i), vec.row3(disturbances[1], i))
        h = hdot = (0.0, 0.0, 0.0)
        for k in range(commands.shape[1]):
            axis = (axes[0, k], axes[1, k], axes[2, k])
            tau = vec.axpy(sign * commands[i, k], axis, tau)
            if wheels:
                h = vec.axpy(wheel_momenta[i, k], axis, h)
                hdot = vec.axpy(commands[i, k], axis, hdot)
        hold_torque(tau, principal, params, i)
        if wheels:
            h, hdot = qrotate_inv(b, h), qrotate_inv(b, hdot)
            params[i, torques.WHEEL_H], params[i, torques.WHEEL_H + 1], params[i, torques.WHEEL_H + 2] = h
            w = torques.WHEEL_HDOT
            params[i, w], params[i, w + 1], params[i, w + 2] = hdot
        if phase_per_step:
            params[i, torques.GG_PHASE] = phase_start[i] + phase_per_step * steps[i]


@njit(cache=True, error_model="numpy")
def advance_realism(
    commands, dt, wheels, max_momentum, walk, keys, steps, wheel_momenta, saturated, walk_torque
):
    """End of a control period: wheel momenta h_w += u dt (clipped: the commands were cut
    to stay within the limit, so the clip only removes round-off) and their saturation
    flags; the random-walk disturbance (``walk``: σ, τ; σ = 0 for none) one step on."""
    walk_std, correlation_time = walk
    for i in range(commands.shape[0]):
        if wheels:
            hit = False
            for k in range(commands.shape[1]):
                limit = max_momentum[k]
                h = min(max(wheel_momenta[i, k] + commands[i, k] * dt, -limit), limit)
                wheel_momenta[i, k] = h
                hit = hit or abs(h) >= limit * (1.0 - 1e-9)
            saturated[i] = hit
        if walk_std:
            xy = counter_normals(keys[i], steps[i], DISTURBANCE_PAIRS, STEP_PAIRS)
            xi = (xy[0], xy[1], counter_normals(keys[i], steps[i], DISTURBANCE_PAIRS + 1, STEP_PAIRS)[0])
            for k in range(3):
                walk_torque[i, k] = ornstein_uhlenbeck(
                    walk_torque[i, k], walk_std, correlation_time, dt, xi[k]
                )

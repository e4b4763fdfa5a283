"""Compiled per-step kernels from the action to the torques held over a control period.

The action a ∈ [-1, 1]ⁿ (clipped) becomes actuator torques u = a ⊙ u_max (ideal torquers,
τ = u, or reaction wheels, τ = −A u; :mod:`rigidrot_gym.attitude.actuators`), after the
optional delay, noise and wheel momentum limits, plus the disturbance torques; at the end of
the period the wheel momenta and the random-walk disturbance move on. Per body, in a fixed
order of operations, so that row i of a batch repeats a single env bit for bit. The kernels
before the integration read the state and write only scratch arrays (the held torque
parameters, compact: row j for the j-th body stepped); :func:`advance_realism` moves the
state on once the step is committed.
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
def first_nonfinite(action, rows):
    """The first of the bodies ``rows`` whose action holds a NaN or an infinity, or -1."""
    for i in rows:
        for k in range(action.shape[1]):
            if not np.isfinite(action[i, k]):
                return i
    return -1


@jitable
def hold_torque(tau, b, params, j):
    """Store the body-frame torque τ of a body with principal frame ``b`` in principal
    axes as the held torque of parameter row j."""
    tau = qrotate_inv(b, tau)
    params[j, torques.BODY], params[j, torques.BODY + 1], params[j, torques.BODY + 2] = tau


@njit(cache=True, error_model="numpy")
def apply_action(action, rows, max_torque, principal, params, clipped):
    """Ideal torquers, no realism options: τ_body = clip(a, -1, 1) ⊙ τ_max, held, for the
    bodies ``rows`` (parameter row j for body ``rows[j]``).

    Returns the first body whose action is not finite (then nothing is written), or -1.
    """
    bad = first_nonfinite(action, rows)
    if bad >= 0:
        return bad
    for j in range(rows.size):
        i = rows[j]
        a = (
            min(max(action[i, 0], -1.0), 1.0),
            min(max(action[i, 1], -1.0), 1.0),
            min(max(action[i, 2], -1.0), 1.0),
        )
        clipped[i, 0], clipped[i, 1], clipped[i, 2] = a
        hold_torque(vec.mul(a, vec.row3(max_torque, i)), vec.row4(principal, i), params, j)
    return -1


@njit(cache=True, error_model="numpy")
def clip_actions(action, rows, clipped):
    """clip(a, -1, 1) of the bodies ``rows`` into ``clipped``; returns the first body whose
    action is not finite (then nothing is written), or -1."""
    bad = first_nonfinite(action, rows)
    if bad >= 0:
        return bad
    for i in rows:
        for k in range(action.shape[1]):
            clipped[i, k] = min(max(action[i, k], -1.0), 1.0)
    return -1


@njit(cache=True, error_model="numpy")
def actuate(
    clipped,
    rows,
    pending,
    delay,
    noise,
    keys,
    steps,
    max_torque,
    wheels,
    wheel_momenta,
    max_momentum,
    dt,
    commands,
):
    """Actuator torques u (N, n), N·m, of the clipped actions a of the bodies ``rows``:
    with ``delay`` the pending action acts (a waits until :func:`advance_realism`);
    u = a ⊙ u_max, times (1 + σ ξ) with actuator ``noise`` σ and clipped to the limit;
    wheel torques cut by the momentum limit (:func:`limit_by_momentum`). Reads the
    state, writes only ``commands``. ``max_torque`` is component-major (n, N), as the
    batch stores it (transposed here: one compiled type whatever N)."""
    max_torque = max_torque.T
    xi = (0.0, 0.0)
    for i in rows:
        for k in range(clipped.shape[1]):
            a = pending[i, k] if delay else clipped[i, k]
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
def load_torques(
    commands,
    rows,
    wheel_momenta,
    axes,
    sign,
    principal,
    disturbances,
    phase,
    steps,
    gravity,
    moments,
    params,
    wheels,
):
    """Held torque parameters (row j for body ``rows[j]``): the body torque
    τ = sign · A u + d (body frame) of actuator torques u (N, n) about the columns of
    ``axes`` A (3, n), plus the disturbances d, the sum of ``disturbances`` (2, N, 3);
    with ``wheels`` also the wheel momentum h = A h_w and its rate A u; with a gravity
    gradient (``gravity`` = (3n², n), zero without) its rate, mean motion, the body's
    principal ``moments`` and its orbit phase at step ``steps``: ``phase`` (N,) and the
    phase advance per step. Every column the torque model reads is written, so the
    parameters depend on nothing but the state. Per body, in a fixed order of operations
    (a matrix product's summation order depends on the batch size, and row i of a batch
    must repeat a single env bit for bit). ``principal`` (4, N) and ``moments`` (3, N) are
    component-major, as the batch stores them (transposed here: one compiled type
    whatever N)."""
    principal, moments = principal.T, moments.T
    phase_start, phase_per_step = phase
    for j in range(rows.size):
        i = rows[j]
        b = vec.row4(principal, i)
        tau = vec.add(vec.row3(disturbances[0], i), vec.row3(disturbances[1], i))
        h = hdot = (0.0, 0.0, 0.0)
        for k in range(commands.shape[1]):
            axis = (axes[0, k], axes[1, k], axes[2, k])
            tau = vec.axpy(sign * commands[i, k], axis, tau)
            if wheels:
                h = vec.axpy(wheel_momenta[i, k], axis, h)
                hdot = vec.axpy(commands[i, k], axis, hdot)
        hold_torque(tau, b, params, j)
        if wheels:
            h, hdot = qrotate_inv(b, h), qrotate_inv(b, hdot)
            params[j, torques.WHEEL_H], params[j, torques.WHEEL_H + 1], params[j, torques.WHEEL_H + 2] = h
            w = torques.WHEEL_HDOT
            params[j, w], params[j, w + 1], params[j, w + 2] = hdot
        if gravity[0]:
            params[j, torques.GG_RATE], params[j, torques.GG_MOTION] = gravity[0], gravity[1]
            params[j, torques.GG_PHASE] = phase_start[i] + phase_per_step * steps[i]
            g = torques.GG_MOMENTS
            params[j, g], params[j, g + 1], params[j, g + 2] = moments[i, 0], moments[i, 1], moments[i, 2]


@njit(cache=True, error_model="numpy")
def advance_realism(
    commands,
    rows,
    dt,
    wheels,
    max_momentum,
    walk,
    keys,
    steps,
    wheel_momenta,
    saturated,
    walk_torque,
    delay,
    clipped,
    pending,
):
    """End of a committed control period of the bodies ``rows``: wheel momenta
    h_w += u dt (clipped: the commands were cut to stay within the limit, so the clip only
    removes round-off) and their saturation flags; the random-walk disturbance (``walk``:
    σ, τ; σ = 0 for none) one step on; with ``delay`` this period's clipped action becomes
    the pending one."""
    walk_std, correlation_time = walk
    for i in rows:
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
        if delay:
            for k in range(clipped.shape[1]):
                pending[i, k] = clipped[i, k]

"""Compiled kernel for the reward, the pointing error and the episode flags."""

from __future__ import annotations

import numpy as np
from numba import njit

from rigidrot_gym.attitude.observation import COS_HALF, SIN_HALF, half_angle
from rigidrot_gym.attitude.task import (
    IN_TOLERANCE,
    POINTING_DEG,
    RATE,
    REWARD,
    SUCCESS,
    TERMINATED,
    TRUNCATED,
)
from rigidrot_gym.physics import vector as vec
from rigidrot_gym.physics.jit import jitable

# Products with reciprocals: a division per body costs more than the rest.
_INV_PI, _TO_DEGREES = 1.0 / np.pi, 180.0 / np.pi


@jitable
def score(angle, rate, effort, constants, inv_max_rate, stepped, steps, hold, hold_steps, max_steps):
    """One body's reward and flags from its pointing error ``angle`` (rad), ``rate`` |ω|
    and mean squared action ``effort``: r = −(w_θ θ/π + w_ω min(|ω|/ω_max, 1) + w_u effort)
    + w_s inside − w_x unsafe (constants as :func:`~rigidrot_gym.attitude.task.task_constants`),
    ``inside`` the body being within both tolerances at this step.

    With ``stepped`` the body has just advanced: its episode ``steps`` and streak ``hold``
    of steps inside move on; it succeeds once the streak reaches ``hold_steps`` (at least
    one), terminates when unsafe or, if ``hold_steps`` > 0, on that success, and truncates
    whenever its ``max_steps``-th step is reached (if > 0; Gymnasium's rule: a termination
    on that step is truncated too); else every flag is false.
    Returns (reward, inside, success, terminated, truncated, steps, hold)."""
    # Bitwise operators and selects, no branches: in a loop over bodies, a branch keeps it
    # from vectorising.
    inside = (angle <= constants[0]) & (rate <= constants[1])
    unsafe = rate > constants[2]
    penalty = (
        constants[3] * angle * _INV_PI + constants[4] * min(rate * inv_max_rate, 1.0) + constants[5] * effort
    )
    steps = steps + 1 if stepped else steps
    hold = (hold + 1 if inside else 0) if stepped else hold
    success = stepped & (hold >= max(hold_steps, 1))
    terminated = stepped & (unsafe | ((hold_steps > 0) & success))
    truncated = stepped & (max_steps > 0) & (steps >= max_steps)
    reward = -penalty + constants[6] * inside - constants[7] * unsafe
    return reward, inside, success, terminated, truncated, steps, hold


@jitable
def record(out, i, angle, rate, reward, inside, success, terminated, truncated):
    """Body i's outputs into ``out`` (OUTPUTS, N), rows ``REWARD`` …: the reward, the
    pointing error ``angle`` in degrees, the ``rate``, and the flags as 0 or 1."""
    out[REWARD, i] = reward
    out[POINTING_DEG, i] = angle * _TO_DEGREES
    out[RATE, i] = rate
    out[SUCCESS, i] = success
    out[TERMINATED, i] = terminated
    out[TRUNCATED, i] = truncated
    out[IN_TOLERANCE, i] = inside


@njit(cache=True, error_model="numpy")
def assess(state, action, constants, rows, stepped, steps, hold, limits, half, out):
    """Reward, pointing error, rate and flags (:func:`score`) of the bodies ``rows`` from
    the sines and cosines of their half pointing errors (``half`` (2, N)), into ``out``
    (OUTPUTS, N) (:func:`record`)."""
    inv_max_rate = 1.0 / constants[2]
    inv_actions = 1.0 / action.shape[1]
    for i in rows:
        angle = 2.0 * half_angle(half[SIN_HALF, i], half[COS_HALF, i])
        rate = vec.norm((state[i, 4], state[i, 5], state[i, 6]))  # |ω| is the same in any frame
        effort = 0.0
        for k in range(action.shape[1]):
            effort += action[i, k] ** 2
        effort *= inv_actions
        reward, inside, success, terminated, truncated, steps[i], hold[i] = score(
            angle, rate, effort, constants, inv_max_rate, stepped, steps[i], hold[i], limits[0], limits[1]
        )
        record(out, i, angle, rate, reward, inside, success, terminated, truncated)

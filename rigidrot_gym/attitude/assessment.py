"""Compiled kernel for the reward, the pointing error and the episode flags."""

from __future__ import annotations

import numpy as np
from numba import njit

from rigidrot_gym.attitude.observation import HALF_ANGLE
from rigidrot_gym.attitude.task import POINTING_DEG, RATE, REWARD, SUCCESS, TERMINATED, TRUNCATED
from rigidrot_gym.physics import vector as vec


@njit(cache=True, error_model="numpy")
def assess(state, action, constants, rows, stepped, steps, hold, limits, half, out):
    """Reward, pointing error, rate and flags of the bodies ``rows`` from their half
    pointing angles (``half[HALF_ANGLE]``).

    With ``stepped`` the bodies have just advanced: count the step and the successful
    streak and decide termination (unsafe rate, or success held ``limits[0]`` steps if
    that is > 0) and truncation (``limits[1]`` steps if > 0); else both flags are false.
    """
    tol_angle, tol_rate, max_rate = constants[0], constants[1], constants[2]
    hold_steps, max_steps = limits[0], limits[1]
    # Products with reciprocals: a division per body costs more than the rest.
    inv_max_rate, inv_pi, to_degrees = 1.0 / max_rate, 1.0 / np.pi, 180.0 / np.pi
    inv_actions = 1.0 / action.shape[1]
    for i in rows:
        angle = 2.0 * half[HALF_ANGLE, i]
        rate = vec.norm((state[i, 4], state[i, 5], state[i, 6]))  # |ω| is the same in any frame
        success = angle <= tol_angle and rate <= tol_rate
        unsafe = rate > max_rate
        effort = 0.0
        for k in range(action.shape[1]):
            effort += action[i, k] ** 2
        effort *= inv_actions
        penalty = (
            constants[3] * angle * inv_pi
            + constants[4] * min(rate * inv_max_rate, 1.0)
            + constants[5] * effort
        )
        terminated = truncated = False
        if stepped:
            steps[i] += 1
            hold[i] = hold[i] + 1 if success else 0
            terminated = unsafe or (hold_steps > 0 and hold[i] >= hold_steps)
            truncated = not terminated and max_steps > 0 and steps[i] >= max_steps
        out[i, REWARD] = -penalty + constants[6] * success - constants[7] * unsafe
        out[i, POINTING_DEG] = angle * to_degrees
        out[i, RATE] = rate
        out[i, SUCCESS] = success
        out[i, TERMINATED] = terminated
        out[i, TRUNCATED] = truncated

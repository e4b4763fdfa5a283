"""A step staged in scratch arrays, checked, and only then committed.

A step of the attitude core either completes or leaves the env exactly as it was: the
actions, the held torques and the integration all work in a :class:`Workspace`, and the
bodies' states are copied back (:func:`commit`) only once every advanced state is finite
and its attitude a unit quaternion (:func:`first_invalid`). An integrator that diverges
(a step too large for the motion), a solver that does not converge or an engine that
refuses a step therefore changes nothing.

Only the bodies being stepped are staged (:func:`gather`): a vector env's bodies that
wait for their next-step autoreset are neither integrated nor checked.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from rigidrot_gym.physics import torques
from rigidrot_gym.physics.integrators.base import STATE_SIZE, Method
from rigidrot_gym.physics.jit import jitable
from rigidrot_gym.physics.validation import UNIT_TOLERANCE


class Workspace:
    """Scratch arrays of one step or evaluation of N bodies with m actuators.

    Each is written before it is read within every call that uses it, so nothing in them
    carries over from one call to the next: they are not part of the env's state.

    Attributes:
        state: (N, 8) the stepped bodies' states, compact (row j is the j-th stepped body).
        moments: (N, 3) their principal moments, compact (only when a subset is stepped).
        params: (N, SIZE) their held torque parameters, compact; ``loads`` wraps it.
        clipped: (N, m) the clipped actions, by body.
        commands: (N, m) the actuator torques after delay, noise and limits, N·m, by body.
        traj, stats: the integrator's (unrecorded) trajectory and statistics buffers.
        half: (2, N) sine and cosine of half of each pointing error, by body.
        sensed, sensed_half: the state as the sensors report it, and its half angles.
        true_obs: (N, size) the observation of the true state (its pointing error scores).
        soa_state, soa_params, scratch: the compiled step's staged states (8, N; once
            committed, the batch swaps them with its states), held torque parameters
            (SIZE, N) and statistics, actions and results (21, N)
            (:func:`~rigidrot_gym.attitude.fused.kernel_of`).
    """

    def __init__(self, num_bodies: int, actuators: int, obs_size: int) -> None:
        n = num_bodies
        self.state = np.zeros((n, STATE_SIZE))
        self.moments = np.zeros((n, 3))
        self.params = np.zeros((n, torques.SIZE))
        self.loads = torques.Loads(self.params)
        self.clipped = np.zeros((n, actuators))
        self.commands = np.zeros((n, actuators))
        self.traj, self.stats = Method.buffers(n, 1, record=False)
        self.half = np.zeros((2, n))
        self.sensed = np.zeros((n, STATE_SIZE))
        self.sensed_half = np.zeros((2, n))
        self.true_obs = np.zeros((n, obs_size), dtype=np.float32)
        self.soa_state = np.zeros((STATE_SIZE, n))
        self.soa_params = np.zeros((torques.SIZE, n))
        self.scratch = np.zeros((21, n))


@njit(cache=True)
def gather(rows, state, work):
    """Copy the states of bodies ``rows`` into the first ``len(rows)`` rows of ``work``."""
    for j in range(rows.size):
        i = rows[j]
        for c in range(state.shape[1]):
            work[j, c] = state[i, c]


@jitable
def valid_state(x):
    """The staged state ``x`` (its 8 components) is finite (x · 0 is 0 for a finite x and
    NaN otherwise: no branch, so a loop over bodies vectorises) and its attitude a unit
    quaternion (every method renormalises it; a collapsed one, |q| → 0, comes from an
    overflow)."""
    nonfinite = (
        x[0] * 0.0 + x[1] * 0.0 + x[2] * 0.0 + x[3] * 0.0 + x[4] * 0.0 + x[5] * 0.0 + x[6] * 0.0 + x[7] * 0.0
    )
    norm2 = x[0] ** 2 + x[1] ** 2 + x[2] ** 2 + x[3] ** 2
    return (nonfinite == 0.0) & (abs(norm2 - 1.0) <= 2.0 * UNIT_TOLERANCE)


@njit(cache=True)
def first_invalid(work, count):
    """The first of the first ``count`` staged states (rows of ``work``) that is not
    :func:`valid_state`, or -1."""
    bad = -1
    for j in range(count - 1, -1, -1):
        row = (work[j, 0], work[j, 1], work[j, 2], work[j, 3], work[j, 4], work[j, 5], work[j, 6], work[j, 7])
        if not valid_state(row):
            bad = j
    return bad


@njit(cache=True)
def commit(rows, work, state):
    """Copy the staged states back to bodies ``rows``."""
    for j in range(rows.size):
        i = rows[j]
        for c in range(state.shape[1]):
            state[i, c] = work[j, c]


def divergence_error(method: str, dt: float, substeps: int, body: int, staged: np.ndarray) -> ValueError:
    """The error of a step whose result is not a valid state (nothing was committed)."""
    return ValueError(
        f"integrator {method!r} produced an invalid state (q = {staged[0:4].tolist()}, "
        f"omega = {staged[4:7].tolist()}) for env {body} with dt = {dt:g} s and substeps = {substeps}: "
        "the step is too large for this motion; lower dt or raise substeps (the env is unchanged)"
    )

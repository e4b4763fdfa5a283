"""One compiled call per control period of the plain task (ideal torquers, no realism option).

:func:`control_period` runs the whole step of every body in one pass of compiled code:
action to torque, the integration over the sub-steps (the method's own step, through the
library's :func:`~rigidrot_gym.physics.integrators.base.advance`), the checks, the commit, the
observation, the reward and the flags. The arrays are component-major (structure of arrays:
``state[c, i]`` is component c of body i), so that the loops over bodies vectorise.

A step either completes or changes nothing: the actions are checked, then the bodies are
integrated in scratch (``work``) and checked, and only then committed; a failure returns
its kind and body, and the caller raises. Bodies marked ``waiting`` (a vector env's rows
about to autoreset) are neither read, checked nor written.

Each method gets its own compiled kernel (:func:`kernel_of`), a module-level closure over
its step function that numba caches on disk (a dispatcher passed as an argument would
defeat the cache), so that a run compiles only the method it uses.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from numba import njit

from rigidrot_gym.attitude.assessment import score
from rigidrot_gym.attitude.observation import error_observation
from rigidrot_gym.attitude.task import POINTING_DEG, RATE, REWARD, SUCCESS, TERMINATED, TRUNCATED
from rigidrot_gym.physics import torques
from rigidrot_gym.physics import vector as vec
from rigidrot_gym.physics.integrators.base import STATE_SIZE, advance
from rigidrot_gym.physics.jit import jitable
from rigidrot_gym.physics.quaternion import qconj, qmul, qrotate, qrotate_inv
from rigidrot_gym.physics.validation import UNIT_TOLERANCE

# What a control period returns: (kind, body); kind OK, or why nothing was committed.
OK, NONFINITE_ACTION, NOT_CONVERGED, INVALID_STATE = range(4)
_TO_DEGREES = 180.0 / np.pi


@jitable
def _column4(a, i):
    return (a[0, i], a[1, i], a[2, i], a[3, i])


@jitable
def _column3(a, i):
    return (a[0, i], a[1, i], a[2, i])


@jitable
def control_period(
    step,
    action,
    waiting,
    max_torque,
    principal,
    principal_axes,
    target,
    moments,
    state,
    work,
    params,
    opts,
    dt,
    substeps,
    constants,
    limits,
    steps,
    hold,
    clipped,
    obs,
    out,
    scratch,
):
    """One control period of every body not ``waiting`` ((N,) bool).

    Arrays: ``action`` (N, 3) as given; ``max_torque`` (3, N) N·m; ``principal`` (4, N)
    principal frames B; ``target`` (4, N); ``moments`` (3, N); ``state`` (8, N) in principal
    axes; ``work`` (8, N) and ``params`` (SIZE, N) scratch; ``steps``, ``hold`` (N,) int64;
    ``clipped`` (N, 3) the clipped actions; ``obs`` (N, 7) float32; ``out`` (N, 6);
    ``scratch`` (5, N): the integrator's statistics (rows 0-1) and the sine, cosine and
    half of each pointing error (rows 2-4). ``principal_axes``: every B is the identity.

    τ_p = B* (clip(a, −1, 1) ⊙ τ_max) B is held over the period; the method advances
    ``work`` by ``dt`` in ``substeps``; every advanced state must be finite with a unit
    attitude; then ``state`` takes it and the observation and :func:`score` are computed.

    Returns (kind, body): (``OK``, -1), or the first body whose action is not finite,
    whose implicit step did not converge or whose state is invalid (nothing written but
    scratch).
    """
    n = state.shape[1]
    for i in range(n):
        if not waiting[i]:
            for k in range(3):
                if not np.isfinite(action[i, k]):
                    return NONFINITE_ACTION, i
    for i in range(n):
        # A waiting body's action may be anything: it is read but not used.
        live = not waiting[i]
        a = (
            min(max(action[i, 0], -1.0), 1.0) if live else 0.0,
            min(max(action[i, 1], -1.0), 1.0) if live else 0.0,
            min(max(action[i, 2], -1.0), 1.0) if live else 0.0,
        )
        clipped[i, 0], clipped[i, 1], clipped[i, 2] = a
        tau = qrotate_inv(_column4(principal, i), vec.mul(a, _column3(max_torque, i)))
        params[torques.BODY, i], params[torques.BODY + 1, i], params[torques.BODY + 2, i] = tau
        for c in range(STATE_SIZE):
            work[c, i] = state[c, i]
    stats = scratch[0:2]
    for i in range(n):
        stats[0, i] = 0.0
        stats[1, i] = 0.0
    advance(
        step,
        torques.body_torque,
        torques.model_potential,
        work,
        moments,
        params,
        0.0,
        dt,
        substeps,
        0,
        substeps,
        opts,
        False,
        np.zeros((3, 0)),
        np.zeros((0, STATE_SIZE, n)),
        stats,
    )
    for i in range(n):
        if not waiting[i] and np.isinf(stats[0, i]):
            return NOT_CONVERGED, i
    bad = -1
    for i in range(n - 1, -1, -1):  # branch-free but for the result (x · 0 is NaN unless x is finite)
        nonfinite = 0.0
        for c in range(STATE_SIZE):
            nonfinite += work[c, i] * 0.0
        norm2 = work[0, i] ** 2 + work[1, i] ** 2 + work[2, i] ** 2 + work[3, i] ** 2
        if not waiting[i] and not (nonfinite == 0.0 and abs(norm2 - 1.0) <= 2.0 * UNIT_TOLERANCE):
            bad = i
    if bad >= 0:
        return INVALID_STATE, bad
    inv_max_rate = 1.0 / constants[2]
    sin_half, cos_half, half = scratch[2], scratch[3], scratch[4]
    for i in range(n):
        if not waiting[i]:
            for c in range(STATE_SIZE):
                state[c, i] = work[c, i]
            q, w = _column4(work, i), (work[4, i], work[5, i], work[6, i])
            if not principal_axes:
                b = _column4(principal, i)
                q, w = qmul(q, qconj(b)), qrotate(b, w)
            o, sin_half[i], cos_half[i] = error_observation(q, w, _column4(target, i), inv_max_rate)
            for k in range(7):
                obs[i, k] = o[k]
    # Apart: a loop that calls atan2 does not vectorise.
    for i in range(n):
        half[i] = np.arctan2(sin_half[i], cos_half[i])
    inv_actions = 1.0 / 3.0
    for i in range(n):
        if not waiting[i]:
            angle = 2.0 * half[i]
            rate = vec.norm((state[4, i], state[5, i], state[6, i]))
            effort = (clipped[i, 0] ** 2 + clipped[i, 1] ** 2 + clipped[i, 2] ** 2) * inv_actions
            reward, success, terminated, truncated, steps[i], hold[i] = score(
                angle, rate, effort, constants, inv_max_rate, True, steps[i], hold[i], limits[0], limits[1]
            )
            out[i, REWARD] = reward
            out[i, POINTING_DEG] = angle * _TO_DEGREES
            out[i, RATE] = rate
            out[i, SUCCESS] = success
            out[i, TERMINATED] = terminated
            out[i, TRUNCATED] = truncated
    return OK, -1


def _compile(step: Callable) -> Callable:
    @njit(cache=True, error_model="numpy")
    def kernel(
        action,
        waiting,
        max_torque,
        principal,
        principal_axes,
        target,
        moments,
        state,
        work,
        params,
        opts,
        dt,
        substeps,
        constants,
        limits,
        steps,
        hold,
        clipped,
        obs,
        out,
        scratch,
    ):
        return control_period(
            step,
            action,
            waiting,
            max_torque,
            principal,
            principal_axes,
            target,
            moments,
            state,
            work,
            params,
            opts,
            dt,
            substeps,
            constants,
            limits,
            steps,
            hold,
            clipped,
            obs,
            out,
            scratch,
        )

    return kernel


@functools.cache
def kernel_of(step: Callable) -> Callable:
    """The compiled :func:`control_period` of the method whose step function is ``step``."""
    return _compile(step)

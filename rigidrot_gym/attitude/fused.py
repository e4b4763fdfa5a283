"""One compiled call per control period of the plain task (ideal torquers, no realism option).

The kernel of :func:`kernel_of` runs the whole step of every body in one call of compiled
code: action to torque, the integration over the sub-steps (the method's own step, through the
library's :func:`~rigidrot_gym.physics.integrators.base.advance`), the checks, the commit, the
observation, the reward and the flags. The arrays are component-major (structure of arrays:
``state[c, i]`` is component c of body i), so that the loops over bodies vectorise.

A step either completes or changes nothing: the actions are checked, then the bodies are
integrated in scratch (``work``) and checked, and only then committed (the outputs written,
and the caller swaps ``work`` and ``state``, which saves a copy); a failure returns how
many bodies failed each check, and the caller finds the first (:func:`first_failure`) and
raises. Bodies marked ``waiting`` (a vector env's rows about to autoreset) are staged as
they are and not checked; their outputs and counters are written like every body's, and
the caller puts back what they had. Or they restart in the same call (the autoreset as one
compiled call, not a Python pass over the rows): once every check has passed, their new
episodes are drawn (:func:`~rigidrot_gym.attitude.starts.start_state`) into ``work`` and
observed with the others.

Each method gets its own compiled kernel (:func:`kernel_of`), a closure over its step
function that numba caches on disk (a dispatcher passed as an argument would defeat the
cache), so that a run compiles only the method it uses. The kernel makes passes over
blocks of bodies (``prange``): compiled with ``parallel=True`` (``num_threads`` > 1 in the
envs), numba's threads share the blocks.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from numba import njit, prange

from rigidrot_gym.attitude.assessment import record, score
from rigidrot_gym.attitude.draws import draw
from rigidrot_gym.attitude.observation import attitude_error, half_angle, scaled_rates
from rigidrot_gym.attitude.staging import valid_state
from rigidrot_gym.attitude.starts import BASE_VARIATES, start_state
from rigidrot_gym.physics import torques
from rigidrot_gym.physics import vector as vec
from rigidrot_gym.physics.integrators.base import STATE_SIZE, advance
from rigidrot_gym.physics.jit import bodies, jitable, select
from rigidrot_gym.physics.quaternion import qconj, qmul, qrotate, qrotate_inv

# Bodies per block of a pass (the unit of work of a thread).
BLOCK = 256


@jitable
def _column4(a, i):
    return (a[0, i], a[1, i], a[2, i], a[3, i])


@jitable
def _column3(a, i):
    return (a[0, i], a[1, i], a[2, i])


@jitable
def _valid(work, i):
    """Staged body i is a :func:`~rigidrot_gym.attitude.staging.valid_state`."""
    return valid_state(_column4(work, i) + (work[4, i], work[5, i], work[6, i], work[7, i]))


@jitable
def _actions(action, waiting, stepped, principal, principal_axes, max_torque, params, scratch, lo, hi):
    """Clipped actions (scratch rows 2-4) and held principal-axes torques (``params``) of
    bodies ``lo`` … ``hi`` − 1; returns how many of them, not waiting, have a non-finite
    action."""
    acts = scratch[2:5]
    nonfinite = 0
    for i in bodies(lo, hi):
        # A waiting body's action may be anything (and without ``stepped`` every action):
        # it is read but not used.
        live = stepped & (not waiting[i])
        x, y, z = action[i, 0], action[i, 1], action[i, 2]
        nonfinite += live & (not (np.isfinite(x) & np.isfinite(y) & np.isfinite(z)))
        a = (
            min(max(x, -1.0), 1.0) if live else 0.0,
            min(max(y, -1.0), 1.0) if live else 0.0,
            min(max(z, -1.0), 1.0) if live else 0.0,
        )
        acts[0, i], acts[1, i], acts[2, i] = a
        tau = vec.mul(a, _column3(max_torque, i))
        if not principal_axes:  # loop-invariant: the compiler makes two loops of this one
            tau = qrotate_inv(_column4(principal, i), tau)
        params[torques.BODY, i], params[torques.BODY + 1, i], params[torques.BODY + 2, i] = tau
    return nonfinite


@jitable
def _stage(step, waiting, moments, state, work, params, opts, dt, substeps, stepped, scratch, lo, hi):
    """Bodies ``lo`` … ``hi`` − 1 advanced into ``work`` (a waiting body copied as it is);
    returns how many of them, not waiting, did not converge and how many are invalid."""
    stats = scratch[0:2]
    for c in range(STATE_SIZE):
        for i in bodies(lo, hi):
            work[c, i] = state[c, i]
    for i in bodies(lo, hi):
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
        substeps if stepped else 0,
        opts,
        False,
        work[:3, :0],  # no angular momentum to renormalise with
        work.reshape((1, STATE_SIZE, work.shape[1]))[:0],  # no trajectory to record
        stats,
        lo,
        hi,
    )
    failed = invalid = 0
    for i in bodies(lo, hi):
        live = not waiting[i]
        failed += live & np.isinf(stats[0, i])
        invalid += live & (not _valid(work, i))
    # A waiting body was advanced with no torque (a branch in the loops above would stop
    # them vectorising); it keeps its state.
    for i in bodies(lo, hi):
        if waiting[i]:
            for c in range(STATE_SIZE):
                work[c, i] = state[c, i]
    return failed, invalid


@jitable
def _commit(
    waiting,
    principal,
    principal_axes,
    target,
    work,
    stepped,
    restart,
    constants,
    limits,
    steps,
    hold,
    obs,
    out,
    scratch,
    lo,
    hi,
):
    """The observations, outputs and counters of bodies ``lo`` … ``hi`` − 1 at their staged
    states, waiting bodies' too, as not stepped (the caller then makes ``work`` the state
    and puts back what waiting bodies had, unless they restarted: in a step, with reward 0)."""
    acts, results = scratch[2:5], scratch[5:14]
    inv_max_rate = 1.0 / constants[2]
    # The arithmetic, into scratch rows (a loop that reads and writes few arrays vectorises;
    # one with a branch or an inner loop does not) ...
    body = work  # the body-frame attitude and rates: the state itself, or turned in scratch
    if not principal_axes:
        body = scratch[14:21]
        for i in bodies(lo, hi):
            b = _column4(principal, i)
            body[0, i], body[1, i], body[2, i], body[3, i] = qmul(_column4(work, i), qconj(b))
            body[4, i], body[5, i], body[6, i] = qrotate(b, (work[4, i], work[5, i], work[6, i]))
    for i in bodies(lo, hi):
        dq, sin_half, cos_half = attitude_error(_column4(body, i), _column4(target, i))
        results[0, i], results[1, i], results[2, i], results[3, i] = dq
        results[7, i] = 2.0 * half_angle(sin_half, cos_half)
    for i in bodies(lo, hi):
        w = (body[4, i], body[5, i], body[6, i])
        results[4, i], results[5, i], results[6, i] = scaled_rates(w, inv_max_rate)
        results[8, i] = vec.norm((work[4, i], work[5, i], work[6, i]))  # as the unfused step's
    # ... then the bookkeeping, for every body (the caller puts back a waiting body's
    # outputs: selects here would keep the loop from vectorising), with the constants in a
    # local tuple (read from their array in the loop, they could alias a write) ...
    k = (
        constants[0],
        constants[1],
        constants[2],
        constants[3],
        constants[4],
        constants[5],
        constants[6],
        constants[7],
    )
    inv_actions = 1.0 / 3.0
    hold_steps, max_steps = limits[0], limits[1]
    for i in bodies(lo, hi):
        angle, rate = results[7, i], results[8, i]
        effort = (acts[0, i] ** 2 + acts[1, i] ** 2 + acts[2, i] ** 2) * inv_actions
        live = stepped & (not waiting[i])
        reward, inside, success, terminated, truncated, steps[i], hold[i] = score(
            angle, rate, effort, k, inv_max_rate, live, steps[i], hold[i], hold_steps, max_steps
        )
        reward = select(stepped & restart & waiting[i], 0.0, reward)
        record(out, i, angle, rate, reward, inside, success, terminated, truncated)
    # ... and the observations, body by body (float32 rows of 7).
    for i in bodies(lo, hi):
        for c in range(7):
            obs[i, c] = results[c, i]


def _compile(step: Callable, parallel: bool) -> Callable:
    def control_period(
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
        stepped,
        constants,
        limits,
        steps,
        hold,
        obs,
        out,
        scratch,
        restart,
        sources,
        start,
    ):
        """One control period of every body not ``waiting`` ((N,) bool); without ``stepped``,
        only the observation and outputs of their current state (at reset: no action is read,
        nothing advances, the flags are false). With ``restart`` the waiting bodies start
        new episodes, drawn from their generators (``sources`` (2, N) uint64, every body's
        :func:`~rigidrot_gym.attitude.draws.sources`) under the start law ``start``
        (:func:`~rigidrot_gym.attitude.starts.start_constants`), and are observed there as
        at a reset; in a step, their reward is 0 (a vector env's autoreset).

        Arrays: ``action`` (N, 3) as given; ``max_torque`` (3, N) N·m; ``principal`` (4, N)
        principal frames B; ``target`` (4, N); ``moments`` (3, N); ``state`` (8, N) in principal
        axes; ``work`` (8, N) and ``params`` (SIZE, N) scratch; ``steps``, ``hold`` (N,) int64;
        ``obs`` (N, 7) float32; ``out`` (OUTPUTS, N) (rows ``REWARD`` …); ``scratch``
        (21, N): the integrator's statistics (rows 0-1), the clipped actions (2-4), the
        observation, pointing error and rate (5-13), the body-frame attitude and rates
        unless ``principal_axes`` (14-20).
        ``principal_axes``: every B is the identity.

        τ_p = B* (clip(a, −1, 1) ⊙ τ_max) B is held over the period; the method advances
        ``work`` (from ``state``) by ``dt`` in ``substeps``; every advanced state must be
        finite with a unit attitude; then the observation and :func:`score` are computed.

        Returns how many bodies not waiting have (a) a non-finite action (then nothing is
        staged), (b) an implicit step that did not converge and (c) an invalid staged state.
        All zero: ``work`` holds the new states (waiting bodies' as they were, fresh ones'
        starts) for the caller to swap with ``state``, fresh bodies' targets are drawn and
        their counters zero, and ``obs``, ``out``, ``steps`` and ``hold`` are written for
        every body (the caller puts back other waiting bodies' own); else nothing was
        written but ``work`` and scratch, no generator was drawn from, and the caller finds
        the first such body (:func:`first_failure`).
        """
        n = state.shape[1]
        blocks = (n + BLOCK - 1) // BLOCK
        # Three passes over blocks of bodies (in parallel in a kernel compiled with
        # ``parallel=True``): actions, then staging and checks, then, once every body is valid,
        # the commit. Failures are counted, not searched (an early exit stops a loop
        # vectorising); the caller looks for them only if there are any.
        nonfinite = 0
        for b in prange(blocks):
            lo, hi = b * BLOCK, min(n, (b + 1) * BLOCK)
            nonfinite += _actions(
                action, waiting, stepped, principal, principal_axes, max_torque, params, scratch, lo, hi
            )
        if nonfinite:
            return nonfinite, 0, 0
        failed = invalid = 0
        for b in prange(blocks):
            lo, hi = b * BLOCK, min(n, (b + 1) * BLOCK)
            counts = _stage(
                step, waiting, moments, state, work, params, opts, dt, substeps, stepped, scratch, lo, hi
            )
            failed += counts[0]
            invalid += counts[1]
        if failed or invalid:
            return 0, failed, invalid
        # Every check passed: the restarting bodies' new episodes can be drawn, in the
        # order of the bodies (two rows may share a generator).
        variates = np.empty(BASE_VARIATES)
        for i in range(n if restart else 0):
            if not waiting[i]:
                continue
            draw(sources, i, variates)
            q, w, goal = start_state(variates, start)
            if not principal_axes:  # in principal axes: q ⊗ B and B* ω B
                b = _column4(principal, i)
                q, w = qmul(q, b), qrotate_inv(b, w)
            work[0, i], work[1, i], work[2, i], work[3, i] = q
            work[4, i], work[5, i], work[6, i], work[7, i] = w + (0.0,)
            target[0, i], target[1, i], target[2, i], target[3, i] = goal
            steps[i], hold[i] = 0, 0
        for b in prange(blocks):
            lo, hi = b * BLOCK, min(n, (b + 1) * BLOCK)
            _commit(
                waiting,
                principal,
                principal_axes,
                target,
                work,
                stepped,
                restart,
                constants,
                limits,
                steps,
                hold,
                obs,
                out,
                scratch,
                lo,
                hi,
            )
        return 0, 0, 0

    # Numba's cache tells kernels apart by name, code and closure, not by their flags.
    control_period.__qualname__ += "_parallel" if parallel else ""
    return njit(cache=True, error_model="numpy", parallel=parallel)(control_period)


def first_failure(
    action: np.ndarray, waiting: np.ndarray, work: np.ndarray, scratch: np.ndarray
) -> tuple[str, int]:
    """After a control period that committed nothing: why, and the first body not
    ``waiting`` concerned (arrays as the kernel's). ``"action"``: its action is not finite
    (the kernel then staged nothing); else ``"convergence"``: its implicit step did not
    converge; else ``"state"``: its staged state is not a
    :func:`~rigidrot_gym.attitude.staging.valid_state` (evaluated on the whole batch at once)."""
    live = ~waiting
    bad = ~np.isfinite(action).all(axis=1) & live
    if bad.any():
        return "action", int(np.argmax(bad))
    bad = np.isinf(scratch[0]) & live
    if bad.any():
        return "convergence", int(np.argmax(bad))
    with np.errstate(invalid="ignore", over="ignore"):  # inf · 0 is how it spots non-finite values
        bad = ~valid_state(tuple(work)) & live
    return "state", int(np.argmax(bad))


@functools.cache
def kernel_of(step: Callable, parallel: bool = False) -> Callable:
    """The compiled ``control_period`` of the method whose step function is ``step``: one
    control period of every body not ``waiting`` (the arguments are described in its
    docstring); with ``parallel``, its passes over blocks of bodies run on numba's threads."""
    return _compile(step, parallel)

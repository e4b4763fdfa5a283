"""One compiled call per control period of a task with realism options.

The realism options (:attr:`~rigidrot_gym.attitude.scenario.Scenario.realistic`) are
compiled kernels over the bodies stepped (:mod:`~rigidrot_gym.attitude.actuation`,
:mod:`~rigidrot_gym.attitude.observation`, :mod:`~rigidrot_gym.attitude.assessment`).
Called one by one from Python, their dispatch and the glue between them cost more than
their arithmetic (a single env took 31 µs per step, twice Pendulum-v1's; 18 µs as one
call). They run in three compiled functions, in this order:

1. :func:`prepare`: the actions clipped, the actuator torques after delay, noise and wheel
   momentum limits, and the held torque parameters, in scratch (the state is only read);
2. the integration of the stepped bodies, staged in scratch, checked, then committed;
3. :func:`finish`: the wheel momenta, the random-walk disturbance and the pending action
   move on, and :func:`evaluate` computes the observations, rewards and flags.

With a method of this library, :func:`kernel_of` runs all three in one call, with the
method's own step (through :func:`~rigidrot_gym.physics.integrators.base.advance` and
the compiled torque model, as :meth:`~rigidrot_gym.physics.integrators.base.ComponentMethod.run`
does); with an engine's method, the batch calls :func:`prepare`, the engine and
:func:`finish`. Either way each body's arithmetic is the same, in the same order, so row i
of a batch repeats a single env bit for bit.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from numba import njit

from rigidrot_gym.attitude.actuation import actuate, advance_realism, clip_actions, load_torques
from rigidrot_gym.attitude.assessment import assess
from rigidrot_gym.attitude.observation import observe, observe_actuators, sense
from rigidrot_gym.attitude.staging import commit, first_invalid, gather
from rigidrot_gym.physics.integrators.base import STATE_SIZE, advance
from rigidrot_gym.physics.torques import model_potential, model_torque

# What a control period of :func:`kernel_of` returns first: it was committed, or why not.
DONE, ACTION, CONVERGENCE, STATE = range(4)


@njit(cache=True, error_model="numpy")
def prepare(action, actuation, loading):
    """Step 1 of a control period: ``action`` clipped
    (:func:`~rigidrot_gym.attitude.actuation.clip_actions`) for the bodies ``rows`` into
    ``clipped``, the first two of ``actuation``, the tuple of the arguments of
    :func:`~rigidrot_gym.attitude.actuation.actuate`; then the actuator torques and the held
    torque parameters (:func:`~rigidrot_gym.attitude.actuation.load_torques` with the
    tuple of its arguments ``loading``). Writes scratch only.

    Returns the first body whose action is not finite (then nothing is written), or -1.
    """
    bad = clip_actions(action, actuation[1], actuation[0])
    if bad >= 0:
        return bad
    actuate(*actuation)
    load_torques(*loading)
    return -1


@njit(cache=True, error_model="numpy")
def evaluate(
    rows,
    stepped,
    state,
    principal,
    principal_axes,
    target,
    max_rate,
    noisy,
    keys,
    steps,
    sensor_noise,
    bias,
    clipped,
    constants,
    hold,
    limits,
    wheel_momenta,
    max_momentum,
    pending,
    end_on_saturation,
    saturated,
    sensed,
    sensed_half,
    true_obs,
    half,
    obs,
    out,
):
    """Observation, reward and flags of the bodies ``rows`` (``stepped``: just advanced).
    With ``noisy`` sensors the observation comes from the state as they report it
    (:func:`~rigidrot_gym.attitude.observation.sense`, in ``sensed``) and the reward and
    flags from the true state (its observation goes to ``true_obs``); wheel momenta and the
    pending action end the observation, and a saturated wheel ends the episode if
    ``end_on_saturation`` (:func:`~rigidrot_gym.attitude.observation.observe_actuators`).
    ``state``, ``principal``, ``target`` and ``out`` are component-major ((8, N), (4, N),
    (4, N), (OUTPUTS, N)), as the batch stores them: their transposes here are one compiled type
    whatever N, where views made in Python would be C-contiguous for N = 1 and compile twice."""
    state, principal, target = state.T, principal.T, target.T
    if noisy:
        sense(state, principal, keys, steps, 1 if stepped else 0, sensor_noise, bias, rows, sensed)
        observe(sensed, principal, principal_axes, target, max_rate, rows, obs, sensed_half)
        observe(state, principal, principal_axes, target, max_rate, rows, true_obs, half)
    else:
        observe(state, principal, principal_axes, target, max_rate, rows, obs, half)
    assess(state, clipped, constants, rows, stepped, steps, hold, limits, half, out)
    ending = end_on_saturation if stepped else 0.0
    observe_actuators(rows, wheel_momenta, max_momentum, pending, ending, saturated, obs, out.T)


@njit(cache=True, error_model="numpy")
def finish(advancing, evaluation):
    """Step 3 of a committed control period: the realism state moves on
    (:func:`~rigidrot_gym.attitude.actuation.advance_realism` with the tuple of its
    arguments ``advancing``, whose second is the bodies ``rows``), then :func:`evaluate`
    of those bodies with the tuple of its arguments after ``rows`` and ``stepped``,
    ``evaluation``."""
    advance_realism(*advancing)
    evaluate(advancing[1], True, *evaluation)


def _compile(step: Callable) -> Callable:
    def control_period(
        rows,
        preparation,
        state,
        moments,
        params,
        opts,
        dt,
        substeps,
        staged,
        staged_moments,
        stats,
        finishing,
    ):
        """One control period of the bodies ``rows``: :func:`prepare` with the tuple of its
        arguments ``preparation`` (which writes the held torque parameters ``params``, row j
        for body ``rows[j]``); their states (``state`` (8, N), in
        principal axes, moments ``moments`` (3, N)) gathered into ``staged`` (N, 8) and
        ``staged_moments`` and advanced by ``dt`` in ``substeps`` under the held torques
        (the compiled torque model), with the method's ``opts`` and statistics ``stats``
        (N, 2); then checked, committed and :func:`finish` called with the tuple of its
        arguments ``finishing``.

        Returns (``DONE``, -1, 0) once committed; else nothing but scratch was written, and
        (``ACTION``, body, 0) for an action that is not finite, (``CONVERGENCE``, -1, count)
        for implicit steps that did not converge, (``STATE``, j, 0) for the first staged
        state that is not valid (row j of ``staged``, body ``rows[j]``).
        """
        bad = prepare(*preparation)
        if bad >= 0:
            return ACTION, bad, 0
        k = rows.size
        gather(rows, state.T, staged)
        gather(rows, moments.T, staged_moments)
        for j in range(k):
            stats[j, 0] = 0.0
            stats[j, 1] = 0.0
        work = staged[:k]
        advance(
            step,
            model_torque,
            model_potential,
            work.T,
            staged_moments[:k].T,
            params[:k].T,
            0.0,
            dt,
            substeps,
            0,
            substeps,
            opts,
            False,
            work[:0, :3].T,  # no angular momentum to renormalise with
            staged.reshape((1, STATE_SIZE, staged.shape[0]))[:0],  # no trajectory to record
            stats[:k].T,
            0,
            k,
        )
        failed = 0
        for j in range(k):
            failed += np.isinf(stats[j, 0])
        if failed:
            return CONVERGENCE, -1, failed
        bad = first_invalid(staged, k)
        if bad >= 0:
            return STATE, bad, 0
        commit(rows, staged, state.T)
        finish(*finishing)
        return DONE, -1, 0

    return njit(cache=True, error_model="numpy")(control_period)


@functools.cache
def kernel_of(step: Callable) -> Callable:
    """The compiled ``control_period`` of the method whose step function is ``step`` for a
    task with realism options (its arguments are described in its docstring)."""
    return _compile(step)

"""The integration of a control period: each body advanced by the library's method over
``dt`` in ``substeps`` sub-steps under the held torques, into a staging area, then checked.
A step either completes or changes nothing: the caller commits the staged states only once
every advanced state is finite with a unit attitude (:func:`valid_state`); a method that
diverges (a step too large for the motion) or does not converge changes nothing.

With a gyro, the period also integrates the body rates, ∫ω dt (what a rate-integrating
gyro measures), by the corrected trapezoid rule over the sub-steps of h: on each,

    ∫₀ʰ ω dt = h/2 (ω₀ + ω₁) + h²/12 (ω̇₀ − ω̇₁) + h⁵/720 ω⁽⁴⁾(ξ)

(the integral of the cubic Hermite interpolant of ω and ω̇ at the sub-step's ends: the
trapezoid rule with the first correction of the Euler–Maclaurin formula), of the fourth
order, as ``rk4``; ω̇ from Euler's equations I ω̇ = τ − ω × Iω
(:func:`~rigidrot_gym.physics.rotation.dynamics.angular_acceleration`) with the torque model the
method's stages evaluate. Over sub-steps under one torque law the ω̇ terms of neighbours
cancel, so only the ends of such a stretch (the period's, and the sub-step where a duty
cycle switches the magnetorquers on) evaluate a torque. An engine's method gives no state
within the period: there the rule spans the period (:func:`integrate_rates_over_period`)."""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.components import magnetorquers
from rigidrot_gym.physics.plumbing import jit
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.plumbing.validation import UNIT_TOLERANCE
from rigidrot_gym.physics.rotation import torques
from rigidrot_gym.physics.rotation.dynamics import angular_acceleration
from rigidrot_gym.physics.rotation.integrators.base import STATE_SIZE, advance


@jitable
def valid_state(x):
    """The state ``x`` (its 8 components) is finite (x · 0 is 0 for a finite x and NaN
    otherwise: no branch, so a loop over bodies vectorises) and its attitude a unit
    quaternion (every method renormalises it; a collapsed one, |q| → 0, comes from an
    overflow)."""
    nonfinite = (
        x[0] * 0.0 + x[1] * 0.0 + x[2] * 0.0 + x[3] * 0.0 + x[4] * 0.0 + x[5] * 0.0 + x[6] * 0.0 + x[7] * 0.0
    )
    norm2 = x[0] ** 2 + x[1] ** 2 + x[2] ** 2 + x[3] ** 2
    return (nonfinite == 0.0) & (abs(norm2 - 1.0) <= 2.0 * UNIT_TOLERANCE)


@jitable
def staged_valid(staged, i):
    """Staged body i is a :func:`valid_state`."""
    return valid_state(
        (staged[0, i], staged[1, i], staged[2, i], staged[3, i])
        + (staged[4, i], staged[5, i], staged[6, i], staged[7, i])
    )


@jitable
def stage(step, torque, read, call, bodies, work, lo, hi, rods_off, source, integral, substep):
    """Bodies ``lo`` … ``hi`` − 1 advanced into ``work.staged`` by the method's ``step``
    under the compiled torque model ``torque``, whose parameters of each body ``read``
    makes (:func:`~rigidrot_gym.physics.rotation.torques.reader`; every body without a step, and a waiting
    body, staged as it is; one that restarts in the call is left to the restart to
    stage), the magnetorquers' dipole off for the first ``rods_off``
    sub-steps (their duty cycle; None without one, which numba prunes); returns how many
    of them, stepped, did not converge and how many are not valid. The first sub-step
    reads the bodies from ``source`` (``bodies.state``) and writes them staged; with None,
    they are copied there first and advanced in place. With an ``integral`` ((3, N), a
    gyro's; None without one, pruned), ∫ω dt over the period into it (principal axes, rad;
    the module docstring's rule). With a ``substep`` hook (``substep(work, m, lo, hi)``, the
    torque terms that switch at sub-step boundaries; None without, pruned), the sub-steps
    are taken one at a time, each after the hook has set its torque."""
    staged, stats = work.staged, work.stats
    last = call.substeps if call.stepped else 0
    if source is None or last == 0:
        for c in range(STATE_SIZE):
            for i in jit.bodies(lo, hi):
                staged[c, i] = bodies.state[c, i]
    for i in jit.bodies(lo, hi):
        stats[0, i] = 0.0
        stats[1, i] = 0.0
    if integral is not None:
        for c in range(3):
            for i in jit.bodies(lo, hi):
                integral[c, i] = 0.0
    if substep is not None:
        for m in range(last):
            substep(work, m, lo, hi)
            _run(
                step, torque, read, call, bodies, work, m, m + 1, lo, hi, source if m == 0 else None, integral
            )
    elif (
        rods_off is not None and rods_off
    ):  # the sub-steps with the rods off, then the rest (bitwise one run)
        magnetorquers.switch_off(work.params, work.body, lo, hi)
        _run(step, torque, read, call, bodies, work, 0, min(rods_off, last), lo, hi, source, integral)
        magnetorquers.switch_on(work.params, work.body, lo, hi)
        _run(step, torque, read, call, bodies, work, rods_off, last, lo, hi, None, integral)
    else:
        _run(step, torque, read, call, bodies, work, 0, last, lo, hi, source, integral)
    failed = invalid = waiting = 0
    for i in jit.bodies(lo, hi):
        live = not call.waiting[i]
        waiting += not live
        failed += live & np.isinf(stats[0, i])
        invalid += live & (not staged_valid(staged, i))
    # A waiting body was advanced with no torque (a branch in the loops above would stop
    # them vectorising); it keeps its state, unless it restarts in this call, which stages
    # its new episode's state over it. A block without one skips the pass, which LLVM
    # vectorises with masked stores that cost as much as the copy.
    if waiting and not call.restart:
        for i in jit.bodies(lo, hi):
            if call.waiting[i]:
                for c in range(STATE_SIZE):
                    staged[c, i] = bodies.state[c, i]
    return failed, invalid


@jitable
def _run(step, torque, read, call, bodies, work, first, last, lo, hi, source, integral):
    """Sub-steps ``first`` … ``last`` − 1 (under one torque law) as :func:`_advance`; with
    an ``integral``, one at a time, each adding its part of ∫ω dt to it (None: pruned)."""
    if integral is None:
        _advance(step, torque, read, call, bodies, work, first, last, lo, hi, source)
        return
    if first >= last:
        return
    h = call.dt / call.substeps  # as advance() steps: sub-step m starts at m h
    start = work.staged if source is None else source
    _add_rates(integral, start, 0.5 * h, lo, hi)
    _add_acceleration(torque, read, bodies, work, integral, start, first * h, h * h / 12.0, lo, hi)
    for m in range(first, last):
        _advance(step, torque, read, call, bodies, work, m, m + 1, lo, hi, source if m == first else None)
        _add_rates(integral, work.staged, h if m + 1 < last else 0.5 * h, lo, hi)
    _add_acceleration(torque, read, bodies, work, integral, work.staged, last * h, -h * h / 12.0, lo, hi)


@jitable
def integrate_rates_over_period(torque, read, call, bodies, work, integral, lo, hi):
    """∫ω dt over the period of bodies ``lo`` … ``hi`` − 1 into ``integral`` (3, N) where an
    engine's method advanced them, which gives the state at the period's end only: the
    module docstring's rule over the period as one interval, h = Δt, from ``bodies.state``
    to ``work.staged`` (its error h⁵/720 ω⁽⁴⁾ against the engine's own motion)."""
    h = call.dt
    for c in range(3):
        for i in jit.bodies(lo, hi):
            integral[c, i] = 0.0
    _add_rates(integral, bodies.state, 0.5 * h, lo, hi)
    _add_rates(integral, work.staged, 0.5 * h, lo, hi)
    _add_acceleration(torque, read, bodies, work, integral, bodies.state, 0.0, h * h / 12.0, lo, hi)
    _add_acceleration(torque, read, bodies, work, integral, work.staged, h, -h * h / 12.0, lo, hi)


@jitable
def _add_rates(integral, x, weight, lo, hi):
    """integral += weight · ω of the bodies' states ``x``."""
    for c in range(3):
        for i in jit.bodies(lo, hi):
            integral[c, i] += weight * x[4 + c, i]


@jitable
def _add_acceleration(torque, read, bodies, work, integral, x, t, weight, lo, hi):
    """integral += weight · ω̇ of the bodies' states ``x`` at time ``t`` of the period."""
    m = bodies.moments
    for i in jit.bodies(lo, hi):
        q = (x[0, i], x[1, i], x[2, i], x[3, i])
        w = (x[4, i], x[5, i], x[6, i])
        tau = torque(t, q, w, read(work.params, i))
        a = angular_acceleration((m[0, i], m[1, i], m[2, i]), w, tau)
        integral[0, i] += weight * a[0]
        integral[1, i] += weight * a[1]
        integral[2, i] += weight * a[2]


@jitable
def _advance(step, torque, read, call, bodies, work, first, last, lo, hi, source):
    """Sub-steps ``first`` … ``last`` − 1 of the period of bodies ``lo`` … ``hi`` − 1 into
    ``work.staged``, the first from ``source`` (None: from ``work.staged``)."""
    staged = work.staged
    advance(
        step,
        torque,
        torques.model_potential,
        staged,
        bodies.moments,
        work.params,
        read,
        0.0,
        call.dt,
        call.substeps,
        first,
        last,
        call.options,
        False,
        None,  # no angular momentum to renormalise with
        None,  # no trajectory to record
        work.stats,
        lo,
        hi,
        source,
    )


def first_failure(
    action: np.ndarray, waiting: np.ndarray, staged: np.ndarray, stats: np.ndarray
) -> tuple[str, int]:
    """After a control period that committed nothing: why, and the first body not
    ``waiting`` concerned (``staged`` (8, N) and ``stats`` (2, N) as the period left
    them). ``"action"``: its action is not finite (then nothing was staged); else
    ``"convergence"``: its implicit step did not converge; else ``"state"``: its staged
    state is not a :func:`valid_state` (evaluated on the whole batch at once)."""
    live = ~waiting
    bad = ~np.isfinite(action).all(axis=1) & live
    if bad.any():
        return "action", int(np.argmax(bad))
    bad = np.isinf(stats[0]) & live
    if bad.any():
        return "convergence", int(np.argmax(bad))
    with np.errstate(invalid="ignore", over="ignore"):  # inf · 0 is how it spots non-finite values
        bad = ~valid_state(tuple(staged)) & live
    return "state", int(np.argmax(bad))


def divergence_error(method: str, dt: float, substeps: int, body: int, staged: np.ndarray) -> ValueError:
    """The error of a step whose result is not a valid state (nothing was committed)."""
    return ValueError(
        f"integrator {method!r} produced an invalid state (q = {staged[0:4].tolist()}, "
        f"omega = {staged[4:7].tolist()}) for env {body} with dt = {dt:g} s and substeps = {substeps}: "
        "the step is too large for this motion; lower dt or raise substeps (the env is unchanged)"
    )

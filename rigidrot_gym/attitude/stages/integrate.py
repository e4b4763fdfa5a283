"""Stage 4, integrate: the bodies advanced over the period by the method's own step,
staged, then checked.

Reads ``bodies.state`` and the held ``work.params`` (the magnetorquers' duty cycle from
``equipment.rods_off``); writes ``work.staged``, ``work.stats`` and, with a gyro, the body
rates integrated over the period (``work.rate_integral``). Where an engine advanced the
bodies, only that integral is left to compute."""

from __future__ import annotations

from collections.abc import Callable

from rigidrot_gym.attitude.components import integration
from rigidrot_gym.attitude.data import Features
from rigidrot_gym.attitude.stages import load
from rigidrot_gym.physics.plumbing.jit import jitable


def stage(step: Callable, torque: Callable, read: Callable, features: Features, parallel: bool) -> Callable:
    """``integrate(call, bodies, equipment, work, lo, hi)``: bodies ``lo`` … ``hi`` − 1
    staged by the method's ``step`` under the compiled ``torque`` model (each body's
    parameters by ``read``)
    (:func:`~rigidrot_gym.attitude.components.integration.stage`); returns how many did not
    converge and how many are not valid."""
    with_duty_cycle, with_gyro = features.duty_cycle, features.gyro
    substep = load.substeps(features)
    # One thread stages each body straight from its state; on threads that was slower than
    # a copy first (2 threads, 4096 envs: 12.1-12.2 ns per env-step against 11.2-11.7).
    from_states = not parallel

    @jitable
    def integrate(call, bodies, equipment, work, lo, hi):
        rods_off = equipment.rods_off if with_duty_cycle else None
        source = bodies.state if from_states else None
        integral = work.rate_integral if with_gyro else None  # what the gyro reads
        return integration.stage(
            step, torque, read, call, bodies, work, lo, hi, rods_off, source, integral, substep
        )

    return integrate


def rates(torque: Callable, read: Callable) -> Callable:
    """``rates(call, bodies, work, lo, hi)``: where an engine advanced bodies ``lo`` …
    ``hi`` − 1, their rates integrated over the period for the gyro
    (:func:`~rigidrot_gym.attitude.components.integration.integrate_rates_over_period`)."""

    @jitable
    def rates(call, bodies, work, lo, hi):
        integration.integrate_rates_over_period(torque, read, call, bodies, work, work.rate_integral, lo, hi)

    return rates

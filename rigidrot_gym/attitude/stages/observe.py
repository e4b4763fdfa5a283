"""Stage 10, observe: the components' own observation columns after the first seven, and
their flags, body by body in a pass of hooks
(:func:`~rigidrot_gym.attitude.stages.hooks.chain`), in the columns' order: wheels,
pending action, star tracker, Sun sensors, Sun, field (the field last, where controllers
read it); then a saturated wheel's end of the episode.

Reads the staged states and the components' state (in ``equipment``); writes the Sun and
the field at each body's new episode time (in ``equipment``), their columns of
``out.obs``, and, where a saturated wheel ends the episode, ``out.values`` and
``out.flags``."""

from __future__ import annotations

from collections.abc import Callable

from rigidrot_gym.attitude.components import (
    delay,
    evaluation,
    magnetic_field,
    magnetometer,
    star_tracker,
    sun_sensors,
    sunlight,
    wheels,
)
from rigidrot_gym.attitude.data import ESTIMATE, OBS_SIZE, SENSORS, Features
from rigidrot_gym.attitude.stages.hooks import chain
from rigidrot_gym.physics.plumbing.jit import jitable

# A hook is ``write(call, bodies, equipment, state, out, column, i)``: body i's columns from
# ``column`` on; returns the column after its own.


def _wheels(features: Features) -> Callable | None:
    if not features.wheels:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        wheels.observe(equipment, out.obs, i)  # the first columns after the seven
        return column + equipment.wheel_momentum.shape[1]

    return write


def _delay(features: Features) -> Callable | None:
    if not features.delay:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        delay.observe(equipment, out.obs, column, i)
        return column + equipment.pending.shape[1]

    return write


def _tracker(features: Features) -> Callable | None:
    if not features.star_tracker:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        star_tracker.observe(equipment, out.obs, column, i)
        return column + star_tracker.COLUMNS

    return write


def _sun_sensors(features: Features) -> Callable | None:
    if not features.sun_sensors:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        sun_sensors.observe(equipment, out.obs, column, i)
        return column + equipment.sun_sensors.shape[1]

    return write


def _sun(features: Features) -> Callable | None:
    if not features.sun:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        sunlight.update(equipment, call.dt * bodies.steps[i], i)  # at the episode time the counters reached
        sunlight.observe(equipment, state, bodies.principal, out.obs, column, i)
        return column + sunlight.COLUMNS

    return write


def _field(features: Features) -> Callable | None:
    if not features.magnetic_field:
        return None
    with_magnetometer = features.magnetometer
    read = with_magnetometer and features.observed in (SENSORS, ESTIMATE)

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        if not with_magnetometer:  # (the sensors have updated it already)
            magnetic_field.update(equipment, call.dt * bodies.steps[i], i)  # at the time the counters reached
        if read:
            magnetometer.observe(equipment, out.obs, column, i)
        else:
            magnetic_field.observe(equipment, state, bodies.principal, out.obs, column, i)
        return column + magnetic_field.COLUMNS

    return write


def _saturation(features: Features) -> Callable | None:
    if not features.end_on_saturation:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        if call.stepped:
            evaluation.end_on_saturation(equipment, out, i)
        return column

    return write


def _then(first: Callable, second: Callable) -> Callable:
    @jitable
    def both(call, bodies, equipment, state, out, column, i):
        after = first(call, bodies, equipment, state, out, column, i)
        return second(call, bodies, equipment, state, out, after, i)

    return both


HOOKS = (_wheels, _delay, _tracker, _sun_sensors, _sun, _field, _saturation)


def stage(features: Features) -> Callable | None:
    """``observe(call, bodies, equipment, state, out, lo, hi)``: the columns and flags of
    the components ``features`` enables, of bodies ``lo`` … ``hi`` − 1 at their staged
    ``state``; None where none has any."""
    write = chain((hook(features) for hook in HOOKS), _then, None)
    if write is None:
        return None

    @jitable
    def observe(call, bodies, equipment, state, out, lo, hi):
        for i in range(lo, hi):
            write(call, bodies, equipment, state, out, OBS_SIZE, i)

    return observe

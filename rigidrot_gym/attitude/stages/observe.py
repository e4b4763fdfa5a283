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
from rigidrot_gym.attitude.data import ESTIMATE, SENSORS, Features
from rigidrot_gym.attitude.stages.hooks import chain
from rigidrot_gym.physics.jit import jitable

# A hook is a pair: ``write(call, bodies, equipment, state, out, column, i)``, body i's
# columns from ``column`` on, and ``width(equipment)``, how many they are.


def _wheels(features: Features) -> tuple[Callable, Callable] | None:
    if not features.wheels:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        wheels.observe(equipment, out.obs, i)  # the first columns after the seven

    @jitable
    def width(equipment):
        return equipment.wheel_momentum.shape[1]

    return write, width


def _delay(features: Features) -> tuple[Callable, Callable] | None:
    if not features.delay:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        delay.observe(equipment, out.obs, column, i)

    @jitable
    def width(equipment):
        return equipment.pending.shape[1]

    return write, width


def _tracker(features: Features) -> tuple[Callable, Callable] | None:
    if not features.star_tracker:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        star_tracker.observe(equipment, out.obs, column, i)

    @jitable
    def width(equipment):
        return star_tracker.COLUMNS

    return write, width


def _sun_sensors(features: Features) -> tuple[Callable, Callable] | None:
    if not features.sun_sensors:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        sun_sensors.observe(equipment, out.obs, column, i)

    @jitable
    def width(equipment):
        return equipment.sun_sensors.shape[1]

    return write, width


def _sun(features: Features) -> tuple[Callable, Callable] | None:
    if not features.sun:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        sunlight.update(equipment, call.dt * bodies.steps[i], i)  # at the episode time the counters reached
        sunlight.observe(equipment, state, bodies.principal, out.obs, column, i)

    @jitable
    def width(equipment):
        return sunlight.COLUMNS

    return write, width


def _field(features: Features) -> tuple[Callable, Callable] | None:
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

    @jitable
    def width(equipment):
        return magnetic_field.COLUMNS

    return write, width


def _saturation(features: Features) -> tuple[Callable, Callable] | None:
    if not features.end_on_saturation:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        if call.stepped:
            evaluation.end_on_saturation(equipment, out, i)

    @jitable
    def width(equipment):
        return 0

    return write, width


def _then(first: tuple[Callable, Callable], second: tuple[Callable, Callable]) -> tuple[Callable, Callable]:
    write_first, width_first = first
    write_second, width_second = second

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        write_first(call, bodies, equipment, state, out, column, i)
        write_second(call, bodies, equipment, state, out, column + width_first(equipment), i)

    @jitable
    def width(equipment):
        return width_first(equipment) + width_second(equipment)

    return write, width


HOOKS = (_wheels, _delay, _tracker, _sun_sensors, _sun, _field, _saturation)


def stage(features: Features) -> Callable | None:
    """``observe(call, bodies, equipment, state, out, lo, hi)``: the columns and flags of
    the components ``features`` enables, of bodies ``lo`` … ``hi`` − 1 at their staged
    ``state``; None where none has any."""
    hooks = chain((hook(features) for hook in HOOKS), _then, None)
    if hooks is None:
        return None
    write, width = hooks

    @jitable
    def observe(call, bodies, equipment, state, out, lo, hi):
        column = out.obs.shape[1] - width(equipment)  # the components' columns are the last
        for i in range(lo, hi):
            write(call, bodies, equipment, state, out, column, i)

    return observe

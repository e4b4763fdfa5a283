"""Stage 6, advance: once the period is committed, the state the actuators and the
disturbances carry from one period to the next moves on, body by body, in a pass of hooks
(:func:`~rigidrot_gym.attitude.stages.hooks.chain`): the wheels' momenta, the disturbances'
random walk and the delay's pending action.

Reads ``work.commands`` and ``work.actions`` and the random walk's stream; writes the wheel
momenta and saturation flags, the disturbance torques and the pending actions (in
``equipment``), and, with the vectorising stream, the walk's normals into
``work.normals``."""

from __future__ import annotations

from collections.abc import Callable

from rigidrot_gym.attitude.components import delay, disturbances, wheels
from rigidrot_gym.attitude.data import Features
from rigidrot_gym.attitude.stages import FIRST_STREAM
from rigidrot_gym.attitude.stages.hooks import chain
from rigidrot_gym.attitude.variates import DISTURBANCE_PAIRS, STEP_PAIRS, block_normals
from rigidrot_gym.physics.plumbing.jit import jitable

# Each hook is ``hook(call, bodies, equipment, work, walk, lo, i)`` for body i, of a block
# from ``lo`` whose random walk's normals (vectorising stream) are ``walk``.


def _wheels(features: Features) -> Callable | None:
    if not features.wheels:
        return None
    real = features.real_wheels

    @jitable
    def momenta(call, bodies, equipment, work, walk, lo, i):
        wheels.advance(equipment, work, call.dt, real, i)

    return momenta


def _walk(features: Features) -> Callable | None:
    if not features.random_walk:
        return None
    fast_noise = features.fast_noise

    @jitable
    def walk_on(call, bodies, equipment, work, walk, lo, i):
        if fast_noise:
            xi = (walk[0, i - lo], walk[1, i - lo], walk[2, i - lo])
        else:
            xi = disturbances.normals(equipment.keys[i], bodies.steps[i])
        disturbances.advance(equipment, xi, call.dt, i)

    return walk_on


def _delay(features: Features) -> Callable | None:
    if not features.delay:
        return None

    @jitable
    def pending(call, bodies, equipment, work, walk, lo, i):
        delay.advance(equipment, work, i)

    return pending


def _then(first: Callable, second: Callable) -> Callable:
    @jitable
    def both(call, bodies, equipment, work, walk, lo, i):
        first(call, bodies, equipment, work, walk, lo, i)
        second(call, bodies, equipment, work, walk, lo, i)

    return both


@jitable
def _nothing(call, bodies, equipment, work, walk, lo, i):
    pass


def stage(features: Features) -> Callable:
    """``advance(call, bodies, equipment, work, lo, hi)``: of each body ``lo`` … ``hi`` − 1
    that stepped, its wheels', random walk's and delay's state moved on, in that order."""
    with_walk, fast_noise = features.random_walk, features.fast_noise
    each = chain((_wheels(features), _walk(features), _delay(features)), _then, _nothing)

    @jitable
    def advance(call, bodies, equipment, work, lo, hi):
        walk = work.normals[: 4 if with_walk and fast_noise else 0]
        if with_walk and fast_noise and call.stepped:
            block_normals(
                equipment.keys, FIRST_STREAM, bodies.steps, 0, DISTURBANCE_PAIRS, STEP_PAIRS, walk, lo, hi
            )
        for i in range(lo, hi):
            if call.stepped and not call.waiting[i]:
                each(call, bodies, equipment, work, walk, lo, i)

    return advance

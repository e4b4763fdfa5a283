"""Stage 6, advance: once the period is committed, the state the actuators and the
disturbances carry from one period to the next moves on, body by body, in a pass of the
hooks the components declare (:func:`~rigidrot_gym.attitude.stages.hooks.declared`): the
wheels' momenta, the delay's pending action and the disturbances' random walk.

Reads ``work.commands`` and ``work.actions`` and the random walk's stream; writes the wheel
momenta and saturation flags, the disturbance torques and the pending actions (in
``equipment``), and, with the vectorising stream, the walk's normals into
``work.normals``."""

from __future__ import annotations

from collections.abc import Callable

from rigidrot_gym.attitude.data import Features
from rigidrot_gym.attitude.stages import FIRST_STREAM
from rigidrot_gym.attitude.stages.hooks import chain, declared
from rigidrot_gym.attitude.variates import DISTURBANCE_PAIRS, STEP_PAIRS, block_normals
from rigidrot_gym.physics.plumbing.jit import jitable

# Each hook is ``hook(call, bodies, equipment, work, walk, lo, i)`` for body i, of a block
# from ``lo`` whose random walk's normals (vectorising stream) are ``walk``.


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
    that stepped, the state of the components that carry one moved on, in the list's
    order (the wheels', the delay's and the disturbances' random walk)."""
    with_walk, fast_noise = features.random_walk, features.fast_noise
    each = chain(declared("advance", features), _then, _nothing)

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

"""Stage 10, observe: the components' own observation columns after the first seven, and
their flags, body by body in a pass of the hooks they declare
(:func:`~rigidrot_gym.attitude.stages.hooks.declared`), in the list's order, which is the
columns' (the wheels', the pending action, the star tracker's, the Sun sensors', the Sun,
the field last, where controllers read it); then a saturated wheel's end of the episode.

Reads the staged states and the components' state (in ``equipment``); writes what the
hooks write (the Sun and the field at each body's new episode time, in ``equipment``),
their columns of ``out.obs``, and, where a saturated wheel ends the episode,
``out.values`` and ``out.flags``."""

from __future__ import annotations

from collections.abc import Callable

from rigidrot_gym.attitude.components import evaluation
from rigidrot_gym.attitude.data import OBS_SIZE, Features
from rigidrot_gym.attitude.stages.hooks import chain, declared
from rigidrot_gym.physics.plumbing.jit import jitable

# A hook is ``write(call, bodies, equipment, state, out, column, i)``: body i's columns from
# ``column`` on; returns the column after its own.


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


def stage(features: Features) -> Callable | None:
    """``observe(call, bodies, equipment, state, out, lo, hi)``: the columns and flags of
    the components ``features`` enables, of bodies ``lo`` … ``hi`` − 1 at their staged
    ``state``; None where none has any."""
    write = chain((*declared("observe", features), _saturation(features)), _then, None)
    if write is None:
        return None

    @jitable
    def observe(call, bodies, equipment, state, out, lo, hi):
        for i in range(lo, hi):
            write(call, bodies, equipment, state, out, OBS_SIZE, i)

    return observe

"""Stage 1, act: the agent's action read for the period.

Reads ``call.action`` (and, for ideal torquers, ``bodies.limits`` and the body frames);
writes the clipped actions into ``work.actions`` and, for ideal torquers, the held body
torque into ``work.params``."""

from __future__ import annotations

from collections.abc import Callable

from rigidrot_gym.attitude.components import actions, torquers
from rigidrot_gym.attitude.data import Features
from rigidrot_gym.physics.plumbing.jit import jitable


def stage(features: Features) -> Callable:
    """``act(call, bodies, frames, work, lo, hi)`` of bodies ``lo`` … ``hi`` − 1, returning
    how many stepped bodies have a non-finite action: without realism, ideal torquers hold
    their body torque (:func:`~rigidrot_gym.attitude.components.torquers.hold`, which is
    also the whole of the loads), else the action clipped for the actuators
    (:func:`~rigidrot_gym.attitude.components.actions.clip`)."""
    realistic = features.realistic

    @jitable
    def act(call, bodies, frames, work, lo, hi):
        if not realistic:
            return torquers.hold(call, bodies, frames, work, lo, hi)
        return actions.clip(call, work, lo, hi)

    return act

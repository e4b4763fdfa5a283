"""One control period of actuation delay: each action acts one period late (the first
period of an episode applies zero), and the observation ends with the pending action,
which keeps the state Markov."""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.components.declaration import Column, Component, Feature, State
from rigidrot_gym.physics.plumbing.jit import jitable


@jitable
def advance(equipment, work, i):
    """End of body i's committed period: this period's clipped action becomes the pending one."""
    for k in range(work.actions.shape[0]):
        equipment.pending[i, k] = work.actions[k, i]


@jitable
def observe(equipment, obs, first, i):
    """Body i's pending action into the observation's columns from ``first`` on (after the
    wheels', before the field's)."""
    for k in range(equipment.pending.shape[1]):
        obs[i, first + k] = equipment.pending[i, k]


def _advance_of(features):
    """The advance's hook: body i's clipped action becomes its pending one."""
    if not features.delay:
        return None

    @jitable
    def pending(call, bodies, equipment, work, walk, lo, i):
        advance(equipment, work, i)

    return pending


def _observe_of(features):
    """The observation's hook: body i's pending action."""
    if not features.delay:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        observe(equipment, out.obs, column, i)
        return column + equipment.pending.shape[1]

    return write


def _reset(episode) -> None:
    episode.equipment.pending[episode.rows] = 0.0


COMPONENT = Component(
    name="delay",
    summary="each action acts one control period late; the observation ends with the pending one",
    on=lambda s: s.actuation_delay,
    switch="actuator.delay",
    features=(Feature("delay", lambda s, f: s.actuation_delay, "each action acts one control period late"),),
    state=(
        State(
            "pending",
            "(N, n) the action a delayed actuator applies next period",
            lambda b: np.zeros((b.bodies, b.actuators.count if b.scenario.actuation_delay else 0)),
            lambda f: f.delay,
        ),
    ),
    reset=_reset,
    columns=(
        Column(
            "pending_action",
            "the action not yet applied",
            -1.0,
            1.0,
            lambda s, actuators: actuators.count if s.actuation_delay else 0,
            "one per actuator",
            "``actuation_delay``",
            unit="the action's (a fraction of each actuator's limit)",
        ),
    ),
    advance=_advance_of,
    observe=_observe_of,
)

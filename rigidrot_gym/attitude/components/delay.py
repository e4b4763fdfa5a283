"""One control period of actuation delay: each action acts one period late (the first
period of an episode applies zero), and the observation ends with the pending action,
which keeps the state Markov."""

from __future__ import annotations

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

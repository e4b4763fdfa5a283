"""The action of n actuators (wheel motors, or torquers with realism options): each entry
clipped to [-1, 1], a fraction of its actuator's limit."""

from __future__ import annotations

import numpy as np

from rigidrot_gym.physics.plumbing import jit
from rigidrot_gym.physics.plumbing.jit import jitable


@jitable
def clip(call, work, lo, hi):
    """clip(a, −1, 1) of bodies ``lo`` … ``hi`` − 1 into ``work.actions`` (0 for a body
    not stepped); returns how many stepped bodies have a non-finite action."""
    action, clipped = call.action, work.actions
    nonfinite = 0
    for i in jit.bodies(lo, hi):
        live = call.stepped & (not call.waiting[i])
        for k in range(action.shape[1]):
            x = action[i, k]
            nonfinite += live & (not np.isfinite(x))
            clipped[k, i] = min(max(x, -1.0), 1.0) if live else 0.0
    return nonfinite

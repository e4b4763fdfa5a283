"""The autoreset inside the control period: the waiting bodies' new episodes, drawn from
their own generators once every check of the period has passed (so a period that raises
draws nothing), in the order of the bodies (two rows may share a generator)."""

from __future__ import annotations

from rigidrot_gym.attitude.draws import draw
from rigidrot_gym.attitude.starts import start_state
from rigidrot_gym.physics.jit import jitable
from rigidrot_gym.physics.quaternion import qmul, qrotate_inv


@jitable
def restart(call, bodies, law, work):
    """Every waiting body's start state into ``work.staged`` (principal axes: q ⊗ B, B* ω B),
    its target and zero counters into ``bodies``, under the start ``law``; its variates
    drawn into its column of ``work.variates``."""
    staged = work.staged
    for i in range(call.waiting.shape[0]):
        if not call.waiting[i]:
            continue
        variates = work.variates[:, i]
        draw(bodies.sources, i, variates)
        q, w, goal = start_state(variates, law)
        if not call.principal_axes:
            p = bodies.principal
            b = (p[0, i], p[1, i], p[2, i], p[3, i])
            q, w = qmul(q, b), qrotate_inv(b, w)
        staged[0, i], staged[1, i], staged[2, i], staged[3, i] = q
        staged[4, i], staged[5, i], staged[6, i], staged[7, i] = w + (0.0,)
        t = bodies.target
        t[0, i], t[1, i], t[2, i], t[3, i] = goal
        bodies.steps[i], bodies.hold[i] = 0, 0

"""The autoreset inside the control period: the waiting bodies' new episodes, drawn from
their own generators once every check of the period has passed (so a period that raises
draws nothing), in the order of the bodies (two rows may share a generator)."""

from __future__ import annotations

from rigidrot_gym.attitude.draws import draw
from rigidrot_gym.attitude.starts import start_state
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation.quaternion import qmul, qrotate_inv


@jitable
def restart(call, bodies, frames, law, work):
    """Every waiting body's start state into ``work.staged`` (principal axes: q ⊗ B, B* ω B,
    B its frame in ``frames``, (4, N); None where every frame is principal, which numba
    prunes), its target and zero counters into ``bodies``, under the start ``law``; its
    variates drawn into its column of ``work.variates``."""
    staged = work.staged
    for i in range(call.waiting.shape[0]):
        if not call.waiting[i]:
            continue
        variates = work.variates[:, i]
        draw(bodies.sources, i, variates)
        q, w, goal = start_state(variates, law)
        if frames is not None:
            b = (frames[0, i], frames[1, i], frames[2, i], frames[3, i])
            q, w = qmul(q, b), qrotate_inv(b, w)
        staged[0, i], staged[1, i], staged[2, i], staged[3, i] = q
        staged[4, i], staged[5, i], staged[6, i], staged[7, i] = w + (0.0,)
        t = bodies.target
        t[0, i], t[1, i], t[2, i], t[3, i] = goal
        bodies.steps[i], bodies.hold[i] = 0, 0

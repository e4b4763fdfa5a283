"""Stage 5, restart: the autoreset's draws, once every check of the integration has passed
(a failed period must change nothing the caller keeps).

Reads ``call.waiting`` and each waiting body's generator (``bodies.sources``) under the
start law; writes its new episode's state into ``work.staged``, its target and zero
counters into ``bodies`` and its uniforms into ``work.variates``."""

from __future__ import annotations

from collections.abc import Callable

from rigidrot_gym.attitude.components import restart as restarts
from rigidrot_gym.physics.plumbing.jit import jitable


def stage() -> Callable:
    """``restart(call, bodies, frames, law, work)``: every waiting body's new episode where
    the call restarts (:func:`~rigidrot_gym.attitude.components.restart.restart`), over the
    whole batch at once (its draws do not vectorise)."""

    @jitable
    def restart(call, bodies, frames, law, work):
        if call.restart:
            restarts.restart(call, bodies, frames, law, work)

    return restart

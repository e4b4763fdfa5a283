"""Stage 9, evaluate: the observation, the reward and the flags of the staged states, one
implementation for every path (:mod:`~rigidrot_gym.attitude.components.evaluation`); then
the components' own columns (stage 10, :mod:`~rigidrot_gym.attitude.stages.observe`).

Reads ``work.staged``, what the sensors showed (``work.sensed``), the bodies' targets,
counters and frames, the rules and, with a moving target, its rate; writes the
observation's first seven columns of ``out.obs`` (from ``work.sensed`` where the agent
observes sensors or an estimate, else from the truth), ``out.values`` and ``out.flags``
(always from the truth), and the bodies' counters of steps held inside the tolerance."""

from __future__ import annotations

from collections.abc import Callable

from rigidrot_gym.attitude.components import evaluation, targets
from rigidrot_gym.attitude.data import ESTIMATE, SENSORS, Features
from rigidrot_gym.physics.plumbing.jit import jitable


def stage(features: Features, columns: Callable | None) -> Callable:
    """``evaluate(call, bodies, frames, equipment, rules, work, out, lo, hi)`` of bodies
    ``lo`` … ``hi`` − 1: the observation shown and the truth's reward and flags, then
    ``columns`` (:func:`~rigidrot_gym.attitude.stages.observe.stage`; None for none)."""
    with_moving_target, with_energy = features.moving_target, features.energy_reward
    with_sensed = features.sensors or features.observed in (SENSORS, ESTIMATE)
    with_columns = columns is not None

    @jitable
    def evaluate(call, bodies, frames, equipment, rules, work, out, lo, hi):
        state = work.staged
        if with_sensed:  # the observation shows what the sensors report
            body = evaluation.body_frame(frames, work.sensed, work.body, lo, hi)
            evaluation.observe(bodies, rules, work.sensed, body, work, lo, hi)
            if with_moving_target:
                targets.relative_rates(body, rules, equipment, work, lo, hi)
            evaluation.write_observation(work.results, out.obs, lo, hi)
        body = evaluation.body_frame(frames, state, work.body, lo, hi)
        evaluation.observe(bodies, rules, state, body, work, lo, hi)
        if with_moving_target:
            targets.relative_rates(body, rules, equipment, work, lo, hi)
        evaluation.assess(call, bodies, rules, work, out, lo, hi)
        if with_energy:
            evaluation.reward_dissipation(call, bodies, rules, work, out, lo, hi)
        if not with_sensed:
            evaluation.write_observation(work.results, out.obs, lo, hi)
        if with_columns:
            columns(call, bodies, equipment, state, out, lo, hi)

    return evaluate

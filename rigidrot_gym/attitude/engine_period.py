"""A control period whose integration is an engine's (PyBullet, MuJoCo, Basilisk).

An engine's method is not a compiled step: the pipeline is compiled in two parts
(:func:`~rigidrot_gym.attitude.pipeline.kernel_of`, ``"before"`` and ``"after"``) and the
engine advances the stepped bodies between them, holding each body's torque parameters
over the period, as the library's methods do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from rigidrot_gym.attitude import data
from rigidrot_gym.attitude.components.integration import divergence_error, valid_state
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.physics.rotation import torques
from rigidrot_gym.physics.rotation.integrators.base import Method


def run(
    calls: tuple[Callable, Callable],
    method: Method,
    scenario: Scenario,
    opts: Any,
    carried: data.Carried,
    types: tuple,
    args: tuple,
    model: Callable,
) -> tuple[int, int, int]:
    """The period of the engine ``method`` (with its packed options ``opts``, the batch's
    compiled torque ``model``: :func:`~rigidrot_gym.attitude.stages.load.model`) on the
    arguments ``args`` of the pipeline's two parts, whose direct calls ``calls`` take the
    key ``types`` (:meth:`~rigidrot_gym.attitude.transport.Transport._run`): the pipeline
    up to the loads, the engine over the stepped bodies (gathered), their check, then the
    pipeline from the commit on. Returns the kernels' failure counts (zeros once it
    completed).

    Raises:
        ValueError: if the engine's result is not a valid state, naming the body.
    """
    before, after = calls
    counts = before(types, args)
    if any(counts):
        return counts
    _, waiting, stepped = args[0][:3]
    np.copyto(carried.staged, carried.state)
    rows = np.flatnonzero(~waiting) if stepped else np.zeros(0, dtype=np.int64)
    if rows.size:
        state = np.ascontiguousarray(carried.state[:, rows].T)
        moments = np.ascontiguousarray(carried.moments[:, rows].T)
        # the engine evaluates the batch's own model (with its components' terms) in numpy
        loads = torques.Loads(np.ascontiguousarray(carried.params[:, rows].T), model=model)
        traj, stats = Method.buffers(rows.size, 1, record=False)
        s = scenario
        method.run(state, moments, loads, 0.0, s.dt, 1, s.substeps, opts, False, traj, stats)
        valid = valid_state(tuple(state.T))
        if not valid.all():
            bad = int(np.argmin(valid))
            raise divergence_error(s.integrator, s.dt, s.substeps, int(rows[bad]), state[bad])
        carried.staged[:, rows] = state.T
    return after(types, args)

"""Ideal torquers: the action a ∈ [-1, 1]³ (clipped) is the body torque τ = a ⊙ τ_max,
held over the control period. The plain task's actuators, in one pass over a block of
bodies that vectorises (no branch, no inner loop)."""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.components.declaration import Component
from rigidrot_gym.attitude.settings import REQUIRED, Table, flag, fraction, setting, vector
from rigidrot_gym.physics.plumbing import jit
from rigidrot_gym.physics.plumbing.jit import jitable, select
from rigidrot_gym.physics.rotation import torques
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qrotate_inv


class Actuator(Table, key="actuator"):
    """Ideal torquers, one per body axis (or the wheels' motors, with ``[wheels]``)."""

    max_torque: np.ndarray = setting(
        REQUIRED, check=vector(positive=True), unit="N·m", doc="torque limit per body axis"
    )
    noise: float = setting(
        0.0,
        check=fraction,
        flat="actuator_noise",
        switch=True,
        doc="relative std of a multiplicative error on each torque (then clipped to the limit)",
    )
    delay: bool = setting(
        False,
        check=flag,
        flat="actuation_delay",
        switch=True,
        doc="apply each action one control period late (the first period applies zero)",
    )


@jitable
def column3(a, i):
    """Column i of a (3, N) array as a 3-tuple."""
    return (a[0, i], a[1, i], a[2, i])


@jitable
def column4(a, i):
    """Column i of a (4, N) array as a 4-tuple."""
    return (a[0, i], a[1, i], a[2, i], a[3, i])


@jitable
def hold(call, bodies, frames, work, lo, hi):
    """τ_p = B* (clip(a, −1, 1) ⊙ τ_max) B of bodies ``lo`` … ``hi`` − 1 into the held
    torque parameters (``work.params``, principal axes) and the clipped actions into
    ``work.actions``, B the body's frame (``frames``, (4, N); None where every frame is
    principal, which numba prunes); a body not stepped (waiting, or no step at all) holds
    a = 0. Returns how many stepped bodies have a non-finite action."""
    acts, params, action = work.actions, work.params, call.action
    nonfinite = 0
    if action.shape[1] != 3:
        # Never taken (the batch checks the shape), but it tells LLVM that a row of
        # ``action`` is three numbers: with that constant stride the loop vectorises. Were
        # it taken, every body would count as not finite: the caller raises.
        return hi - lo
    for i in jit.bodies(lo, hi):
        # A waiting body's action may be anything (and without a step every action): it is
        # read but not used.
        live = call.stepped & (not call.waiting[i])
        x, y, z = action[i, 0], action[i, 1], action[i, 2]
        nonfinite += live & (not (np.isfinite(x) & np.isfinite(y) & np.isfinite(z)))
        a = (
            select(live, min(max(x, -1.0), 1.0), 0.0),
            select(live, min(max(y, -1.0), 1.0), 0.0),
            select(live, min(max(z, -1.0), 1.0), 0.0),
        )
        acts[0, i], acts[1, i], acts[2, i] = a
        tau = vec.mul(a, column3(bodies.limits, i))
        if frames is not None:
            tau = qrotate_inv(column4(frames, i), tau)
        params[torques.BODY, i], params[torques.BODY + 1, i], params[torques.BODY + 2, i] = tau
    return nonfinite


COMPONENT = Component(
    name="torquers",
    summary="ideal torquers about the body axes, τ = a ⊙ τ_max (the ``[actuator]`` table, which "
    "delay and noise read too)",
    table=Actuator,
    on=lambda s: not s.wheels and not s.magnetorquers,
    switch="actuator.max_torque",
)

"""Disturbance torques in the body frame: a constant torque in a direction drawn per
episode, and a slowly varying random torque (an Ornstein–Uhlenbeck process), both held
over each control period."""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude import variates
from rigidrot_gym.attitude.components.declaration import Component, Draw, Feature, State
from rigidrot_gym.attitude.settings import Table, non_negative, positive, setting
from rigidrot_gym.attitude.variates import counter_normals
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import vector as vec


class Disturbance(Table, key="disturbance"):
    """External torques on the body, in the body frame."""

    constant: float = setting(
        0.0,
        check=non_negative,
        unit="N·m",
        flat="disturbance_constant",
        switch=True,
        doc="magnitude of a constant torque in a direction drawn per episode",
    )
    random_walk: float = setting(
        0.0,
        check=non_negative,
        unit="N·m",
        flat="disturbance_random_walk",
        switch=True,
        doc="per-axis std of a slowly varying (Ornstein–Uhlenbeck) torque",
    )
    correlation_time: float = setting(
        300.0, check=positive, unit="s", flat="disturbance_correlation_time", doc="of that torque"
    )


@jitable
def ornstein_uhlenbeck(torque, std, correlation_time, dt, normals):
    """The torque (scalars or arrays) of an Ornstein–Uhlenbeck process dt later, sampled exactly:
    d ← a d + σ √(1 − a²) ξ with a = exp(−dt/τ), ξ standard ``normals``, so that
    the stationary per-axis standard deviation is ``std`` σ and the autocorrelation
    exp(−|Δt|/τ) (Gillespie, Phys. Rev. E 54, 1996, eq. 1.8)."""
    a = np.exp(-dt / correlation_time)
    return a * torque + std * np.sqrt(1.0 - a * a) * normals


@jitable
def torque(equipment, i):
    """Body i's disturbance torque over the period: constant plus random walk, N·m."""
    return vec.add(vec.row3(equipment.disturbances[0], i), vec.row3(equipment.disturbances[1], i))


@jitable
def normals(key, step):
    """The three normals of a body's counter-based stream (``key``) that drive its random
    walk at episode step ``step``."""
    first, pairs = variates.DISTURBANCE_PAIRS, variates.STEP_PAIRS
    xy = counter_normals(key, step, first, pairs)
    return (xy[0], xy[1], counter_normals(key, step, first + 1, pairs)[0])


@jitable
def advance(equipment, xi, dt, i):
    """End of body i's committed period: the random walk one period on, driven by three
    standard normals ``xi`` (its stream's at its episode step: :func:`normals`)."""
    std, correlation_time = equipment.walk_std, equipment.correlation_time
    walk = equipment.disturbances[1]
    for k in range(3):
        walk[i, k] = ornstein_uhlenbeck(walk[i, k], std, correlation_time, dt, xi[k])


def _load_of(features):
    """The loads' hook: body i's disturbance torque, held over the period."""
    if not features.disturbances:
        return None

    @jitable
    def load(bodies, equipment, work, dt, i):
        return torque(equipment, i)

    return load


def _advance_of(features):
    """The advance's hook: body i's random walk one period on, from its stream's normals
    (with the vectorising stream, ``walk``: the block's, drawn by the stage)."""
    if not features.random_walk:
        return None
    fast_noise = features.fast_noise

    @jitable
    def walk_on(call, bodies, equipment, work, walk, lo, i):
        if fast_noise:
            xi = (walk[0, i - lo], walk[1, i - lo], walk[2, i - lo])
        else:
            xi = normals(equipment.keys[i], bodies.steps[i])
        advance(equipment, xi, call.dt, i)

    return walk_on


def _reset(episode) -> None:
    s, e, rows = episode.batch.scenario, episode.equipment, episode.rows
    constant = episode.draws["disturbances.constant"]
    direction = constant / np.linalg.norm(constant, axis=-1, keepdims=True)
    e.disturbances[0, rows] = s.disturbance_constant * direction
    e.disturbances[1, rows] = (
        s.disturbance_random_walk * episode.draws["disturbances.walk"]
    )  # its stationary law


COMPONENT = Component(
    name="disturbances",
    summary="a constant torque in a direction drawn per episode and a random-walk "
    "(Ornstein–Uhlenbeck) torque",
    table=Disturbance,
    on=lambda s: bool(s.disturbance_constant or s.disturbance_random_walk),
    switch="[disturbance]",
    features=(
        Feature(
            "disturbances",
            lambda s, f: bool(s.disturbance_constant or s.disturbance_random_walk),
            "constant and random-walk disturbance torques",
        ),
        Feature(
            "random_walk",
            lambda s, f: bool(s.disturbance_random_walk),
            "the random walk moves on every period",
        ),
    ),
    state=(
        State(
            "disturbances",
            # one array: the loads add them; separate names for its rows would be views, which copies lose
            "(2, N, 3) constant [0] and random-walk [1] torques, body frame, N·m",
            lambda b: np.zeros((2, b.bodies, 3)),
            lambda f: f.disturbances,
        ),
        State(
            "walk_std",
            "random-walk disturbance: per-axis std, N·m",
            lambda b: float(b.scenario.disturbance_random_walk),
            lambda f: f.random_walk,
        ),
        State(
            "correlation_time",
            "and its correlation time, s",
            lambda b: float(b.scenario.disturbance_correlation_time),
            lambda f: f.random_walk,
        ),
    ),
    reset=_reset,
    realism_block=True,
    draws=(Draw("constant", 3, normal=True), Draw("walk", 3, normal=True)),
    step_pairs=2,
    noisy="random_walk",
    load=_load_of,
    advance=_advance_of,
)

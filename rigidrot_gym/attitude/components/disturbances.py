"""Disturbance torques in the body frame: a constant torque in a direction drawn per
episode, and a slowly varying random torque (an Ornstein–Uhlenbeck process), both held
over each control period."""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.variates import DISTURBANCE_PAIRS, STEP_PAIRS, counter_normals
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import vector as vec


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
    xy = counter_normals(key, step, DISTURBANCE_PAIRS, STEP_PAIRS)
    return (xy[0], xy[1], counter_normals(key, step, DISTURBANCE_PAIRS + 1, STEP_PAIRS)[0])


@jitable
def advance(equipment, xi, dt, i):
    """End of body i's committed period: the random walk one period on, driven by three
    standard normals ``xi`` (its stream's at its episode step: :func:`normals`)."""
    std, correlation_time = equipment.walk_std, equipment.correlation_time
    walk = equipment.disturbances[1]
    for k in range(3):
        walk[i, k] = ornstein_uhlenbeck(walk[i, k], std, correlation_time, dt, xi[k])

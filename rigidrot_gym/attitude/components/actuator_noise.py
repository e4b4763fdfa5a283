"""Multiplicative actuator noise: each commanded torque u becomes u (1 + σ ξ), ξ a standard
normal of the body's counter-based stream (:mod:`~rigidrot_gym.attitude.variates`), then
clipped to the actuator's limit."""

from __future__ import annotations

from rigidrot_gym.attitude.variates import ACTUATOR_PAIRS, STEP_PAIRS, counter_normals
from rigidrot_gym.physics.plumbing.jit import jitable


@jitable
def normals(key, step, k):
    """The normal pair that actuators k and k + 1 (k even) of a body draw at its ``step``."""
    return counter_normals(key, step, ACTUATOR_PAIRS + k // 2, STEP_PAIRS)


@jitable
def perturb(u, limit, std, xi):
    """u (1 + σ ξ) clipped to ±``limit``."""
    u = u * (1.0 + std * xi)
    return min(max(u, -limit), limit)

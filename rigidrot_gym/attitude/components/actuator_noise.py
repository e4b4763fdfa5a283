"""Multiplicative actuator noise: each commanded torque u becomes u (1 + σ ξ), ξ a standard
normal of the body's counter-based stream (:mod:`~rigidrot_gym.attitude.variates`), then
clipped to the actuator's limit."""

from __future__ import annotations

from rigidrot_gym.attitude import variates
from rigidrot_gym.attitude.components.declaration import Component, Feature, State
from rigidrot_gym.attitude.variates import counter_normals
from rigidrot_gym.physics.plumbing.jit import jitable


@jitable
def normals(key, step, k):
    """The normal pair that actuators k and k + 1 (k even) of a body draw at its ``step``."""
    return counter_normals(key, step, variates.ACTUATOR_PAIRS + k // 2, variates.STEP_PAIRS)


@jitable
def perturb(u, limit, std, xi):
    """u (1 + σ ξ) clipped to ±``limit``."""
    u = u * (1.0 + std * xi)
    return min(max(u, -limit), limit)


COMPONENT = Component(
    name="actuator_noise",
    summary="multiplicative noise on each actuator torque, u (1 + σ ξ), then clipped",
    on=lambda s: bool(s.actuator_noise),
    switch="actuator.noise",
    features=(
        Feature(
            "actuator_noise",
            lambda s, f: bool(s.actuator_noise),
            "multiplicative noise on each actuator torque",
        ),
    ),
    state=(
        State(
            "actuator_noise",
            "relative std of the multiplicative actuator noise",
            lambda b: float(b.scenario.actuator_noise),
            lambda f: f.actuator_noise,
        ),
    ),
    step_pairs=2,  # up to 4 wheels
    noisy="actuator_noise",
)

"""Reaction wheels: n wheels with unit spin axes A (3, n); an action commands the motor
torques u = a ⊙ u_max, which spin the wheels up (ḣ_w = u) and turn the body the other way
(τ = −A u); the wheels' momentum h = A h_w enters Euler's equations,
J ω̇ = τ_ext − A u − ω × (Jω + h). Wheel speeds are limited: |h_w| ≤ h_max, and a wheel at
its top speed can only slow down.

Layouts: ``orthogonal`` (three wheels along the body axes) and ``pyramid`` (four wheels
at β = arccos(1/√3) ≈ 54.7° from body z, 90° apart in azimuth: every body axis gets the
same authority, and any one wheel can fail).
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.data import OBS_SIZE
from rigidrot_gym.physics.jit import jitable

_PYRAMID_TILT = np.arccos(1.0 / np.sqrt(3.0))
# A momentum within this relative distance of its limit counts as saturated (the clip in
# advance() removes the round-off that would keep it a hair below).
_SATURATION_RTOL = 1e-9


def wheel_axes(layout: str) -> np.ndarray:
    """(3, n) unit spin axes of the wheels in the body frame."""
    if layout == "orthogonal":
        return np.eye(3)
    if layout == "pyramid":
        azimuth = np.radians([0.0, 90.0, 180.0, 270.0])
        s, c = np.sin(_PYRAMID_TILT), np.cos(_PYRAMID_TILT)
        return np.stack([s * np.cos(azimuth), s * np.sin(azimuth), np.full(4, c)])
    raise ValueError(f"unknown wheel layout {layout!r}; valid: 'orthogonal', 'pyramid'")


@jitable
def limit_by_momentum(u, h, h_max, dt):
    """Wheel torque u (N·m) cut so that the wheel, at momentum h (N·m·s), does not pass
    its limit h_max within dt (s): h + u dt ∈ [−h_max, h_max] (a wheel at its top speed
    can only slow down). Scalars or arrays."""
    return np.minimum(np.maximum(u, (-h_max - h) / dt), (h_max - h) / dt)


@jitable
def advance(equipment, work, dt, i):
    """End of body i's committed period: h_w += u dt (clipped: the commands were cut to
    stay within the limit, so the clip only removes round-off) and its saturation flag."""
    hit = False
    for k in range(work.commands.shape[0]):
        limit = equipment.max_momentum[k]
        h = min(max(equipment.wheel_momentum[i, k] + work.commands[k, i] * dt, -limit), limit)
        equipment.wheel_momentum[i, k] = h
        hit = hit or abs(h) >= limit * (1.0 - _SATURATION_RTOL)
    equipment.saturated[i] = hit


@jitable
def observe(equipment, obs, i):
    """Body i's wheel momenta h_w / h_max, the observation's columns after the first seven."""
    for k in range(equipment.wheel_momentum.shape[1]):
        obs[i, OBS_SIZE + k] = equipment.wheel_momentum[i, k] / equipment.max_momentum[k]

"""How actions become body torques: ideal torquers or a reaction-wheel assembly.

Ideal torquers apply τ = a ⊙ τ_max about the body axes. A wheel assembly has n wheels
with unit spin axes (the columns of A, body frame); an action commands the wheel motor
torques u = a ⊙ u_max, which spin the wheels up (ḣ_w = u, wheel momenta h_w) and turn
the body the other way: τ = −A u. The wheels' momentum h = A h_w enters Euler's
equations, I ω̇ = τ_ext − A u − ω × (Iω + h). Wheel speeds are limited: |h_w| ≤ h_max.

Layouts: ``orthogonal`` (three wheels along the body axes) and ``pyramid`` (four wheels
at β = arccos(1/√3) ≈ 54.7° from body z, 90° apart in azimuth: every body axis gets the
same authority, and any one wheel can fail).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.physics.jit import jitable

_PYRAMID_TILT = np.arccos(1.0 / np.sqrt(3.0))


@jitable
def limit_by_momentum(u, h, h_max, dt):
    """Wheel torque u (N·m) cut so that the wheel, at momentum h (N·m·s), does not pass
    its limit h_max within dt (s): h + u dt ∈ [−h_max, h_max] (a wheel at its top speed
    can only slow down). Scalars or arrays."""
    return np.minimum(np.maximum(u, (-h_max - h) / dt), (h_max - h) / dt)


def wheel_axes(layout: str) -> np.ndarray:
    """(3, n) unit spin axes of the wheels in the body frame."""
    if layout == "orthogonal":
        return np.eye(3)
    if layout == "pyramid":
        azimuth = np.radians([0.0, 90.0, 180.0, 270.0])
        s, c = np.sin(_PYRAMID_TILT), np.cos(_PYRAMID_TILT)
        return np.stack([s * np.cos(azimuth), s * np.sin(azimuth), np.full(4, c)])
    raise ValueError(f"unknown wheel layout {layout!r}; valid: 'orthogonal', 'pyramid'")


@dataclass(frozen=True)
class Actuators:
    """The actuators of a scenario.

    Attributes:
        axes: (3, n) body-frame axes (torquers or wheel spin axes).
        max_torque: (n,) torque limit of each, N·m.
        max_momentum: (n,) wheel momentum limit, N·m·s (inf for ideal torquers).
        wheels: True for reaction wheels (τ_body = −A u), False for ideal torquers.
    """

    axes: np.ndarray
    max_torque: np.ndarray
    max_momentum: np.ndarray
    wheels: bool

    @classmethod
    def torquers(cls, max_torque) -> Actuators:
        """Ideal torquers about the body axes with per-axis limits ``max_torque`` (3,), N·m.

        Raises:
            ValueError: unless ``max_torque`` is three positive finite numbers.
        """
        limits = np.asarray(max_torque, dtype=np.float64)
        if limits.shape != (3,) or not np.all(np.isfinite(limits)) or not np.all(limits > 0):
            raise ValueError(f"max_torque must be 3 positive numbers, got {max_torque!r}")
        return cls(np.eye(3), limits, np.full(3, np.inf), False)

    @classmethod
    def of(cls, scenario: Scenario) -> Actuators:
        """The scenario's actuators."""
        if not scenario.wheels:
            return cls.torquers(scenario.max_torque)
        axes = wheel_axes(scenario.wheel_layout)
        n = axes.shape[1]
        return cls(axes, np.full(n, scenario.wheel_max_torque), np.full(n, scenario.wheel_max_momentum), True)

    @property
    def count(self) -> int:
        """Number of actuators n (the action size)."""
        return self.axes.shape[1]

    @property
    def sign(self) -> float:
        """+1 for torquers; −1 for wheels, whose motor torque turns the body backwards."""
        return -1.0 if self.wheels else 1.0

    def body_torque(self, commands: np.ndarray) -> np.ndarray:
        """Body torque (..., 3), N·m, of actuator torques (..., n), N·m."""
        return self.sign * np.asarray(commands) @ self.axes.T

    def commands_for(self, torque: np.ndarray) -> np.ndarray:
        """The actuator torques (..., n), N·m, of least norm that give the body torque
        (..., 3), N·m (exact when the axes span the body frame)."""
        return self.sign * np.asarray(torque) @ np.linalg.pinv(self.axes).T

    def momentum(self, wheel_momenta: np.ndarray) -> np.ndarray:
        """Body-frame wheel momentum h = A h_w (..., 3) of wheel momenta (..., n), N·m·s."""
        return np.asarray(wheel_momenta) @ self.axes.T

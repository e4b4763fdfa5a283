"""A scenario's actuators as the controllers and tools see them: ideal torquers about the
body axes (τ = a ⊙ τ_max), a reaction-wheel assembly (τ = −A u;
:mod:`~rigidrot_gym.attitude.components.wheels`) or magnetorquers (dipoles m = a ⊙ m_max,
τ = m × B; :mod:`~rigidrot_gym.attitude.components.magnetorquers`), with their axes and
limits."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidrot_gym.attitude.components.wheels import wheel_axes
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.physics import reaction_wheels


@dataclass(frozen=True)
class Actuators:
    """The actuators of a scenario.

    Attributes:
        axes: (3, n) body-frame axes (torquers, wheel spin axes or rods).
        max_torque: (n,) torque limit of each, N·m (for magnetorquers: the dipole limit
            of each rod, A·m²).
        max_momentum: (n,) wheel momentum limit, N·m·s (inf for the others).
        wheels: True for reaction wheels (τ_body = −A u), False for the others.
        magnetic: True for magnetorquers (actions are dipoles: no torque of their own).
    """

    axes: np.ndarray
    max_torque: np.ndarray
    max_momentum: np.ndarray
    wheels: bool
    magnetic: bool = False

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
        if scenario.magnetorquers:
            return cls(np.eye(3), np.array(scenario.magnetorquer_max_dipole), np.full(3, np.inf), False, True)
        if not scenario.wheels:
            return cls.torquers(scenario.max_torque)
        axes = wheel_axes(scenario.wheel_layout)
        n = axes.shape[1]
        if scenario.wheel_model != "ideal":  # the preset's motor limit and momentum at top speed
            model = reaction_wheels.PRESETS[scenario.wheel_model]
            return cls(axes, np.full(n, model.u_max), np.full(n, model.max_momentum), True)
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

"""A scenario's actuators as the controllers and tools see them: ideal torquers about the
body axes (τ = a ⊙ τ_max), a reaction-wheel assembly (τ = −A u;
:mod:`~rigidrot_gym.attitude.components.wheels`), magnetorquers (dipoles m = a ⊙ m_max,
τ = m × B; :mod:`~rigidrot_gym.attitude.components.magnetorquers`), or wheels and
magnetorquers together (the rods unload the wheels), with their axes and limits. The
action holds one entry per actuator: the wheels' (or torquers') first, then the rods'."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidrot_gym.attitude.components.wheels import wheel_axes
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.physics.actuators import reaction_wheels


@dataclass(frozen=True)
class Actuators:
    """The actuators of a scenario.

    Attributes:
        axes: (3, n) body-frame axes (torquers, wheel spin axes, then rods).
        max_torque: (n,) torque limit of each, N·m (for a magnetorquer: the dipole limit
            of its rod, A·m²).
        max_momentum: (n,) wheel momentum limit, N·m·s (inf for the others).
        wheels: True for reaction wheels (τ_body = −A u), False for torquers.
        rods: how many of the n are magnetorquers, the last entries (actions are their
            dipoles: no torque of their own); the first n − rods give torques.
    """

    axes: np.ndarray
    max_torque: np.ndarray
    max_momentum: np.ndarray
    wheels: bool
    rods: int = 0

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
        if scenario.wheels:
            wheels = cls._wheels(scenario)
        elif scenario.magnetorquers:  # the rods replace the torquers
            wheels = cls(np.zeros((3, 0)), np.zeros(0), np.zeros(0), False)
        else:
            return cls.torquers(scenario.max_torque)
        if not scenario.magnetorquers:
            return wheels
        return cls(
            np.hstack([wheels.axes, np.eye(3)]),
            np.concatenate([wheels.max_torque, scenario.magnetorquer_max_dipole]),
            np.concatenate([wheels.max_momentum, np.full(3, np.inf)]),
            wheels.wheels,
            rods=3,
        )

    @classmethod
    def _wheels(cls, scenario: Scenario) -> Actuators:
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
    def torquing(self) -> int:
        """Number of actuators that give torques of their own (torquers or wheels): the
        first n − ``rods``."""
        return self.count - self.rods

    @property
    def max_dipole(self) -> np.ndarray:
        """(rods,) the magnetorquers' dipole limits, A·m² (empty without them)."""
        return self.max_torque[self.torquing :]

    @property
    def sign(self) -> float:
        """+1 for torquers; −1 for wheels, whose motor torque turns the body backwards."""
        return -1.0 if self.wheels else 1.0

    def body_torque(self, commands: np.ndarray) -> np.ndarray:
        """Body torque (..., 3), N·m, of the torquing actuators' torques (..., n − rods), N·m."""
        return self.sign * np.asarray(commands) @ self.axes[:, : self.torquing].T

    def commands_for(self, torque: np.ndarray) -> np.ndarray:
        """The torquing actuators' torques (..., n − rods), N·m, of least norm that give the
        body torque (..., 3), N·m (exact when their axes span the body frame)."""
        return self.sign * np.asarray(torque) @ np.linalg.pinv(self.axes[:, : self.torquing]).T

    def momentum(self, wheel_momenta: np.ndarray) -> np.ndarray:
        """Body-frame wheel momentum h = A h_w (..., 3) of wheel momenta (..., n − rods), N·m·s."""
        return np.asarray(wheel_momenta) @ self.axes[:, : self.torquing].T

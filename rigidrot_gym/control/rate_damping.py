"""Rate damping (detumbling): u = −Kd ω.

The rotational kinetic energy ½ ωᵀJω then changes at the rate ωᵀu = −ωᵀ Kd ω ≤ 0 for a
positive-definite Kd, whatever J. With Kd = kd Ĵ and Ĵ = J, a spin about a principal axis
stays about it and decays exactly as ω(t) = ω0 exp(−kd t): kd is the decay rate (1/s).
No attitude feedback: the attitude ends wherever the body stops (shared notes,
controllers.md, "Rate damping / detumbling").
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.control.base import Controller, gain_matrix
from rigidrot_gym.physics.rotation.inertia import principal_frame


class RateDamping(Controller):
    """u = −Kd ω.

    Args:
        inertia: the estimate Ĵ: (3,) principal moments or (3, 3) tensor, kg·m² (used
            for a scalar ``damping`` only).
        damping: Kd, (3, 3) N·m·s, or a positive scalar kd (1/s) for Kd = kd Ĵ.
        actuators: see :class:`~rigidrot_gym.control.base.Controller`.
        max_rate: see :class:`~rigidrot_gym.control.base.Controller`.
    """

    def __init__(self, inertia, damping, actuators, max_rate: float):
        super().__init__(actuators, max_rate)
        _, _, self.inertia = principal_frame(inertia)
        self.damping = gain_matrix(damping, "damping", self.inertia)

    @classmethod
    def for_scenario(cls, scenario: Scenario, damping) -> RateDamping:
        """On a scenario's own inertia and limits."""
        return cls(scenario.inertia, damping, **cls.limits_of(scenario))

    def torque(self, error: np.ndarray, omega: np.ndarray, momentum: np.ndarray) -> np.ndarray:
        return -omega @ self.damping.T

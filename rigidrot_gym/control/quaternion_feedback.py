"""Quaternion feedback regulator (Wie, Weiss & Arapostathis, J. Guidance 12(3), 1989).

    u = −K δq_v − C ω + ω × (Ĵ ω + h),   K = k Ĵ,  C = c Ĵ

δq = q_target⁻¹ ⊗ q with w ≥ 0 (the short way round), Ĵ the controller's estimate of the
inertia. Linearised, every axis obeys q̈_v + c q̇_v + (k/2) q_v = 0: ωn = √(k/2),
ζ = c/(2ωn); the gyroscopic term cancels the body's own coupling when Ĵ = J (and that
of the reaction wheels' stored momentum h, if any).
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.control.base import Controller, gain_matrix, gyroscopic
from rigidrot_gym.physics import validation
from rigidrot_gym.physics.inertia import principal_frame


class QuaternionFeedback(Controller):
    """u = −K δq_v − C ω + ω × (Ĵ ω + h).

    Args:
        inertia: the estimate Ĵ: (3,) principal moments or (3, 3) tensor, kg·m².
        stiffness: K, (3, 3) N·m (or a positive scalar k: K = k Ĵ).
        damping: C, (3, 3) N·m·s (or a positive scalar c: C = c Ĵ).
        actuators: see :class:`~rigidrot_gym.control.base.Controller`.
        max_rate: see :class:`~rigidrot_gym.control.base.Controller`.
    """

    def __init__(self, inertia, stiffness, damping, actuators, max_rate: float):
        super().__init__(actuators, max_rate)
        _, _, self.inertia = principal_frame(inertia)
        self.stiffness = gain_matrix(stiffness, "stiffness", self.inertia)
        self.damping = gain_matrix(damping, "damping", self.inertia)

    @classmethod
    def critically_damped(
        cls, inertia, natural_frequency: float, actuators, max_rate: float, damping_ratio: float = 1.0
    ) -> QuaternionFeedback:
        """Gains for a natural frequency ωn (rad/s) and damping ratio ζ: k = 2ωn², c = 2ζωn."""
        wn = validation.scalar(natural_frequency, "natural_frequency", positive=True)
        zeta = validation.scalar(damping_ratio, "damping_ratio", positive=True)
        return cls(inertia, 2.0 * wn * wn, 2.0 * zeta * wn, actuators, max_rate)

    @classmethod
    def for_scenario(cls, scenario: Scenario, natural_frequency: float, damping_ratio: float = 1.0):
        """Critically damped (by default) on a scenario's own inertia and limits."""
        return cls.critically_damped(
            scenario.inertia, natural_frequency, damping_ratio=damping_ratio, **cls.limits_of(scenario)
        )

    def torque(self, error: np.ndarray, omega: np.ndarray, momentum: np.ndarray) -> np.ndarray:
        return (
            -error[:, 1:4] @ self.stiffness.T
            - omega @ self.damping.T
            + gyroscopic(omega, self.inertia, momentum)
        )

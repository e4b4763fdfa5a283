"""Quaternion feedback regulator (Wie, Weiss & Arapostathis, J. Guidance 12(3), 1989).

    u = −K δq_v − C ω + ω × (Ĵ ω + h),   K = k Ĵ,  C = c Ĵ

δq = q_target⁻¹ ⊗ q with w ≥ 0 (the short way round), Ĵ the controller's estimate of the
inertia. Linearised, every axis obeys q̈_v + c q̇_v + (k/2) q_v = 0: ωn = √(k/2),
ζ = c/(2ωn); the gyroscopic term cancels the body's own coupling when Ĵ = J (and that
of the reaction wheels' stored momentum h, if any).

For a target turning at a constant rate ω_r (its own frame; the LVLH frame of a circular
orbit: ``target_attitude = "nadir"``), the observed rate is the error ω_e = ω − ω_r,b,
ω_r,b = R(δq)ᵀ ω_r the target's rate in the body frame, and the law tracks it with the
feedforward of the target's motion (Wie 2008, §7.3; Markley & Crassidis 2014, §7.2):

    u = −K δq_v − C ω_e + ω × (Ĵ ω + h) + Ĵ (ω_r,b × ω_e),   ω = ω_e + ω_r,b

where Ĵ (ω_r,b × ω_e) = Ĵ ω̇_r,b, the target's rate turning in the body frame.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.components import targets
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.control.base import Controller, gain_matrix, gyroscopic
from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.inertia import principal_frame


class QuaternionFeedback(Controller):
    """u = −K δq_v − C ω_e + ω × (Ĵ ω + h) [+ Ĵ (ω_r,b × ω_e) for a turning target].

    Args:
        inertia: the estimate Ĵ: (3,) principal moments or (3, 3) tensor, kg·m².
        stiffness: K, (3, 3) N·m (or a positive scalar k: K = k Ĵ).
        damping: C, (3, 3) N·m·s (or a positive scalar c: C = c Ĵ).
        actuators: see :class:`~rigidrot_gym.control.base.Controller`.
        max_rate: see :class:`~rigidrot_gym.control.base.Controller`.
        target_rate: ω_r, (3,) rad/s, the target's constant angular velocity in its own
            frame (zero: a fixed target, where ω_e = ω).
    """

    def __init__(self, inertia, stiffness, damping, actuators, max_rate: float, target_rate=(0.0, 0.0, 0.0)):
        super().__init__(actuators, max_rate)
        _, _, self.inertia = principal_frame(inertia)
        self.stiffness = gain_matrix(stiffness, "stiffness", self.inertia)
        self.damping = gain_matrix(damping, "damping", self.inertia)
        self.target_rate = validation.vectors(target_rate, "target_rate", 3)
        if self.target_rate.shape != (3,):
            raise ValueError(f"target_rate must be 3 finite numbers, got {target_rate!r}")

    @classmethod
    def critically_damped(
        cls,
        inertia,
        natural_frequency: float,
        actuators,
        max_rate: float,
        damping_ratio: float = 1.0,
        target_rate=(0.0, 0.0, 0.0),
    ) -> QuaternionFeedback:
        """Gains for a natural frequency ωn (rad/s) and damping ratio ζ: k = 2ωn², c = 2ζωn."""
        wn = validation.scalar(natural_frequency, "natural_frequency", positive=True)
        zeta = validation.scalar(damping_ratio, "damping_ratio", positive=True)
        return cls(inertia, 2.0 * wn * wn, 2.0 * zeta * wn, actuators, max_rate, target_rate)

    @classmethod
    def for_scenario(cls, scenario: Scenario, natural_frequency: float, damping_ratio: float = 1.0):
        """Critically damped (by default) on a scenario's own inertia and limits, feeding
        forward the LVLH frame's mean rate for a nadir target (the Sun's frame turns at
        ~2e-7 rad/s: none for a Sun target)."""
        nadir = scenario.moving_target and scenario.target_attitude == "nadir"
        rate = targets.mean_rate(scenario.flight) if nadir else np.zeros(3)
        return cls.critically_damped(
            scenario.inertia,
            natural_frequency,
            damping_ratio=damping_ratio,
            target_rate=rate,
            **cls.limits_of(scenario),
        )

    def torque(self, error: np.ndarray, omega: np.ndarray, momentum: np.ndarray) -> np.ndarray:
        feedback = -error[:, 1:4] @ self.stiffness.T - omega @ self.damping.T
        if not self.target_rate.any():
            return feedback + gyroscopic(omega, self.inertia, momentum)
        target_rate = quat.rotate_inverse(error, self.target_rate)  # ω_r,b: δq maps body to target
        absolute = omega + target_rate
        turning = np.cross(target_rate, omega) @ self.inertia.T
        return feedback + gyroscopic(absolute, self.inertia, momentum) + turning

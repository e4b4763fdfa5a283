"""Sliding-mode attitude regulator (Markley & Crassidis, *Fundamentals of Spacecraft
Attitude Determination and Control*, 2014, Ex. 7.3), here for a fixed target
(ω_d = 0, ω̇_d = 0):

    s = ω + k sgn(δq0) δq_v
    u = ω × (Ĵ ω + h) + Ĵ [(k/2)(−|δq0| ω − sgn(δq0) δq_v × ω) − G sat(s/ε)]

sat is the component-wise saturation to [−1, 1]. With Ĵ = J the first two terms cancel
the gyroscopic coupling and the drift of s: since δq̇_v = ½(δq0 ω + δq_v × ω),
ṡ = −G sat(s/ε). For a diagonal G, each |s_i| > ε falls at the rate G_ii, and inside
the boundary layer s decays as exp(−(G/ε) t). On the surface s = 0, ω = −k sgn(δq0) δq_v, so the
pointing error θ obeys θ̇ = −k sin(θ/2), i.e. tan(θ/4) = tan(θ0/4) exp(−k t/2): near the
target δq_v decays as exp(−k t/2), with the time constant 2/k.

Published gains (Ex. 7.3): k = 0.05 /s, ε = 0.001 /s, G = 0.005 I /s² (G a 3 × 3 matrix):
:meth:`SlidingMode.published`. Wheel momentum h enters ω × (Ĵ ω + h) in one place,
:func:`~rigidrot_gym.control.base.gyroscopic`.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.control.base import Controller, gain_matrix, gyroscopic
from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.rotation.inertia import principal_frame

# Markley & Crassidis, Ex. 7.3: k (1/s), ε (1/s), G = 0.005 I (1/s²).
PUBLISHED_SLOPE = 0.05
PUBLISHED_BOUNDARY_LAYER = 0.001
PUBLISHED_REACHING_GAIN = 0.005


class SlidingMode(Controller):
    """Sliding-mode regulator on s = ω + k sgn(δq0) δq_v with a boundary layer ε.

    Args:
        inertia: the estimate Ĵ: (3,) principal moments or (3, 3) tensor, kg·m².
        slope: k, 1/s (positive): on the surface ω = −k sgn(δq0) δq_v.
        boundary_layer: ε, 1/s (positive): the width of the linear zone of sat(s/ε).
        reaching_gain: G, 1/s²: a (3, 3) matrix, or a positive scalar g for G = g I.
        actuators: see :class:`~rigidrot_gym.control.base.Controller`.
        max_rate: see :class:`~rigidrot_gym.control.base.Controller`.
    """

    def __init__(
        self, inertia, slope: float, boundary_layer: float, reaching_gain, actuators, max_rate: float
    ):
        super().__init__(actuators, max_rate)
        _, _, self.inertia = principal_frame(inertia)
        self.slope = validation.scalar(slope, "slope", positive=True)
        self.boundary_layer = validation.scalar(boundary_layer, "boundary_layer", positive=True)
        self.reaching_gain = gain_matrix(reaching_gain, "reaching_gain", np.eye(3))

    @classmethod
    def published(cls, inertia, actuators, max_rate: float) -> SlidingMode:
        """The gains of Markley & Crassidis Ex. 7.3: k = 0.05, ε = 0.001, G = 0.005 I."""
        return cls(
            inertia, PUBLISHED_SLOPE, PUBLISHED_BOUNDARY_LAYER, PUBLISHED_REACHING_GAIN, actuators, max_rate
        )

    @classmethod
    def for_scenario(
        cls, scenario: Scenario, slope: float, boundary_layer: float, reaching_gain
    ) -> SlidingMode:
        """On a scenario's own inertia and limits."""
        return cls(scenario.inertia, slope, boundary_layer, reaching_gain, **cls.limits_of(scenario))

    def torque(self, error: np.ndarray, omega: np.ndarray, momentum: np.ndarray) -> np.ndarray:
        q0, qv = error[:, 0:1], error[:, 1:4]
        # sgn(0) = +1, not 0: at exactly 180° either way round is the short one, and a zero
        # would drop the attitude term from s.
        sign = np.where(q0 < 0.0, -1.0, 1.0)
        k = self.slope
        s = omega + k * sign * qv
        reach = np.clip(s / self.boundary_layer, -1.0, 1.0) @ self.reaching_gain.T
        accel = 0.5 * k * (-np.abs(q0) * omega - sign * np.cross(qv, omega)) - reach
        return gyroscopic(omega, self.inertia, momentum) + accel @ self.inertia.T

"""PD attitude control with rate feedback and gyroscopic compensation.

    u = −Kp δq_v − Kd ω + ω × (Ĵ ω + h),   Kp = kp Ĵ,  Kd = kd Ĵ

(shared notes, controllers.md; the law written there as −Kp sgn(δq0) δq_v: the error
quaternions here have δq0 ≥ 0, so sgn(δq0) = 1 and drops out). With Ĵ = J the closed
loop is ω̇ = −kp δq_v − kd ω on every axis, linearised (q̇_v ≈ ω/2)
q̈_v + kd q̇_v + (kp/2) q_v = 0: for a natural frequency ωn and damping ratio ζ,
kp = 2ωn², kd = 2ζωn.

This is literally the quaternion feedback regulator of Wie, Weiss & Arapostathis (1989)
with K = kp Ĵ, C = kd Ĵ (the same ωn, ζ relations), so :class:`PD` is a
:class:`~rigidrot_gym.control.quaternion_feedback.QuaternionFeedback` restricted to
scalar gains, not a second copy of the formula. Wheel momentum h enters the gyroscopic
term in one place, :func:`~rigidrot_gym.control.base.gyroscopic`.
"""

from __future__ import annotations

from rigidrot_gym.control.quaternion_feedback import QuaternionFeedback
from rigidrot_gym.physics.plumbing import validation


class PD(QuaternionFeedback):
    """u = −kp Ĵ δq_v − kd Ĵ ω + ω × (Ĵ ω + h).

    Build it from (ωn, ζ) with the inherited :meth:`critically_damped` (``damping_ratio``
    sets ζ; kp = 2ωn², kd = 2ζωn) or :meth:`for_scenario`.

    Args:
        inertia: the estimate Ĵ: (3,) principal moments or (3, 3) tensor, kg·m².
        kp: attitude gain, 1/s² (positive).
        kd: rate gain, 1/s (positive).
        actuators: see :class:`~rigidrot_gym.control.base.Controller`.
        max_rate: see :class:`~rigidrot_gym.control.base.Controller`.
        target_rate: see :class:`~rigidrot_gym.control.quaternion_feedback.QuaternionFeedback`.
    """

    def __init__(
        self, inertia, kp: float, kd: float, actuators, max_rate: float, target_rate=(0.0, 0.0, 0.0)
    ):
        self.kp = validation.scalar(kp, "kp", positive=True)
        self.kd = validation.scalar(kd, "kd", positive=True)
        super().__init__(inertia, self.kp, self.kd, actuators, max_rate, target_rate)

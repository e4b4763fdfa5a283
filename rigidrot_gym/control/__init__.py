"""Classical attitude controllers with stable-baselines3's ``predict()`` interface.

:data:`CONTROLLERS` builds each one by name for a scenario, with the gains the control
benchmark uses (each reaches the Reorient tolerance; rate damping only detumbles).
"""

from collections.abc import Callable

from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.control.base import Controller
from rigidrot_gym.control.lqr import LQR, diagonal_gains
from rigidrot_gym.control.pd import PD
from rigidrot_gym.control.quaternion_feedback import QuaternionFeedback
from rigidrot_gym.control.rate_damping import RateDamping
from rigidrot_gym.control.sliding_mode import SlidingMode

CONTROLLERS: dict[str, Callable[[Scenario], Controller]] = {
    "quaternion_feedback": lambda s: QuaternionFeedback.for_scenario(s, natural_frequency=0.5),
    "pd": lambda s: PD.for_scenario(s, natural_frequency=0.5, damping_ratio=1.0),
    "lqr": lambda s: LQR.for_scenario(s, attitude_weight=1.0, rate_weight=3.0, control_weight=1e3),
    "sliding_mode": lambda s: SlidingMode.for_scenario(s, slope=0.5, boundary_layer=0.01, reaching_gain=0.05),
    "rate_damping": lambda s: RateDamping.for_scenario(s, damping=1.0),
}

__all__ = [
    "CONTROLLERS",
    "LQR",
    "PD",
    "Controller",
    "QuaternionFeedback",
    "RateDamping",
    "SlidingMode",
    "diagonal_gains",
]

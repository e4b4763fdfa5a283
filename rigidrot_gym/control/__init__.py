"""Classical attitude controllers with stable-baselines3's ``predict()`` interface.

:data:`CONTROLLERS` builds each one by name for a scenario, with the gains the control
benchmark uses (each reaches the Reorient tolerance; rate damping only detumbles), or
gives None for a scenario whose actuators it cannot command (the benchmark then skips
the pair): the torque laws need torquers or wheels (with magnetorquers beside the wheels
they unload them: :mod:`~rigidrot_gym.control.momentum_dumping`), B-dot (:class:`BDot`)
magnetorquers alone, ``reallocating`` (quaternion feedback over the actuators a residual
test has not flagged: :mod:`~rigidrot_gym.control.fault_detection`,
:mod:`~rigidrot_gym.control.thruster_faults`) wheels, or thrusters commanded by on-times
(which the torque laws alone cannot command).
"""

from collections.abc import Callable
from typing import Any

from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.control.base import Controller
from rigidrot_gym.control.bdot import BDot
from rigidrot_gym.control.fault_detection import Reallocating, WheelFaultDetector
from rigidrot_gym.control.lqr import LQR, diagonal_gains
from rigidrot_gym.control.pd import PD
from rigidrot_gym.control.quaternion_feedback import QuaternionFeedback
from rigidrot_gym.control.rate_damping import RateDamping
from rigidrot_gym.control.sliding_mode import SlidingMode
from rigidrot_gym.control.thruster_faults import ThrusterReallocating


def _rods_only(scenario: Scenario) -> bool:
    return scenario.magnetorquers and not scenario.wheels


def _on_times(scenario: Scenario) -> bool:
    return scenario.thruster_layout != "none" and scenario.thruster_command == "on_times"


def _reallocating(scenario: Scenario) -> Reallocating | ThrusterReallocating | None:
    """Quaternion feedback (ωn = 0.5 rad/s) over the actuators its residual test has not
    flagged: the wheels (:class:`~rigidrot_gym.control.fault_detection.Reallocating`), or
    thrusters commanded by on-times
    (:class:`~rigidrot_gym.control.thruster_faults.ThrusterReallocating`); None otherwise."""
    if not (_on_times(scenario) or scenario.wheels):  # before the law, which needs torques
        return None
    controller = QuaternionFeedback.for_scenario(scenario, natural_frequency=0.5)
    if _on_times(scenario):
        return ThrusterReallocating.for_scenario(controller, scenario)
    return Reallocating(controller, WheelFaultDetector.for_scenario(scenario))


def _torques(make: Callable[[Scenario], Controller]) -> Callable[[Scenario], Controller | None]:
    """``make``, for a scenario whose actuators give torques (None with magnetorquers only,
    or thrusters commanded by on-times)."""
    return lambda s: None if _rods_only(s) or _on_times(s) else make(s)


CONTROLLERS: dict[str, Callable[[Scenario], Any]] = {
    "quaternion_feedback": _torques(lambda s: QuaternionFeedback.for_scenario(s, natural_frequency=0.5)),
    "pd": _torques(lambda s: PD.for_scenario(s, natural_frequency=0.5, damping_ratio=1.0)),
    "lqr": _torques(lambda s: LQR.for_scenario(s, attitude_weight=1.0, rate_weight=3.0, control_weight=1e3)),
    "sliding_mode": _torques(
        lambda s: SlidingMode.for_scenario(s, slope=0.5, boundary_layer=0.01, reaching_gain=0.05)
    ),
    "rate_damping": _torques(lambda s: RateDamping.for_scenario(s, damping=1.0)),
    "bdot": lambda s: BDot.for_scenario(s) if _rods_only(s) else None,
    "reallocating": _reallocating,
}

__all__ = [
    "CONTROLLERS",
    "LQR",
    "PD",
    "BDot",
    "Controller",
    "QuaternionFeedback",
    "RateDamping",
    "SlidingMode",
    "diagonal_gains",
]

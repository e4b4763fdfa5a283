"""The interface every attitude controller shares with a trained stable-baselines3 agent."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

from rigidrot_gym.attitude.actuators import Actuators
from rigidrot_gym.attitude.components import magnetic_field
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.attitude.task import decode_observation
from rigidrot_gym.control.momentum_dumping import DUMPING_GAIN, dumping_dipole
from rigidrot_gym.physics.plumbing import validation


def gyroscopic(omega: np.ndarray, inertia: np.ndarray, momentum: np.ndarray) -> np.ndarray:
    """ω × (Ĵ ω + h) (N, 3), N·m: the gyroscopic torque of the body and its stored wheel
    momentum h (N, 3), N·m·s, as the controller models them, which the laws with
    gyroscopic compensation add to cancel the body's own coupling."""
    return np.cross(omega, omega @ inertia.T + momentum)


def gain_matrix(gain, name: str, unit: np.ndarray) -> np.ndarray:
    """A 3 × 3 gain from a positive scalar g (meaning g · ``unit``, e.g. g Ĵ or g I) or a
    finite 3 × 3 matrix.

    Raises:
        ValueError: naming ``name``, for anything else.
    """
    try:
        g = np.asarray(gain, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive scalar or a finite 3 × 3 matrix, got {gain!r}") from None
    if g.ndim == 0:
        return validation.scalar(float(g), name, positive=True) * unit
    if g.shape != (3, 3) or not np.all(np.isfinite(g)):
        raise ValueError(f"{name} must be a positive scalar or a finite 3 × 3 matrix, got {gain!r}")
    return g


class Controller(ABC):
    """A control law on the observations of :class:`~rigidrot_gym.attitude.env.AttitudeEnv`.

    Subclasses give the body torque (N·m) from the error quaternion, the body rates and
    the wheels' stored momentum; :meth:`predict` turns it into the env's normalised
    action, saturating at the actuator limits, with stable-baselines3's signature, so
    controllers and agents are evaluated by the same code (``evaluate_policy``, the
    control benchmark). With reaction wheels the torque is distributed over the wheels
    by the least-norm allocation :meth:`Actuators.commands_for`, over those in
    ``healthy`` where a fault detector has set it
    (:class:`~rigidrot_gym.control.fault_detection.Reallocating`). With magnetorquers beside
    the wheels, the rods unload them by the cross-product law
    (:mod:`~rigidrot_gym.control.momentum_dumping`, gain ``dumping_gain``, 1/s, an
    attribute to change) and the wheels take the rods' torque out of theirs.

    Args:
        actuators: (3,) per-axis torque limits of ideal torquers, N·m, or the
            scenario's :class:`~rigidrot_gym.attitude.actuators.Actuators` (e.g. its wheels).
        max_rate: the env's rate scaling ``max_rate`` (observations hold ω/max_rate), rad/s.
    """

    def __init__(self, actuators, max_rate: float):
        self.actuators = actuators if isinstance(actuators, Actuators) else Actuators.torquers(actuators)
        if not self.actuators.torquing:
            raise ValueError(
                f"actuators must give torques (torquers or wheels) for {type(self).__name__}, got "
                "magnetorquers only, whose torque depends on the field: use rigidrot_gym.control.BDot"
            )
        self.dumping_gain = DUMPING_GAIN
        # The torquing actuators it allocates over, (n,) or (N, n) bool; None: all of them
        # (a fault detector sets it: rigidrot_gym.control.fault_detection).
        self.healthy: np.ndarray | None = None
        self.max_rate = float(max_rate)
        if not np.isfinite(self.max_rate) or self.max_rate <= 0:
            raise ValueError(f"max_rate must be a positive number, got {max_rate!r}")

    @classmethod
    def limits_of(cls, scenario: Scenario) -> dict[str, Any]:
        """The keyword arguments ``actuators`` and ``max_rate`` of a scenario."""
        return {"actuators": Actuators.of(scenario), "max_rate": scenario.max_rate}

    @abstractmethod
    def torque(self, error: np.ndarray, omega: np.ndarray, momentum: np.ndarray) -> np.ndarray:
        """Body torque (N, 3), N·m, from error quaternions δq = q_target⁻¹ ⊗ q (N, 4, with
        w ≥ 0), body rates (N, 3), rad/s, and the wheels' momentum h (N, 3), body frame,
        N·m·s (zero without wheels)."""

    def predict(
        self,
        observation: np.ndarray,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = True,
    ) -> tuple[np.ndarray, Any]:
        """Action(s) for observation(s) (7 + wheels [+ …],) or (N, 7 + wheels [+ …]): the
        actuator torques over their limits (then, with rods, their dipoles over theirs),
        clipped to [-1, 1] (float32). ``state`` passes through (controllers here are
        memoryless)."""
        obs = np.asarray(observation)
        rows = obs.reshape(-1, obs.shape[-1])
        act = self.actuators
        torquing = act.torquing
        limits = act.max_momentum[:torquing] if act.wheels else None
        error, omega, wheel_momenta = decode_observation(rows, self.max_rate, limits)
        momentum = act.momentum(wheel_momenta) if act.wheels else np.zeros_like(omega)
        torque = self.torque(error, omega, momentum)
        if act.rods:  # the observation's last columns are the field in the body frame
            field = np.asarray(rows[:, -magnetic_field.COLUMNS :], dtype=np.float64)
            field = field * magnetic_field.FIELD_SCALE
            dipole = dumping_dipole(self.dumping_gain, momentum, field)
            dipole = np.clip(dipole, -act.max_dipole, act.max_dipole)
            torque = torque - np.cross(dipole, field)
        action = act.commands_for(torque, self.healthy) / act.max_torque
        if act.rods:
            action = np.concatenate([action, dipole / act.max_dipole], axis=-1)
        action = np.clip(action, -1.0, 1.0).astype(np.float32)
        return (action[0] if obs.ndim == 1 else action), state

"""B-dot magnetic detumbling: m = −(k/|B|) ḃ, the rods' dipole against the rate of change
of the field's direction b = B/|B| in the body frame.

For a field that turns slowly in the world frame (once or twice an orbit) against the
body's rates, ḃ = b × ω, so m = (k/|B|) ω × b and the torque m × B = −k (ω − (ω·b) b)
damps the rates across the field: the rotational energy changes at ωᵀτ = −k |ω × b|² ≤ 0.
Each rod saturates on its own (the command is clipped per axis, as the env clips the
action). The gain is the one Avanzini & Giulietti give for a quasi-minimum detumbling time,
k = 2 n (1 + sin ξ_m) J_min ("Magnetic detumbling of a rigid spacecraft", J. Guidance,
Control, and Dynamics 35(4), 2012): n the orbit's mean motion, ξ_m the orbit's inclination
to the geomagnetic equator, J_min the smallest principal moment.

The law reads the exact rates and field of the observation (``RigidRot/MagDetumble-v0``);
a flight B-dot differentiates magnetometer readings instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rigidrot_gym.attitude.actuators import Actuators
from rigidrot_gym.attitude.components import magnetic_field
from rigidrot_gym.attitude.components.orbit import elements_of
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.physics.environment import earth, orbit
from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.rotation.inertia import principal_frame


def geomagnetic_inclination(scenario: Scenario) -> float:
    """ξ_m (rad, in [0, π/2]): the angle between the orbit's plane and the geomagnetic
    equator at the epoch, i.e. between the orbit normal and the dipole's axis."""
    el = elements_of(scenario.flight)
    normal = np.array([np.sin(el.raan) * np.sin(el.i), -np.cos(el.raan) * np.sin(el.i), np.cos(el.i)])
    model = magnetic_field.constants(scenario.flight, scenario.geomagnetism)
    axis = np.array(earth.to_inertial(model.theta, model.dipole))
    cosine = abs(normal @ axis) / np.linalg.norm(axis)
    return float(np.arccos(min(cosine, 1.0)))


def avanzini_gain(scenario: Scenario) -> float:
    """k = 2 n (1 + sin ξ_m) J_min, N·m·s, for the scenario's orbit and body."""
    n = orbit.mean_motion(scenario.orbit_semi_major_axis)
    moments, _, _ = principal_frame(scenario.inertia)
    return float(2.0 * n * (1.0 + np.sin(geomagnetic_inclination(scenario))) * moments.min())


class BDot:
    """B-dot with stable-baselines3's ``predict()`` (as the controllers of
    :mod:`rigidrot_gym.control` have it).

    Args:
        gain: k, N·m·s (positive).
        max_dipole: (3,) the rods' dipole limits, A·m².
        max_rate: the env's rate scaling ``max_rate`` (observations hold ω/max_rate), rad/s.
    """

    def __init__(self, gain: float, max_dipole, max_rate: float):
        self.gain = validation.scalar(gain, "gain", positive=True)
        self.max_dipole = validation.vectors(max_dipole, "max_dipole", 3)
        if self.max_dipole.shape != (3,) or not np.all(self.max_dipole > 0):
            raise ValueError(f"max_dipole must be 3 positive numbers, got {max_dipole!r}")
        self.max_rate = validation.scalar(max_rate, "max_rate", positive=True)

    @classmethod
    def for_scenario(cls, scenario: Scenario, gain: float | None = None) -> BDot:
        """For a scenario with magnetorquers; ``gain`` None: :func:`avanzini_gain`.

        Raises:
            ValueError: if the scenario's actuators are not magnetorquers.
        """
        actuators = Actuators.of(scenario)
        if actuators.torquing or not actuators.rods:
            raise ValueError(
                f"scenario must have magnetorquers (magnetorquers.enabled) and no other actuators for "
                f"B-dot, got {scenario.id!r}"
            )
        gain = avanzini_gain(scenario) if gain is None else gain
        return cls(gain, actuators.max_dipole, scenario.max_rate)

    def dipole(self, omega: np.ndarray, field: np.ndarray) -> np.ndarray:
        """m = (k/|B|) ω × b (..., 3), A·m², unclipped, from body rates ω (..., 3), rad/s,
        and the field B (..., 3), T, both in the body frame; 0 where B is 0."""
        strength = np.linalg.norm(field, axis=-1, keepdims=True)
        safe = np.where(strength > 0.0, strength, 1.0)
        return np.where(strength > 0.0, self.gain * np.cross(omega, field / safe) / safe, 0.0)

    def predict(
        self,
        observation: np.ndarray,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = True,
    ) -> tuple[np.ndarray, Any]:
        """Action(s) for observation(s) (size,) or (N, size) whose columns 4–6 are the
        scaled rates and last three the scaled field: the dipole over its limits,
        clipped to [-1, 1] (float32). ``state`` passes through (the law is memoryless)."""
        obs = np.asarray(observation, dtype=np.float64)
        rows = obs.reshape(-1, obs.shape[-1])
        omega = rows[:, 4:7] * self.max_rate
        field = rows[:, -magnetic_field.COLUMNS :] * magnetic_field.FIELD_SCALE
        action = np.clip(self.dipole(omega, field) / self.max_dipole, -1.0, 1.0).astype(np.float32)
        return (action[0] if obs.ndim == 1 else action), state

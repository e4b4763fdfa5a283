"""The attitude task's interface: the observation's layout and bounds, the reward's bounds,
and the rules (tolerances, limits, weights) the compiled pipeline reads."""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.actuators import Actuators
from rigidrot_gym.attitude.components import magnetic_field, star_tracker, sun_sensors, sunlight
from rigidrot_gym.attitude.data import OBS_SIZE, Rules
from rigidrot_gym.attitude.scenario import Scenario


def observation_size(scenario: Scenario) -> int:
    """7, plus one column per reaction wheel, plus the pending action (every actuator's)
    with a delay, plus the star tracker's flag (1) with a star tracker, plus one column per
    coarse Sun sensor, plus the Sun's direction and the shadow factor (4) with the Sun, plus
    the magnetic field in the body frame (3) with the field (last)."""
    return (
        _sensor_columns(scenario).stop
        + (sunlight.COLUMNS if scenario.sun else 0)
        + (magnetic_field.COLUMNS if scenario.magnetic_field else 0)
    )


def _sensor_columns(scenario: Scenario) -> slice:
    """The columns of the star tracker's flag and the Sun sensors' outputs."""
    actuators = Actuators.of(scenario)
    start = (
        OBS_SIZE
        + (actuators.torquing if scenario.wheels else 0)
        + (actuators.count if scenario.actuation_delay else 0)
    )
    tracker = star_tracker.COLUMNS if scenario.star_tracker_model != "none" else 0
    return slice(start, start + tracker + sun_sensors.count(scenario.sun_sensors))


def observation_bounds(scenario: Scenario) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) float32 bounds of an observation: δq_w ∈ [0, 1], the star tracker's flag
    and the Sun sensors' outputs in [0, 1], the rest in [-1, 1]."""
    high = np.ones(observation_size(scenario), dtype=np.float32)
    low = -high
    low[0] = 0.0
    low[_sensor_columns(scenario)] = 0.0
    return low, high


def decode_observation(
    obs: np.ndarray, max_rate: float, max_momentum: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Error quaternions (..., 4), w ≥ 0, body rates (..., 3) in rad/s and wheel momenta
    (..., n) in N·m·s from observations (..., 7 + n [+ pending action]), n =
    ``len(max_momentum)`` (0 without wheels). Rates beyond ``max_rate`` were clipped (the
    episode ends there); wheel momenta never exceed their limits ``max_momentum``.
    Columns after the wheels (the pending action of a delayed actuator) are not read."""
    obs = np.asarray(obs, dtype=np.float64)
    limits = np.zeros(0) if max_momentum is None else np.asarray(max_momentum, dtype=np.float64)
    size = OBS_SIZE + limits.size
    if obs.ndim == 0 or obs.shape[-1] < size:
        raise ValueError(f"observations must have shape (..., {size} or more), got shape {obs.shape}")
    return obs[..., 0:4], obs[..., 4:7] * max_rate, obs[..., OBS_SIZE:size] * limits


def rules_of(scenario: Scenario) -> Rules:
    """The scenario's tolerances (rad, rad/s), limits and reward weights, as the pipeline reads them."""
    return Rules(
        pointing_tolerance=float(np.radians(scenario.pointing_tolerance_deg)),
        rate_tolerance=float(scenario.rate_tolerance),
        max_rate=float(scenario.max_rate),
        reward_angle=float(scenario.reward_angle),
        reward_rate=float(scenario.reward_rate),
        reward_torque=float(scenario.reward_torque),
        reward_success=float(scenario.reward_success),
        reward_unsafe=float(scenario.reward_unsafe),
        reward_energy=float(scenario.reward_energy),
        hold_steps=int(scenario.success_hold_steps),
        max_steps=int(scenario.max_episode_steps),
    )


def reward_bounds(scenario: Scenario) -> tuple[float, float]:
    """(min, max) of the per-step reward (an unsafe rate and a wheel saturation that ends
    the episode cost ``reward_unsafe`` once, not twice; the energy term lies in ±w_E)."""
    s = scenario
    worst = s.reward_angle + s.reward_rate + s.reward_torque + s.reward_unsafe + s.reward_energy
    return -worst, s.reward_success + s.reward_energy

"""The attitude task's interface: the observation's layout and bounds, the reward's bounds,
and the rules (tolerances, limits, weights) the compiled pipeline reads."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rigidrot_gym.attitude.actuators import Actuators
from rigidrot_gym.attitude.components import COMPONENTS
from rigidrot_gym.attitude.components.declaration import Column
from rigidrot_gym.attitude.data import OBS_SIZE, Rules
from rigidrot_gym.attitude.scenario import Scenario


class ObservationColumns(NamedTuple):
    """Columns of an observation that hold one quantity: its ``name``, the slice of the
    observation's columns, what they hold, their bounds (the observation space's) and their
    ``unit``, what a value of 1 stands for
    (:class:`~rigidrot_gym.attitude.components.declaration.Column`)."""

    name: str
    columns: slice
    meaning: str
    low: float
    high: float
    unit: str


# The observation's blocks in the order the pipeline writes them (stages.evaluate, then stages.observe): the
# attitude error and the rates, then each component's columns in the list's order (the
# field last, where the controllers read it).
_BLOCKS = (
    Column("error_w", "error quaternion δq = q_target⁻¹ ⊗ q, w (the sign with w ≥ 0)", 0.0, 1.0, 1),
    Column("error_xyz", "error quaternion, x, y, z", -1.0, 1.0, 3),
    Column("rates", "body rates ω / ``max_rate`` (clipped to ±1)", -1.0, 1.0, 3, unit="``max_rate`` (rad/s)"),
    *(column for component in COMPONENTS for column in component.columns),
)


def observation_columns(scenario: Scenario) -> tuple[ObservationColumns, ...]:
    """The scenario's observation, block by block in column order: the attitude error and
    the body rates (what ``navigation.observe`` shows of them), then the columns its options
    add."""
    found, start = [], 0
    actuators = Actuators.of(scenario)
    for block in _BLOCKS:
        width = block.width if isinstance(block.width, int) else block.width(scenario, actuators)
        if width:
            columns = slice(start, start + width)
            found.append(
                ObservationColumns(block.name, columns, block.meaning, block.low, block.high, block.unit)
            )
            start += width
    return tuple(found)


def observation_table() -> str:
    """Every block a scenario's observation may have, as a Markdown table (the env's
    docstring)."""
    rows = ["| Columns | Observation | Unit | Added by | Min | Max |", "|---|---|---|---|---|---|"]
    start = 0
    for block in _BLOCKS:
        if isinstance(block.width, int) and start is not None:
            last = start + block.width - 1
            columns = f"{start}" if last == start else f"{start}-{last}"
            start = last + 1
        else:  # where the blocks before it leave it
            start, columns = None, f"then {block.size}"
        option = block.option or "always"
        row = f"| {columns} | {block.meaning} | {block.unit} | {option} | {block.low:g} | {block.high:g} |"
        rows.append(row)
    return "\n".join(rows)


def observation_size(scenario: Scenario) -> int:
    """The observation's columns (:func:`observation_columns`)."""
    return observation_columns(scenario)[-1].columns.stop


def observation_bounds(scenario: Scenario) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) float32 bounds of an observation, block by block (:func:`observation_columns`)."""
    blocks = observation_columns(scenario)
    low = np.empty(blocks[-1].columns.stop, dtype=np.float32)
    high = np.empty_like(low)
    for block in blocks:
        low[block.columns], high[block.columns] = block.low, block.high
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
    the episode cost ``reward_unsafe`` once, not twice; the energy term lies in ±w_E), and
    each component's share (its ``reward``)."""
    s = scenario
    worst = s.reward_angle + s.reward_rate + s.reward_torque + s.reward_unsafe + s.reward_energy
    low, high = -worst, s.reward_success + s.reward_energy
    for component in COMPONENTS:
        if component.reward is not None and component.on(s):
            share = component.reward(s)
            low, high = low + share[0], high + share[1]
    return low, high

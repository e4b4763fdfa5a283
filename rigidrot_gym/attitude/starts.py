"""Episode starts: the variates each body draws at reset, and the start states they give.

Randomness comes only from the per-body generators the caller passes: one generator call per
body and reset, the same draws in the same order, so seeded runs repeat and row i of a
batch repeats a single env.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rigidrot_gym.attitude import randomization
from rigidrot_gym.attitude.draws import uniforms
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.attitude.variates import box_muller
from rigidrot_gym.physics import quaternion as quat

# Uniform variates per episode start, one generator call per body. Every scenario draws
# 12: 8 become standard normals by Box–Muller (target, attitude or axis), 4 stay uniform
# (angle, rates). A realistic scenario draws 24 more: 12 normals (rate bias, direction of
# the constant disturbance, initial random-walk torque, axis of the inertia turn) and 12
# uniforms (noise key, orbit phase, inertia scales, turn angle, torque-limit scales,
# start-range scales), whether or not each option uses its own.
NORMALS, UNIFORMS = 8, 4
BASE_VARIATES = NORMALS + UNIFORMS
REALISM_VARIATES = 24
BIAS, CONSTANT, WALK, TURN_AXIS = slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 12)
KEY, PHASE, INERTIA, TURN_ANGLE = 12, 13, slice(14, 17), 17
TORQUE, START_ANGLE, START_RATE = slice(18, 22), 22, 23


def draw_variates(rngs: Sequence[np.random.Generator], realistic: bool = False) -> np.ndarray:
    """(R, 12 or 36) variates for the episode starts of R bodies, row j from ``rngs[j]``: the
    same draws in the same order as ``rngs[j].random(12 or 36)`` (so seeded runs repeat
    and row i of a batch repeats a single env), in one compiled call for many bodies
    (:func:`~rigidrot_gym.attitude.draws.uniforms`)."""
    return uniforms(rngs, BASE_VARIATES + (REALISM_VARIATES if realistic else 0))


def realism_variates(variates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, 12) standard normals and (R, 24) uniforms of the realism block (normals at
    the slices ``BIAS`` …, uniforms at ``KEY`` …, indexed in the second array)."""
    extra = variates[:, BASE_VARIATES:]
    return box_muller(extra[:, :12]), extra


def start_states(scenario: Scenario, variates: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Attitudes (R, 4), body rates (R, 3) and targets (R, 4) from variates (R, 12 or 36)
    of :func:`draw_variates`.

    Target: uniform on SO(3) (a normalised 4-D normal) or fixed. Attitude: uniform, or
    the target turned by an angle uniform in [0, ``start_max_angle_deg``] about a uniform
    axis, or fixed. Rates: ``start_rate`` + uniform in ±``start_rate_spread`` per axis.
    With ``randomize_start`` the angle bound and the rate spread are themselves scaled
    by 1 ± that fraction per episode (the angle bound at most 180°).
    """
    rows = variates.shape[0]
    g, u = box_muller(variates[:, :NORMALS]), variates[:, NORMALS:BASE_VARIATES]
    max_angle, rate_spread = np.radians(scenario.start_max_angle_deg), scenario.start_rate_spread
    if scenario.randomize_start:
        extra = realism_variates(variates)[1]
        max_angle = np.minimum(
            np.pi, randomization.spread(max_angle, scenario.randomize_start, extra[:, START_ANGLE])
        )
        rate_spread = randomization.spread(rate_spread, scenario.randomize_start, extra[:, START_RATE])[
            :, None
        ]
    if isinstance(scenario.target_attitude, str):
        target = g[:, 0:4] / np.linalg.norm(g[:, 0:4], axis=-1, keepdims=True)
    else:
        target = np.tile(scenario.target_attitude, (rows, 1))
    if isinstance(scenario.start_attitude, str) and scenario.start_attitude == "random":
        q = g[:, 4:8] / np.linalg.norm(g[:, 4:8], axis=-1, keepdims=True)
    elif isinstance(scenario.start_attitude, str):
        axis = g[:, 4:7] / np.linalg.norm(g[:, 4:7], axis=-1, keepdims=True)
        angle = (max_angle * u[:, 0])[:, None]
        q = quat.multiply(target, quat.from_rotvec(angle * axis))
    else:
        q = np.tile(scenario.start_attitude, (rows, 1))
    omega = np.asarray(scenario.start_rate) + rate_spread * (2.0 * u[:, 1:4] - 1.0)
    return q, omega, target

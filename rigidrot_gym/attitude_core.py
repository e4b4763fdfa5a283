"""The attitude-control task as one batched core.

The single env (:mod:`rigidrot_gym.attitude_env`), the native vector env
(:mod:`rigidrot_gym.attitude_vector_env`) and the stable-baselines3 adapter
(:mod:`rigidrot_gym.sb3`) all run :class:`AttitudeBatch`; the dynamics are the
library's integrators, called through :meth:`Method.run` on the whole batch at once.

Per body the core keeps the integrator state in principal axes, the target attitude,
and the body's own inertia, principal frame and actuator limits (domain randomisation
re-draws them per body at reset). Each step:

1. the action a ∈ [-1, 1]ⁿ (clipped) becomes the actuator torques u = a ⊙ u_max
   (:mod:`rigidrot_gym.actuators`: ideal torquers, τ = u, or reaction wheels,
   τ = −A u), held over the control period, plus any disturbance torque;
2. the method advances every body by ``dt`` in ``substeps`` steps;
3. a compiled kernel computes observation, reward, pointing error and flags.

The realism options of a scenario (:attr:`Scenario.realistic`) add, in compiled kernels
over the bodies: a one-step actuation delay, actuator noise, wheel momentum and its limits,
constant and random-walk disturbances, the gravity gradient, sensor noise on the
observation (the reward sees the truth) and domain randomisation.

Randomness comes only from the per-body generators passed in by the caller: the draws
at reset directly, the per-step noise through a counter-based stream keyed at reset
(:mod:`rigidrot_gym.variates`), so row i of a batch repeats a single env.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from rigidrot_gym import integrators, randomization, torques, validation
from rigidrot_gym import quaternion as quat
from rigidrot_gym import vector as vec
from rigidrot_gym.actuators import Actuators, limit_by_momentum
from rigidrot_gym.disturbances import mean_motion, ornstein_uhlenbeck
from rigidrot_gym.inertia import principal_frame
from rigidrot_gym.integrators.base import STATE_SIZE
from rigidrot_gym.jit import jitable, select
from rigidrot_gym.quaternion import qconj, qexp, qmul, qrotate, qrotate_inv
from rigidrot_gym.scenario import Scenario
from rigidrot_gym.variates import box_muller, counter_normals, keys_of

# Observation: error quaternion (4) and body rates (3), then one column per reaction
# wheel (its momentum), then, with an actuation delay, the action not yet applied.
OBS_SIZE = 7
# Order of the task constants in the array the compiled kernel reads.
_CONSTANTS = (
    "pointing_tolerance",
    "rate_tolerance",
    "max_rate",
    "reward_angle",
    "reward_rate",
    "reward_torque",
    "reward_success",
    "reward_unsafe",
)


def observation_size(scenario: Scenario) -> int:
    """7, plus one column per reaction wheel, plus the pending action with a delay."""
    count = Actuators.of(scenario).count
    return OBS_SIZE + (count if scenario.wheels else 0) + (count if scenario.actuation_delay else 0)


def observation_bounds(scenario: Scenario) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) float32 bounds of an observation: δq_w ∈ [0, 1], the rest in [-1, 1]."""
    high = np.ones(observation_size(scenario), dtype=np.float32)
    low = -high
    low[0] = 0.0
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


def task_constants(scenario: Scenario) -> np.ndarray:
    """The scenario's tolerances (rad, rad/s) and reward weights, as the kernel reads them."""
    values = {
        "pointing_tolerance": np.radians(scenario.pointing_tolerance_deg),
        "rate_tolerance": scenario.rate_tolerance,
        "max_rate": scenario.max_rate,
        "reward_angle": scenario.reward_angle,
        "reward_rate": scenario.reward_rate,
        "reward_torque": scenario.reward_torque,
        "reward_success": scenario.reward_success,
        "reward_unsafe": scenario.reward_unsafe,
    }
    return np.array([values[k] for k in _CONSTANTS])


def reward_bounds(scenario: Scenario) -> tuple[float, float]:
    """(min, max) of the per-step reward (an unsafe rate and a wheel saturation that ends
    the episode cost ``reward_unsafe`` once, not twice)."""
    worst = scenario.reward_angle + scenario.reward_rate + scenario.reward_torque + scenario.reward_unsafe
    return -worst, scenario.reward_success


# ----------------------------------------------------------------------- compiled kernels


@jitable
def _row4(a, i):
    return (a[i, 0], a[i, 1], a[i, 2], a[i, 3])


@jitable
def _row3(a, i):
    return (a[i, 0], a[i, 1], a[i, 2])


@jitable
def _first_nonfinite(action):
    """The first body whose action holds a NaN or an infinity, or -1."""
    for i in range(action.shape[0]):
        for k in range(action.shape[1]):
            if not np.isfinite(action[i, k]):
                return i
    return -1


@jitable
def _hold_torque(tau, principal, params, i):
    """Store body i's body-frame torque τ in principal axes as its held torque."""
    tau = qrotate_inv(_row4(principal, i), tau)
    params[i, torques.BODY], params[i, torques.BODY + 1], params[i, torques.BODY + 2] = tau


@njit(cache=True, error_model="numpy")
def _apply_action(action, max_torque, principal, params, clipped):
    """Ideal torquers, no realism options: τ_body = clip(a, -1, 1) ⊙ τ_max, held.

    Returns the first body whose action is not finite (then nothing is written), or -1.
    """
    bad = _first_nonfinite(action)
    if bad >= 0:
        return bad
    for i in range(action.shape[0]):
        a = (
            min(max(action[i, 0], -1.0), 1.0),
            min(max(action[i, 1], -1.0), 1.0),
            min(max(action[i, 2], -1.0), 1.0),
        )
        clipped[i, 0], clipped[i, 1], clipped[i, 2] = a
        _hold_torque(vec.mul(a, _row3(max_torque, i)), principal, params, i)
    return -1


@njit(cache=True, error_model="numpy")
def _clip_actions(action, clipped):
    """clip(a, -1, 1) into ``clipped``; returns the first body whose action is not
    finite (then nothing is written), or -1."""
    bad = _first_nonfinite(action)
    if bad >= 0:
        return bad
    for i in range(action.shape[0]):
        for k in range(action.shape[1]):
            clipped[i, k] = min(max(action[i, k], -1.0), 1.0)
    return -1


@njit(cache=True, error_model="numpy")
def _actuate(
    clipped, pending, delay, noise, keys, steps, max_torque, wheels, wheel_momenta, max_momentum, dt, commands
):
    """Actuator torques u (N, n), N·m, of the clipped actions a: with ``delay`` the
    pending action acts and a waits in ``pending``; u = a ⊙ u_max, times (1 + σ ξ) with
    actuator ``noise`` σ and clipped to the limit; wheel torques cut by the momentum limit
    (:func:`limit_by_momentum`)."""
    xi = (0.0, 0.0)
    for i in range(clipped.shape[0]):
        for k in range(clipped.shape[1]):
            a = clipped[i, k]
            if delay:
                a, pending[i, k] = pending[i, k], a
            u = a * max_torque[i, k]
            if noise:
                if k % 2 == 0:
                    xi = counter_normals(keys[i], steps[i], _ACT + k // 2, _STEP_PAIRS)
                u = u * (1.0 + noise * xi[k % 2])
                u = min(max(u, -max_torque[i, k]), max_torque[i, k])
            if wheels:
                u = limit_by_momentum(u, wheel_momenta[i, k], max_momentum[k], dt)
            commands[i, k] = u


@njit(cache=True, error_model="numpy")
def _load_torques(commands, wheel_momenta, axes, sign, principal, disturbances, phase, steps, params, wheels):
    """Held body torque τ = sign · A u + d (body frame) of actuator torques u (N, n)
    about the columns of ``axes`` A (3, n), plus the disturbances d, the sum of
    ``disturbances`` (2, N, 3); with ``wheels`` also the wheel momentum h = A h_w and its
    rate A u of the torque model. ``phase`` (N,) and the phase advance per step (a
    scalar, 0 without gravity gradient) give the orbit phase at step ``steps``. Per body,
    in a fixed order of operations (a matrix product's summation order depends on the
    batch size, and row i of a batch must repeat a single env bit for bit)."""
    phase_start, phase_per_step = phase
    for i in range(commands.shape[0]):
        b = _row4(principal, i)
        tau = vec.add(_row3(disturbances[0], i), _row3(disturbances[1], i))
        h = hdot = (0.0, 0.0, 0.0)
        for k in range(commands.shape[1]):
            axis = (axes[0, k], axes[1, k], axes[2, k])
            tau = vec.axpy(sign * commands[i, k], axis, tau)
            if wheels:
                h = vec.axpy(wheel_momenta[i, k], axis, h)
                hdot = vec.axpy(commands[i, k], axis, hdot)
        _hold_torque(tau, principal, params, i)
        if wheels:
            h, hdot = qrotate_inv(b, h), qrotate_inv(b, hdot)
            params[i, torques.WHEEL_H], params[i, torques.WHEEL_H + 1], params[i, torques.WHEEL_H + 2] = h
            w = torques.WHEEL_HDOT
            params[i, w], params[i, w + 1], params[i, w + 2] = hdot
        if phase_per_step:
            params[i, torques.GG_PHASE] = phase_start[i] + phase_per_step * steps[i]


@njit(cache=True, error_model="numpy")
def _advance_realism(
    commands, dt, wheels, max_momentum, walk, keys, steps, wheel_momenta, saturated, walk_torque
):
    """End of a control period: wheel momenta h_w += u dt (clipped: the commands were cut
    to stay within the limit, so the clip only removes round-off) and their saturation
    flags; the random-walk disturbance (``walk``: σ, τ; σ = 0 for none) one step on."""
    walk_std, correlation_time = walk
    for i in range(commands.shape[0]):
        if wheels:
            hit = False
            for k in range(commands.shape[1]):
                limit = max_momentum[k]
                h = min(max(wheel_momenta[i, k] + commands[i, k] * dt, -limit), limit)
                wheel_momenta[i, k] = h
                hit = hit or abs(h) >= limit * (1.0 - 1e-9)
            saturated[i] = hit
        if walk_std:
            xy = counter_normals(keys[i], steps[i], _DIST, _STEP_PAIRS)
            xi = (xy[0], xy[1], counter_normals(keys[i], steps[i], _DIST + 1, _STEP_PAIRS)[0])
            for k in range(3):
                walk_torque[i, k] = ornstein_uhlenbeck(
                    walk_torque[i, k], walk_std, correlation_time, dt, xi[k]
                )


@njit(cache=True, error_model="numpy")
def _sense(state, principal, keys, steps, after, noise, bias, rows, sensed):
    """The state of the bodies ``rows`` as the sensors report it at episode step
    ``steps + after``: attitude turned by a small random body rotation (per-axis std
    ``noise[0]``, rad), rates plus ``bias`` and white noise (std ``noise[1]``, rad/s). In
    principal axes, as the kernels read it (B* v B for a body-frame vector v)."""
    attitude_std, rate_std = noise
    for i in rows:
        key, step = keys[i], steps[i] + after
        p0 = counter_normals(key, step, _SENSORS, _STEP_PAIRS)
        p1 = counter_normals(key, step, _SENSORS + 1, _STEP_PAIRS)
        p2 = counter_normals(key, step, _SENSORS + 2, _STEP_PAIRS)
        xi, eta = (p0[0], p0[1], p1[0]), (p1[1], p2[0], p2[1])
        b = _row4(principal, i)
        turn = qrotate_inv(b, vec.scale(attitude_std, xi))
        rate_error = qrotate_inv(b, vec.axpy(rate_std, eta, _row3(bias, i)))
        q = qmul(_row4(state, i), qexp(vec.scale(0.5, turn)))
        w = vec.add((state[i, 4], state[i, 5], state[i, 6]), rate_error)
        sensed[i, 0], sensed[i, 1], sensed[i, 2], sensed[i, 3] = q
        sensed[i, 4], sensed[i, 5], sensed[i, 6] = w
        for k in range(7, state.shape[1]):
            sensed[i, k] = state[i, k]


@njit(cache=True, error_model="numpy")
def _observe_actuators(rows, wheel_momenta, max_momentum, pending, end_on_saturation, saturated, obs, out):
    """Wheel momenta h_w / h_max (columns ``OBS_SIZE`` on) and the pending action (the
    last columns) of the bodies ``rows`` in their observations; with
    ``end_on_saturation`` (0, or the unsafe penalty), a saturated wheel ends the episode
    as unsafe."""
    wheels, delayed = wheel_momenta.shape[1], pending.shape[1]
    first_pending = obs.shape[1] - delayed
    for i in rows:
        for k in range(wheels):
            obs[i, OBS_SIZE + k] = wheel_momenta[i, k] / max_momentum[k]
        for k in range(delayed):
            obs[i, first_pending + k] = pending[i, k]
        if end_on_saturation and saturated[i] and not out[i, TERMINATED]:
            out[i, REWARD] -= end_on_saturation
            out[i, TERMINATED], out[i, TRUNCATED] = 1.0, 0.0


@jitable
def body_frame(state, principal, principal_axes, i):
    """Attitude q = q_p ⊗ B* and rates ω = B ω_p of body i in its own body frame
    (the state itself when every body's frame is ``principal_axes``)."""
    q = (state[i, 0], state[i, 1], state[i, 2], state[i, 3])
    w = (state[i, 4], state[i, 5], state[i, 6])
    if principal_axes:
        return q, w
    b = _row4(principal, i)
    return qmul(q, qconj(b)), qrotate(b, w)


# Columns of the per-body outputs.
REWARD, POINTING_DEG, RATE, SUCCESS, TERMINATED, TRUNCATED = range(6)
# Columns of the intermediate results between the two kernels.
_SIN_HALF, _COS_HALF, _HALF_ANGLE = range(3)


@njit(cache=True, error_model="numpy")
def _observe(state, principal, principal_axes, target, max_rate, rows, obs, half):
    """Observation (float32) of the bodies ``rows``, and the sine and cosine of half
    their pointing error, |δq_xyz| and |δq_w|, into ``half`` (3, N)."""
    inv_max_rate = 1.0 / max_rate
    for i in rows:
        q, w = body_frame(state, principal, principal_axes, i)
        error = qmul(qconj(_row4(target, i)), q)
        sign = select(error[0] < 0.0, -1.0, 1.0)
        obs[i, 0], obs[i, 1] = sign * error[0], sign * error[1]
        obs[i, 2], obs[i, 3] = sign * error[2], sign * error[3]
        obs[i, 4] = min(max(w[0] * inv_max_rate, -1.0), 1.0)
        obs[i, 5] = min(max(w[1] * inv_max_rate, -1.0), 1.0)
        obs[i, 6] = min(max(w[2] * inv_max_rate, -1.0), 1.0)
        half[_SIN_HALF, i] = vec.norm((error[1], error[2], error[3]))
        half[_COS_HALF, i] = abs(error[0])


@njit(cache=True, error_model="numpy")
def _assess(state, action, constants, rows, stepped, steps, hold, limits, half, out):
    """Reward, pointing error, rate and flags of the bodies ``rows`` from their half
    pointing angles (``half[_HALF_ANGLE]``).

    With ``stepped`` the bodies have just advanced: count the step and the successful
    streak and decide termination (unsafe rate, or success held ``limits[0]`` steps if
    that is > 0) and truncation (``limits[1]`` steps if > 0); else both flags are false.
    """
    tol_angle, tol_rate, max_rate = constants[0], constants[1], constants[2]
    hold_steps, max_steps = limits[0], limits[1]
    # Products with reciprocals: a division per body costs more than the rest.
    inv_max_rate, inv_pi, to_degrees = 1.0 / max_rate, 1.0 / np.pi, 180.0 / np.pi
    inv_actions = 1.0 / action.shape[1]
    for i in rows:
        angle = 2.0 * half[_HALF_ANGLE, i]
        rate = vec.norm((state[i, 4], state[i, 5], state[i, 6]))  # |ω| is the same in any frame
        success = angle <= tol_angle and rate <= tol_rate
        unsafe = rate > max_rate
        effort = 0.0
        for k in range(action.shape[1]):
            effort += action[i, k] ** 2
        effort *= inv_actions
        penalty = (
            constants[3] * angle * inv_pi
            + constants[4] * min(rate * inv_max_rate, 1.0)
            + constants[5] * effort
        )
        terminated = truncated = False
        if stepped:
            steps[i] += 1
            hold[i] = hold[i] + 1 if success else 0
            terminated = unsafe or (hold_steps > 0 and hold[i] >= hold_steps)
            truncated = not terminated and max_steps > 0 and steps[i] >= max_steps
        out[i, REWARD] = -penalty + constants[6] * success - constants[7] * unsafe
        out[i, POINTING_DEG] = angle * to_degrees
        out[i, RATE] = rate
        out[i, SUCCESS] = success
        out[i, TERMINATED] = terminated
        out[i, TRUNCATED] = truncated


# ----------------------------------------------------------------------- the batch


# Uniform variates per episode start, one generator call per body. Every scenario draws
# 12: 8 become standard normals by Box–Muller (target, attitude or axis), 4 stay uniform
# (angle, rates). A realistic scenario draws 24 more: 12 normals (rate bias, direction of
# the constant disturbance, initial random-walk torque, axis of the inertia turn) and 12
# uniforms (noise key, orbit phase, inertia scales, turn angle, torque-limit scales,
# start-range scales), whether or not each option uses its own.
NORMALS, UNIFORMS = 8, 4
BASE_VARIATES = NORMALS + UNIFORMS
REALISM_VARIATES = 24
_BIAS, _CONSTANT, _WALK, _TURN_AXIS = slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 12)
_KEY, _PHASE, _INERTIA, _TURN_ANGLE = 12, 13, slice(14, 17), 17
_TORQUE, _START_ANGLE, _START_RATE = slice(18, 22), 22, 23
# Pairs of standard normals per body and step of the counter-based stream, and the
# first pair of each use: actuator noise (up to 4 wheels), sensors (attitude and rate
# noise, 3 each), random-walk disturbance (3).
_STEP_PAIRS = 7
_ACT, _SENSORS, _DIST = 0, 2, 5


def draw_variates(rng: np.random.Generator, realistic: bool = False) -> np.ndarray:
    """One body's variates for an episode start: a single call to its generator (cheap
    when thousands of bodies restart together), the same draws in the same order (so
    seeded runs repeat and row i of a batch repeats a single env)."""
    return rng.random(BASE_VARIATES + (REALISM_VARIATES if realistic else 0))


def realism_variates(variates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, 12) standard normals and (R, 24) uniforms of the realism block (normals at
    the slices ``_BIAS`` …, uniforms at ``_KEY`` …, indexed in the second array)."""
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
            np.pi, randomization.spread(max_angle, scenario.randomize_start, extra[:, _START_ANGLE])
        )
        rate_spread = randomization.spread(rate_spread, scenario.randomize_start, extra[:, _START_RATE])[
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


def _option(options: dict, key: str, kind: str) -> np.ndarray | None:
    if key not in options:
        return None
    if kind == "quaternion":
        return validation.unit_quaternions(options[key], f"options[{key!r}]").reshape(4)
    return validation.vectors(options[key], f"options[{key!r}]", 3).reshape(3)


def _info(pointing_error_deg, rate, success, wheels: tuple[np.ndarray, Any] | None = None) -> dict[str, Any]:
    info = {"pointing_error_deg": float(pointing_error_deg), "rate": float(rate), "is_success": bool(success)}
    if wheels is not None:
        info["wheel_momentum"], info["wheel_saturated"] = wheels[0].copy(), bool(wheels[1])
    return info


@dataclass
class StepResult:
    """One batched step: arrays over the bodies (copies, safe to keep).

    ``wheel_momentum`` (N, n) N·m·s and ``wheel_saturated`` (N,) are empty (n = 0) and
    false without reaction wheels.
    """

    obs: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    pointing_error_deg: np.ndarray
    rate: np.ndarray
    is_success: np.ndarray
    wheel_momentum: np.ndarray
    wheel_saturated: np.ndarray

    def info(self, i: int) -> dict[str, Any]:
        """Env i's ``info`` dict (wheel entries only with wheels)."""
        wheels = (self.wheel_momentum[i], self.wheel_saturated[i]) if self.wheel_momentum.shape[1] else None
        return _info(self.pointing_error_deg[i], self.rate[i], self.is_success[i], wheels)

    def info_arrays(self) -> dict[str, np.ndarray]:
        """The same entries as arrays over the envs (Gymnasium's vector ``info``)."""
        arrays = {
            "pointing_error_deg": self.pointing_error_deg,
            "rate": self.rate,
            "is_success": self.is_success,
        }
        if self.wheel_momentum.shape[1]:
            arrays["wheel_momentum"] = self.wheel_momentum
            arrays["wheel_saturated"] = self.wheel_saturated
        return arrays


class AttitudeBatch:
    """N attitude-control bodies stepped together.

    Args:
        scenario: the task.
        num_bodies: N.
        max_episode_steps: truncate after this many steps (``None``: never; the single
            env leaves truncation to Gymnasium's ``TimeLimit``).
        integrator_options: options of the scenario's integrator (e.g. ``tol``).
    """

    def __init__(
        self,
        scenario: Scenario,
        num_bodies: int,
        max_episode_steps: int | None = None,
        integrator_options: dict[str, Any] | None = None,
    ):
        self.scenario = scenario
        self.num_bodies = validation.count(num_bodies, "num_envs", minimum=1)
        self.max_episode_steps = max_episode_steps
        self.method = integrators.get(scenario.integrator)
        self.opts = self.method.pack_options(integrator_options or {})
        self.constants = task_constants(scenario)
        self.actuators = Actuators.of(scenario)
        moments, principal, _ = principal_frame(scenario.inertia)
        self._nominal = (moments, quat.identity() if principal is None else principal)
        n, m = self.num_bodies, self.actuators.count
        # per-body copies (domain randomisation writes rows)
        self.moments = np.tile(moments, (n, 1))
        self.principal = np.tile(self._nominal[1], (n, 1))
        self.max_torque = np.tile(self.actuators.max_torque, (n, 1))
        self.loads = torques.Loads(np.zeros((n, torques.SIZE)))
        self.state = np.zeros((n, STATE_SIZE))
        self.target = np.tile(quat.identity(), (n, 1))
        self.steps = np.zeros(n, dtype=np.int64)
        self.hold = np.zeros(n, dtype=np.int64)
        self.rngs: list[np.random.Generator] = []
        self.obs = np.zeros((n, observation_size(scenario)), dtype=np.float32)
        self.out = np.zeros((n, TRUNCATED + 1))
        self.wheel_momentum = np.zeros((n, m if scenario.wheels else 0))
        self.wheel_saturated = np.zeros(n, dtype=bool)
        self._clipped = np.zeros((n, m))
        self._principal_axes = principal is None and not scenario.randomize_inertia_rotation_deg
        self._half = np.zeros((3, n))  # component-major: numpy's arctan2 is SIMD (and the
        # same for every batch size) only on contiguous rows
        self._all = np.arange(n)
        self._limits = np.array([scenario.success_hold_steps, max_episode_steps or 0], dtype=np.int64)
        self._traj, self._stats = self.method.buffers(n, 1, record=False)
        self._realistic, self._wheels = scenario.realistic, scenario.wheels
        if self._realistic:
            self._init_realism()

    def _init_realism(self) -> None:
        s, n = self.scenario, self.num_bodies
        self._commands = np.zeros_like(self._clipped)  # actuator torques applied, N·m
        self._axes = np.ascontiguousarray(self.actuators.axes)
        self._keys = np.zeros(n, dtype=np.uint64)
        self._bias = np.zeros((n, 3))  # rate-sensor bias, body frame, rad/s
        # constant and random-walk disturbance torques, body frame, N·m
        self._disturbances = np.zeros((2, n, 3))
        self._constant, self._walk = self._disturbances
        self._pending = np.zeros((n, self._clipped.shape[1] if s.actuation_delay else 0))  # delayed action
        self._walk_law = np.array([s.disturbance_random_walk, s.disturbance_correlation_time])
        self._sensor_noise = np.array([np.radians(s.attitude_noise_deg), s.rate_noise])
        self._noisy_sensors = bool(s.attitude_noise_deg or s.rate_noise or s.rate_bias)
        self._sensed = np.zeros_like(self.state)
        self._scratch_obs = np.zeros_like(self.obs)
        self._scratch_half = np.zeros_like(self._half)
        self._end_on_saturation = s.reward_unsafe if s.wheel_terminate_on_saturation else 0.0
        motion = mean_motion(s.orbit_altitude) if s.gravity_gradient else 0.0
        # orbit phase at the episode start (rad) and its advance per control period
        self._phase = (np.zeros(n), motion * s.dt)
        if s.gravity_gradient:
            p = self.loads.params
            p[:, torques.GG_RATE] = 3.0 * motion**2
            p[:, torques.GG_MOTION] = motion
            p[:, torques.GG_MOMENTS : torques.GG_MOMENTS + 3] = self.moments

    def reset_rows(self, rows: Sequence[int] | np.ndarray, options: dict | None = None) -> None:
        """Draw new episodes for ``rows`` from their generators (``self.rngs``).

        ``options`` may fix ``"attitude"`` ([w, x, y, z]), ``"rate"`` (rad/s, body
        frame) and ``"target"`` ([w, x, y, z]) for every row reset.

        Raises:
            ValueError: for an unknown option or an invalid value (state unchanged).
        """
        options = dict(options or {})
        unknown = sorted(set(options) - {"attitude", "rate", "target"})
        if unknown:
            raise ValueError(f"unknown reset option(s) {unknown}; valid: 'attitude', 'rate', 'target'")
        fixed = (
            _option(options, "attitude", "quaternion"),
            _option(options, "rate", "vector"),
            _option(options, "target", "quaternion"),
        )
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        realistic = self._realistic
        variates = np.array([draw_variates(self.rngs[i], realistic) for i in rows]).reshape(rows.size, -1)
        q, omega, target = start_states(self.scenario, variates)
        for value, where in zip(fixed, (q, omega, target), strict=True):
            if value is not None:
                where[:] = value
        if realistic:
            self._reset_realism(rows, variates)
        b = self.principal[rows]
        self.state[rows] = 0.0
        self.state[rows, 0:4] = quat.multiply(q, b)
        self.state[rows, 4:7] = quat.rotate_inverse(b, omega)
        self.target[rows] = target
        self.steps[rows] = 0
        self.hold[rows] = 0

    def _reset_realism(self, rows: np.ndarray, variates: np.ndarray) -> None:
        """Per-episode draws of the realism options for ``rows``: the body itself (domain
        randomisation), wheel momenta (zero), sensor bias, disturbances, orbit phase."""
        s = self.scenario
        g, u = realism_variates(variates)
        moments, principal = self._nominal
        if s.randomize_inertia:
            self.moments[rows] = randomization.scaled_moments(moments, s.randomize_inertia, u[:, _INERTIA])
        if s.randomize_inertia_rotation_deg:
            turn = np.radians(s.randomize_inertia_rotation_deg)
            self.principal[rows] = randomization.turned_axes(
                principal, turn, g[:, _TURN_AXIS], u[:, _TURN_ANGLE]
            )
        if s.randomize_torque:
            m = self.actuators.count
            self.max_torque[rows] = randomization.spread(
                self.actuators.max_torque, s.randomize_torque, u[:, _TORQUE][:, :m]
            )
        self._keys[rows] = keys_of(u[:, _KEY])
        self._bias[rows] = s.rate_bias * g[:, _BIAS]
        direction = g[:, _CONSTANT] / np.linalg.norm(g[:, _CONSTANT], axis=-1, keepdims=True)
        self._constant[rows] = s.disturbance_constant * direction
        self._walk[rows] = s.disturbance_random_walk * g[:, _WALK]  # from its stationary law
        self._phase[0][rows] = 2.0 * np.pi * u[:, _PHASE]
        self._pending[rows] = 0.0
        self.wheel_momentum[rows] = 0.0
        self.wheel_saturated[rows] = False
        self.loads.params[rows, torques.GG_MOMENTS : torques.GG_MOMENTS + 3] = (
            self.moments[rows] if s.gravity_gradient else 0.0
        )

    def observe(self) -> None:
        """Compute the observation and outputs of the current state of every body (not
        advanced) into :attr:`obs` and :attr:`out`."""
        self._clipped[:] = 0.0
        self._evaluate(self._all, stepped=False)

    def step(self, action: np.ndarray) -> None:
        """Apply ``action`` ((N, n), clipped to [-1, 1]) for one control period; the
        results land in :attr:`obs` (N, 7 + wheels) and :attr:`out` (N, 6, columns
        ``REWARD`` ...).

        Raises:
            ValueError: if an action is NaN or infinite (nothing is advanced).
        """
        action = np.asarray(action).reshape(self._clipped.shape)
        if self._realistic:
            bad = _clip_actions(action, self._clipped)
        else:
            bad = _apply_action(action, self.max_torque, self.principal, self.loads.params, self._clipped)
        if bad >= 0:
            raise ValueError(f"action must be finite, got {action[bad].tolist()}")
        if self._realistic:
            self._load_realistic()
        s = self.scenario
        self.method.run(
            self.state,
            self.moments,
            self.loads,
            0.0,
            s.dt,
            1,
            s.substeps,
            self.opts,
            False,
            self._traj,
            self._stats,
        )
        if self._realistic:
            _advance_realism(
                self._commands,
                s.dt,
                self._wheels,
                self.actuators.max_momentum,
                self._walk_law,
                self._keys,
                self.steps,
                self.wheel_momentum,
                self.wheel_saturated,
                self._walk,
            )
        self._evaluate(self._all, stepped=True)

    def _load_realistic(self) -> None:
        """Actuator torques after delay, noise and wheel momentum limits; the held
        disturbance; the wheel momentum and orbit phase of the torque model."""
        s = self.scenario
        _actuate(
            self._clipped,
            self._pending,
            s.actuation_delay,
            s.actuator_noise,
            self._keys,
            self.steps,
            self.max_torque,
            self._wheels,
            self.wheel_momentum,
            self.actuators.max_momentum,
            s.dt,
            self._commands,
        )
        _load_torques(
            self._commands,
            self.wheel_momentum,
            self._axes,
            self.actuators.sign,
            self.principal,
            self._disturbances,
            self._phase,
            self.steps,
            self.loads.params,
            self._wheels,
        )

    def restart(self, rows: np.ndarray, options: dict | None = None) -> None:
        """Reset ``rows`` and recompute their observations and outputs (rewards and flags
        of those rows are left to the caller's autoreset convention)."""
        self.reset_rows(rows, options)
        self._clipped[rows] = 0.0
        reward, flags = self.out[rows, REWARD], self.out[rows, TERMINATED : TRUNCATED + 1]
        self._evaluate(rows, stepped=False)
        self.out[rows, REWARD], self.out[rows, TERMINATED : TRUNCATED + 1] = reward, flags

    def result(self) -> StepResult:
        """The last step's arrays, copied."""
        out = self.out
        return StepResult(
            obs=self.obs.copy(),
            reward=out[:, REWARD].copy(),
            terminated=out[:, TERMINATED] > 0.5,
            truncated=out[:, TRUNCATED] > 0.5,
            pointing_error_deg=out[:, POINTING_DEG].copy(),
            rate=out[:, RATE].copy(),
            is_success=out[:, SUCCESS] > 0.5,
            wheel_momentum=self.wheel_momentum.copy(),
            wheel_saturated=self.wheel_saturated.copy(),
        )

    def _evaluate(self, rows: np.ndarray, stepped: bool) -> None:
        """Observation, reward and flags of ``rows``. The pointing angle is computed by
        numpy between two kernels: its arctan2 runs vectorised, four times faster than
        the scalar one a kernel calls. With sensor noise the observation comes from a
        perturbed copy of the state; the reward and flags always from the true state."""
        principal_axes, half, max_rate = self._principal_axes, self._half, self.scenario.max_rate
        if self._realistic and self._noisy_sensors:
            after = 1 if stepped else 0  # the sensors read the state after this step
            sensed = self._sensed
            _sense(
                self.state,
                self.principal,
                self._keys,
                self.steps,
                after,
                self._sensor_noise,
                self._bias,
                rows,
                sensed,
            )
            _observe(
                sensed,
                self.principal,
                principal_axes,
                self.target,
                max_rate,
                rows,
                self.obs,
                self._scratch_half,
            )
            _observe(
                self.state,
                self.principal,
                principal_axes,
                self.target,
                max_rate,
                rows,
                self._scratch_obs,
                half,
            )
        else:
            _observe(self.state, self.principal, principal_axes, self.target, max_rate, rows, self.obs, half)
        np.arctan2(half[_SIN_HALF], half[_COS_HALF], out=half[_HALF_ANGLE])
        _assess(
            self.state,
            self._clipped,
            self.constants,
            rows,
            stepped,
            self.steps,
            self.hold,
            self._limits,
            half,
            self.out,
        )
        if self._realistic:
            _observe_actuators(
                rows,
                self.wheel_momentum,
                self.actuators.max_momentum,
                self._pending,
                self._end_on_saturation if stepped else 0.0,
                self.wheel_saturated,
                self.obs,
                self.out,
            )

    def info(self, i: int) -> dict[str, Any]:
        """Body i's ``info`` dict now (as :meth:`StepResult.info`, without copying the batch)."""
        out = self.out[i]
        wheels = (self.wheel_momentum[i], self.wheel_saturated[i]) if self._wheels else None
        return _info(out[POINTING_DEG], out[RATE], out[SUCCESS] > 0.5, wheels)

    def inertia(self) -> np.ndarray:
        """(N, 3, 3) body-frame inertia tensors J = B diag(m) Bᵀ of this episode's bodies
        (the scenario's, unless domain randomisation re-drew them), kg·m²."""
        b = quat.to_matrix(self.principal)
        return np.einsum("nij,nj,nkj->nik", b, self.moments, b)

    def body_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(N, 4) attitudes and (N, 3) body rates in each body's own frame."""
        q_p, w_p = self.state[:, 0:4], self.state[:, 4:7]
        return quat.multiply(q_p, quat.conjugate(self.principal)), quat.rotate(self.principal, w_p)

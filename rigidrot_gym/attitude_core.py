"""The attitude-control task as one batched core.

The single env (:mod:`rigidrot_gym.attitude_env`), the native vector env
(:mod:`rigidrot_gym.attitude_vector_env`) and the stable-baselines3 adapter
(:mod:`rigidrot_gym.sb3`) all run :class:`AttitudeBatch`; the dynamics are the
library's integrators, called through :meth:`Method.run` on the whole batch at once.

Per body the core keeps the integrator state in principal axes, the target attitude,
and the body's own inertia, principal frame and torque limits (so that a later domain
randomisation can differ per body). Each step:

1. the action a ∈ [-1, 1]³ (clipped) becomes the body torque τ = a ⊙ τ_max, held over
   the control period;
2. the method advances every body by ``dt`` in ``substeps`` steps;
3. a compiled kernel computes observation, reward, pointing error and flags.

Randomness comes only from the per-body generators passed in by the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit

from rigidrot_gym import integrators, torques, validation
from rigidrot_gym import quaternion as quat
from rigidrot_gym import vector as vec
from rigidrot_gym.inertia import principal_frame
from rigidrot_gym.integrators.base import STATE_SIZE
from rigidrot_gym.jit import jitable, select
from rigidrot_gym.quaternion import qconj, qmul, qrotate, qrotate_inv
from rigidrot_gym.scenario import Scenario

OBS_SIZE = 7
OBS_LOW = np.array([0.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0], dtype=np.float32)
OBS_HIGH = np.ones(OBS_SIZE, dtype=np.float32)
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


def decode_observation(obs: np.ndarray, max_rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Error quaternions (..., 4), w ≥ 0, and body rates (..., 3) in rad/s from
    observations (..., 7). Rates beyond ``max_rate`` were clipped (the episode ends there)."""
    obs = np.asarray(obs, dtype=np.float64)
    if obs.shape[-1:] != (OBS_SIZE,):
        raise ValueError(f"observations must have shape (..., {OBS_SIZE}), got shape {obs.shape}")
    return obs[..., 0:4], obs[..., 4:7] * max_rate


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
    """(min, max) of the per-step reward."""
    worst = scenario.reward_angle + scenario.reward_rate + scenario.reward_torque + scenario.reward_unsafe
    return -worst, scenario.reward_success


# ----------------------------------------------------------------------- compiled kernels


@jitable
def _row4(a, i):
    return (a[i, 0], a[i, 1], a[i, 2], a[i, 3])


@jitable
def _row3(a, i):
    return (a[i, 0], a[i, 1], a[i, 2])


@njit(cache=True, error_model="numpy")
def _apply_action(action, max_torque, principal, params, clipped):
    """τ_body = clip(a, -1, 1) ⊙ τ_max, stored in principal axes as the held body torque.

    Returns the first body whose action is not finite (then nothing is written), or -1.
    """
    for i in range(action.shape[0]):
        for k in range(3):
            if not np.isfinite(action[i, k]):
                return i
    for i in range(action.shape[0]):
        a = (
            min(max(action[i, 0], -1.0), 1.0),
            min(max(action[i, 1], -1.0), 1.0),
            min(max(action[i, 2], -1.0), 1.0),
        )
        clipped[i, 0], clipped[i, 1], clipped[i, 2] = a
        tau = qrotate_inv(_row4(principal, i), vec.mul(a, _row3(max_torque, i)))
        params[i, torques.BODY], params[i, torques.BODY + 1], params[i, torques.BODY + 2] = tau
    return -1


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
    for i in rows:
        angle = 2.0 * half[_HALF_ANGLE, i]
        rate = vec.norm((state[i, 4], state[i, 5], state[i, 6]))  # |ω| is the same in any frame
        success = angle <= tol_angle and rate <= tol_rate
        unsafe = rate > max_rate
        effort = (action[i, 0] ** 2 + action[i, 1] ** 2 + action[i, 2] ** 2) * (1.0 / 3.0)
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


# Uniform variates per episode start: 8 become 8 standard normals (target, attitude or
# axis) by the Box–Muller transform, 4 stay uniform on [0, 1) (angle, rates).
NORMALS, UNIFORMS = 8, 4


def draw_variates(rng: np.random.Generator) -> np.ndarray:
    """One body's variates for an episode start: a single call to its generator (cheap
    when thousands of bodies restart together), the same draws in the same order (so
    seeded runs repeat and row i of a batch repeats a single env)."""
    return rng.random(NORMALS + UNIFORMS)


def _normals(u: np.ndarray) -> np.ndarray:
    """Box–Muller: (R, 2k) uniforms on [0, 1) → (R, 2k) independent standard normals."""
    radius = np.sqrt(-2.0 * np.log1p(-u[:, 0::2]))  # 1 − u ∈ (0, 1]: finite logarithm
    phase = 2.0 * np.pi * u[:, 1::2]
    return np.concatenate([radius * np.cos(phase), radius * np.sin(phase)], axis=-1)


def start_states(scenario: Scenario, variates: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Attitudes (R, 4), body rates (R, 3) and targets (R, 4) from variates (R, 12) of
    :func:`draw_variates`.

    Target: uniform on SO(3) (a normalised 4-D normal) or fixed. Attitude: uniform, or
    the target turned by an angle uniform in [0, ``start_max_angle_deg``] about a uniform
    axis, or fixed. Rates: ``start_rate`` + uniform in ±``start_rate_spread`` per axis.
    """
    rows = variates.shape[0]
    g, u = _normals(variates[:, :NORMALS]), variates[:, NORMALS:]
    if isinstance(scenario.target_attitude, str):
        target = g[:, 0:4] / np.linalg.norm(g[:, 0:4], axis=-1, keepdims=True)
    else:
        target = np.tile(scenario.target_attitude, (rows, 1))
    if isinstance(scenario.start_attitude, str) and scenario.start_attitude == "random":
        q = g[:, 4:8] / np.linalg.norm(g[:, 4:8], axis=-1, keepdims=True)
    elif isinstance(scenario.start_attitude, str):
        axis = g[:, 4:7] / np.linalg.norm(g[:, 4:7], axis=-1, keepdims=True)
        angle = np.radians(scenario.start_max_angle_deg) * u[:, 0:1]
        q = quat.multiply(target, quat.from_rotvec(angle * axis))
    else:
        q = np.tile(scenario.start_attitude, (rows, 1))
    spread = scenario.start_rate_spread
    omega = np.asarray(scenario.start_rate) + spread * (2.0 * u[:, 1:4] - 1.0)
    return q, omega, target


def _option(options: dict, key: str, kind: str) -> np.ndarray | None:
    if key not in options:
        return None
    if kind == "quaternion":
        return validation.unit_quaternions(options[key], f"options[{key!r}]").reshape(4)
    return validation.vectors(options[key], f"options[{key!r}]", 3).reshape(3)


@dataclass
class StepResult:
    """One batched step: arrays over the bodies (copies, safe to keep)."""

    obs: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    pointing_error_deg: np.ndarray
    rate: np.ndarray
    is_success: np.ndarray

    @classmethod
    def of(cls, obs: np.ndarray, out: np.ndarray) -> StepResult:
        return cls(
            obs=obs.copy(),
            reward=out[:, REWARD].copy(),
            terminated=out[:, TERMINATED] > 0.5,
            truncated=out[:, TRUNCATED] > 0.5,
            pointing_error_deg=out[:, POINTING_DEG].copy(),
            rate=out[:, RATE].copy(),
            is_success=out[:, SUCCESS] > 0.5,
        )


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
        moments, principal, _ = principal_frame(scenario.inertia)
        n = self.num_bodies
        self.moments = np.ascontiguousarray(np.broadcast_to(moments, (n, 3)))
        self.principal = np.ascontiguousarray(
            np.broadcast_to(quat.identity() if principal is None else principal, (n, 4))
        )
        self.max_torque = np.ascontiguousarray(np.broadcast_to(scenario.max_torque, (n, 3)))
        self.loads = torques.Loads(np.zeros((n, torques.SIZE)))
        self.state = np.zeros((n, STATE_SIZE))
        self.target = np.tile(quat.identity(), (n, 1))
        self.steps = np.zeros(n, dtype=np.int64)
        self.hold = np.zeros(n, dtype=np.int64)
        self.rngs: list[np.random.Generator] = []
        self.obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
        self.out = np.zeros((n, TRUNCATED + 1))
        self._clipped = np.zeros((n, 3))
        self._principal_axes = principal is None
        self._half = np.zeros((3, n))  # component-major: numpy's arctan2 is SIMD (and the
        # same for every batch size) only on contiguous rows
        self._all = np.arange(n)
        self._limits = np.array([scenario.success_hold_steps, max_episode_steps or 0], dtype=np.int64)
        self._traj, self._stats = self.method.buffers(n, 1, record=False)

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
        variates = np.array([draw_variates(self.rngs[i]) for i in rows]).reshape(rows.size, -1)
        q, omega, target = start_states(self.scenario, variates)
        for value, where in zip(fixed, (q, omega, target), strict=True):
            if value is not None:
                where[:] = value
        b = self.principal[rows]
        self.state[rows] = 0.0
        self.state[rows, 0:4] = quat.multiply(q, b)
        self.state[rows, 4:7] = quat.rotate_inverse(b, omega)
        self.target[rows] = target
        self.steps[rows] = 0
        self.hold[rows] = 0

    def observe(self) -> None:
        """Compute the observation and outputs of the current state of every body (not
        advanced) into :attr:`obs` and :attr:`out`."""
        self._clipped[:] = 0.0
        self._evaluate(self._all, stepped=False)

    def step(self, action: np.ndarray) -> None:
        """Apply ``action`` ((N, 3), clipped to [-1, 1]) for one control period; the
        results land in :attr:`obs` (N, 7) and :attr:`out` (N, 6, columns ``REWARD`` ...).

        Raises:
            ValueError: if an action is NaN or infinite (nothing is advanced).
        """
        action = np.asarray(action).reshape(self.num_bodies, 3)
        bad = _apply_action(action, self.max_torque, self.principal, self.loads.params, self._clipped)
        if bad >= 0:
            raise ValueError(f"action must be finite, got {action[bad].tolist()}")
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
        self._evaluate(self._all, stepped=True)

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
        return StepResult.of(self.obs, self.out)

    def _evaluate(self, rows: np.ndarray, stepped: bool) -> None:
        """Observation, reward and flags of ``rows``. The pointing angle is computed by
        numpy between two kernels: its arctan2 runs vectorised, four times faster than
        the scalar one a kernel calls."""
        principal_axes = self._principal_axes
        half = self._half
        _observe(
            self.state,
            self.principal,
            principal_axes,
            self.target,
            self.scenario.max_rate,
            rows,
            self.obs,
            half,
        )
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

    def body_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(N, 4) attitudes and (N, 3) body rates in each body's own frame."""
        q_p, w_p = self.state[:, 0:4], self.state[:, 4:7]
        return quat.multiply(q_p, quat.conjugate(self.principal)), quat.rotate(self.principal, w_p)

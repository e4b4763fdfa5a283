"""The attitude-control task as one batched core.

The single env (:mod:`rigidrot_gym.attitude.env`), the native vector env
(:mod:`rigidrot_gym.attitude.vector_env`) and the stable-baselines3 adapter
(:mod:`rigidrot_gym.attitude.sb3`) all run :class:`AttitudeBatch`; the dynamics are the
library's integrators, called through :meth:`Method.run` on the whole batch at once.

Per body the core keeps the integrator state in principal axes, the target attitude,
and the body's own inertia, principal frame and actuator limits (domain randomisation
re-draws them per body at reset). Each step:

1. the action a ∈ [-1, 1]ⁿ (clipped) becomes the actuator torques u = a ⊙ u_max
   (:mod:`rigidrot_gym.attitude.actuation`: ideal torquers, τ = u, or reaction wheels,
   τ = −A u), held over the control period, plus any disturbance torque;
2. the method advances every body by ``dt`` in ``substeps`` steps;
3. compiled kernels compute the observation (:mod:`rigidrot_gym.attitude.observation`) and
   the reward, pointing error and flags (:mod:`rigidrot_gym.attitude.assessment`).

The realism options of a scenario (:attr:`Scenario.realistic`) add, in compiled kernels
over the bodies: a one-step actuation delay, actuator noise, wheel momentum and its limits,
constant and random-walk disturbances, the gravity gradient, sensor noise on the
observation (the reward sees the truth) and domain randomisation.

Randomness comes only from the per-body generators passed in by the caller: the draws
at reset directly, the per-step noise through a counter-based stream keyed at reset
(:mod:`rigidrot_gym.attitude.variates`), so row i of a batch repeats a single env.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rigidrot_gym.attitude import randomization
from rigidrot_gym.attitude.actuation import actuate, advance_realism, apply_action, clip_actions, load_torques
from rigidrot_gym.attitude.actuators import Actuators
from rigidrot_gym.attitude.assessment import assess
from rigidrot_gym.attitude.disturbances import mean_motion
from rigidrot_gym.attitude.observation import (
    COS_HALF,
    HALF_ANGLE,
    SIN_HALF,
    observe,
    observe_actuators,
    sense,
)
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.attitude.starts import (
    BIAS,
    CONSTANT,
    INERTIA,
    KEY,
    PHASE,
    TORQUE,
    TURN_ANGLE,
    TURN_AXIS,
    WALK,
    draw_variates,
    realism_variates,
    start_states,
)
from rigidrot_gym.attitude.task import (
    POINTING_DEG,
    RATE,
    REWARD,
    SUCCESS,
    TERMINATED,
    TRUNCATED,
    observation_size,
    task_constants,
)
from rigidrot_gym.attitude.variates import keys_of
from rigidrot_gym.physics import integrators, torques, validation
from rigidrot_gym.physics import quaternion as quat
from rigidrot_gym.physics.inertia import principal_frame
from rigidrot_gym.physics.integrators.base import STATE_SIZE


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
            self.moments[rows] = randomization.scaled_moments(moments, s.randomize_inertia, u[:, INERTIA])
        if s.randomize_inertia_rotation_deg:
            turn = np.radians(s.randomize_inertia_rotation_deg)
            self.principal[rows] = randomization.turned_axes(
                principal, turn, g[:, TURN_AXIS], u[:, TURN_ANGLE]
            )
        if s.randomize_torque:
            m = self.actuators.count
            self.max_torque[rows] = randomization.spread(
                self.actuators.max_torque, s.randomize_torque, u[:, TORQUE][:, :m]
            )
        self._keys[rows] = keys_of(u[:, KEY])
        self._bias[rows] = s.rate_bias * g[:, BIAS]
        direction = g[:, CONSTANT] / np.linalg.norm(g[:, CONSTANT], axis=-1, keepdims=True)
        self._constant[rows] = s.disturbance_constant * direction
        self._walk[rows] = s.disturbance_random_walk * g[:, WALK]  # from its stationary law
        self._phase[0][rows] = 2.0 * np.pi * u[:, PHASE]
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
            bad = clip_actions(action, self._clipped)
        else:
            bad = apply_action(action, self.max_torque, self.principal, self.loads.params, self._clipped)
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
            advance_realism(
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
        actuate(
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
        load_torques(
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
            sense(
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
            observe(
                sensed,
                self.principal,
                principal_axes,
                self.target,
                max_rate,
                rows,
                self.obs,
                self._scratch_half,
            )
            observe(
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
            observe(self.state, self.principal, principal_axes, self.target, max_rate, rows, self.obs, half)
        np.arctan2(half[SIN_HALF], half[COS_HALF], out=half[HALF_ANGLE])
        assess(
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
            observe_actuators(
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

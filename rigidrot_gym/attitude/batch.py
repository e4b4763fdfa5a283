"""The attitude-control task as one batched core.

The single env (:mod:`rigidrot_gym.attitude.env`), the native vector env
(:mod:`rigidrot_gym.attitude.vector_env`) and the stable-baselines3 adapter
(:mod:`rigidrot_gym.attitude.sb3`) all run :class:`AttitudeBatch`; the dynamics are the
library's integrators, their step functions run over the whole batch at once.

Per body the core keeps the integrator state in principal axes, the target attitude,
and the body's own inertia, principal frame and actuator limits (domain randomisation
re-draws them per body at reset). Each step:

1. the action a ∈ [-1, 1]ⁿ (clipped) becomes the actuator torques u = a ⊙ u_max
   (:mod:`rigidrot_gym.attitude.actuation`: ideal torquers, τ = u, or reaction wheels,
   τ = −A u), held over the control period, plus any disturbance torque;
2. the method advances every body by ``dt`` in ``substeps`` steps, in scratch arrays
   (:mod:`rigidrot_gym.attitude.staging`); only if every result is a valid state is it
   committed, so a step that raises changes nothing;
3. compiled kernels compute the observation (:mod:`rigidrot_gym.attitude.observation`) and
   the reward, pointing error and flags (:mod:`rigidrot_gym.attitude.assessment`).

A step may cover a subset of the bodies (a vector env's rows that await their autoreset
are not integrated).

Without realism options the whole step is one compiled call
(:func:`~rigidrot_gym.attitude.fused.kernel_of`: steps 1-3, over component-major
arrays so that the loops over bodies vectorise); the per-body arrays are therefore stored
component-major and read by rows through transposed views (:attr:`AttitudeBatch.state` ...).
The realism options of a scenario (:attr:`Scenario.realistic`) add, in compiled kernels
over the bodies: a one-step actuation delay, actuator noise, wheel momentum and its limits,
constant and random-walk disturbances, the gravity gradient, sensor noise on the
observation (the reward sees the truth) and domain randomisation. With a library method
their step is one compiled call too (:func:`~rigidrot_gym.attitude.realistic.kernel_of`,
over the stepped bodies by rows); with an engine's method, the engine's step sits between
two of them.

Randomness comes only from the per-body generators passed in by the caller: the draws
at reset directly, the per-step noise through a counter-based stream keyed at reset
(:mod:`rigidrot_gym.attitude.variates`), so row i of a batch repeats a single env.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np

from rigidrot_gym.attitude import fused, randomization, realistic
from rigidrot_gym.attitude.actuation import apply_action
from rigidrot_gym.attitude.actuators import Actuators
from rigidrot_gym.attitude.disturbances import mean_motion
from rigidrot_gym.attitude.draws import sources
from rigidrot_gym.attitude.realistic import evaluate, finish, prepare
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.attitude.staging import Workspace, commit, divergence_error, first_invalid, gather
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
    realism_variates,
    start_constants,
    start_states,
    variate_count,
)
from rigidrot_gym.attitude.task import (
    IN_TOLERANCE,
    OUTPUTS,
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

MAX_BODIES = 2**31 - 1  # bodies in one batch (each holds ~1 kB of state and scratch)


def _info(
    pointing_error_deg, rate, success, inside, wheels: tuple[np.ndarray, Any] | None = None
) -> dict[str, Any]:
    info = {
        "pointing_error_deg": float(pointing_error_deg),
        "rate": float(rate),
        "is_success": bool(success),
        "in_tolerance": bool(inside),
    }
    if wheels is not None:
        info["wheel_momentum"], info["wheel_saturated"] = wheels[0].copy(), bool(wheels[1])
    return info


def _on_threads(kernel, threads: int, args: tuple) -> Any:
    """``kernel(*args)`` on ``threads`` of numba's threads (this thread's setting is put back)."""
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        return kernel(*args)
    finally:
        numba.set_num_threads(before)


@dataclass
class StepResult:
    """One batched step: arrays over the bodies, safe to keep (the batch never writes
    them again).

    ``is_success``: the task's success, the tolerance held for ``success_hold_steps``
    consecutive steps (at least one) up to this step, which ends the episode when
    ``success_hold_steps`` > 0; ``in_tolerance``: within both tolerances at this step.

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
    in_tolerance: np.ndarray
    wheel_momentum: np.ndarray
    wheel_saturated: np.ndarray

    def info(self, i: int) -> dict[str, Any]:
        """Env i's ``info`` dict (wheel entries only with wheels)."""
        wheels = (self.wheel_momentum[i], self.wheel_saturated[i]) if self.wheel_momentum.shape[1] else None
        return _info(
            self.pointing_error_deg[i], self.rate[i], self.is_success[i], self.in_tolerance[i], wheels
        )

    def infos(self) -> list[dict[str, Any]]:
        """Every env's ``info`` dict (as :meth:`info`), from each array's values as a list at
        once (a numpy scalar read per env costs more than the dict)."""
        columns = zip(
            self.pointing_error_deg.tolist(),
            self.rate.tolist(),
            self.is_success.tolist(),
            self.in_tolerance.tolist(),
            strict=True,
        )
        if not self.wheel_momentum.shape[1]:
            return [_info(*values) for values in columns]
        saturated = self.wheel_saturated.tolist()
        return [_info(*values, (self.wheel_momentum[i], saturated[i])) for i, values in enumerate(columns)]

    def info_arrays(self) -> dict[str, np.ndarray]:
        """The same entries as arrays over the envs (Gymnasium's vector ``info``)."""
        arrays = {
            "pointing_error_deg": self.pointing_error_deg,
            "rate": self.rate,
            "is_success": self.is_success,
            "in_tolerance": self.in_tolerance,
        }
        if self.wheel_momentum.shape[1]:
            arrays["wheel_momentum"] = self.wheel_momentum
            arrays["wheel_saturated"] = self.wheel_saturated
        return arrays


class AttitudeBatch:
    """N attitude-control bodies stepped together.

    Every call either completes or raises with the batch unchanged: arguments are
    checked first, and a step is staged in a :class:`~rigidrot_gym.attitude.staging.Workspace`
    and committed only when every advanced state is valid. The state is every attribute
    but ``_work`` (scratch) and ``_sources`` (the generators' addresses, which a copy or an
    unpickled batch rebuilds from its own generators), and no attribute is a view of
    another, so ``copy.deepcopy`` and pickling give a batch that continues bit for bit like
    the original.

    Args:
        scenario: the task; its ``max_episode_steps`` truncates every episode.
        num_bodies: N.
        integrator_options: options of the scenario's integrator (e.g. ``tol``).
        num_threads: threads of the compiled step (numba's, at most
            ``numba.config.NUMBA_NUM_THREADS``); above 1 only for a scenario without
            realism options and a library method (the step that is one compiled call),
            whose threaded kernel then compiles on first use. Results are bitwise those of
            one thread.
    """

    def __init__(
        self,
        scenario: Scenario,
        num_bodies: int,
        integrator_options: dict[str, Any] | None = None,
        num_threads: int = 1,
    ):
        if integrator_options is not None and not isinstance(integrator_options, dict):
            raise ValueError(f"integrator_options must be a dict or None, got {integrator_options!r}")
        self.num_threads = validation.count(num_threads, "num_threads", 1, numba.config.NUMBA_NUM_THREADS)
        self.scenario = scenario
        self.num_bodies = validation.count(num_bodies, "num_envs", minimum=1, maximum=MAX_BODIES)
        self.method = integrators.get(scenario.integrator)
        self.opts = self.method.pack_options(integrator_options or {})
        self.constants = task_constants(scenario)
        self.actuators = Actuators.of(scenario)
        moments, principal, _ = principal_frame(scenario.inertia)
        self._nominal = (moments, quat.identity() if principal is None else principal)
        n, m = self.num_bodies, self.actuators.count
        # Per-body copies (domain randomisation writes rows), stored component-major (the
        # compiled step's loops over bodies vectorise on them) and read by rows through the
        # transposed views of the properties below.
        self._moments = np.tile(moments, (n, 1)).T.copy()
        self._principal = np.tile(self._nominal[1], (n, 1)).T.copy()
        self._max_torque = np.tile(self.actuators.max_torque, (n, 1)).T.copy()
        self._state = np.zeros((STATE_SIZE, n))
        self._target = np.tile(quat.identity(), (n, 1)).T.copy()
        self.steps = np.zeros(n, dtype=np.int64)
        self.hold = np.zeros(n, dtype=np.int64)
        self._rngs: tuple[np.random.Generator, ...] = ()  # none yet: the env sets them at reset
        self._sources = sources(self._rngs)
        self.obs = np.zeros((n, observation_size(scenario)), dtype=np.float32)
        self._out = np.zeros((OUTPUTS, n))
        self._handed_out = False  # obs and _out given away by result(), not to be written
        self.wheel_momentum = np.zeros((n, m if scenario.wheels else 0))
        self.wheel_saturated = np.zeros(n, dtype=bool)
        self._principal_axes = principal is None and not scenario.randomize_inertia_rotation_deg
        self._all = np.arange(n)
        self._no_waiting = np.zeros(n, dtype=bool)
        self._every = np.ones(n, dtype=bool)
        self._start = start_constants(scenario)  # the start law, for the compiled step's restarts
        # What the compiled step reads for an evaluation without a step (float32, as agents'
        # actions are, so that it is the same compiled specialisation).
        self._idle_actions = np.zeros((n, self.actuators.count), dtype=np.float32)
        own_method = isinstance(self.method, integrators.ComponentMethod)
        fusable = not scenario.realistic and own_method
        if self.num_threads > 1 and not fusable:
            raise ValueError(
                f"num_threads must be 1 for a scenario with realism options or an engine's method "
                f"(integrator {scenario.integrator!r}), got {self.num_threads}"
            )
        self._fused = fused.kernel_of(self.method.step, self.num_threads > 1) if fusable else None
        realism = scenario.realistic and own_method
        self._realism_kernel = realistic.kernel_of(self.method.step) if realism else None
        self._limits = np.array([scenario.success_hold_steps, scenario.max_episode_steps], dtype=np.int64)
        self._work = Workspace(n, m, self.obs.shape[1])
        self._realistic, self._wheels = scenario.realistic, scenario.wheels
        self._init_realism()  # without realism options: zeros and empty arrays, which do nothing

    @property
    def state(self) -> np.ndarray:
        """(N, 8) integrator states in principal axes: q, ω, the method's scalar (a view)."""
        return self._state.T

    @property
    def out(self) -> np.ndarray:
        """(N, OUTPUTS) per-body outputs of the last step or reset, columns ``REWARD`` … (a view)."""
        return self._out.T

    @property
    def moments(self) -> np.ndarray:
        """(N, 3) principal moments of inertia, kg·m² (a view)."""
        return self._moments.T

    @property
    def principal(self) -> np.ndarray:
        """(N, 4) principal frames B, principal axes to body (a view)."""
        return self._principal.T

    @property
    def max_torque(self) -> np.ndarray:
        """(N, n) actuator torque limits, N·m (a view)."""
        return self._max_torque.T

    @property
    def target(self) -> np.ndarray:
        """(N, 4) target attitudes (a view)."""
        return self._target.T

    @property
    def rngs(self) -> tuple[np.random.Generator, ...]:
        """Each body's generator, which its episode starts draw from (a tuple, set whole,
        so that the compiled step's table of their addresses follows)."""
        return self._rngs

    @rngs.setter
    def rngs(self, generators: Sequence[np.random.Generator]) -> None:
        generators = tuple(generators)
        if len(generators) != self.num_bodies or not all(
            isinstance(g, np.random.Generator) for g in generators
        ):
            raise ValueError(
                f"rngs must be {self.num_bodies} numpy Generators (one per body), "
                f"got {len(generators)} items of types {sorted({type(g).__name__ for g in generators})}"
            )
        self._rngs, self._sources = generators, sources(generators)

    def __getstate__(self) -> dict[str, Any]:
        # The generators' addresses are this process's and these objects': a copy (or an
        # unpickled batch) takes its own generators' (``__setstate__``), never these.
        state = self.__dict__.copy()
        del state["_sources"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._sources = sources(self._rngs)

    def _init_realism(self) -> None:
        s, n = self.scenario, self.num_bodies
        self._axes = np.ascontiguousarray(self.actuators.axes)
        self._keys = np.zeros(n, dtype=np.uint64)
        self._bias = np.zeros((n, 3))  # rate-sensor bias, body frame, rad/s
        # constant [0] and random-walk [1] disturbance torques, body frame, N·m (one array:
        # the kernel adds them; separate names for its rows would be views, which copies lose)
        self._disturbances = np.zeros((2, n, 3))
        self._pending = np.zeros((n, self.actuators.count if s.actuation_delay else 0))  # delayed action
        self._walk_law = np.array([s.disturbance_random_walk, s.disturbance_correlation_time])
        self._sensor_noise = np.array([np.radians(s.attitude_noise_deg), s.rate_noise])
        self._noisy_sensors = bool(s.attitude_noise_deg or s.rate_noise or s.rate_bias)
        self._end_on_saturation = s.reward_unsafe if s.wheel_terminate_on_saturation else 0.0
        motion = mean_motion(s.orbit_altitude) if s.gravity_gradient else 0.0
        self._gravity = np.array([3.0 * motion**2, motion])  # 3n² (1/s²) and n (rad/s); 0: none
        # orbit phase at the episode start (rad) and its advance per control period
        self._phase = (np.zeros(n), motion * s.dt)

    def reset_rows(
        self,
        rows: Sequence[int] | np.ndarray,
        fixed: tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None] = (None, None, None),
    ) -> None:
        """Draw new episodes for ``rows`` from their generators (``self.rngs``), with the
        start attitude, body rates and target fixed where ``fixed`` (checked by
        :func:`~rigidrot_gym.attitude.arguments.reset_options`) says."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        rngs = [self._rngs[i] for i in rows.tolist()]
        q, omega, target, variates = start_states(self._start, variate_count(self.scenario), rngs)
        for value, where in zip(fixed, (q, omega, target), strict=True):
            if value is not None:
                where[:] = value
        if self._realistic:
            self._reset_realism(rows, variates)
        self.state[rows] = 0.0
        if self._principal_axes:  # every frame B is the identity: q ⊗ B = q, B* ω B = ω
            self.state[rows, 0:4], self.state[rows, 4:7] = q, omega
        else:
            b = self.principal[rows]
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
            rngs = [self._rngs[i] for i in rows.tolist()]
            self.moments[rows] = randomization.scaled_moments(
                moments, s.randomize_inertia, u[:, INERTIA], rngs
            )
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
        self._disturbances[0, rows] = s.disturbance_constant * direction
        self._disturbances[1, rows] = s.disturbance_random_walk * g[:, WALK]  # its stationary law
        self._phase[0][rows] = 2.0 * np.pi * u[:, PHASE]
        self._pending[rows] = 0.0
        self.wheel_momentum[rows] = 0.0
        self.wheel_saturated[rows] = False

    def reset(
        self, fixed: tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None] = (None, None, None)
    ) -> None:
        """Start every body's next episode (:meth:`reset_rows`) and observe it
        (:meth:`observe`): without ``fixed`` values in the plain task's one compiled call,
        as its autoresets."""
        if self._fused is not None and all(value is None for value in fixed):
            self._step_fused(None, self._every, restart=True)
            return
        self.reset_rows(self._all, fixed)
        self.observe()

    def observe(self) -> None:
        """Compute the observation and outputs of the current state of every body (not
        advanced) into :attr:`obs` and :attr:`out`."""
        if self._fused is not None:
            self._step_fused(None, self._no_waiting)
            return
        self._work.clipped[:] = 0.0
        self._evaluate(self._all, stepped=False)

    def step(self, action: np.ndarray, waiting: np.ndarray | None = None, restart: bool = False) -> None:
        """Apply ``action`` ((N, n), checked by
        :func:`~rigidrot_gym.attitude.arguments.actions`; clipped to [-1, 1]) for one control
        period to the bodies not ``waiting`` ((N,) bool, default none; the others are not
        integrated and their actions not used); their results land in :attr:`obs`
        (N, 7 + wheels) and :attr:`out` (N, OUTPUTS, columns ``REWARD`` ...). With ``restart``
        the waiting bodies then start new episodes, as :meth:`restart` (the plain task
        does both in its one compiled call), with reward 0 and both flags false (a vector
        env's next-step autoreset). A step that raises changes nothing.

        Raises:
            ValueError: if an action of a body not waiting is NaN or infinite, or if the
                integrator's result is not a valid state (a step too large for the motion,
                naming ``dt``, ``substeps`` and the integrator).
            ConvergenceError: if an implicit method did not converge.
        """
        if self._fused is not None:
            self._step_fused(action, self._no_waiting if waiting is None else waiting, restart)
            return
        self._step_rows(action, self._all if waiting is None else np.flatnonzero(~waiting))
        if restart and waiting is not None and waiting.any():
            rows = np.flatnonzero(waiting)
            self.restart(rows)
            self.out[rows, REWARD], self.out[rows, TERMINATED : TRUNCATED + 1] = 0.0, 0.0

    def _step_rows(self, action: np.ndarray, rows: np.ndarray) -> None:
        """The step of the bodies ``rows`` without the plain task's compiled step."""
        if rows.size == 0:
            return
        work = self._work
        if not self._realistic:
            bad = apply_action(action, rows, self.max_torque, self.principal, work.params, work.clipped)
            if bad >= 0:
                raise self._action_error(action, bad)
            self._integrate(rows)
            self._evaluate(rows, stepped=True)
            return
        preparation, finishing = self._preparation(action, rows), self._finishing(rows)
        if self._realism_kernel is not None:
            self._step_realistic(action, rows, preparation, finishing)
            return
        bad = prepare(*preparation)
        if bad >= 0:
            raise self._action_error(action, bad)
        self._integrate(rows)
        finish(*finishing)

    def _action_error(self, action: np.ndarray, body: int) -> ValueError:
        """The error of a step refused for body ``body``'s action, which is not finite."""
        where = f" (env {body})" if self.num_bodies > 1 else ""
        return ValueError(f"action must be finite, got {action[body].tolist()}{where}")

    def _step_realistic(
        self, action: np.ndarray, rows: np.ndarray, preparation: tuple, finishing: tuple
    ) -> None:
        """A control period of the bodies ``rows`` with realism options and a library
        method: one call of the kernel of :func:`~rigidrot_gym.attitude.realistic.kernel_of`."""
        work, s = self._work, self.scenario
        kind, bad, failed = self._realism_kernel(
            rows,
            preparation,
            self._state,
            self._moments,
            work.params,
            self.opts,
            s.dt,
            s.substeps,
            work.state,
            work.moments,
            work.stats,
            finishing,
        )
        if kind == realistic.ACTION:
            raise self._action_error(action, bad)
        if kind == realistic.CONVERGENCE:
            raise self.method.convergence_error(failed, rows.size, self.opts)
        if kind == realistic.STATE:
            raise divergence_error(s.integrator, s.dt, s.substeps, int(rows[bad]), work.state[bad])

    def _preparation(self, action: np.ndarray, rows: np.ndarray) -> tuple:
        """The arguments of :func:`~rigidrot_gym.attitude.realistic.prepare`."""
        s, work = self.scenario, self._work
        actuation = (
            work.clipped,
            rows,
            self._pending,
            s.actuation_delay,
            s.actuator_noise,
            self._keys,
            self.steps,
            self._max_torque,
            self._wheels,
            self.wheel_momentum,
            self.actuators.max_momentum,
            s.dt,
            work.commands,
        )
        loading = (
            work.commands,
            rows,
            self.wheel_momentum,
            self._axes,
            self.actuators.sign,
            self._principal,
            self._disturbances,
            self._phase,
            self.steps,
            self._gravity,
            self._moments,
            work.params,
            self._wheels,
        )
        return action, actuation, loading

    def _finishing(self, rows: np.ndarray) -> tuple:
        """The arguments of :func:`~rigidrot_gym.attitude.realistic.finish`."""
        s, work = self.scenario, self._work
        advancing = (
            work.commands,
            rows,
            s.dt,
            self._wheels,
            self.actuators.max_momentum,
            self._walk_law,
            self._keys,
            self.steps,
            self.wheel_momentum,
            self.wheel_saturated,
            self._disturbances[1],
            s.actuation_delay,
            work.clipped,
            self._pending,
        )
        return advancing, self._evaluation()

    def _evaluation(self) -> tuple:
        """The arguments of :func:`~rigidrot_gym.attitude.realistic.evaluate` after ``rows``
        and ``stepped``."""
        work = self._work
        return (
            self._state,
            self._principal,
            self._principal_axes,
            self._target,
            self.scenario.max_rate,
            self._noisy_sensors,
            self._keys,
            self.steps,
            self._sensor_noise,
            self._bias,
            work.clipped,
            self.constants,
            self.hold,
            self._limits,
            self.wheel_momentum,
            self.actuators.max_momentum,
            self._pending,
            self._end_on_saturation,
            self.wheel_saturated,
            work.sensed,
            work.sensed_half,
            work.true_obs,
            work.half,
            self.obs,
            self._out,
        )

    def _step_fused(self, action: np.ndarray | None, waiting: np.ndarray, restart: bool = False) -> None:
        """The plain task's step (or, with ``action`` None, the evaluation of the bodies not
        ``waiting`` as they are), and with ``restart`` the waiting bodies' new episodes: one
        call of the kernel of :func:`~rigidrot_gym.attitude.fused.kernel_of`."""
        work, s = self._work, self.scenario
        stepped = action is not None
        if restart and self._sources.shape[1] != self.num_bodies:
            # The compiled call reads each restarting body's generator from that table.
            raise RuntimeError("set the bodies' generators (rngs) before a reset or an autoreset")
        obs, out = self.obs, self._out
        if self._handed_out:
            # result() gave these arrays away uncopied: write new ones, so that an array a
            # caller holds is never written again.
            obs, out = np.empty_like(obs), np.empty_like(out)
        # The kernel writes every body's outputs and counters; waiting bodies' are put back
        # (unless they restart: theirs are then their new episodes').
        rows = None
        if not restart and waiting is not self._no_waiting and waiting.any():
            rows = np.flatnonzero(waiting)
            kept = (self.obs[rows], self._out[:, rows], self.steps[rows], self.hold[rows])
        actions = action if stepped else self._idle_actions
        args = self._fused_arguments(actions, waiting, s.substeps, stepped, obs, out, restart=restart)
        counts = self._run_fused(args)
        if not any(counts):
            # The staged states become the state: a swap, not a copy.
            self._state, work.soa_state = work.soa_state, self._state
            if rows is not None:
                obs[rows], out[:, rows], self.steps[rows], self.hold[rows] = kept
            self.obs, self._out, self._handed_out = obs, out, False
            return
        kind, body = fused.first_failure(args[0], waiting, work.soa_state, work.scratch)
        if kind == "action":
            raise self._action_error(action, body)
        if kind == "convergence":
            raise self.method.convergence_error(counts[1], int((~waiting).sum()), self.opts)
        raise divergence_error(s.integrator, s.dt, s.substeps, body, work.soa_state[:, body])

    def _run_fused(self, args: tuple) -> tuple[int, int, int]:
        """The fused kernel's call with ``args``, on this batch's threads."""
        if self.num_threads == 1:
            return self._fused(*args)
        return _on_threads(self._fused, self.num_threads, args)

    def _observe_fused(self, rows: np.ndarray) -> None:
        """Observations and outputs of bodies ``rows`` (sorted, distinct) as they are. Fewer
        than half the batch: the kernel runs on those bodies alone, gathered into arrays of
        their own, so that a few rows cost a few rows; else (or for an invalid state, whose
        error that call raises) one call over the batch with the others waiting."""
        if 2 * rows.size < self.num_bodies:
            obs = np.empty((rows.size, self.obs.shape[1]), dtype=self.obs.dtype)
            out = np.empty((self._out.shape[0], rows.size))
            k = rows.size
            args = self._fused_arguments(
                self._idle_actions[:k], self._no_waiting[:k], self.scenario.substeps, False, obs, out, rows
            )
            if not any(self._run_fused(args)):
                if self._handed_out:  # never write an array result() gave away
                    self.obs, self._out, self._handed_out = self.obs.copy(), self._out.copy(), False
                self.obs[rows], self._out[:, rows] = obs, out
                return
        others = np.ones(self.num_bodies, dtype=bool)
        others[rows] = False
        self._step_fused(None, others)

    def _fused_arguments(
        self,
        action: np.ndarray,
        waiting: np.ndarray,
        substeps: int,
        stepped: bool,
        obs: np.ndarray,
        out: np.ndarray,
        rows: np.ndarray | None = None,
        restart: bool = False,
    ) -> tuple:
        """The arguments of the fused kernel's call (:func:`~rigidrot_gym.attitude.fused.kernel_of`)
        that writes its observations and outputs into ``obs`` and ``out``: over the whole
        batch, or over the bodies ``rows`` alone (gathered copies and scratch of their own;
        without a step nothing but ``obs`` and ``out`` needs writing back); with ``restart``
        the waiting bodies restart."""
        work = self._work
        arrays = (self._max_torque, self._principal, self._target, self._moments, self._state)
        arrays += (self.steps, self.hold)
        staged, params, scratch = work.soa_state, work.soa_params, work.scratch
        if rows is not None:
            # C-contiguous copies: the same compiled specialisation
            arrays = tuple(a.take(rows, axis=a.ndim - 1) for a in arrays)
            k = rows.size
            staged, params = np.empty((STATE_SIZE, k)), np.empty((torques.SIZE, k))
            scratch = np.empty((work.scratch.shape[0], k))
        max_torque, principal, target, moments, state, steps, hold = arrays
        return (
            action,
            waiting,
            max_torque,
            principal,
            self._principal_axes,
            target,
            moments,
            state,
            staged,
            params,
            self.opts,
            self.scenario.dt,
            substeps,
            stepped,
            self.constants,
            self._limits,
            steps,
            hold,
            obs,
            out,
            scratch,
            restart,
            self._sources,
            self._start,
        )

    def _integrate(self, rows: np.ndarray) -> None:
        """Advance the bodies ``rows`` by one control period: staged, checked, committed."""
        work, s, k = self._work, self.scenario, rows.size
        every = k == self.num_bodies
        if every:
            np.copyto(work.state, self.state)
            moments, loads = self.moments, work.loads
        else:
            gather(rows, self.state, work.state)
            gather(rows, self.moments, work.moments)
            moments, loads = work.moments[:k], torques.Loads(work.params[:k])
        self.method.run(
            work.state[:k],
            moments,
            loads,
            0.0,
            s.dt,
            1,
            s.substeps,
            self.opts,
            False,
            work.traj[:, :k],
            work.stats[:k],
        )
        bad = first_invalid(work.state, k)
        if bad >= 0:
            raise divergence_error(s.integrator, s.dt, s.substeps, int(rows[bad]), work.state[bad])
        if every:
            np.copyto(self.state, work.state)
        else:
            commit(rows, work.state, self.state)

    def restart(self, rows: np.ndarray, fixed=(None, None, None)) -> None:
        """Reset ``rows`` (with the checked options ``fixed``) and recompute their
        observations and outputs (rewards and flags of those rows are left to the caller's
        autoreset convention)."""
        self.reset_rows(rows, fixed)
        reward, flags = self.out[rows, REWARD], self.out[rows, TERMINATED : TRUNCATED + 1]
        if self._fused is not None:
            self._observe_fused(np.unique(rows))
        else:
            self._work.clipped[rows] = 0.0
            self._evaluate(rows, stepped=False)
        self.out[rows, REWARD], self.out[rows, TERMINATED : TRUNCATED + 1] = reward, flags

    def result(self) -> StepResult:
        """The last step's arrays: the compiled step's own (its next call writes new ones),
        else copies."""
        out = self._out
        own = self._handed_out = self._fused is not None
        flags = out[SUCCESS:] > 0.5  # adjacent rows: one pass
        return StepResult(
            obs=self.obs if own else self.obs.copy(),
            reward=out[REWARD] if own else out[REWARD].copy(),
            terminated=flags[TERMINATED - SUCCESS],
            truncated=flags[TRUNCATED - SUCCESS],
            pointing_error_deg=out[POINTING_DEG] if own else out[POINTING_DEG].copy(),
            rate=out[RATE] if own else out[RATE].copy(),
            is_success=flags[0],
            in_tolerance=flags[IN_TOLERANCE - SUCCESS],
            wheel_momentum=self.wheel_momentum.copy(),
            wheel_saturated=self.wheel_saturated.copy(),
        )

    def _evaluate(self, rows: np.ndarray, stepped: bool) -> None:
        """Observation, reward and flags of ``rows`` (:func:`~rigidrot_gym.attitude.realistic.evaluate`;
        the plain task's step with a library method is :mod:`~rigidrot_gym.attitude.fused`)."""
        evaluate(rows, stepped, *self._evaluation())

    def info(self, i: int, outputs: list[float] | None = None) -> dict[str, Any]:
        """Body i's ``info`` dict now (as :meth:`StepResult.info`, without copying the batch),
        from ``outputs``, its row of :attr:`out` as a list, if the caller has it."""
        out = self.out[i].tolist() if outputs is None else outputs
        wheels = (self.wheel_momentum[i], self.wheel_saturated[i]) if self._wheels else None
        return _info(out[POINTING_DEG], out[RATE], out[SUCCESS] > 0.5, out[IN_TOLERANCE] > 0.5, wheels)

    def inertia(self) -> np.ndarray:
        """(N, 3, 3) body-frame inertia tensors J = B diag(m) Bᵀ of this episode's bodies
        (the scenario's, unless domain randomisation re-drew them), kg·m²."""
        b = quat.to_matrix(self.principal)
        return np.einsum("nij,nj,nkj->nik", b, self.moments, b)

    def body_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(N, 4) attitudes and (N, 3) body rates in each body's own frame."""
        q_p, w_p = self.state[:, 0:4], self.state[:, 4:7]
        return quat.multiply(q_p, quat.conjugate(self.principal)), quat.rotate(self.principal, w_p)

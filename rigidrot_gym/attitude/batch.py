"""The attitude-control task as one batched core.

The single env (:mod:`rigidrot_gym.attitude.env`), the native vector env
(:mod:`rigidrot_gym.attitude.vector_env`) and the stable-baselines3 adapter
(:mod:`rigidrot_gym.attitude.sb3`) all run :class:`AttitudeBatch` and read its
:class:`~rigidrot_gym.attitude.result.StepResult`. The batch owns the named data of
:mod:`~rigidrot_gym.attitude.data`: per body the integrator state in principal axes, the
target, the body's own inertia, principal frame and actuator limits (domain randomisation
re-draws them per body at reset), and the realism components' state; every control
period is one call of the compiled pipeline (:mod:`~rigidrot_gym.attitude.pipeline`):
action → actuators → loads → integration → checks → sensors → observation, reward,
flags → autoreset. With an engine's method the engine runs between the pipeline's two
parts.

A step may cover a subset of the bodies (a vector env's rows that await their autoreset
are not integrated).

Randomness comes only from the per-body generators passed in by the caller: the draws
at reset directly, the per-step noise through a counter-based stream keyed at reset
(:mod:`rigidrot_gym.attitude.variates`), so row i of a batch repeats a single env.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numba
import numpy as np

from rigidrot_gym.attitude import data, pipeline, randomization
from rigidrot_gym.attitude.actuators import Actuators
from rigidrot_gym.attitude.components import (
    gravity_gradient,
    gyro,
    magnetic_field,
    magnetometer,
    magnetorquers,
    navigation,
    orbit,
    star_tracker,
    sun_sensors,
    sunlight,
    targets,
    wheels,
)
from rigidrot_gym.attitude.components.integration import divergence_error, first_failure, valid_state
from rigidrot_gym.attitude.data import FLAGS, NEAR_TARGET, REWARD, TERMINATED, TRUNCATED, VALUES, Features
from rigidrot_gym.attitude.draws import sources
from rigidrot_gym.attitude.result import NO_EXTRAS, StepResult, info_of, row_of
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
    realism_variates,
    start_law,
    start_states,
    variate_count,
)
from rigidrot_gym.attitude.task import observation_size, rules_of
from rigidrot_gym.attitude.variates import keys_of
from rigidrot_gym.physics.plumbing import jit, validation
from rigidrot_gym.physics.rotation import integrators, torques
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.inertia import principal_frame
from rigidrot_gym.physics.rotation.integrators.base import Method

MAX_BODIES = 2**31 - 1  # bodies in one batch (each holds ~1 kB of state and scratch)
# Fewer rows than this share of the batch are observed apart (their own compact arrays),
# so that a few rows cost a few rows.
_APART = 0.5


def features_of(scenario: Scenario) -> Features:
    """The components the scenario enables."""
    s = scenario
    return Features(
        wheels=s.wheels,
        real_wheels=s.wheels and s.wheel_model != "ideal",
        delay=s.actuation_delay,
        actuator_noise=bool(s.actuator_noise),
        disturbances=bool(s.disturbance_constant or s.disturbance_random_walk),
        random_walk=bool(s.disturbance_random_walk),
        gravity_gradient=s.gravity_gradient,
        sensors=bool(s.attitude_noise_deg or s.rate_noise or s.rate_bias),
        end_on_saturation=s.wheels and s.wheel_terminate_on_saturation,
        orbit_gravity=s.orbit and s.gravity_gradient,
        magnetic_field=s.magnetic_field,
        magnetorquers=s.magnetorquers,
        duty_cycle=s.magnetorquers and s.magnetorquer_duty_cycle < 1.0,
        moving_target=s.moving_target,
        sun_target=s.moving_target and s.target_attitude == "sun",
        sun=s.sun,
        energy_reward=bool(s.reward_energy),
        gyro=s.gyro_model != "none",
        star_tracker=s.star_tracker_model != "none",
        estimator=s.observe == "estimate",
        magnetometer=s.magnetometer_model != "none",
        sun_sensors=s.sun_sensor_model != "none",
        observed=navigation.OBSERVED.index(s.observe),
        # only where there is noise: a plain id's kernel is one, whatever the stream
        fast_noise=s.random_stream == 1
        and bool(
            s.actuator_noise
            or s.disturbance_random_walk
            or s.attitude_noise_deg
            or s.rate_noise
            or s.rate_bias
        ),
        rotated_frames=principal_frame(s.inertia)[1] is not None or bool(s.randomize_inertia_rotation_deg),
    )


def _on_threads(kernel: Callable, threads: int, *args: Any) -> Any:
    """``kernel(*args)`` on ``threads`` of numba's threads (this thread's setting is put back)."""
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        return kernel(*args)
    finally:
        numba.set_num_threads(before)


class AttitudeBatch:
    """N attitude-control bodies stepped together.

    Every call either completes or raises with the batch unchanged: arguments are
    checked first, and a step is staged (:class:`~rigidrot_gym.attitude.data.Work`) and
    committed only when every advanced state is valid. The state is every attribute but
    the staging and scratch arrays each period writes before it reads them (``_staged``,
    ``_params``, ``_scratch``, ``_commands``, ``_sensed``, ``_normals``, ``_estimator``),
    ``_sources`` (the generators' addresses, which a copy or an unpickled batch rebuilds
    from its own generators) and the tuples the compiled call takes and its direct calls
    (rebuilt with them), and no attribute shares an element with another, so
    ``copy.deepcopy`` and pickling give a batch that continues bit for bit like the
    original.

    Args:
        scenario: the task; its ``max_episode_steps`` truncates every episode.
        num_bodies: N.
        integrator_options: options of the scenario's integrator (e.g. ``tol``).
        num_threads: threads of the compiled step (numba's, at most
            ``numba.config.NUMBA_NUM_THREADS``); above 1 only for a scenario without
            realism options and a library method, whose threaded kernel then compiles on
            first use. Results are bitwise those of one thread.
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
        self.actuators = Actuators.of(scenario)
        self.features = features_of(scenario)
        own_method = isinstance(self.method, integrators.ComponentMethod)
        if self.features.duty_cycle and not own_method:
            raise ValueError(
                f"integrator {scenario.integrator!r} is an engine, which holds the torque over the period: "
                f"it cannot switch the magnetorquers within it (magnetorquer_duty_cycle "
                f"{scenario.magnetorquer_duty_cycle!r}); use one of the library's methods"
            )
        if self.num_threads > 1 and (self.features.realistic or not own_method):
            raise ValueError(
                f"num_threads must be 1 for a scenario with realism options or an engine's method "
                f"(integrator {scenario.integrator!r}), got {self.num_threads}"
            )
        moments, principal, _ = principal_frame(scenario.inertia)
        self._nominal = (moments, quat.identity() if principal is None else principal)
        n, m = self.num_bodies, self.actuators.count
        # Per-body copies (domain randomisation writes rows), stored component-major (the
        # compiled step's loops over bodies vectorise on them) as the pipeline takes them
        # (data.Carried) and read by rows through the transposed views of the properties below.
        carried = data.carried(n, m)
        self._state, self._staged, self._params = carried.state, carried.staged, carried.params
        self._moments, self._principal, self._target = carried.moments, carried.principal, carried.target
        self._max_torque, self._steps, self._hold = carried.max_torque, carried.steps, carried.hold
        self._scratch, self._commands, self._sensed = carried.scratch, carried.commands, carried.sensed
        self._normals, self._estimator = carried.normals, carried.estimator
        self._moments[:] = moments[:, None]
        self._principal[:] = self._nominal[1][:, None]
        self._max_torque[:] = self.actuators.max_torque[:, None]
        self._target[:] = quat.identity()[:, None]
        self._rngs: tuple[np.random.Generator, ...] = ()  # none yet: the env sets them at reset
        self._sources = sources(self._rngs)
        self.obs = np.zeros((n, observation_size(scenario)), dtype=np.float32)
        self._values = np.zeros((VALUES, n))
        self._flags = np.zeros((FLAGS, n), dtype=bool)
        self._handed_out = False  # the outputs given away by result(), not to be written
        self._init_equipment()
        self._law = start_law(scenario)  # the start law, for the compiled step's restarts
        self._all = np.arange(n)
        self._no_waiting = np.zeros(n, dtype=bool)
        self._every = np.ones(n, dtype=bool)
        # What the compiled step reads for an evaluation without a step (float32, as agents'
        # actions are, so that it is the same compiled specialisation).
        self._idle_actions = np.zeros((n, m), dtype=np.float32)
        if own_method:
            parallel = self.num_threads > 1
            self._kernel = pipeline.kernel_of(self.method.step, self.features, "period", parallel)
        else:  # an engine: the pipeline's two parts, the engine between them
            self._before = pipeline.kernel_of(None, self.features, "before")
            self._after = pipeline.kernel_of(None, self.features, "after")
            self._kernel = None
        self._transport()
        self._direct_calls()

    def _init_equipment(self) -> None:
        """The realism components' per-body state and constants (zeros and empty arrays
        without realism options, which the pipeline never reads)."""
        s, n, m = self.scenario, self.num_bodies, self.actuators.count
        gravity_rate, motion, phase_per_period = gravity_gradient.constants(s.gravity, s.dt)
        sun_model, sun_normals = sun_sensors.constants(s.sun_sensors)
        field_bias = magnetometer.constants(s.magnetometer)[magnetometer.BIAS_STD]
        states = navigation.states(field_bias)
        self._equipment = data.Equipment(
            keys=np.zeros(n, dtype=np.uint64),
            bias=np.zeros((n, 3)),
            # one array: the loads add them; separate names for its rows would be views,
            # which copies lose
            disturbances=np.zeros((2, n, 3)),
            pending=np.zeros((n, m if s.actuation_delay else 0)),
            wheel_momentum=np.zeros((n, self.actuators.torquing if s.wheels else 0)),
            saturated=np.zeros(n, dtype=bool),
            phase=np.zeros(n),
            anomaly=np.zeros(n),
            field=np.zeros((n, 3)),
            target_rate=np.zeros((n, 3)),
            sunlight=np.zeros((n, sunlight.COLUMNS)),
            axes=np.ascontiguousarray(self.actuators.axes),
            sign=self.actuators.sign,
            max_momentum=self.actuators.max_momentum,
            actuator_noise=float(s.actuator_noise),
            walk_std=float(s.disturbance_random_walk),
            correlation_time=float(s.disturbance_correlation_time),
            attitude_noise=float(np.radians(s.attitude_noise_deg)),
            rate_noise=float(s.rate_noise),
            gravity_rate=gravity_rate,
            mean_motion=motion,
            phase_per_period=phase_per_period,
            end_on_saturation=float(s.reward_unsafe) if s.wheel_terminate_on_saturation else 0.0,
            orbit=orbit.constants(s.flight),
            field_model=magnetic_field.constants(s.flight, s.geomagnetism),
            wheel_model=wheels.model_constants(s.wheel_model),
            sun_model=sunlight.constants(s.flight),
            rods_off=magnetorquers.off_substeps(s.magnetorquer_duty_cycle, s.substeps)
            if s.magnetorquers
            else 0,
            gyro=np.zeros((n if self.features.gyro else 0, gyro.STATE)),
            gyro_model=gyro.constants(s.gyro),
            tracker=np.zeros((n if self.features.star_tracker else 0, star_tracker.STATE)),
            tracker_model=star_tracker.constants(s.star_tracker, s.flight),
            estimate=np.zeros((n if self.features.estimator else 0, navigation.STATE)),
            covariance=np.zeros((n if self.features.estimator else 0, states, states)),
            estimator_model=navigation.constants(
                s.navigation,
                gyro.constants(s.gyro)[gyro.INITIAL_BIAS],
                star_tracker.covariance(s.star_tracker) if self.features.star_tracker else np.zeros((3, 3)),
                field_bias,
            ),
            magnetometer=np.zeros((n if self.features.magnetometer else 0, magnetometer.STATE)),
            magnetometer_model=magnetometer.constants(s.magnetometer),
            sun_sensors=np.zeros((n if self.features.sun_sensors else 0, sun_sensors.count(s.sun_sensors))),
            sun_sensor_model=sun_model,
            sun_sensor_normals=sun_normals,
        )

    # ----------------------------------------------------------------- the state

    @property
    def state(self) -> np.ndarray:
        """(N, 8) integrator states in principal axes: q, ω, the method's scalar (a view)."""
        return self._state.T

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
    def steps(self) -> np.ndarray:
        """(N,) int64 steps of each body's episode (a view)."""
        return self._steps

    @property
    def hold(self) -> np.ndarray:
        """(N,) int64 consecutive steps each body has been inside the tolerance (a view)."""
        return self._hold

    @property
    def wheel_momentum(self) -> np.ndarray:
        """(N, n) wheel momenta about their spin axes, N·m·s (empty without wheels; a view)."""
        return self._equipment.wheel_momentum

    @property
    def wheel_saturated(self) -> np.ndarray:
        """(N,) a wheel at its momentum limit (a view)."""
        return self._equipment.saturated

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
        self._rngs, self._sources = generators, sources(generators)  # the table travels in _carried()

    def __getstate__(self) -> dict[str, Any]:
        # The generators' addresses are this process's and these objects': a copy (or an
        # unpickled batch) takes its own generators' (``__setstate__``), never these.
        state = self.__dict__.copy()
        for derived in ("_sources", "_constants", "_calls"):
            del state[derived]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._state, self._staged = data.state_and_staging(self._state)  # apart, as carried() places them
        self._sources = sources(self._rngs)
        self._transport()
        self._direct_calls()

    def inertia(self) -> np.ndarray:
        """(N, 3, 3) body-frame inertia tensors J = B diag(m) Bᵀ of this episode's bodies
        (the scenario's, unless domain randomisation re-drew them), kg·m²."""
        b = quat.to_matrix(self.principal)
        return np.einsum("nij,nj,nkj->nik", b, self.moments, b)

    def body_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(N, 4) attitudes and (N, 3) body rates in each body's own frame."""
        q_p, w_p = self.state[:, 0:4], self.state[:, 4:7]
        return quat.multiply(q_p, quat.conjugate(self.principal)), quat.rotate(self.principal, w_p)

    # ----------------------------------------------------------------- episode starts

    def reset_rows(
        self,
        rows: Sequence[int] | np.ndarray,
        fixed: tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None] = (None, None, None),
    ) -> None:
        """Draw new episodes for ``rows`` from their generators (``self.rngs``), with the
        start attitude, body rates and target fixed where ``fixed`` (checked by
        :func:`~rigidrot_gym.attitude.arguments.reset_options`) says."""
        s = self.scenario
        if s.moving_target and fixed[2] is not None:
            raise ValueError(
                f"options['target'] cannot fix a target that moves (target_attitude {s.target_attitude!r}), "
                f"got {fixed[2].tolist()}"
            )
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        rngs = [self._rngs[i] for i in rows.tolist()]
        q, omega, target, variates = start_states(self._law, variate_count(s), rngs)
        if self.features.realistic or s.realistic:
            self._reset_realism(rows, variates)
        if s.moving_target:  # the orbit's start is drawn: the starts into its first target's frame
            targets.start(
                self._equipment,
                rows,
                q,
                omega,
                target,
                self.features.sun_target,
                self._law.mode == NEAR_TARGET,
            )
        for value, where in zip(fixed, (q, omega, target), strict=True):
            if value is not None:
                where[:] = value
        self.state[rows] = 0.0
        if not self.features.rotated_frames:  # every frame B is the identity: q ⊗ B = q, B* ω B = ω
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
        randomisation), wheel momenta (zero), sensor bias, disturbances, orbit phase and
        mean anomaly (one uniform: a circular orbit's phase is its mean anomaly)."""
        s, e = self.scenario, self._equipment
        g, u = realism_variates(variates)
        moments, principal = self._nominal
        if s.randomize_inertia:
            rngs = [self._rngs[i] for i in rows.tolist()]
            fraction = s.randomize_inertia
            self.moments[rows] = randomization.scaled_moments(moments, fraction, u[:, INERTIA], rngs)
        if s.randomize_inertia_rotation_deg:
            turn = np.radians(s.randomize_inertia_rotation_deg)
            self.principal[rows] = randomization.turned_axes(
                principal, turn, g[:, TURN_AXIS], u[:, TURN_ANGLE]
            )
        if s.randomize_torque:  # the torquing actuators' limits (the rods' when they act alone)
            m = self.actuators.torquing or self.actuators.count
            self.max_torque[rows, :m] = randomization.spread(
                self.actuators.max_torque[:m], s.randomize_torque, u[:, TORQUE][:, :m]
            )
        e.keys[rows] = keys_of(u[:, KEY])
        e.bias[rows] = s.rate_bias * g[:, BIAS]
        direction = g[:, CONSTANT] / np.linalg.norm(g[:, CONSTANT], axis=-1, keepdims=True)
        e.disturbances[0, rows] = s.disturbance_constant * direction
        e.disturbances[1, rows] = s.disturbance_random_walk * g[:, WALK]  # its stationary law
        gravity_gradient.start(e.phase, rows, u[:, PHASE])
        orbit.start(e.anomaly, rows, u[:, PHASE])
        e.pending[rows] = 0.0
        e.wheel_momentum[rows] = 0.0
        e.saturated[rows] = False

    def reset(
        self, fixed: tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None] = (None, None, None)
    ) -> None:
        """Start every body's next episode (:meth:`reset_rows`) and observe it
        (:meth:`observe`): where the pipeline draws the starts itself (no realism option,
        no ``fixed`` value), in its one compiled call, as its autoresets."""
        if self._draws_starts and all(value is None for value in fixed):
            self._period(None, self._every, restart=True)
            return
        self.reset_rows(self._all, fixed)
        self.observe()

    @property
    def _draws_starts(self) -> bool:
        """The compiled period draws episode starts (the realism options' starts are drawn
        by numpy, whose functions the compiled code would not repeat bit for bit)."""
        return self._kernel is not None and not self.scenario.realistic

    def restart(self, rows: np.ndarray, fixed=(None, None, None)) -> None:
        """Reset ``rows`` (with the checked options ``fixed``) and recompute their
        observations and outputs (rewards and flags of those rows are left to the caller's
        autoreset convention)."""
        self.reset_rows(rows, fixed)
        reward, ended = self._values[REWARD, rows], self._flags[TERMINATED : TRUNCATED + 1, rows]
        self._observe_rows(np.unique(rows))
        self._values[REWARD, rows], self._flags[TERMINATED : TRUNCATED + 1, rows] = reward, ended

    # ----------------------------------------------------------------- control periods

    def observe(self) -> None:
        """Compute the observation and outputs of the current state of every body (not
        advanced) into :attr:`obs` and the values and flags :meth:`result` hands out."""
        self._period(None, self._no_waiting)

    def step(self, action: np.ndarray, waiting: np.ndarray | None = None, restart: bool = False) -> None:
        """Apply ``action`` ((N, n), checked by
        :func:`~rigidrot_gym.attitude.arguments.actions`; clipped to [-1, 1]) for one control
        period to the bodies not ``waiting`` ((N,) bool, default none; the others are not
        integrated and their actions not used); their results land in :attr:`obs`
        (N, 7 + wheels) and the values and flags of :meth:`result`. With ``restart``
        the waiting bodies then start new episodes, as :meth:`restart`, with reward 0 and
        both flags false (a vector env's next-step autoreset). A step that raises changes
        nothing.

        Raises:
            ValueError: if an action of a body not waiting is NaN or infinite, or if the
                integrator's result is not a valid state (a step too large for the motion,
                naming ``dt``, ``substeps`` and the integrator).
            ConvergenceError: if an implicit method did not converge.
        """
        waiting = self._no_waiting if waiting is None else waiting
        # count_nonzero: a third of any()'s time on 4096 booleans, a tenth of a vector env's Python
        restarting = restart and waiting is not self._no_waiting and np.count_nonzero(waiting) > 0
        self._period(action, waiting, restart=restarting and self._draws_starts)
        if restarting and not self._draws_starts:
            rows = np.flatnonzero(waiting)
            self.restart(rows)
            self._values[REWARD, rows], self._flags[TERMINATED : TRUNCATED + 1, rows] = 0.0, False

    def _period(self, action: np.ndarray | None, waiting: np.ndarray, restart: bool = False) -> None:
        """One call of the pipeline: the step of the bodies not ``waiting`` (or, with
        ``action`` None, the evaluation of them as they are), and with ``restart`` the
        waiting bodies' new episodes; committed, or raises with nothing changed."""
        if restart and self._sources.shape[1] != self.num_bodies:
            # The compiled call reads each restarting body's generator from that table.
            raise RuntimeError("set the bodies' generators (rngs) before a reset or an autoreset")
        obs, values, flags = self.obs, self._values, self._flags
        if self._handed_out:
            # result() gave these arrays away uncopied: write new ones, so that an array a
            # caller holds is never written again.
            obs, values, flags = np.empty_like(obs), np.empty_like(values), np.empty_like(flags)
        # The pipeline writes every body's outputs and counters; waiting bodies' are put back
        # (unless they restart: theirs are then their new episodes').
        kept = None
        if not restart and waiting is not self._no_waiting and waiting.any():
            rows = np.flatnonzero(waiting)
            kept = (
                rows,
                self.obs[rows],
                self._values[:, rows],
                self._flags[:, rows],
                self.steps[rows],
                self.hold[rows],
            )
        stepped = action is not None
        action = action if stepped else self._idle_actions
        call = (action, waiting, stepped, restart, self.scenario.substeps)
        counts = self._run(call, self._carried(), (obs, values, flags))
        if any(counts):
            self._raise(counts, call)
        # The staged states become the state: a swap, not a copy.
        self._state, self._staged = self._staged, self._state
        if kept is not None:
            rows = kept[0]
            obs[rows], values[:, rows], flags[:, rows], self.steps[rows], self.hold[rows] = kept[1:]
        self.obs, self._values, self._flags, self._handed_out = obs, values, flags, False

    def _carried(self) -> tuple:
        """The bodies and their staging area as the compiled call takes them (a plain
        tuple of :class:`~rigidrot_gym.attitude.data.Carried`'s fields)."""
        return (
            self._state,
            self._moments,
            self._principal,
            self._target,
            self._max_torque,
            self._steps,
            self._hold,
            self._sources,
            self._staged,
            self._params,
            self._scratch,
            self._commands,
            self._sensed,
            self._normals,
            self._estimator,
        )

    def _direct_calls(self) -> None:
        """The calls of the batch's kernels past numba's dispatch, keyed by what can change
        their arguments' types (:meth:`_run`): made with the batch's arrays (a copy makes
        its own)."""
        kernels = (self._kernel,) if self._kernel is not None else (self._before, self._after)
        self._calls = tuple(jit.DirectCalls(kernel) for kernel in kernels)

    def _transport(self) -> None:
        """The records that do not change from call to call, as the plain tuples the
        compiled call takes (:mod:`~rigidrot_gym.attitude.pipeline`): rebuilt when one of
        them is replaced (a copy)."""
        self._constants = (
            tuple(data.Settings(dt=self.scenario.dt, options=self.opts)),
            tuple(getattr(self._equipment, name) for name in data.equipment_fields(self.features)),
            data.pack(rules_of(self.scenario), self._law),
        )

    def _run(self, call: tuple, carried: tuple, outputs: tuple) -> tuple[int, int, int]:
        """The pipeline's call on these records (plain tuples of ``Period``'s first fields
        and of ``Carried``): the compiled period, or with an engine its part before the
        integration, the engine, and its part after."""
        # What can change the numba types of the arguments, the key of the direct calls
        # (jit.DirectCalls): the action's dtype, dimensions and flags (layout, writeability,
        # alignment), and the waiting mask's unless it is the batch's own. Every other array
        # keeps its type for the batch's life: each is made C-contiguous, aligned and
        # writeable (np.zeros, np.empty, np.empty_like of one, take) and replaced only by one
        # made the same way (_state and _staged swapped, new generators' _sources, new obs
        # and outputs after result()); a copy or an unpickled batch makes its own direct calls.
        action, waiting = call[0], call[1]
        types = action.dtype, action.ndim, action.flags.num
        if waiting is not self._no_waiting:
            types += waiting.dtype, waiting.ndim, waiting.flags.num
        settings, equipment, numbers = self._constants
        args = (call, settings, carried, equipment, numbers, outputs)
        if self._kernel is None:
            return self._run_engine(data.Carried(*carried), types, args)
        if self.num_threads == 1:
            return self._calls[0](types, args)
        return _on_threads(self._calls[0], self.num_threads, types, args)

    def _run_engine(self, carried: data.Carried, types: tuple, args: tuple) -> tuple:
        """An engine's period: the pipeline up to the loads, the engine over the stepped
        bodies (gathered), their check, then the pipeline from the commit on."""
        before, after = self._calls
        counts = before(types, args)
        if any(counts):
            return counts
        _, waiting, stepped = args[0][:3]
        np.copyto(carried.staged, carried.state)
        rows = np.flatnonzero(~waiting) if stepped else np.zeros(0, dtype=np.int64)
        if rows.size:
            state = np.ascontiguousarray(carried.state[:, rows].T)
            moments = np.ascontiguousarray(carried.moments[:, rows].T)
            loads = torques.Loads(np.ascontiguousarray(carried.params[:, rows].T))
            traj, stats = Method.buffers(rows.size, 1, record=False)
            s = self.scenario
            self.method.run(state, moments, loads, 0.0, s.dt, 1, s.substeps, self.opts, False, traj, stats)
            valid = valid_state(tuple(state.T))
            if not valid.all():
                bad = int(np.argmin(valid))
                raise divergence_error(s.integrator, s.dt, s.substeps, int(rows[bad]), state[bad])
            carried.staged[:, rows] = state.T
        return after(types, args)

    def _raise(self, counts: tuple[int, int, int], call: tuple) -> None:
        """The error of a period that committed nothing (:func:`first_failure`)."""
        action, waiting = call[:2]
        kind, body = first_failure(action, waiting, self._staged, self._scratch[data.STATS])
        if kind == "action":
            where = f" (env {body})" if self.num_bodies > 1 else ""
            raise ValueError(f"action must be finite, got {action[body].tolist()}{where}")
        s = self.scenario
        if kind == "convergence":
            raise self.method.convergence_error(counts[1], int((~waiting).sum()), self.opts)
        raise divergence_error(s.integrator, s.dt, s.substeps, body, self._staged[:, body])

    def _observe_rows(self, rows: np.ndarray) -> None:
        """Observations and outputs of bodies ``rows`` (sorted, distinct) as they are. A few
        rows of the plain task: observed alone, gathered into arrays of their own, so that a
        few rows cost a few rows; else (or for an invalid state, whose error that call
        raises) one call over the batch with the others waiting."""
        if rows.size < _APART * self.num_bodies and not self.scenario.realistic:
            k = rows.size
            outputs = (
                np.empty((k, self.obs.shape[1]), dtype=self.obs.dtype),
                np.empty((VALUES, k)),
                np.empty((FLAGS, k), dtype=bool),
            )
            # C-contiguous copies of the rows (the same compiled specialisation); no restart
            # in this call, so no generator is read
            gathered = (a.take(rows, axis=-1) for a in self._carried()[:7])
            carried = (*gathered, *data.carried(k, self.actuators.count)[7:])
            call = (self._idle_actions[:k], self._no_waiting[:k], False, False, self.scenario.substeps)
            if not any(self._run(call, carried, outputs)):
                if self._handed_out:  # never write an array result() gave away
                    self.obs, self._values, self._flags = (
                        self.obs.copy(),
                        self._values.copy(),
                        self._flags.copy(),
                    )
                    self._handed_out = False
                self.obs[rows], self._values[:, rows], self._flags[:, rows] = outputs
                return
        others = np.ones(self.num_bodies, dtype=bool)
        others[rows] = False
        self._period(None, others)

    def dry_run(self, action: np.ndarray, substeps: int) -> None:
        """One compiled control period of every body with ``substeps`` sub-steps, committing
        nothing (the staged states and the outputs go to scratch): the benchmarks' entry
        point to the pipeline's cost (:mod:`rigidrot_gym.tools.bench.phases`)."""
        if self._kernel is None:
            raise ValueError(f"integrator {self.scenario.integrator!r} is an engine: a period is two calls")
        call = (action, self._no_waiting, True, False, substeps)
        # through numba's dispatcher: a caller's substeps may be another integer type
        settings, equipment, numbers = self._constants
        outputs = (np.empty_like(self.obs), np.empty_like(self._values), np.empty_like(self._flags))
        self._kernel(call, settings, self._carried(), equipment, numbers, outputs)

    # ----------------------------------------------------------------- results

    def result(self) -> StepResult:
        """The last step's arrays: the batch's own (its next call writes new ones); the
        extras, which the batch updates in place, copied."""
        self._handed_out = True
        extras = self.extras()
        if extras:
            extras = {key: value.copy() for key, value in extras.items()}
        return StepResult(self.obs, self._values, self._flags, extras)

    def info(self, i: int) -> dict[str, Any]:
        """Body i's ``info`` dict now (as :meth:`StepResult.info`, without copying the batch)."""
        return info_of(self._values, self._flags, i, self.extras())

    def row(self, i: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Body i's ``(obs, reward, terminated, truncated, info)`` now (as
        :meth:`StepResult.row`: copies, so the batch's arrays are not handed out)."""
        return row_of(self.obs, self._values, self._flags, i, self.extras())

    def extras(self) -> dict[str, np.ndarray]:
        """The ``info`` entries of the scenario's components, by name, arrays over the bodies
        (views, body first; each env's info holds its row):

        * with reaction wheels, ``wheel_momentum`` (N, n), N·m·s, and ``wheel_saturated``
          (N,), a wheel at its momentum limit;
        * with a gyro, its true bias ``gyro_bias`` (N, 3), rad/s, body frame; with a
          magnetometer whose bias has a std, its true bias ``magnetometer_bias`` (N, 3), T;
        * with the estimator (``navigation.observe`` "estimate"), the MEKF's
          ``estimated_attitude`` q̂ (N, 4), body to world, ``estimated_gyro_bias`` β̂ (N, 3),
          rad/s, ``estimated_magnetometer_bias`` m̂ (N, 3), T, where it estimates one, and
          ``estimate_covariance`` P (N, n, n) of its error state (δϑ, the rotation vector of
          q̂* ⊗ q, rad; Δβ = β − β̂; then Δm = m − m̂): the NEES εᵀ P⁻¹ ε
          (:func:`~rigidrot_gym.physics.estimation.mekf.nees`) and the 3σ bounds are the user's to take.
        """
        e, f = self._equipment, self.features
        if not (f.wheels or f.gyro or f.magnetometer):  # the plain task's step: nothing to build
            return NO_EXTRAS
        out: dict[str, np.ndarray] = {}
        if f.wheels:
            out["wheel_momentum"], out["wheel_saturated"] = e.wheel_momentum, e.saturated
        if f.gyro:
            out["gyro_bias"] = e.gyro[:, gyro.BIAS]
        field_bias = f.magnetometer and e.magnetometer_model[magnetometer.BIAS_STD] > 0.0
        if field_bias:
            out["magnetometer_bias"] = e.magnetometer[:, magnetometer.BIAS]
        if f.estimator:
            out["estimated_attitude"] = e.estimate[:, navigation.Q]
            out["estimated_gyro_bias"] = e.estimate[:, navigation.BIAS]
            if field_bias:
                out["estimated_magnetometer_bias"] = e.estimate[:, navigation.FIELD_BIAS]
            out["estimate_covariance"] = e.covariance
        return out

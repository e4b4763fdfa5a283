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

The class is assembled from parts, one concept per module: the row views of its bodies
(:mod:`~rigidrot_gym.attitude.views`), the transport of its records to the compiled call
(:mod:`~rigidrot_gym.attitude.transport`; with an engine's method,
:mod:`~rigidrot_gym.attitude.engine_period`), its control periods and their errors
(:mod:`~rigidrot_gym.attitude.period`), episode starts and the autoreset
(:mod:`~rigidrot_gym.attitude.autoreset`) and its results
(:class:`~rigidrot_gym.attitude.result.Results`). This module holds what the scenario
builds: the bodies' arrays and their equipment, and the realism options' draws.

Randomness comes only from the per-body generators passed in by the caller: the draws
at reset directly, the per-step noise through a counter-based stream keyed at reset
(:mod:`rigidrot_gym.attitude.variates`), so row i of a batch repeats a single env.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from rigidrot_gym.attitude import data, randomization
from rigidrot_gym.attitude.actuators import Actuators
from rigidrot_gym.attitude.autoreset import Restarts
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
    wheels,
)
from rigidrot_gym.attitude.data import FLAGS, VALUES, Features
from rigidrot_gym.attitude.draws import sources
from rigidrot_gym.attitude.period import Periods
from rigidrot_gym.attitude.result import Results
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
)
from rigidrot_gym.attitude.task import observation_size
from rigidrot_gym.attitude.transport import Transport
from rigidrot_gym.attitude.variates import keys_of
from rigidrot_gym.attitude.views import BodyViews
from rigidrot_gym.physics import integrators, validation
from rigidrot_gym.physics import quaternion as quat
from rigidrot_gym.physics.inertia import principal_frame

MAX_BODIES = 2**31 - 1  # bodies in one batch (each holds ~1 kB of state and scratch)


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


class AttitudeBatch(BodyViews, Transport, Periods, Restarts, Results):
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
        # (data.Carried) and read by rows through the transposed views of BodyViews.
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
        self._compile_kernels(own_method)

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

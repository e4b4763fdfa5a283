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

from rigidrot_gym.attitude import data
from rigidrot_gym.attitude.actuators import Actuators
from rigidrot_gym.attitude.autoreset import Restarts
from rigidrot_gym.attitude.components import COMPONENTS
from rigidrot_gym.attitude.components.declaration import Build, Episode
from rigidrot_gym.attitude.data import FLAGS, RESETS, VALUES, features_of
from rigidrot_gym.attitude.draws import sources
from rigidrot_gym.attitude.period import Periods
from rigidrot_gym.attitude.result import Results
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.attitude.starts import realism_draws, start_law, variate_count
from rigidrot_gym.attitude.task import observation_size
from rigidrot_gym.attitude.transport import Transport
from rigidrot_gym.attitude.views import BodyViews
from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.inertia import principal_frame

MAX_BODIES = 2**31 - 1  # bodies in one batch (each holds ~1 kB of state and scratch)


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
        switching = [
            c.name for c in COMPONENTS if c.torque and c.torque.substep and c.torque.on(self.features)
        ]
        if switching and not own_method:
            raise ValueError(
                f"integrator {scenario.integrator!r} is an engine, which holds the torque over the period: "
                f"it cannot switch {switching[0]} at the sub-steps within it; use a library method"
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
        self._limits, self._steps, self._hold = carried.limits, carried.steps, carried.hold
        self._scratch, self._commands, self._sensed = carried.scratch, carried.commands, carried.sensed
        self._normals, self._estimator = carried.normals, carried.estimator
        self._moments[:] = moments[:, None]
        self._principal[:] = self._nominal[1][:, None]
        self._limits[:] = self.actuators.limits[:, None]
        self._target[:] = quat.identity()[:, None]
        self._rngs: tuple[np.random.Generator, ...] = ()  # none yet: the env sets them at reset
        self._sources = sources(self._rngs)
        self.obs = np.zeros((n, observation_size(scenario)), dtype=np.float32)
        self._values = np.zeros((VALUES, n))
        self._flags = np.zeros((FLAGS, n), dtype=bool)
        self._handed_out = False  # the outputs given away by result(), not to be written
        self._init_equipment()
        self._law = start_law(scenario)  # the start law, for the compiled step's restarts
        self._variate_count = variate_count(scenario)
        # The per-episode starts of the components the scenario has on (data.RESETS).
        self._resets = tuple(reset for on, reset in RESETS if on(scenario))
        self._all = np.arange(n)
        self._no_waiting = np.zeros(n, dtype=bool)
        self._every = np.ones(n, dtype=bool)
        # What the compiled step reads for an evaluation without a step (float32, as agents'
        # actions are, so that it is the same compiled specialisation).
        self._idle_actions = np.zeros((n, m), dtype=np.float32)
        self._compile_kernels(own_method)

    def _init_equipment(self) -> None:
        """The realism components' per-body state and constants, as each declares them
        (:func:`~rigidrot_gym.attitude.data.equipment_of`): zeros and empty arrays without
        realism options, which the pipeline never reads."""
        self._equipment = data.equipment_of(
            Build(self.scenario, self.num_bodies, self.actuators, self.features)
        )

    def _reset_realism(self, rows: np.ndarray, variates: np.ndarray) -> None:
        """Per-episode draws of the realism options for ``rows``: each component's start
        (its ``reset``, in the list's order: the body itself with domain randomisation, wheel
        momenta, sensor bias, disturbances, orbit phase and mean anomaly …) from the variates
        drawn for them, by name (:func:`~rigidrot_gym.attitude.starts.realism_draws`)."""
        episode = Episode(self, self._equipment, self._nominal, rows, realism_draws(variates, self.scenario))
        for reset in self._resets:
            reset(episode)

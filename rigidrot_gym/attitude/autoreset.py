"""Episode starts and the autoreset: one mechanism for every env class.

A body's new episode is drawn from its own generator by one compiled function
(:func:`~rigidrot_gym.attitude.starts.start_state`), called either inside the compiled
control period (:mod:`~rigidrot_gym.attitude.components.restart`: the plain task's resets
and next-step autoresets, with no extra call) or through
:meth:`Restarts.reset_rows` (the realism options' draws, an engine's method, fixed
starts, a same-step autoreset); both give the same numbers.

:class:`Restarts` is the part of :class:`~rigidrot_gym.attitude.batch.AttitudeBatch` that
starts episodes; the single env's ``reset`` is its :meth:`Restarts.reset`.
:class:`Autoreset` restarts the rows whose episodes ended under Gymnasium's modes
(``gymnasium.vector.AutoresetMode``), the native vector env's NEXT_STEP and the
stable-baselines3 adapter's SAME_STEP:

| mode      | which rows restart, when                       | what the step returns for them               |
|-----------|------------------------------------------------|----------------------------------------------|
| NEXT_STEP | those that ended at the last step, in this     | the new episode's first observation, reward  |
|           | step's compiled call (their actions unread)    | 0, both flags false                          |
| SAME_STEP | those that end at this step, right after it    | the new episode's first observation, the     |
|           |                                                | step's reward and flags; the episode's last  |
|           |                                                | observation in ``final_obs``                 |

Rewards and flags themselves are the evaluation's
(:func:`~rigidrot_gym.attitude.components.evaluation.assess`), for every path.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from gymnasium.vector import AutoresetMode

from rigidrot_gym.attitude.components import COMPONENTS
from rigidrot_gym.attitude.components.declaration import Start
from rigidrot_gym.attitude.data import NEAR_TARGET, REWARD, TERMINATED, TRUNCATED
from rigidrot_gym.attitude.result import StepResult
from rigidrot_gym.attitude.starts import start_states
from rigidrot_gym.physics.rotation import quaternion as quat

if TYPE_CHECKING:  # the batch is assembled from this module's Restarts
    from rigidrot_gym.attitude.batch import AttitudeBatch

Fixed = tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None]
FREE: Fixed = (None, None, None)  # no start value fixed: every one drawn

# The components with a turn of the episode starts drawn outside the compiled period.
RESTARTS = tuple(c for c in COMPONENTS if c.restart is not None)


class Restarts:
    """Episode starts of the batch's bodies (a part of
    :class:`~rigidrot_gym.attitude.batch.AttitudeBatch`, whose generators, start law,
    bodies and realism draws ``_reset_realism`` it uses)."""

    def reset_rows(self, rows: Sequence[int] | np.ndarray, fixed: Fixed = FREE) -> None:
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
        q, omega, target, variates = start_states(self._law, self._variate_count, rngs)
        if self.features.realistic or s.realistic:
            self._reset_realism(rows, variates)
        for component in RESTARTS:
            if component.on(s):
                near = self._law.mode == NEAR_TARGET
                component.restart(Start(self.features, self._equipment, near, rows, q, omega, target))
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

    def reset(self, fixed: Fixed | Sequence[Fixed] = FREE) -> None:
        """Start every body's next episode (:meth:`reset_rows`) and observe it
        (:meth:`~rigidrot_gym.attitude.period.Periods.observe`): where the pipeline draws
        the starts itself (no realism option, no ``fixed`` value), in its one compiled call,
        as its autoresets. ``fixed``: one triple for every body, or a list of one per body
        (stable-baselines3's per-env options: the bodies without options drawn together,
        then each other alone)."""
        if isinstance(fixed, list):
            free = [i for i, f in enumerate(fixed) if all(value is None for value in f)]
            self.reset_rows(free)
            for i in sorted(set(range(self.num_bodies)) - set(free)):
                self.reset_rows([i], fixed[i])
        elif self._draws_starts and all(value is None for value in fixed):
            self._period(None, self._every, restart=True)
            return
        else:
            self.reset_rows(self._all, fixed)
        self.observe()

    @property
    def _draws_starts(self) -> bool:
        """The compiled period draws episode starts (the realism options' starts are drawn
        by numpy, whose functions the compiled code would not repeat bit for bit)."""
        return self._kernel is not None and not self.scenario.realistic

    def restart(self, rows: np.ndarray, fixed: Fixed = FREE) -> None:
        """Reset ``rows`` (with the checked options ``fixed``) and recompute their
        observations and outputs (rewards and flags of those rows are left to the caller's
        autoreset convention)."""
        self.reset_rows(rows, fixed)
        reward, ended = self._values[REWARD, rows], self._flags[TERMINATED : TRUNCATED + 1, rows]
        self._observe_rows(np.unique(rows))
        self._values[REWARD, rows], self._flags[TERMINATED : TRUNCATED + 1, rows] = reward, ended

    def _restart_waiting(self, waiting: np.ndarray) -> None:
        """A step's next-step autoreset where the compiled period does not draw the starts:
        the ``waiting`` rows restarted after the step, with reward 0 and both flags false,
        as the compiled period gives them."""
        rows = np.flatnonzero(waiting)
        self.restart(rows)
        self._values[REWARD, rows], self._flags[TERMINATED : TRUNCATED + 1, rows] = 0.0, False


class Autoreset:
    """The autoreset of a batch's rows whose episodes end, in Gymnasium's ``mode``
    (``AutoresetMode.NEXT_STEP`` or ``SAME_STEP``; see the module docstring).

    ``ended`` (N,) bool: the rows whose episodes ended at the last step (NEXT_STEP: they
    restart at the next; SAME_STEP: they have restarted, and the array is new at every
    step). After a SAME_STEP :meth:`step`, ``restarted`` holds those rows (sorted),
    ``final_obs`` their episodes' last observations (one row each) and ``fresh`` the
    batch's result after their restart (their new episodes' ``info``; None without one).
    """

    def __init__(self, batch: AttitudeBatch, mode: AutoresetMode):
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise ValueError(f"mode must be AutoresetMode.NEXT_STEP or SAME_STEP, got {mode!r}")
        self.batch, self.mode = batch, mode
        self._next_step = mode == AutoresetMode.NEXT_STEP
        self.ended = np.zeros(batch.num_bodies, dtype=bool)
        self.restarted = np.zeros(0, dtype=np.int64)
        self.final_obs = np.zeros((0, batch.obs.shape[1]), dtype=batch.obs.dtype)
        self.fresh: StepResult | None = None

    def reset(self, fixed: Fixed | Sequence[Fixed] = FREE) -> StepResult:
        """Every row's new episode (:meth:`Restarts.reset`); none awaits a restart."""
        self.batch.reset(fixed)
        self.ended = np.zeros(self.batch.num_bodies, dtype=bool)  # SAME_STEP handed out the last
        return self.batch.result()

    def step(self, actions: np.ndarray) -> StepResult:
        """One step of every row with ``actions`` (checked), and the autoreset of the mode.
        Raises, with nothing changed, as :meth:`Periods.step
        <rigidrot_gym.attitude.period.Periods.step>`."""
        batch = self.batch
        if self._next_step:
            batch.step(actions, self.ended, restart=True)
            result = batch.result()
            np.logical_or(result.terminated, result.truncated, out=self.ended)
            return result
        batch.step(actions)
        result = batch.result()
        self.ended = result.terminated | result.truncated  # new: the caller's to keep
        rows = np.flatnonzero(self.ended)
        self.restarted, self.final_obs = rows, result.obs[rows]  # a copy (fancy indexing)
        self.fresh = None
        if rows.size:
            batch.restart(rows)
            self.fresh = batch.result()
            result.obs[rows] = self.fresh.obs[rows]
        return result

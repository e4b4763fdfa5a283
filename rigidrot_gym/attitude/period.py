"""The batch's control periods: one compiled call each, committed whole or not at all.

:class:`Periods` is the part of :class:`~rigidrot_gym.attitude.batch.AttitudeBatch` that
steps or evaluates its bodies: it stages a period into fresh outputs where the last ones
were handed out, puts back what the waiting bodies had, commits by swapping the staged
states in, and, where the kernel counted a failure, finds the first and raises with the
batch unchanged. Few rows are evaluated apart, in arrays of their own.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude import data
from rigidrot_gym.attitude.components.integration import divergence_error, first_failure
from rigidrot_gym.attitude.data import FLAGS, VALUES

# Fewer rows than this share of the batch are observed apart (their own compact arrays),
# so that a few rows cost a few rows.
_APART = 0.5


class Periods:
    """Steps and evaluations of the batch's bodies (a part of
    :class:`~rigidrot_gym.attitude.batch.AttitudeBatch`; the kernel call is
    :class:`~rigidrot_gym.attitude.transport.Transport`'s, the restarts are
    :class:`~rigidrot_gym.attitude.autoreset.Restarts`')."""

    def observe(self) -> None:
        """Compute the observation and outputs of the current state of every body (not
        advanced) into :attr:`~rigidrot_gym.attitude.batch.AttitudeBatch.obs` and the values and flags
        :meth:`~rigidrot_gym.attitude.result.Results.result` hands out."""
        self._period(None, self._no_waiting)

    def step(self, action: np.ndarray, waiting: np.ndarray | None = None, restart: bool = False) -> None:
        """Apply ``action`` ((N, n), checked by
        :func:`~rigidrot_gym.attitude.arguments.actions`; clipped to [-1, 1]) for one control
        period to the bodies not ``waiting`` ((N,) bool, default none; the others are not
        integrated and their actions not used); their results land in
        :attr:`~rigidrot_gym.attitude.batch.AttitudeBatch.obs` (N, 7 + wheels) and the values
        and flags of :meth:`~rigidrot_gym.attitude.result.Results.result`. With ``restart``
        the waiting bodies then start new episodes, as
        :meth:`~rigidrot_gym.attitude.autoreset.Restarts.restart`, with reward 0 and
        both flags false (a vector env's next-step autoreset,
        :class:`~rigidrot_gym.attitude.autoreset.Autoreset`). A step that raises changes
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
            self._restart_waiting(waiting)

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

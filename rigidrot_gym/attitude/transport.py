"""The arguments of the compiled control period, as the batch carries them to it.

:class:`Transport` is the part of :class:`~rigidrot_gym.attitude.batch.AttitudeBatch`
between its named records and the compiled call (:mod:`~rigidrot_gym.attitude.pipeline`):
the kernels of its method and features, the records as the plain tuples numba unboxes
fastest, the calls past numba's dispatch (:class:`~rigidrot_gym.physics.plumbing.jit.DirectCalls`),
the table of the bodies' generators that the call's restarts draw from, and what a copy or
an unpickled batch rebuilds of all these rather than share.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numba
import numpy as np

from rigidrot_gym.attitude import data, engine_period, pipeline
from rigidrot_gym.attitude.draws import sources
from rigidrot_gym.attitude.result import extras_views
from rigidrot_gym.attitude.stages import load
from rigidrot_gym.attitude.task import rules_of
from rigidrot_gym.physics.plumbing import jit

# The attributes derived from the others, which pickling drops and __setstate__ rebuilds.
_DERIVED = ("_sources", "_constants", "_calls", "_extras")


def _on_threads(kernel: Callable, threads: int, *args: Any) -> Any:
    """``kernel(*args)`` on ``threads`` of numba's threads (this thread's setting is put back)."""
    before = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        return kernel(*args)
    finally:
        numba.set_num_threads(before)


class Transport:
    """The batch's compiled calls and their arguments (a part of
    :class:`~rigidrot_gym.attitude.batch.AttitudeBatch`, whose bodies, equipment, settings
    and start law it carries)."""

    def _compile_kernels(self, own_method: bool) -> None:
        """The kernels of the batch's method and features: the compiled period, or for an
        engine's method the pipeline's two parts, the engine between them."""
        if own_method:
            parallel = self.num_threads > 1
            self._kernel = pipeline.kernel_of(self.method.step, self.features, "period", parallel)
        else:
            self._before = pipeline.kernel_of(None, self.features, "before")
            self._after = pipeline.kernel_of(None, self.features, "after")
            self._kernel = None
        self._transport()
        self._direct_calls()

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
        for derived in _DERIVED:
            del state[derived]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._state, self._staged = data.state_and_staging(self._state)  # apart, as carried() places them
        self._sources = sources(self._rngs)
        self._transport()
        self._direct_calls()

    def _carried(self) -> tuple:
        """The bodies and their staging area as the compiled call takes them (a plain
        tuple of :class:`~rigidrot_gym.attitude.data.Carried`'s fields)."""
        return (
            self._state,
            self._moments,
            self._principal,
            self._target,
            self._limits,
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
            data.passed(self._equipment, self.features),
            data.pack(rules_of(self.scenario), self._law),
        )
        self._extras = extras_views(self._equipment, self.features)

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
            carried = data.Carried(*carried)
            model = load.model(self.features)[0]
            return engine_period.run(
                self._calls, self.method, self.scenario, self.opts, carried, types, args, model
            )
        if self.num_threads == 1:
            return self._calls[0](types, args)
        return _on_threads(self._calls[0], self.num_threads, types, args)

"""The integrator interface and the bookkeeping every method shares.

A method is one component-wise step function (see :mod:`rigidrot_gym.physics.plumbing.jit`)::

    step(n, t, h, q, w, s, inertia, torque, potential, p, opts) -> (q, w, s, iterations)

advancing one body (floats, compiled) or a batch (arrays, numpy) from time ``t`` by
``h``: ``n`` is the index of the step, ``q`` the attitude 4-tuple, ``w`` the body
rates, ``s`` one scalar of method-specific state (only ``rkn`` uses it), ``inertia``
the principal moments, ``torque``/``potential``/``p`` the load functions and this
body's parameters (:mod:`rigidrot_gym.physics.rotation.torques`; only methods that declare
``uses_potential`` call ``potential``, the others see its torque inside ``torque``),
``opts`` the method's options as a float array.
``iterations`` reports the work of implicit methods (0 for explicit ones); a step that
failed to converge reports ``inf``.

:func:`advance` owns what every method shares: sub-steps (Mandre 2008, §7.4), the
optional angular-momentum re-normalisation of torque-free runs (§7.2), recording and
statistics. :class:`Method` holds what every method declares and the interface that
runs it; :class:`ComponentMethod` binds a step to its compiled kernel. A method that is
not a component-wise step (PyBullet) implements :meth:`Method.run` itself.
"""

from __future__ import annotations

import functools
import numbers
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import bodies, inlined, jitable, kernel
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qrotate, qrotate_inv
from rigidrot_gym.physics.rotation.torques import (
    WORLD,
    Loads,
    body_torque,
    model_potential,
    model_torque,
    parameters,
)

# Columns of the per-body state array: q (4), omega (3), method scalar s (1).
STATE_SIZE = 8

# A compiled kernel holds the interpreter until it returns, so Ctrl-C (KeyboardInterrupt)
# waits for it. ComponentMethod.run therefore cuts a long compiled run into calls of about
# CHUNK_SECONDS each, the first of FIRST_CHUNK body-sub-steps (~3 ms of RK4): a run that
# fits in it, as every env step does, is a single call as before.
CHUNK_SECONDS = 0.05
FIRST_CHUNK = 1 << 16
# No angular momentum to carry (runs without renormalisation).
_NO_MOMENTUM = np.zeros((0, 3))


class ConvergenceError(RuntimeError):
    """An implicit step did not reach its tolerance within its iteration limit."""


@jitable
def _record(traj, k, state, lo, hi):
    # Element by element: numba compiles the whole-slice assignment ~3 s slower.
    for c in range(STATE_SIZE):
        for i in bodies(lo, hi):
            traj[k, c, i] = state[c, i]


@jitable
def advance(
    step,
    torque,
    potential,
    state,
    inertia,
    p,
    read,
    t0,
    h,
    substeps,
    first,
    last,
    opts,
    renormalize,
    momentum,
    traj,
    stats,
    lo,
    hi,
    source=None,
):
    """Advance bodies ``lo`` … ``hi`` − 1 of ``state`` in place through sub-steps
    ``first … last − 1`` of a run of steps of ``h``, each split in ``substeps`` sub-steps of
    h/substeps; record the state after every completed step k in ``traj[k]`` unless
    ``traj`` is empty.

    Sub-step n starts at t0 + n·h/substeps, whichever call runs it, so a run split into
    several calls (:meth:`ComponentMethod.run` does so to stay interruptible) is bitwise
    the run in one call.

    Arrays are component-major so that ``state[c, i]`` is component ``c`` of body ``i``
    (or, with ``i`` the slice of :func:`~rigidrot_gym.physics.plumbing.jit.bodies` in numpy mode, of all
    bodies): ``state`` (8, N), ``inertia`` (3, N), ``p`` (SIZE, N, or more rows: ``read(p, i)``
    makes body i's parameter tuple, :func:`~rigidrot_gym.physics.rotation.torques.parameters`
    or a :func:`~rigidrot_gym.physics.rotation.torques.reader`), ``momentum`` (3, N, or
    empty without ``renormalize``), ``traj`` (steps + 1 or 0, 8, N) and ``stats`` (2, N: the
    most iterations of any step, and their total). The loop over bodies is innermost, so
    compiled it vectorises. A caller that never records nor renormalises (an env's period)
    passes None for ``traj`` and ``momentum``: compiled, the code that would is then pruned
    before numba types it (LLVM would otherwise compile it, vectorised, unused).

    With ``renormalize`` the body rates are reset after every sub-step from the initial
    world angular momentum L: ω = I⁻¹(q* L q) (Mandre 2008, §7.2; torque-free only); the
    call that runs sub-step 0 computes L into ``momentum``, later calls read it there.

    With a ``source`` (an array shaped as ``state``), sub-step ``first`` reads the bodies
    from it rather than from ``state``: an env's period advances the bodies' states into
    its staging area without copying them there first. Such a caller records nothing and
    does not renormalise (``traj`` and ``momentum`` None: both read ``state`` at sub-step 0).
    """
    # Each condition starts with an argument compared with None, which numba prunes.
    if first == 0:
        if traj is not None and traj.shape[0] > 0:
            _record(traj, 0, state, lo, hi)
        if momentum is not None and renormalize:
            for i in bodies(lo, hi):
                q = (state[0, i], state[1, i], state[2, i], state[3, i])
                w = (state[4, i], state[5, i], state[6, i])
                momentum[0, i], momentum[1, i], momentum[2, i] = qrotate(
                    q, vec.mul((inertia[0, i], inertia[1, i], inertia[2, i]), w)
                )
    hs = h / substeps
    # Step k and sub-step j of sub-step n = k·substeps + j, kept by counting (a division per
    # sub-step would cost a single body's run a measurable share).
    k = first // substeps
    j = first - k * substeps
    n = first
    if source is not None and n < last:
        # Out of place, before the loop and not a branch in it: LLVM would merge the two
        # calls of a branch into one that reads either array, compiled with runtime overlap
        # checks that fail in place and run every sub-step without vectors.
        _substep(
            step, torque, potential, source, state, inertia, p, read, n, t0 + n * hs, hs, opts, stats, lo, hi
        )
        n, j = n + 1, j + 1
        if j == substeps:
            k, j = k + 1, 0
    while n < last:
        stop = min(last, n + substeps - j)
        for m in range(n, stop):
            _substep(
                step,
                torque,
                potential,
                state,
                state,
                inertia,
                p,
                read,
                m,
                t0 + m * hs,
                hs,
                opts,
                stats,
                lo,
                hi,
            )
            # A loop of its own: a branch in the sub-step's loop keeps it from vectorising (RK4
            # over 4096 bodies: 45 ns per body-step instead of 14).
            if momentum is not None and renormalize:
                for i in bodies(lo, hi):
                    q = (state[0, i], state[1, i], state[2, i], state[3, i])
                    moments = (inertia[0, i], inertia[1, i], inertia[2, i])
                    w = vec.div(qrotate_inv(q, (momentum[0, i], momentum[1, i], momentum[2, i])), moments)
                    state[4, i], state[5, i], state[6, i] = w
        j += stop - n
        n = stop
        if j == substeps:
            k += 1
            j = 0
            if traj is not None and traj.shape[0] > 0:
                _record(traj, k, state, lo, hi)


@inlined
def _substep(step, torque, potential, x, state, inertia, p, read, m, t, h, opts, stats, lo, hi):
    """Sub-step ``m`` (from time ``t``, of ``h``) of bodies ``lo`` … ``hi`` − 1 read from
    ``x`` and written to ``state`` (``x`` is ``state`` in place), as :func:`advance`."""
    for i in bodies(lo, hi):
        q = (x[0, i], x[1, i], x[2, i], x[3, i])
        w = (x[4, i], x[5, i], x[6, i])
        moments = (inertia[0, i], inertia[1, i], inertia[2, i])
        q, w, s, iterations = step(m, t, h, q, w, x[7, i], moments, torque, potential, read(p, i), opts)
        state[0, i], state[1, i], state[2, i], state[3, i] = q
        state[4, i], state[5, i], state[6, i] = w
        state[7, i] = s
        stats[0, i] = np.maximum(stats[0, i], iterations)
        stats[1, i] = stats[1, i] + iterations


def _compile_run(step: Callable, torque: Callable, renormalize: bool) -> Callable:
    def run(state, inertia, p, t0, h, substeps, first, last, opts, momentum, traj, stats):
        """:func:`advance` with ``step``, the compiled torque model ``torque`` and, if
        ``renormalize``, the rates reset from the momentum (else the code is pruned and
        ``momentum`` not read); arrays as in :meth:`Method.run` (body-major; ``momentum``
        (N, 3) or empty), handed over component-major, but ``traj`` (steps + 1, 8, N),
        component-major already."""
        advance(
            step,
            torque,
            model_potential,
            state.T,
            inertia.T,
            p.T,
            parameters,
            t0,
            h,
            substeps,
            first,
            last,
            opts,
            renormalize,
            momentum.T if renormalize else None,
            traj,
            stats.T,
            0,
            state.shape[0],
        )

    # Numba's cache tells them apart by their closures (step, torque model, renormalize).
    return kernel(run)


@functools.cache
def kernel_of(step: Callable, body_only: bool, renormalize: bool = False) -> Callable:
    """The compiled run of the method whose step function is ``step``, with a body torque
    only (``body_only``) or with the whole compiled torque model, and with or without the
    momentum renormalisation (torque-free runs only): each is compiled when a run first
    needs it (one with both torque models would compile every step twice, and a run that
    does not renormalise compiled 12 % faster without its code)."""
    return _compile_run(step, body_torque if body_only else model_torque, renormalize)


@dataclass(frozen=True, kw_only=True)
class Method:
    """An integration method: what every comparison tool needs to know and run.

    Attributes:
        name: registry key.
        order: global order of accuracy.
        torque_evals: torque evaluations per step.
        torque_evals_per_iteration: further torque evaluations per solver iteration.
        source: where the method comes from.
        options: method options and their defaults, packed in this order into ``opts``.
        accepts_torque: False for methods that only integrate torque-free motion.
        uses_potential: the method calls ``potential`` itself (else a potential reaches
            it as torque).
        integers: the options that are integers in disguise (they travel as floats), with
            their inclusive ranges: a value outside, or not a whole number, raises instead
            of wrapping when the kernel converts it to an int64.
        check: optional validator of the options (raises ``ValueError``).
        engine: the foreign engine that runs the method (``"PyBullet"``, ``"MuJoCo"``,
            ``"Basilisk"``); empty for this library's own methods.
    """

    name: str
    order: int
    torque_evals: int
    source: str
    torque_evals_per_iteration: int = 0
    options: Mapping[str, float] = field(default_factory=dict)
    accepts_torque: bool = True
    uses_potential: bool = False
    integers: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    check: Callable[[dict], None] | None = None
    engine: str = ""

    def pack_options(self, given: Mapping[str, float]) -> np.ndarray:
        """Method options as the float array the step reads.

        Raises:
            ValueError: for an unknown name, a value that is not a finite real number, or
                an integer option (:attr:`integers`) outside its range; the message names
                the option, its value and what is expected.
        """
        if not isinstance(given, Mapping):
            raise ValueError(
                f"method {self.name!r} options must be a mapping of names to numbers, "
                f"got {validation.show(given)}"
            )
        unknown = sorted(map(repr, set(given) - set(self.options)))
        if unknown:
            valid = sorted(self.options) or "none"
            raise ValueError(
                f"method {self.name!r} has no option(s) [{', '.join(unknown)}]; its options are: {valid}"
            )
        values = {key: self._option(key, given.get(key, default)) for key, default in self.options.items()}
        if self.check is not None:
            self.check(values)
        return np.array([values[k] for k in self.options], dtype=np.float64)

    def _option(self, key: str, value) -> float:
        where = f"method {self.name!r} option {key}"
        if key in self.integers:
            return float(validation.whole(value, where, *self.integers[key]))
        try:
            number = float(value) if isinstance(value, numbers.Real) else np.nan
        except OverflowError:
            number = np.inf
        if not np.isfinite(number):
            raise ValueError(f"{where} must be a finite real number, got {validation.show(value)}")
        return number

    @staticmethod
    def buffers(n: int, steps: int, record: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Zeroed trajectory ((steps + 1, n, 8), or (0, n, 8) without ``record``) and
        statistics ((n, 2)) arrays for :meth:`run`."""
        return np.zeros((steps + 1 if record else 0, n, STATE_SIZE)), np.zeros((n, 2))

    def convergence_error(self, failed: int, total: int, opts: np.ndarray) -> ConvergenceError:
        """The error of a run in which the implicit steps of ``failed`` of ``total`` bodies
        did not converge with the packed options ``opts``."""
        options = dict(zip(self.options, opts.tolist(), strict=True))
        return ConvergenceError(
            f"method {self.name!r} did not converge within its iteration limit for {failed} of "
            f"{total} bodies (options {options}); reduce the step or raise max_iter"
        )

    def torque_evaluations(self, steps: int, total_iterations: np.ndarray) -> np.ndarray:
        """Torque evaluations per body of a run of ``steps`` (sub-)steps."""
        return self.torque_evals * steps + self.torque_evals_per_iteration * total_iterations

    def run(
        self,
        state: np.ndarray,
        inertia: np.ndarray,
        loads: Loads,
        t0: float,
        h: float,
        steps: int,
        substeps: int,
        opts: np.ndarray,
        renormalize: bool,
        traj: np.ndarray,
        stats: np.ndarray,
    ) -> None:
        """Advance ``state`` ((N, 8), principal axes, principal moments ``inertia`` (N, 3))
        in place by ``steps`` steps of ``h``, each split in ``substeps``.

        Fills ``traj`` ((steps + 1, N, 8), or (0, N, 8) not to record) and ``stats``
        ((N, 2): most iterations in a step, total iterations); see :meth:`buffers`.
        A KeyboardInterrupt may arrive between the chunks of a long compiled run
        (:data:`FIRST_CHUNK`); ``state`` then holds the sub-steps done so far.

        Raises:
            ConvergenceError: if an implicit step did not converge.
        """
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class ComponentMethod(Method):
    """A method written as one component-wise step (see the module docstring), run
    compiled by its kernel or vectorised in numpy by :func:`advance`.

    Attributes:
        step: the jitable step function.
    """

    step: Callable

    def kernel(self, body_only: bool, renormalize: bool = False) -> Callable:
        """This method's compiled run (:func:`kernel_of`; it takes the trajectory buffer
        component-major, ``traj.transpose(0, 2, 1)``)."""
        return kernel_of(self.step, body_only, renormalize)

    def run(
        self,
        state: np.ndarray,
        inertia: np.ndarray,
        loads: Loads,
        t0: float,
        h: float,
        steps: int,
        substeps: int,
        opts: np.ndarray,
        renormalize: bool,
        traj: np.ndarray,
        stats: np.ndarray,
    ) -> None:
        stats[:] = 0.0
        n = state.shape[0]
        total = steps * substeps
        momentum = np.zeros((n, 3)) if renormalize else _NO_MOMENTUM
        # Only body torques: the compiled torque model's other terms are zero for every body.
        kernel = self.kernel(not loads.params[:, WORLD:].any(), renormalize) if loads.compiled else None
        # Transposed here: in a kernel, numba compiles a transpose by axes ~4 s longer.
        frames = traj.transpose(0, 2, 1)
        if loads.compiled and total * n <= FIRST_CHUNK:  # the common case (every env step): one call
            kernel(
                state,
                inertia,
                loads.params,
                t0,
                h,
                substeps,
                0,
                total,
                opts,
                momentum,
                frames,
                stats,
            )
        elif loads.compiled:
            args = (state, inertia, loads.params, t0, h, substeps)
            first, size = 0, max(1, FIRST_CHUNK // max(n, 1))
            while first < total:
                last = min(total, first + size)
                start = time.perf_counter()
                kernel(*args, first, last, opts, momentum, frames, stats)
                # Aim the next call at CHUNK_SECONDS, growing at most eightfold per call.
                elapsed = max(time.perf_counter() - start, 1e-6)
                size = max(1, min(8 * size, int(size * CHUNK_SECONDS / elapsed)))
                first = last
        else:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                args = (
                    state.T,
                    inertia.T,
                    loads.params.T,
                    parameters,
                    t0,
                    h,
                    substeps,
                    0,
                    total,
                    opts,
                    renormalize,
                )
                rest = (momentum.T, frames, stats.T, 0, n)
                advance(self.step, loads.torque, loads.potential, *args, *rest)
        if self.torque_evals_per_iteration and np.isinf(stats[:, 0]).any():
            raise self.convergence_error(int(np.sum(np.isinf(stats[:, 0]))), state.shape[0], opts)

"""The integrator interface and the bookkeeping every method shares.

A method is one component-wise step function (see :mod:`rigidrot_gym.physics.jit`)::

    step(n, t, h, q, w, s, inertia, torque, potential, p, opts) -> (q, w, s, iterations)

advancing one body (floats, compiled) or a batch (arrays, numpy) from time ``t`` by
``h``: ``n`` is the index of the step, ``q`` the attitude 4-tuple, ``w`` the body
rates, ``s`` one scalar of method-specific state (only ``rkn`` uses it), ``inertia``
the principal moments, ``torque``/``potential``/``p`` the load functions and this
body's parameters (:mod:`rigidrot_gym.physics.torques`; only methods that declare
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

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from rigidrot_gym.physics import vector as vec
from rigidrot_gym.physics.jit import bodies, jitable
from rigidrot_gym.physics.quaternion import qrotate, qrotate_inv
from rigidrot_gym.physics.torques import (
    Loads,
    body_torque,
    model_potential,
    model_torque,
    only_body_torque,
    parameters,
)

# Columns of the per-body state array: q (4), omega (3), method scalar s (1).
STATE_SIZE = 8


class ConvergenceError(RuntimeError):
    """An implicit step did not reach its tolerance within its iteration limit."""


@jitable
def _record(traj, k, state):
    # Element by element: numba compiles the whole-slice assignment ~3 s slower.
    for c in range(STATE_SIZE):
        for i in bodies(state.shape[1]):
            traj[k, c, i] = state[c, i]


@jitable
def advance(
    step, torque, potential, state, inertia, p, t0, h, steps, substeps, opts, renormalize, traj, stats
):
    """Advance the bodies of ``state`` in place by ``steps`` steps of ``h``, each split in
    ``substeps``; record every step in ``traj`` unless it is empty.

    Arrays are component-major so that ``state[c, i]`` is component ``c`` of body ``i``
    (or, with ``i`` the slice of :func:`~rigidrot_gym.physics.jit.bodies` in numpy mode, of all
    bodies): ``state`` (8, N), ``inertia`` (3, N), ``p`` (SIZE, N), ``traj``
    (steps + 1 or 0, 8, N) and ``stats`` (2, N: the most iterations of any step, and
    their total). The loop over bodies is innermost, so compiled it vectorises.

    With ``renormalize`` the body rates are reset after every sub-step from the initial
    world angular momentum L: ω = I⁻¹(q* L q) (Mandre 2008, §7.2; torque-free only).
    """
    record = traj.shape[0] > 0
    if record:
        _record(traj, 0, state)
    momentum = np.zeros((3, state.shape[1]))
    if renormalize:
        for i in bodies(state.shape[1]):
            q = (state[0, i], state[1, i], state[2, i], state[3, i])
            w = (state[4, i], state[5, i], state[6, i])
            momentum[0, i], momentum[1, i], momentum[2, i] = qrotate(
                q, vec.mul((inertia[0, i], inertia[1, i], inertia[2, i]), w)
            )
    hs = h / substeps
    for k in range(steps):
        for j in range(substeps):
            n = k * substeps + j
            for i in bodies(state.shape[1]):
                q = (state[0, i], state[1, i], state[2, i], state[3, i])
                w = (state[4, i], state[5, i], state[6, i])
                moments = (inertia[0, i], inertia[1, i], inertia[2, i])
                q, w, s, iterations = step(
                    n, t0 + n * hs, hs, q, w, state[7, i], moments, torque, potential, parameters(p, i), opts
                )
                if renormalize:
                    w = vec.div(qrotate_inv(q, (momentum[0, i], momentum[1, i], momentum[2, i])), moments)
                state[0, i], state[1, i], state[2, i], state[3, i] = q
                state[4, i], state[5, i], state[6, i] = w
                state[7, i] = s
                stats[0, i] = np.maximum(stats[0, i], iterations)
                stats[1, i] = stats[1, i] + iterations
        if record:
            _record(traj, k + 1, state)


@jitable
def run_batch(step, state, inertia, p, t0, h, steps, substeps, opts, renormalize, traj, stats):
    """Compiled path: :func:`advance` with the compiled torque model; arrays as in
    :meth:`Method.run` (body-major), handed over component-major."""
    args = (
        state.T,
        inertia.T,
        p.T,
        t0,
        h,
        steps,
        substeps,
        opts,
        renormalize,
        traj.transpose(0, 2, 1),
        stats.T,
    )
    if only_body_torque(p):
        advance(step, body_torque, model_potential, *args)
    else:
        advance(step, model_torque, model_potential, *args)


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
    check: Callable[[dict], None] | None = None
    engine: str = ""

    def pack_options(self, given: Mapping[str, float]) -> np.ndarray:
        """Method options as the float array the step reads; unknown names raise."""
        unknown = sorted(set(given) - set(self.options))
        if unknown:
            valid = sorted(self.options) or "none"
            raise ValueError(f"method {self.name!r} has no option(s) {unknown}; its options are: {valid}")
        values = {k: float(v) for k, v in {**self.options, **given}.items()}
        if not all(np.isfinite(v) for v in values.values()):
            raise ValueError(f"method {self.name!r} options must be finite, got {values}")
        if self.check is not None:
            self.check(values)
        return np.array([values[k] for k in self.options], dtype=np.float64)

    @staticmethod
    def buffers(n: int, steps: int, record: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """Zeroed trajectory ((steps + 1, n, 8), or (0, n, 8) without ``record``) and
        statistics ((n, 2)) arrays for :meth:`run`."""
        return np.zeros((steps + 1 if record else 0, n, STATE_SIZE)), np.zeros((n, 2))

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
        kernel: ``@njit`` wrapper of :func:`run_batch` bound to ``step`` (one per
            method, at module level, so numba can cache it on disk).
    """

    step: Callable
    kernel: Callable

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
        if loads.compiled:
            self.kernel(state, inertia, loads.params, t0, h, steps, substeps, opts, renormalize, traj, stats)
        else:
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                args = (state.T, inertia.T, loads.params.T, t0, h, steps, substeps, opts, renormalize)
                advance(self.step, loads.torque, loads.potential, *args, traj.transpose(0, 2, 1), stats.T)
        if self.torque_evals_per_iteration and np.isinf(stats[:, 0]).any():
            failed = int(np.sum(np.isinf(stats[:, 0])))
            options = dict(zip(self.options, opts.tolist(), strict=True))
            raise ConvergenceError(
                f"method {self.name!r} did not converge within its iteration limit for {failed} of "
                f"{state.shape[0]} bodies (options {options}); reduce the step or raise max_iter"
            )

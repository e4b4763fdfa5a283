"""MuJoCo's integrators as methods: ``"mujoco_euler"``, ``"mujoco_implicitfast"``,
``"mujoco_implicit"`` and ``"mujoco_rk4"`` (the ``[mujoco]`` extra).

Each body is a free body (a ``<freejoint/>``) of unit mass with its principal moments
given explicitly (``<inertial diaginertia>``, so its body frame is our principal frame),
no geometry (so no contact), no gravity, no damping, no armature. MuJoCo's free joint
keeps ``qpos = [x, y, z, qw, qx, qy, qz]`` (scalar-first, body to world, like ours) and
``qvel = [v (world), ω (body frame)]`` (checked by a test). A batch runs as one model
with a free body per state, in models of at most :data:`CHUNK` bodies (measured below),
kept per thread (:mod:`~rigidrot_gym.engines.local`) and re-used: a run writes the
step, the moments, the attitudes and the rates into them, then calls ``mj_step``. New
moments need ``mj_setConst``: a free body is a "simple" body whose mass matrix is the
constant ``dof_M0``, so writing ``body_inertia`` alone integrates with the old moments
(1.8 rad off after 4 s on the asymmetric body of the tests).

The torque is our load model evaluated from (t, q, ω) at the start of every step and
written to ``qfrc_applied`` of the free joint's rotational dofs, which are the body axes
(checked by a test against ``xfrc_applied``, the world-frame wrench at the centre of
mass, fed the same torque rotated into the world frame: one step of either gives the
same numbers). It is held constant in the body frame across the stages of RK4, as a
motor actuator on a body site is and as Basilisk's and PyBullet's body torques are: a
torque constant in the body frame over a step (the env's actions) keeps RK4's order 4;
one that turns with the state (a world-fixed torque, a wheel's −ω × h) makes RK4 first
order in it. (``xfrc_applied`` would be held in the world frame instead, which makes a
body torque first order. MuJoCo's control callback could re-evaluate the torque at each
stage, but while a Python callback is installed every model compilation in the process
fails, "engine error: Python exception raised", so this wrapper installs none.)

The integrators (MuJoCo documentation, "Computation", "Numerical integration"):

* ``euler``: semi-implicit Euler, the gyroscopic force explicit. Order 1.
* ``implicitfast``: linearly implicit in velocity with the derivative of the forces,
  which for a free body includes the gyroscopic term (its 6×6 block). Order 1.
* ``implicit``: as implicitfast with every Coriolis/centrifugal derivative; on free
  bodies the same numbers. Order 1.
* ``rk4``: classical fourth-order Runge–Kutta on the whole state. Order 4.

MuJoCo detects an unstable step (a huge or non-finite acceleration) and by default
resets the data to the model's initial state, a silent wrong answer: here that reset is
disabled and such a run raises ``ValueError``. MuJoCo also prints its warning and appends
it to ``MUJOCO_LOG.TXT`` in the working directory; while a run steps, a warning handler
(:func:`_quiet`) drops its instability warnings (the ``ValueError`` reports them) and
passes any other warning to the handler installed before, or to :mod:`warnings`.

Batch layout, measured (mujoco 4.0.0, 2-core machine, µs per body-step of ``mj_step``,
one model with N free bodies against one ``MjData`` per body): Euler 0.5 against 4–6,
implicitfast 0.9 against 4–7, RK4 2–3 against 9–14 at N = 64–512; implicit 3.3 at
N = 64 but 17 at N = 512 and 34 at N = 1024 (its solve grows with the model), hence
models of at most 32 bodies.
"""

from __future__ import annotations

import threading
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from rigidrot_gym.engines.boundary import continuous, is_torque_free, torque_of
from rigidrot_gym.engines.local import PerThread
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.integrators.base import Method
from rigidrot_gym.physics.rotation.torques import Loads

CHUNK = 32  # free bodies per model
INTEGRATORS = {"euler": "Euler", "implicitfast": "implicitfast", "implicit": "implicit", "rk4": "RK4"}
_BODY = '<body><freejoint/><inertial pos="0 0 0" mass="1" diaginertia="1 1 1"/></body>'
_UNSTABLE = "The simulation is unstable"  # in MuJoCo's BADQPOS/BADQVEL/BADQACC warnings


def import_mujoco():
    """The mujoco module, or a clear error naming the extra that installs it."""
    try:
        import mujoco
    except ImportError as err:
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(
            'mujoco is not installed, run `pip install "rigidrot-gym[mujoco]"`'
        ) from err
    return mujoco


class _Handler:
    """MuJoCo's warning handler while runs step: one per process, installed by the first
    run to start and the previous handler restored by the last to finish (MuJoCo's handler
    is global, runs may overlap in threads)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running = 0
        self.previous = None

    def warn(self, message: str) -> None:
        if _UNSTABLE in message:
            return  # the run raises ValueError for it
        if self.previous is not None:
            self.previous(message)
        else:
            warnings.warn(f"MuJoCo: {message}", RuntimeWarning, stacklevel=2)


_handler = _Handler()


@contextmanager
def _quiet(mj):
    """MuJoCo's instability warnings neither printed nor written to ``MUJOCO_LOG.TXT``."""
    with _handler.lock:
        if _handler.running == 0:
            _handler.previous = mj.get_mju_user_warning()
            mj.set_mju_user_warning(_handler.warn)
        _handler.running += 1
    try:
        yield
    finally:
        with _handler.lock:
            _handler.running -= 1
            if _handler.running == 0:
                mj.set_mju_user_warning(_handler.previous)
                _handler.previous = None


class _Model:
    """One MuJoCo model of free bodies with its data, and views of their joint states."""

    def __init__(self, mj, integrator: str, size: int):
        xml = (
            f'<mujoco><option gravity="0 0 0" integrator="{INTEGRATORS[integrator]}"/>'
            f"<worldbody>{_BODY * size}</worldbody></mujoco>"
        )
        self.mj = mj
        self.model = mj.MjModel.from_xml_string(xml)
        self.model.opt.disableflags |= mj.mjtDisableBit.mjDSBL_AUTORESET
        self.data = mj.MjData(self.model)
        self.qpos, self.qvel = self.data.qpos.reshape(size, 7), self.data.qvel.reshape(size, 6)
        self.applied = self.data.qfrc_applied.reshape(size, 6)
        self.moments = np.zeros((size, 3))

    def load(self, q: np.ndarray, w: np.ndarray, moments: np.ndarray, h: float) -> None:
        """Bodies at rest in translation with attitudes ``q``, body rates ``w``, principal
        moments ``moments``; step ``h``; no applied force; warnings cleared."""
        if not np.array_equal(self.moments, moments):
            # A free body is "simple": its mass matrix is the constant dof_M0, which only
            # mj_setConst recomputes from body_inertia.
            self.model.body_inertia[1:] = moments
            self.mj.mj_setConst(self.model, self.data)
            self.moments = moments.copy()
        self.model.opt.timestep = h
        self.qpos[:, 0:3], self.qpos[:, 3:7] = 0.0, q
        self.qvel[:, 0:3], self.qvel[:, 3:6] = 0.0, w
        self.data.xfrc_applied[:] = 0.0
        self.data.qfrc_applied[:] = 0.0
        for warning in self.data.warning:
            warning.number = 0

    def step(self, t: float, torque) -> None:
        """One ``mj_step`` from time ``t`` under ``torque(t, q, w)`` (body frame, or None)."""
        self.data.time = t
        if torque is not None:
            # The free joint's rotational dofs are the body axes.
            self.applied[:, 3:6] = torque(t, self.qpos[:, 3:7], self.qvel[:, 3:6])
        self.mj.mj_step(self.model, self.data)

    def unstable(self) -> list[str]:
        """MuJoCo's instability warnings raised since :meth:`load`."""
        w = self.mj.mjtWarning
        bad = [
            k.name
            for k in (w.mjWARN_BADQPOS, w.mjWARN_BADQVEL, w.mjWARN_BADQACC)
            if self.data.warning[k].number
        ]
        return bad or ([] if np.all(np.isfinite(self.qvel)) else ["non-finite"])


class _Pool:
    """This thread's models, by integrator, size and position in the batch."""

    def __init__(self):
        self.mujoco = import_mujoco()
        self.models: dict[tuple[str, int, int], _Model] = {}

    def model(self, integrator: str, size: int, index: int) -> _Model:
        key = (integrator, size, index)
        if key not in self.models:
            self.models[key] = _Model(self.mujoco, integrator, size)
        return self.models[key]

    def discard(self, integrator: str, size: int, index: int) -> None:
        """Forget a model whose step was interrupted (its data may be inconsistent)."""
        self.models.pop((integrator, size, index), None)

    def close(self) -> None:
        self.models.clear()


_pools = PerThread(_Pool)


@dataclass(frozen=True, kw_only=True)
class MuJoCoMethod(Method):
    """MuJoCo behind the :class:`Method` interface; see the module docstring.

    Attributes:
        integrator: MuJoCo's integrator, a key of :data:`INTEGRATORS`.
    """

    integrator: str

    def run(
        self, state, inertia, loads: Loads, t0, h, steps, substeps, opts, renormalize, traj, stats
    ) -> None:
        pool = _pools.get()
        n = state.shape[0]
        # A Python torque is written for the whole batch: then one model holds it all.
        size = min(n, CHUNK) if loads.compiled else n
        stats[:] = 0.0
        final = state.copy()
        if traj.shape[0]:
            traj[0] = state
        with _quiet(pool.mujoco):
            for index, start in enumerate(range(0, n, size)):
                rows = slice(start, min(start + size, n))
                key = (self.integrator, rows.stop - rows.start, index)
                try:
                    final[rows] = self._run(
                        pool.model(*key),
                        state[rows],
                        inertia[rows],
                        loads,
                        rows,
                        t0,
                        h,
                        steps,
                        substeps,
                        renormalize,
                        traj,
                    )
                except BaseException:
                    pool.discard(*key)
                    raise
        # Only now: a run that raised leaves the state as it was.
        state[:] = final

    def _run(self, sim: _Model, state, inertia, loads, rows, t0, h, steps, substeps, renormalize, traj):
        """Run the bodies ``rows`` in ``sim``; record into ``traj[:, rows]``; the final state."""
        hs = h / substeps
        q = state[:, 0:4]
        sim.load(q, state[:, 4:7], inertia, hs)
        torque = None if is_torque_free(loads) else torque_of(loads, rows)
        momentum = quat.rotate(q, inertia * state[:, 4:7])
        out = state.copy()
        for k in range(steps):
            for j in range(substeps):
                sim.step(t0 + (k * substeps + j) * hs, torque)
                if renormalize:
                    sim.qvel[:, 3:6] = quat.rotate_inverse(sim.qpos[:, 3:7], momentum) / inertia
            if traj.shape[0] or k == steps - 1:
                q = continuous(sim.qpos[:, 3:7], q)
                out[:, 0:4], out[:, 4:7] = q, sim.qvel[:, 3:6]
                if traj.shape[0]:
                    traj[k + 1, rows] = out
        unstable = sim.unstable()
        if unstable:
            raise ValueError(
                f"MuJoCo's {self.integrator} step went unstable ({', '.join(unstable)}) with h = {hs:g} s: "
                "use a smaller step or more substeps"
            )
        return out


def _method(integrator: str) -> MuJoCoMethod:
    return MuJoCoMethod(
        name=f"mujoco_{integrator}",
        order=4 if integrator == "rk4" else 1,
        torque_evals=1,
        engine="MuJoCo",
        source=f"MuJoCo mj_step, integrator {INTEGRATORS[integrator]!r} (free joint, qfrc_applied)",
        integrator=integrator,
    )


METHODS = tuple(_method(name) for name in INTEGRATORS)

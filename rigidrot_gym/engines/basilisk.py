"""Basilisk's spacecraft hub as methods: ``"basilisk_rk4"``, ``"basilisk_rkf45"`` and
``"basilisk_rkf78"`` (the ``[basilisk]`` extra, ``pip install bsk``).

Each body is a ``spacecraft.Spacecraft`` with only its hub: unit mass, the principal
moments as ``IHubPntBc_B`` (so its body frame B is our principal frame), no gravity, and
an ``extForceTorque.ExtForceTorque`` effector carrying the body torque
(``extTorquePntB_B``, body frame). Its state integrator is Basilisk's fixed-step
``svIntegratorRK4`` (its default) or the adaptive ``svIntegratorRKF45`` /
``svIntegratorRKF78`` with their default tolerances. Hubs are kept per thread
(:mod:`~rigidrot_gym.engines.local`), one per body (Basilisk has no batch: 100 hubs in
one task cost what 100 separate ones do), each with its own nanosecond clock.

A step of h: the body torque evaluated at the step's start (t, q, ω) is written to the
effector, then ``Spacecraft.UpdateState`` integrates the hub to the step's end time,
exactly what the simulation's task scheduler calls, with Basilisk's bookkeeping (the
translational state, energy and momentum). The torque stays constant in the body frame
across the integrator's stages, as a flight-software torque command does at the task
rate: a torque constant in the body frame over a step keeps the integrator's order,
one that turns with the state (a world-fixed torque, a gyroscopic wheel term) makes the
step first order in it.

The attitude is Basilisk's MRP set σ_BN with body rates ω_BN_B; it is written with
``RigidBodyKinematics.EP2MRP`` and read with ``MRP2EP``, whose quaternion is already
ours (scalar-first, body to world; checked by a test against the exact solution).
Basilisk's clock counts integer nanoseconds: step k ends at the nearest nanosecond to
k h from the run's start, so times never drift by more than 0.5 ns whatever h.

Orders, measured on a torque-free asymmetric body against the exact solution (steps of
0.1–0.4 s for RKF78, 0.01–0.04 s for the others): RK4 4, RKF45 4 and RKF78 7 (each
propagates the lower-order solution of its embedded pair; the adaptive ones with their
default tolerances). Set-up costs about 4 ms per hub and 1.4 s for the import.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidrot_gym.engines.boundary import continuous, is_torque_free, torque_of
from rigidrot_gym.engines.local import PerThread
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.integrators.base import Method
from rigidrot_gym.physics.rotation.torques import Loads

INTEGRATORS = {"rk4": "svIntegratorRK4", "rkf45": "svIntegratorRKF45", "rkf78": "svIntegratorRKF78"}
_NANO = 1_000_000_000  # ns per s


def import_basilisk():
    """Basilisk's modules used here, or a clear error naming the extra that installs them."""
    try:
        from Basilisk.simulation import extForceTorque, spacecraft, svIntegrators
        from Basilisk.utilities import RigidBodyKinematics
    except ImportError as err:
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(
            'Basilisk is not installed, run `pip install "rigidrot-gym[basilisk]"`'
        ) from err
    return spacecraft, extForceTorque, svIntegrators, RigidBodyKinematics


class _Hub:
    """One spacecraft hub with its torque effector, integrator, states and clock."""

    def __init__(self, modules, integrator: str):
        spacecraft, ext_force_torque, sv_integrators, _ = modules
        self.craft = spacecraft.Spacecraft()
        self.craft.hub.mHub = 1.0
        self.effector = ext_force_torque.ExtForceTorque()
        self.craft.addDynamicEffector(self.effector)
        # Kept referenced: the spacecraft holds only a pointer to it.
        self.integrator = getattr(sv_integrators, INTEGRATORS[integrator])(self.craft)
        self.craft.setIntegrator(self.integrator)
        self.craft.Reset(0)
        self.sigma = self.craft.dynManager.getStateObject(self.craft.hub.nameOfHubSigma)
        self.omega = self.craft.dynManager.getStateObject(self.craft.hub.nameOfHubOmega)
        self.clock = 0  # ns, the end of the last step
        self.moments: tuple = ()

    def set(self, moments: np.ndarray, sigma: np.ndarray, w: np.ndarray) -> None:
        moments = tuple(float(x) for x in moments)
        if moments != self.moments:
            self.craft.hub.IHubPntBc_B = np.diag(moments).tolist()
            # Else the next step still integrates with the previous mass properties.
            self.craft.updateSCMassProps(self.clock / _NANO)
            self.moments = moments
        self.sigma.setState(sigma.reshape(3, 1).tolist())
        self.omega.setState(w.reshape(3, 1).tolist())
        self.effector.extTorquePntB_B = [[0.0], [0.0], [0.0]]


class _Pool:
    """This thread's hubs, by integrator."""

    def __init__(self):
        self.modules = import_basilisk()
        self.hubs: dict[str, list[_Hub]] = {}

    def hubs_for(self, integrator: str, n: int) -> list[_Hub]:
        pool = self.hubs.setdefault(integrator, [])
        while len(pool) < n:
            pool.append(_Hub(self.modules, integrator))
        return pool[:n]

    def close(self) -> None:
        self.hubs.clear()


_pools = PerThread(_Pool)


@dataclass(frozen=True, kw_only=True)
class BasiliskMethod(Method):
    """Basilisk behind the :class:`Method` interface; see the module docstring.

    Attributes:
        integrator: Basilisk's state integrator, a key of :data:`INTEGRATORS`.
    """

    integrator: str

    def run(
        self, state, inertia, loads: Loads, t0, h, steps, substeps, opts, renormalize, traj, stats
    ) -> None:
        pool = _pools.get()
        mrp2ep, ep2mrp = pool.modules[3].MRP2EP, pool.modules[3].EP2MRP
        n = state.shape[0]
        hubs = pool.hubs_for(self.integrator, n)
        stats[:] = 0.0
        hs = h / substeps
        q, w = state[:, 0:4].copy(), state[:, 4:7].copy()
        for hub, moments, q_i, w_i in zip(hubs, inertia, q, w, strict=True):
            hub.set(moments, ep2mrp(q_i), w_i)
        momentum = quat.rotate(q, inertia * w)
        torque = None if is_torque_free(loads) else torque_of(loads)
        starts = [hub.clock for hub in hubs]
        if traj.shape[0]:
            traj[0] = state
        for k in range(steps):
            for j in range(substeps):
                n_step = k * substeps + j
                if torque is not None:
                    for hub, tau in zip(hubs, torque(t0 + n_step * hs, q, w), strict=True):
                        hub.effector.extTorquePntB_B = tau.reshape(3, 1).tolist()
                for hub, start in zip(hubs, starts, strict=True):
                    hub.clock = start + round((n_step + 1) * hs * _NANO)
                    hub.craft.UpdateState(hub.clock)
                if torque is not None or renormalize or j == substeps - 1:
                    q_next = np.array([mrp2ep(np.ravel(hub.sigma.getState())) for hub in hubs])
                    w = np.array([np.ravel(hub.omega.getState()) for hub in hubs])
                    q = continuous(q_next, q)
                if renormalize:
                    w = quat.rotate_inverse(q, momentum) / inertia
                    for hub, w_i in zip(hubs, w, strict=True):
                        hub.omega.setState(w_i.reshape(3, 1).tolist())
            if traj.shape[0]:
                traj[k + 1, :, 0:4], traj[k + 1, :, 4:7], traj[k + 1, :, 7] = q, w, state[:, 7]
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(w))):
            raise ValueError(
                f"Basilisk's {self.integrator} step produced non-finite values with h = {hs:g} s: "
                "use a smaller step or more substeps"
            )
        # Only now: a run that raised leaves the state as it was.
        state[:, 0:4], state[:, 4:7] = q, w


def _method(integrator: str) -> BasiliskMethod:
    return BasiliskMethod(
        name=f"basilisk_{integrator}",
        order={"rk4": 4, "rkf45": 4, "rkf78": 7}[integrator],
        torque_evals=1,
        engine="Basilisk",
        source=f"Basilisk 2.12 spacecraft hub, {INTEGRATORS[integrator]} (MRP attitude, ExtForceTorque)",
        integrator=integrator,
    )


METHODS = tuple(_method(name) for name in INTEGRATORS)

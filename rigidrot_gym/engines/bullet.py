"""PyBullet's own integrator, as methods like any other: ``"pybullet"`` (a multibody) and
``"pybullet_maximal"`` (a maximal-coordinates rigid body).

Each body becomes a PyBullet base with no collision shape, unit mass and its principal
moments set explicitly, in one physics client per thread (kept between calls, closed
when the thread ends or at exit; see :mod:`~rigidrot_gym.engines.local`). A step of h:
apply the body torque evaluated at the step's start (t, q, ω), ``stepSimulation``, read
the attitude and the angular velocity back. PyBullet's step is semi-implicit Euler
(velocity first, then an exponential-map attitude update) with the gyroscopic term —
explicit from the previous velocity for a multibody (``btMultiBody``), implicit in the
body frame for a maximal-coordinates rigid body (``btRigidBody``).

The traps of ``notes/pybullet.md`` handled here: damping set to zero (default 0.04);
mass and inertia in one ``changeDynamics`` call (inertia is otherwise taken from the
collision shape); poses set on the inertial frame, which is the principal frame of the
state; the velocity set after the pose (a pose reset zeroes it), for maximal
coordinates after one step at rest (its world inverse inertia is stale for a step);
torques re-applied before every step in the inertial (LINK) frame (PyBullet clears
them); scalar-last quaternions and world-frame angular velocity converted at this
boundary; and a step whose rotation |ω|h exceeds π/4, which PyBullet clamps, refused.

Source: Bullet Physics / PyBullet 3.2.7 (E. Coumans). Order 1. Torque evaluations per
step: 1. Conserves nothing exactly. Needs the ``[render]`` extra.
"""

from __future__ import annotations

import atexit
from dataclasses import dataclass

import numpy as np

from rigidrot_gym.engines.boundary import continuous, is_torque_free, torque_of
from rigidrot_gym.engines.local import PerThread
from rigidrot_gym.physics.plumbing.quiet import import_quietly
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.integrators.base import Method
from rigidrot_gym.physics.rotation.torques import Loads

_MAX_ROTATION = np.pi / 4  # rad per step: PyBullet clamps the attitude update beyond it


def import_pybullet():
    """The pybullet module, or a clear error naming the extra that installs it."""
    try:
        pybullet = import_quietly("pybullet")
    except ImportError as err:
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(
            'pybullet is not installed, run `pip install "rigidrot-gym[render]"`'
        ) from err
    return pybullet


class _Simulator:
    """One DIRECT client with a pool of bodies (one pool per body kind)."""

    def __init__(self):
        self.p = import_pybullet()
        self.client = self.p.connect(self.p.DIRECT)
        self.p.setGravity(0.0, 0.0, 0.0, physicsClientId=self.client)
        self.bodies: dict[bool, list[int]] = {False: [], True: []}
        self.moments: dict[int, tuple] = {}

    def bodies_for(self, moments: np.ndarray, maximal: bool) -> list[int]:
        """``len(moments)`` bodies of the kind, with these principal moments (kg·m²)."""
        p, pool = self.p, self.bodies[maximal]
        while len(pool) < len(moments):
            pool.append(
                p.createMultiBody(
                    baseMass=1.0,
                    baseCollisionShapeIndex=-1,
                    baseVisualShapeIndex=-1,
                    useMaximalCoordinates=maximal,
                    physicsClientId=self.client,
                )
            )
        for body, inertia in zip(pool, moments, strict=False):
            inertia = tuple(float(x) for x in inertia)
            if self.moments.get(body) != inertia:
                # Mass and inertia in one call: mass alone recomputes the inertia from the
                # (absent) shape, and a maximal-coordinates body without mass= is static.
                p.changeDynamics(
                    body,
                    -1,
                    mass=1.0,
                    localInertiaDiagonal=inertia,
                    linearDamping=0.0,
                    angularDamping=0.0,
                    physicsClientId=self.client,
                )
                self.moments[body] = inertia
        return pool[: len(moments)]

    def close(self) -> None:
        """Disconnect the client, once: its id may later name another thread's client."""
        if self.client is not None and self.p.isConnected(self.client):
            self.p.disconnect(self.client)
        self.client = None


_simulators = PerThread(_Simulator)


def simulator() -> _Simulator:
    """This thread's simulator (a new thread or forked process gets its own client)."""
    return _simulators.get()


@atexit.register
def close() -> None:
    """Disconnect every PyBullet client of this process (threads open new ones on next use)."""
    _simulators.close()


@dataclass(frozen=True, kw_only=True)
class PyBulletMethod(Method):
    """PyBullet behind the :class:`Method` interface; see the module docstring.

    Attributes:
        maximal: a maximal-coordinates ``btRigidBody`` instead of a ``btMultiBody``.
    """

    maximal: bool

    def run(
        self, state, inertia, loads: Loads, t0, h, steps, substeps, opts, renormalize, traj, stats
    ) -> None:
        sim = simulator()
        p, client = sim.p, sim.client
        maximal = self.maximal
        bodies = sim.bodies_for(inertia, maximal)
        hs = h / substeps
        p.setPhysicsEngineParameter(fixedTimeStep=hs, numSubSteps=1, physicsClientId=client)
        stats[:] = 0.0
        q, w = state[:, 0:4].copy(), state[:, 4:7].copy()
        momentum = quat.rotate(q, inertia * w)
        _set_poses(p, client, bodies, q, maximal)
        _set_rates(p, client, bodies, q, w)
        if traj.shape[0]:
            traj[0] = state
        torque = None if is_torque_free(loads) else torque_of(loads)
        for k in range(steps):
            for j in range(substeps):
                t = t0 + (k * substeps + j) * hs
                turn = np.max(np.linalg.norm(w, axis=-1)) * hs
                if turn > _MAX_ROTATION:
                    raise ValueError(
                        f"PyBullet clamps a step's rotation at π/4 rad; this step turns |ω| h = {turn:.3g} "
                        f"rad (h = {hs:g} s): use a smaller step or more substeps"
                    )
                for body, tau_i in zip(bodies, () if torque is None else torque(t, q, w), strict=False):
                    # Cleared after every step: apply again; LINK_FRAME is the inertial frame.
                    p.applyExternalTorque(body, -1, tau_i.tolist(), p.LINK_FRAME, physicsClientId=client)
                p.stepSimulation(physicsClientId=client)
                q_next, w = _get(p, client, bodies)
                q = continuous(q_next, q)
                if renormalize:
                    w = quat.rotate_inverse(q, momentum) / inertia
                    _set_rates(p, client, bodies, q, w)
            if traj.shape[0]:
                traj[k + 1, :, 0:4], traj[k + 1, :, 4:7], traj[k + 1, :, 7] = q, w, state[:, 7]
        # Only now: a run that raised leaves the state as it was.
        state[:, 0:4], state[:, 4:7] = q, w


def _set_poses(p, client, bodies, q, maximal) -> None:
    """Attitudes of the inertial (principal) frames; zeroes the velocities."""
    for body, orientation in zip(bodies, quat.to_scalar_last(q), strict=True):
        p.resetBasePositionAndOrientation(body, [0.0, 0.0, 0.0], orientation.tolist(), physicsClientId=client)
    if maximal:
        p.stepSimulation(physicsClientId=client)  # refresh the stale world inverse inertia, at rest


def _set_rates(p, client, bodies, q, w) -> None:
    """Body rates, given to PyBullet in the world frame."""
    for body, omega in zip(bodies, quat.rotate(q, w), strict=True):
        p.resetBaseVelocity(body, [0.0, 0.0, 0.0], omega.tolist(), physicsClientId=client)


def _get(p, client, bodies) -> tuple[np.ndarray, np.ndarray]:
    """Attitudes (scalar-first) and body rates of every body."""
    xyzw = np.array([p.getBasePositionAndOrientation(b, physicsClientId=client)[1] for b in bodies])
    w_world = np.array([p.getBaseVelocity(b, physicsClientId=client)[1] for b in bodies])
    q = quat.from_scalar_last(xyzw)
    return q, quat.rotate_inverse(q, w_world)


def _method(maximal: bool) -> PyBulletMethod:
    kind = "a maximal-coordinates btRigidBody (gyroscopic term implicit in the body frame)"
    if not maximal:
        kind = "a btMultiBody (gyroscopic term explicit)"
    return PyBulletMethod(
        name="pybullet_maximal" if maximal else "pybullet",
        order=1,
        torque_evals=1,
        engine="PyBullet",
        source=f"PyBullet 3.2.7 stepSimulation (Bullet Physics): semi-implicit Euler on {kind}",
        maximal=maximal,
    )


METHODS = (_method(False), _method(True))

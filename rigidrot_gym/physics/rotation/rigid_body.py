"""Translation and rotation advanced together (Mandre 2008, §7.5).

The state y = (p, q) obeys the second-order system p̈ = F/m and Mandre's quaternion
ODE q̈ = q̇ ⊗ q* ⊗ q̇ + ½ q ⊗ (0, I⁻¹(τ − ω × Iω)) (§6); one Runge–Kutta–Nyström step
(:mod:`rigidrot_gym.physics.rotation.nystrom`) advances both, so at every stage the force sees the
current attitude estimate and the torque the current position estimate — the coupling
§7.5 asks for. |q| = 1 and q·q̇ = 0 are restored after every step. Order 4.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.inertia import principal_frame
from rigidrot_gym.physics.rotation.integrators.rkn import project, quaternion_acceleration
from rigidrot_gym.physics.rotation.nystrom import nystrom_step


@dataclass(frozen=True)
class RigidBodyTrajectory:
    """States at ``t = t0 + k·dt``, ``k = 0 … steps``; batch shape ``...``.

    Attributes:
        t: (steps + 1,) times, s.
        position, velocity: (steps + 1, ..., 3) centre of mass, world frame (m, m/s).
        q: (steps + 1, ..., 4) attitudes, body to world.
        omega: (steps + 1, ..., 3) body rates, rad/s, in the given body frame.
    """

    t: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    q: np.ndarray
    omega: np.ndarray


def _axpy7(s, a, b):
    return tuple(s * x + y for x, y in zip(a, b, strict=True))


def _check(value, what: str, shape) -> np.ndarray:
    a = validation.floats(value, what)
    if a.shape[-1:] != (3,) or not np.all(np.isfinite(a)) or not validation.broadcasts_to(a.shape, shape):
        shown = validation.show(a.tolist())
        raise ValueError(f"{what} must return finite values of a shape broadcasting to {shape}, got {shown}")
    return np.broadcast_to(a, shape)


def propagate_rigid_body(
    p0,
    v0,
    q0,
    omega0,
    mass,
    inertia,
    dt: float,
    steps: int,
    force=None,
    torque=None,
    t0: float = 0.0,
) -> RigidBodyTrajectory:
    """Integrate a free rigid body under ``force(t, p, v, q, omega)`` (world frame, N)
    and ``torque(t, q, omega, p, v)`` (body frame, N·m).

    Args:
        p0: (..., 3) initial position, world frame, m.
        v0: (..., 3) initial velocity, world frame, m/s.
        q0: (..., 4) initial attitude.
        omega0: (..., 3) initial body rates, rad/s.
        mass: scalar or (...) masses, kg.
        inertia: (..., 3) principal moments or (..., 3, 3) body tensor, kg·m².
        dt: step, s.
        steps: number of steps.
        force: ``None`` or a callable as above; it sees every stage's estimates.
        torque: ``None`` or a callable as above; it sees every stage's estimates.
        t0: initial time, s.
    """
    p0, v0 = validation.vectors(p0, "p0", 3), validation.vectors(v0, "v0", 3)
    q0 = validation.unit_quaternions(q0, "q0")
    omega0 = validation.vectors(omega0, "omega0", 3)
    mass = validation.floats(mass, "mass")
    if np.any(~np.isfinite(mass) | (mass <= 0)):
        raise ValueError(f"mass must be positive and finite, got {mass.tolist()}")
    moments, principal, _ = principal_frame(inertia)
    dt, t0 = validation.scalar(dt, "dt", positive=True), validation.scalar(t0, "t0")
    steps = validation.count(steps, "steps", minimum=0)
    validation.end_time(t0, dt, steps)
    for name, f in (("force", force), ("torque", torque)):
        if f is not None and not callable(f):
            raise ValueError(f"{name} must be None or a callable, got {validation.show(f)}")
    batch = validation.batch_shape(
        p0=p0.shape[:-1],
        v0=v0.shape[:-1],
        q0=q0.shape[:-1],
        omega0=omega0.shape[:-1],
        mass=mass.shape,
        inertia=moments.shape[:-1],
    )
    vec3, n = (*batch, 3), int(np.prod(batch, dtype=np.int64))
    mass = np.broadcast_to(mass, batch)[..., None]
    moments = tuple(np.broadcast_to(moments, vec3).reshape(n, 3).T)

    def user_frame(q, w):
        """Principal-axis attitudes (..., *batch, 4) and rates → the caller's body frame."""
        q = quat.normalize(q)
        if principal is None:
            return q, w
        return quat.multiply(q, quat.conjugate(principal)), quat.rotate(principal, w)

    def arrays(q, w):
        return np.stack(q, -1).reshape((*batch, 4)), np.stack(w, -1).reshape(vec3)

    def accelerations(t, y, yd, args):
        p, v = np.stack(y[:3], -1).reshape(vec3), np.stack(yd[:3], -1).reshape(vec3)
        q, qd = y[3:], yd[3:]
        w = quat.multiply(quat.conjugate(np.stack(q, -1)), np.stack(qd, -1))[:, 1:] * 2.0
        q_user, w_user = user_frame(*arrays(q, tuple(w.T)))
        a = np.zeros(vec3) if force is None else _check(force(t, p, v, q_user, w_user), "force", vec3) / mass

        def body_torque(t, q, w, _):
            if torque is None:
                return (0.0, 0.0, 0.0)
            tau = _check(torque(t, *user_frame(*arrays(q, w)), p, v), "torque", vec3)
            tau = tau if principal is None else quat.rotate_inverse(principal, tau)
            return tuple(tau.reshape(n, 3).T)

        qdd = quaternion_acceleration(t, q, qd, (moments, body_torque, None))
        return (*a.reshape(n, 3).T, *qdd)

    q_p = q0 if principal is None else quat.multiply(q0, principal)
    w_p = omega0 if principal is None else quat.rotate_inverse(principal, omega0)
    q = np.broadcast_to(q_p, (*batch, 4)).reshape(n, 4)
    qd = 0.5 * quat.multiply(
        q, np.concatenate([np.zeros((n, 1)), np.broadcast_to(w_p, vec3).reshape(n, 3)], -1)
    )
    y = (*np.broadcast_to(p0, vec3).reshape(n, 3).T, *q.T)
    yd = (*np.broadcast_to(v0, vec3).reshape(n, 3).T, *qd.T)
    states = [(y, yd)]
    for k in range(steps):
        y, yd = nystrom_step(accelerations, None, t0 + k * dt, dt, y, yd, _axpy7)
        q, qd = project(y[3:], yd[3:])
        y, yd = (*y[:3], *q), (*yd[:3], *qd)
        states.append((y, yd))
    ys = np.stack([np.stack(s[0], -1) for s in states])
    yds = np.stack([np.stack(s[1], -1) for s in states])
    shape = (steps + 1, *batch)
    q_p = ys[..., 3:].reshape((*shape, 4))
    w_p = 2.0 * quat.multiply(quat.conjugate(q_p), yds[..., 3:].reshape((*shape, 4)))[..., 1:]
    q_user, w_user = user_frame(q_p, w_p)
    return RigidBodyTrajectory(
        t=t0 + dt * np.arange(steps + 1),
        position=ys[..., :3].reshape((*shape, 3)),
        velocity=yds[..., :3].reshape((*shape, 3)),
        q=q_user,
        omega=w_user,
    )

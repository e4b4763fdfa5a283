"""Linear motion of the centre of mass under a force F(t, p, v) (Mandre 2008, §5).

ṗ = v, v̇ = F/m, integrated by the fourth-order Runge–Kutta–Nyström step of
:mod:`rigidrot_gym.physics.rotation.nystrom`. For a constant force the step reduces to the closed form
p₁ = p₀ + v₀h + ½ah², v₁ = v₀ + ah (all four stages see the same acceleration a).
World frame, SI units; batched (..., 3) positions and velocities.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rigidrot_gym.physics.plumbing.validation import (
    batch_shape,
    broadcasts_to,
    count,
    end_time,
    floats,
    scalar,
    show,
    vectors,
)
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.nystrom import nystrom_step


@dataclass(frozen=True)
class LinearTrajectory:
    """Positions and velocities at ``t = t0 + k·dt``, ``k = 0 … steps``.

    Attributes:
        t: (steps + 1,) times, s.
        position: (steps + 1, ..., 3) centre-of-mass positions, m.
        velocity: (steps + 1, ..., 3) velocities, m/s.
    """

    t: np.ndarray
    position: np.ndarray
    velocity: np.ndarray


def _acceleration(t, p, v, args):
    force, mass, shape = args
    what = f"force(t={t}, p, v)"
    f = floats(force(t, np.stack(p, -1).reshape(shape), np.stack(v, -1).reshape(shape)), what)
    if f.shape[-1:] != (3,) or not np.all(np.isfinite(f)) or not broadcasts_to(f.shape, shape):
        raise ValueError(
            f"{what} must return finite values of a shape broadcasting to {shape}, got {show(f.tolist())}"
        )
    a = np.broadcast_to(f / mass[..., None], shape).reshape(-1, 3)
    return (a[:, 0], a[:, 1], a[:, 2])


def propagate_linear(p0, v0, mass, dt: float, steps: int, force=None, t0: float = 0.0) -> LinearTrajectory:
    """Integrate ṗ = v, m v̇ = F(t, p, v) with the RKN step.

    Args:
        p0: (..., 3) initial positions, m.
        v0: (..., 3) initial velocities, m/s.
        mass: scalar or (...) masses, kg.
        dt: step, s; steps: number of steps.
        force: ``None``, a constant (..., 3) force, or ``force(t, p, v) -> (..., 3)``, N.
        t0: initial time, s.

    Returns:
        LinearTrajectory with (steps + 1, ..., 3) positions and velocities.
    """
    p0, v0 = vectors(p0, "p0", 3), vectors(v0, "v0", 3)
    mass = floats(mass, "mass")
    if np.any(~np.isfinite(mass) | (mass <= 0)):
        raise ValueError(f"mass must be positive and finite, got {mass.tolist()}")
    dt, t0 = scalar(dt, "dt", positive=True), scalar(t0, "t0")
    steps = count(steps, "steps", minimum=0)
    end_time(t0, dt, steps)
    shape = (*batch_shape(p0=p0.shape[:-1], v0=v0.shape[:-1], mass=mass.shape), 3)
    function = _as_force(force, shape)
    mass = np.broadcast_to(mass, shape[:-1])
    p = tuple(np.broadcast_to(p0, shape).reshape(-1, 3).T)
    v = tuple(np.broadcast_to(v0, shape).reshape(-1, 3).T)
    positions, velocities = [p], [v]
    for k in range(steps):
        p, v = nystrom_step(_acceleration, (function, mass, shape), t0 + k * dt, dt, p, v, vec.axpy)
        positions.append(p)
        velocities.append(v)
    return LinearTrajectory(
        t=t0 + dt * np.arange(steps + 1),
        position=np.stack([np.stack(x, -1) for x in positions]).reshape((steps + 1, *shape)),
        velocity=np.stack([np.stack(x, -1) for x in velocities]).reshape((steps + 1, *shape)),
    )


def _as_force(force, shape) -> Callable:
    if callable(force):
        return force
    constant = np.zeros(3) if force is None else vectors(force, "force", 3)
    if np.broadcast_shapes(constant.shape, shape) != shape:
        raise ValueError(f"force must broadcast to shape {shape}, got shape {constant.shape}")
    return lambda t, p, v: constant

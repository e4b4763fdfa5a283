"""Torques as the integrators see them: ``torque(t, q, omega, p) -> τ_body``.

Every integrator evaluates the torque at each of its stages through one signature:
``t`` the stage time (s), ``q`` and ``omega`` the stage attitude and body rates as
component tuples, ``p`` this body's row of torque parameters; it returns the body-frame
torque (N·m, principal axes) as a 3-tuple. Stage quaternions of Runge–Kutta methods
are slightly off unit length, so every torque sees ``q/|q|``.

Two implementations of that signature exist:

* :func:`model_torque`, compiled into the kernels: a constant body torque plus a
  constant world-frame torque, read from the parameter row ``p`` (layout below).
* :func:`callable_torque`, for a user's Python function ``torque(t, q, omega)`` on
  batched ``(..., 4)`` / ``(..., 3)`` arrays; methods then run vectorised in numpy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from rigidrot_gym import quaternion as quat
from rigidrot_gym import vector as vec
from rigidrot_gym.jit import jitable
from rigidrot_gym.quaternion import qnormalize, qrotate_inv

# Layout of a parameter row of the compiled model.
BODY = 0  # [0:3] constant torque in the body frame, N·m
WORLD = 3  # [3:6] constant torque in the world frame, N·m
SIZE = 6

FRAMES = ("body", "world")


@jitable
def model_torque(t, q, omega, p):
    """τ = τ_body + q* τ_world q, from the parameter row ``p``."""
    body = (p[BODY], p[BODY + 1], p[BODY + 2])
    world = qrotate_inv(qnormalize(q), (p[WORLD], p[WORLD + 1], p[WORLD + 2]))
    return vec.add(body, world)


@dataclass(frozen=True)
class Torque:
    """A torque resolved for one propagation in principal axes.

    Attributes:
        params: (N, SIZE) parameter rows of :func:`model_torque`.
        function: a Python torque in the integrators' signature, or ``None`` when the
            compiled model covers the torque (then the methods run compiled).
    """

    params: np.ndarray
    function: Callable | None = None

    @property
    def is_zero(self) -> bool:
        return self.function is None and not np.any(self.params)


def resolve(torque, frame: str, batch_shape: tuple[int, ...], principal) -> Torque:
    """Turn the user's ``torque`` argument into a :class:`Torque` in principal axes.

    Args:
        torque: ``None``; a constant torque, array-like broadcastable to
            ``batch_shape + (3,)``; or a callable ``torque(t, q, omega) -> (..., 3)``
            on the user's batched attitudes and body rates.
        frame: ``"body"`` or ``"world"``: the frame the torque is expressed in.
        batch_shape: leading shape of the bodies.
        principal: ((..., 4) array or None) rotation from principal axes to the user's
            body frame, or None when the body frame is principal.
    """
    if frame not in FRAMES:
        raise ValueError(f"torque_frame must be one of {FRAMES}, got {frame!r}")
    n = int(np.prod(batch_shape, dtype=np.int64))
    params = np.zeros((n, SIZE))
    if torque is None:
        return Torque(params)
    if callable(torque):
        return Torque(params, callable_torque(torque, frame, batch_shape, principal))
    tau = np.asarray(torque, dtype=np.float64)
    if tau.ndim == 0 or tau.shape[-1] != 3 or not _broadcasts(tau.shape, batch_shape + (3,)):
        raise ValueError(f"torque must broadcast to shape {batch_shape + (3,)}, got shape {tau.shape}")
    if not np.all(np.isfinite(tau)):
        raise ValueError(f"torque must be finite, got {tau.tolist()}")
    tau = np.broadcast_to(tau, batch_shape + (3,))
    if frame == "world":
        params[:, WORLD : WORLD + 3] = tau.reshape(n, 3)
    else:
        body = tau if principal is None else quat.rotate_inverse(principal, tau)
        params[:, BODY : BODY + 3] = np.broadcast_to(body, batch_shape + (3,)).reshape(n, 3)
    return Torque(params)


def callable_torque(function: Callable, frame: str, batch_shape: tuple[int, ...], principal) -> Callable:
    """Wrap ``function(t, q, omega) -> (..., 3)`` into the integrators' signature.

    The wrapper stacks the stage components into the user's batch shape, converts
    attitude and rates from principal axes to the user's body frame, validates the
    result (shape and finiteness) and converts it back to principal-axis body torque.
    """
    n = int(np.prod(batch_shape, dtype=np.int64))

    def torque(t, q, omega, p):
        q_p = quat.normalize(np.stack(q, axis=-1).reshape(batch_shape + (4,)))
        w_p = np.stack(omega, axis=-1).reshape(batch_shape + (3,))
        if principal is None:
            q_user, w_user = q_p, w_p
        else:
            q_user = quat.multiply(q_p, quat.conjugate(principal))
            w_user = quat.rotate(principal, w_p)
        tau = np.asarray(function(t, q_user, w_user), dtype=np.float64)
        if tau.ndim == 0 or tau.shape[-1] != 3 or not _broadcasts(tau.shape, batch_shape + (3,)):
            raise ValueError(
                f"torque(t={t}, q, omega) must return shape {batch_shape + (3,)} (or broadcastable), "
                f"got shape {tau.shape}"
            )
        if not np.all(np.isfinite(tau)):
            raise ValueError(f"torque(t={t}, q, omega) returned non-finite values: {tau.tolist()}")
        if frame == "world":
            tau = quat.rotate_inverse(q_p, tau)
        elif principal is not None:
            tau = quat.rotate_inverse(principal, tau)
        tau = np.broadcast_to(tau, batch_shape + (3,)).reshape(n, 3)
        return (tau[:, 0], tau[:, 1], tau[:, 2])

    return torque


def _broadcasts(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False

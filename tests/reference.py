"""Independent references for the tests: the rigid-body ODE solved by scipy's DOP853.

Written out in plain numpy, sharing no code with rigidrot_gym: full body-frame inertia
tensor J, Euler's equations J ω̇ = τ − ω × Jω, and q̇ = ½ q ⊗ (0, ω) with the Hamilton
product spelled out. Quaternions are scalar-first, body to world.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

TIGHT = {"rtol": 1e-13, "atol": 1e-13}

# Reaction-wheel spin axes (columns, body frame) written out by hand: the pyramid's wheels
# sit at arccos(1/√3) from body z, each axis (√(2/3) cos az, √(2/3) sin az, √(1/3)) for
# az = 0°, 90°, 180°, 270°.
_S, _C = np.sqrt(2.0 / 3.0), np.sqrt(1.0 / 3.0)
WHEEL_AXES = {
    "orthogonal": np.eye(3),
    "pyramid": np.array([[_S, 0.0, -_S, 0.0], [0.0, _S, 0.0, -_S], [_C, _C, _C, _C]]),
}


def _qdot(q: np.ndarray, w: np.ndarray) -> np.ndarray:
    qw, qx, qy, qz = q
    wx, wy, wz = w
    return 0.5 * np.array(
        [
            -qx * wx - qy * wy - qz * wz,
            qw * wx + qy * wz - qz * wy,
            qw * wy - qx * wz + qz * wx,
            qw * wz + qx * wy - qy * wx,
        ]
    )


def body_to_world(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate v by the scalar-first unit quaternion q, via scipy (scalar last)."""
    return Rotation.from_quat(np.roll(q / np.linalg.norm(q), -1)).apply(v)


def world_to_body(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    return Rotation.from_quat(np.roll(q / np.linalg.norm(q), -1)).inv().apply(v)


def _rhs(inertia, torque=None, world_torque=None):
    """The right-hand side of (q, ω) for the body tensor or moments ``inertia``."""
    inertia = np.asarray(inertia, dtype=float)
    J = np.diag(inertia) if inertia.shape == (3,) else inertia
    J_inv = np.linalg.inv(J)

    def rhs(t, y):
        q, w = y[:4], y[4:7]
        tau = np.zeros(3)
        if torque is not None:
            tau = tau + np.asarray(torque(t, q / np.linalg.norm(q), w), dtype=float)
        if world_torque is not None:
            tau = tau + world_to_body(q, world_torque)
        return np.concatenate([_qdot(q, w), J_inv @ (tau - np.cross(w, J @ w))])

    return rhs


def solve(q0, omega0, inertia, times, torque=None, world_torque=None) -> tuple[np.ndarray, np.ndarray]:
    """DOP853 at rtol = atol = 1e-13 for one body.

    Args:
        q0: (4,) attitude; omega0: (3,) body rates.
        inertia: (3,) principal moments or (3, 3) body tensor.
        times: (T,) increasing output times starting at or after 0.
        torque: optional ``torque(t, q, omega) -> (3,)`` body-frame torque.
        world_torque: optional constant (3,) world-frame torque.

    Returns:
        q (T, 4) and omega (T, 3).
    """
    rhs = _rhs(inertia, torque, world_torque)
    times = np.atleast_1d(np.asarray(times, dtype=float))
    y0 = np.concatenate([np.asarray(q0, float), np.asarray(omega0, float)])
    sol = solve_ivp(rhs, (0.0, times[-1]), y0, method="DOP853", t_eval=times, **TIGHT)
    assert sol.success, sol.message
    q = sol.y[:4].T
    return q / np.linalg.norm(q, axis=-1, keepdims=True), sol.y[4:].T


def integrate_rates(q0, omega0, inertia, duration, torque=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """DOP853 at rtol = atol = 1e-13 for one body over ``duration`` (s), its state augmented
    with ∫ω dt (what a rate-integrating gyro measures); arguments as :func:`solve`.

    Returns:
        q (4,) and omega (3,) at the end, and ∫₀ᵀ ω dt (3,), body frame, rad.
    """
    rhs = _rhs(inertia, torque)
    y0 = np.concatenate([np.asarray(q0, float), np.asarray(omega0, float), np.zeros(3)])
    sol = solve_ivp(
        lambda t, y: np.concatenate([rhs(t, y[:7]), y[4:7]]), (0.0, duration), y0, method="DOP853", **TIGHT
    )
    assert sol.success, sol.message
    end = sol.y[:, -1]
    return end[:4] / np.linalg.norm(end[:4]), end[4:7], end[7:]


def angle(q1: np.ndarray, q2: np.ndarray) -> np.ndarray:
    """Rotation angle (rad) of q1⁻¹ ⊗ q2, insensitive to the signs of q1 and q2.

    Uses atan2 of the vector and scalar parts, accurate for tiny angles (arccos of the
    dot product would lose half the digits).
    """
    q1 = np.asarray(q1, float) / np.linalg.norm(q1, axis=-1, keepdims=True)
    q2 = np.asarray(q2, float) / np.linalg.norm(q2, axis=-1, keepdims=True)
    w1, v1 = q1[..., :1], q1[..., 1:]
    w2, v2 = q2[..., :1], q2[..., 1:]
    scalar = np.sum(q1 * q2, axis=-1)
    vector = w1 * v2 - w2 * v1 - np.cross(v1, v2)
    return 2.0 * np.arctan2(np.linalg.norm(vector, axis=-1), np.abs(scalar))


def slope(h, err) -> float:
    """Least-squares slope of log(err) against log(h): the empirical order."""
    return float(np.polyfit(np.log(h), np.log(err), 1)[0])

"""Linear motion (Mandre 2008, §5) and translation + rotation together (§7.5)."""

from __future__ import annotations

import numpy as np
import pytest
from reference import TIGHT, angle, body_to_world, slope, world_to_body
from scipy.integrate import solve_ivp

from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.linear import propagate_linear
from rigidrot_gym.physics.rotation.rigid_body import propagate_rigid_body


def test_constant_force_reduces_to_the_closed_form():
    p0, v0, mass, force = (
        np.array([1.0, -2.0, 0.5]),
        np.array([0.3, 0.0, 4.0]),
        2.0,
        np.array([0.0, 1.0, -19.6]),
    )
    traj = propagate_linear(p0, v0, mass, 0.25, 40, force=force)
    t = traj.t[:, None]
    a = force / mass
    np.testing.assert_allclose(traj.position, p0 + v0 * t + 0.5 * a * t**2, rtol=0, atol=1e-12)
    np.testing.assert_allclose(traj.velocity, v0 + a * t, rtol=0, atol=1e-12)


def _helix(p0, v0, charge, mass, field_z, t):
    """Closed-form motion of a charge in a uniform field B = (0, 0, B): the velocity turns
    about z at ωc = qB/m (clockwise for qB > 0) while v_z is constant."""
    wc = charge * field_z / mass
    c, s = np.cos(wc * t), np.sin(wc * t)
    vx = v0[0] * c + v0[1] * s
    vy = -v0[0] * s + v0[1] * c
    x = p0[0] + (v0[0] * s + v0[1] * (1 - c)) / wc
    y = p0[1] + (-v0[0] * (1 - c) + v0[1] * s) / wc
    z = p0[2] + v0[2] * t
    return np.stack([x, y, z], -1), np.stack([vx, vy, np.full_like(t, v0[2])], -1)


def test_lorentz_helix_fourth_order():
    charge, mass, field = 1.5, 0.5, np.array([0.0, 0.0, 2.0])
    p0, v0 = np.array([0.1, 0.2, 0.0]), np.array([1.0, -0.5, 0.3])
    T = 5.0
    p_ref, v_ref = _helix(p0, v0, charge, mass, field[2], np.array(T))
    hs, errs = [], []
    for n in [200, 400, 800, 1600]:
        traj = propagate_linear(p0, v0, mass, T / n, n, force=lambda t, p, v: charge * np.cross(v, field))
        hs.append(T / n)
        errs.append(np.max(np.abs(traj.position[-1] - p_ref)) + np.max(np.abs(traj.velocity[-1] - v_ref)))
    assert abs(slope(hs, errs) - 4.0) <= 0.2, errs


def test_linear_batches_and_bad_input():
    traj = propagate_linear(np.zeros((5, 3)), np.ones(3), np.arange(1.0, 6.0), 0.1, 10, force=[0.0, 0.0, 1.0])
    assert traj.position.shape == (11, 5, 3)
    np.testing.assert_allclose(traj.velocity[-1, :, 2], 1.0 + 1.0 / np.arange(1.0, 6.0), atol=1e-14)
    with pytest.raises(ValueError, match="mass must be positive"):
        propagate_linear(np.zeros(3), np.zeros(3), 0.0, 0.1, 3)
    with pytest.raises(ValueError, match=r"force\(t=0.0, p, v\) must return finite"):
        propagate_linear(np.zeros(3), np.zeros(3), 1.0, 0.1, 3, force=lambda t, p, v: np.full(3, np.nan))


# ------------------------------------------------------------- translation and rotation

INERTIA = np.array([0.8, 1.3, 1.9])
MASS = 3.0
THRUST_BODY = np.array([2.0, 0.0, 0.5])  # a thruster fixed in the body, N
FIELD = np.array([0.0, 0.0, -1.0])  # torque grows with the position along this field


def _force(t, p, v, q, w):
    """Body-fixed thrust (needs the attitude estimate) plus linear drag."""
    return np.asarray(body_to_world(q, THRUST_BODY)) - 0.4 * v


def _torque(t, q, w, p, v):
    """A magnetic-like torque that depends on the position estimate."""
    return np.cross([0.2, 0.1, 0.0], world_to_body(q, FIELD * (1.0 + 0.3 * p[..., 0:1])))


def _reference(p0, v0, q0, w0, T):
    """DOP853 on the 13-dimensional ODE (position, velocity, q, ω) in plain numpy."""

    def rhs(t, y):
        p, v, q, w = y[0:3], y[3:6], y[6:10], y[10:13]
        qn = q / np.linalg.norm(q)
        qw, qx, qy, qz = q
        q_dot = 0.5 * np.array(
            [
                -qx * w[0] - qy * w[1] - qz * w[2],
                qw * w[0] + qy * w[2] - qz * w[1],
                qw * w[1] - qx * w[2] + qz * w[0],
                qw * w[2] + qx * w[1] - qy * w[0],
            ]
        )
        tau = _torque(t, qn, w, p, v)
        w_dot = (tau - np.cross(w, INERTIA * w)) / INERTIA
        return np.concatenate([v, _force(t, p, v, qn, w) / MASS, q_dot, w_dot])

    y0 = np.concatenate([p0, v0, q0, w0])
    y = solve_ivp(rhs, (0.0, T), y0, method="DOP853", **TIGHT).y[:, -1]
    return y[0:3], y[3:6], y[6:10] / np.linalg.norm(y[6:10]), y[10:13]


def test_coupled_translation_and_rotation_fourth_order():
    p0, v0 = np.array([0.0, 1.0, 0.0]), np.array([0.5, 0.0, 0.2])
    q0, w0 = quat.normalize([0.9, 0.1, 0.3, -0.2]), np.array([0.3, -0.6, 0.9])
    T = 4.0
    p_ref, v_ref, q_ref, w_ref = _reference(p0, v0, q0, w0, T)
    hs, errs = [], []
    for n in [40, 80, 160]:
        traj = propagate_rigid_body(p0, v0, q0, w0, MASS, INERTIA, T / n, n, force=_force, torque=_torque)
        hs.append(T / n)
        errs.append(
            np.max(np.abs(traj.position[-1] - p_ref))
            + np.max(np.abs(traj.velocity[-1] - v_ref))
            + angle(traj.q[-1], q_ref)
            + np.max(np.abs(traj.omega[-1] - w_ref))
        )
    assert abs(slope(hs, errs) - 4.0) <= 0.2, errs


def test_coupling_matters():
    """Holding the attitude at the step start for the force (no §7.5 coupling) is worse."""
    p0, v0 = np.zeros(3), np.zeros(3)
    q0, w0 = quat.identity(), np.array([0.0, 0.0, 1.5])
    T, n = 4.0, 40
    p_ref, *_ = _reference(p0, v0, q0, w0, T)
    coupled = propagate_rigid_body(p0, v0, q0, w0, MASS, INERTIA, T / n, n, force=_force, torque=_torque)
    assert np.max(np.abs(coupled.position[-1] - p_ref)) < 1e-5

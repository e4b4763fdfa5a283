"""Basilisk as methods: the MRP boundary, measured orders against the exact solution and
DOP853, the body-frame torque, and moments changed between runs."""

from __future__ import annotations

import numpy as np
import pytest
from reference import angle, slope, solve

import rigidrot_gym  # noqa: F401  (registers the engine methods)
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.exact import torque_free
from rigidrot_gym.physics.rotation.propagate import propagate

rbk = pytest.importorskip("Basilisk.utilities.RigidBodyKinematics")

pytestmark = pytest.mark.engines

I_ASYM = np.array([1.0, 2.0, 3.0])
Q0 = quat.normalize([0.9, 0.2, -0.3, 0.25])
W0 = np.array([0.4, 1.1, -0.3])


def test_mrp_to_quaternion_is_our_body_to_world_scalar_first_attitude():
    """MRP2EP(σ_BN) is our q: its DCM [BN] = MRP2C(σ) maps world components to body ones,
    our to_matrix(q) maps body to world; and one RK4 step from a random attitude lands on
    the exact solution (reading MRP2EP as the conjugate would be 1e-2 rad off)."""
    rng = np.random.default_rng(7)
    for q in quat.random(rng, (5,)):
        sigma = rbk.EP2MRP(q)
        np.testing.assert_allclose(rbk.MRP2C(sigma), quat.to_matrix(q).T, atol=1e-15)
        assert angle(rbk.MRP2EP(sigma), q) < 1e-15
    q0 = quat.random(rng)
    traj = propagate(q0, W0, I_ASYM, 0.01, 1, method="basilisk_rk4")
    q_exact, _ = torque_free(q0, W0, I_ASYM, 0.01)
    assert angle(traj.q[-1], q_exact) < 1e-10
    assert angle(quat.conjugate(traj.q[-1]), q_exact) > 1e-3


@pytest.mark.parametrize(
    ("method", "order", "steps"),
    [
        ("basilisk_rk4", 4.0, [100, 200, 400]),
        ("basilisk_rkf45", 4.0, [100, 200, 400]),
        ("basilisk_rkf78", 7.0, [20, 40, 80]),
    ],
)
def test_orders_against_the_exact_solution(method, order, steps):
    T = 8.0
    q_ref, w_ref = torque_free(Q0, W0, I_ASYM, T)
    errors = []
    for n in steps:
        traj = propagate(Q0, W0, I_ASYM, T / n, n, method=method)
        errors.append(angle(traj.q[-1], q_ref) + np.max(np.abs(traj.omega[-1] - w_ref)))
    assert abs(slope([T / n for n in steps], errors) - order) < 0.15, errors


def test_rk4_constant_body_torque_against_dop853_at_order_four():
    tau, T = np.array([0.3, -0.2, 0.5]), 2.0
    q_ref, w_ref = solve(Q0, W0, I_ASYM, [T], torque=lambda t, q, w: tau)
    errors = []
    for n in (20, 40, 80):
        traj = propagate(Q0, W0, I_ASYM, T / n, n, method="basilisk_rk4", torque=tau)
        errors.append(angle(traj.q[-1], q_ref[-1]) + np.max(np.abs(traj.omega[-1] - w_ref[-1])))
    assert abs(slope([T / n for n in (20, 40, 80)], errors) - 4.0) < 0.1, errors


def test_torque_acts_in_the_body_frame():
    """From rest, a torque about a principal axis spins the body about that axis:
    ω(t) = τ t / I, whatever the attitude."""
    q0 = quat.from_rotvec([0.7, -1.1, 0.4])
    tau = np.array([0.0, 0.3, 0.0])
    traj = propagate(q0, [0, 0, 0], I_ASYM, 0.01, 100, method="basilisk_rk4", torque=tau)
    np.testing.assert_allclose(traj.omega[-1], tau / I_ASYM, atol=1e-12)


def test_new_moments_take_effect_from_the_first_step():
    """Basilisk updates a hub's mass properties at the end of a step: moments changed on a
    re-used hub must be pushed (updateSCMassProps) or the first step uses the old ones."""
    for moments in ([1.0, 2.0, 3.0], [2.0, 2.5, 3.5], [1.0, 2.0, 3.0]):
        traj = propagate(Q0, W0, moments, 0.01, 3, method="basilisk_rk4")
        q_ref, _ = torque_free(Q0, W0, moments, traj.t)
        assert np.max(angle(traj.q, q_ref)) < 1e-10


def test_long_runs_keep_time_to_the_nanosecond():
    """Basilisk counts integer nanoseconds: 1/240 s is not one; steps rounded one by one
    would drift (20 s: 1.6 µs, 3e-6 rad at 2 rad/s). Steps end at the nearest ns to k h."""
    h, n = 1 / 240, 4800
    traj = propagate([1, 0, 0, 0], [0.01, 2.0, 0.01], I_ASYM, h, n, method="basilisk_rk4")
    q_ref, _ = torque_free([1, 0, 0, 0], [0.01, 2.0, 0.01], I_ASYM, n * h)
    assert angle(traj.q[-1], q_ref) < 1e-8

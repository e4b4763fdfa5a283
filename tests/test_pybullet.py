"""PyBullet as methods: their convergence, the traps of notes/pybullet.md, the env on
them (the cross-check tool: test_crosscheck.py)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pybullet
import pytest
from reference import angle, body_to_world, slope

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.engines import bullet
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.exact import torque_free
from rigidrot_gym.physics.rotation.propagate import propagate
from rigidrot_gym.tools.crosscheck import flip_times

pytestmark = pytest.mark.engines

I_ASYM = np.array([1.0, 2.0, 3.0])
Q0 = quat.normalize([0.9, 0.2, -0.3, 0.25])
W0 = np.array([0.4, 1.1, -0.3])


@pytest.mark.parametrize("method", ["pybullet", "pybullet_maximal"])
def test_converges_to_the_exact_solution_at_first_order(method):
    T = 4.0
    q_ref, w_ref = torque_free(Q0, W0, I_ASYM, T)
    hs, errors = [], []
    for n in [400, 800, 1600, 3200]:
        traj = propagate(Q0, W0, I_ASYM, T / n, n, method=method)
        hs.append(T / n)
        errors.append(angle(traj.q[-1], q_ref) + np.max(np.abs(traj.omega[-1] - w_ref)))
    assert abs(slope(hs, errors) - 1.0) <= 0.3, errors


@pytest.mark.parametrize("method", ["pybullet", "pybullet_maximal"])
def test_flip_period_at_240_hz_within_a_few_percent(method):
    """The notes' case: I = (1, 2, 3), ω0 = (0.01, 2, 0.01), dt = 1/240 s."""
    w0, dt = np.array([0.01, 2.0, 0.01]), 1 / 240
    traj = propagate([1, 0, 0, 0], w0, I_ASYM, dt, round(40 / dt), method=method)
    _, w_exact = torque_free([1, 0, 0, 0], w0, I_ASYM, traj.t)
    period = np.diff(flip_times(traj.t, traj.omega, axis=1))
    exact = np.diff(flip_times(traj.t, w_exact, axis=1))
    assert period.size >= 2 and period.size == exact.size  # the body does flip, as often as it should
    assert np.max(np.abs(period / exact - 1.0)) < 0.03


def test_constant_body_torque_on_a_rotated_body_acts_in_the_body_frame():
    """From rest, a torque about a principal axis spins the body about that axis:
    ω(t) = τ t / I along it, whatever the attitude (no gyroscopic coupling)."""
    q0 = quat.from_rotvec([0.7, -1.1, 0.4])
    tau = np.array([0.0, 0.3, 0.0])
    traj = propagate(q0, [0, 0, 0], I_ASYM, 0.01, 100, method="pybullet", torque=tau)
    np.testing.assert_allclose(traj.omega[-1], tau / I_ASYM * 1.0, atol=1e-9)
    # ... and in the world frame the spin axis is the body's y axis.
    axis = body_to_world(traj.q[-1], [0.0, 1.0, 0.0])
    spin = body_to_world(traj.q[-1], traj.omega[-1])
    np.testing.assert_allclose(spin / np.linalg.norm(spin), axis, atol=1e-9)


def test_no_damping_a_principal_spin_keeps_its_rate():
    traj = propagate([1, 0, 0, 0], [0.0, 0.0, 3.0], I_ASYM, 0.01, 1000, method="pybullet")
    assert np.max(np.abs(traj.omega[:, 2] - 3.0)) < 1e-9  # default damping 0.04 would lose 33 %


def test_inertia_is_the_one_given_not_the_shapes():
    """A torque-free asymmetric body must precess like the exact solution (a wrong or
    spherical inertia would keep ω constant)."""
    traj = propagate(Q0, W0, I_ASYM, 1 / 480, 480, method="pybullet")
    _, w_ref = torque_free(Q0, W0, I_ASYM, traj.t)
    assert np.max(np.abs(traj.omega - w_ref)) < 0.02
    assert np.max(np.abs(traj.omega - W0)) > 0.3


def test_full_tensor_and_batches():
    rot = quat.to_matrix(quat.normalize([0.8, 0.3, -0.4, 0.2]))
    J = rot @ np.diag([1.0, 2.5, 3.0]) @ rot.T
    q0 = quat.random(np.random.default_rng(0), (3,))
    traj = propagate(q0, W0, J, 1 / 960, 960, method="pybullet")
    fine = propagate(q0, W0, J, 1 / 960, 960, method="rk4")
    assert traj.q.shape == (961, 3, 4)
    assert np.max(angle(traj.q, fine.q)) < 5e-3  # first order at h = 1 ms over 1 s


def test_rotation_clamp_is_refused():
    with pytest.raises(ValueError, match=r"PyBullet clamps a step's rotation at π/4 rad"):
        propagate([1, 0, 0, 0], [0.0, 0.0, 20.0], I_ASYM, 0.05, 3, method="pybullet")


def test_momentum_renormalisation_with_pybullet():
    plain = propagate(Q0, W0, I_ASYM, 0.01, 500, method="pybullet")
    fixed = propagate(Q0, W0, I_ASYM, 0.01, 500, method="pybullet", renormalize_momentum=True)

    def drift(traj):
        L = traj.angular_momentum
        return np.max(np.linalg.norm(L - L[0], axis=-1))

    assert drift(fixed) < 1e-12 < drift(plain)


def test_client_is_closed_and_reopened():
    propagate(Q0, W0, I_ASYM, 0.01, 2, method="pybullet")
    client = bullet.simulator().client
    assert pybullet.isConnected(client)
    bullet.close()
    assert not pybullet.isConnected(client)
    propagate(Q0, W0, I_ASYM, 0.01, 2, method="pybullet")  # reconnects on use
    assert pybullet.isConnected(bullet.simulator().client)


def test_env_runs_on_pybullet_and_agrees_with_rk4():
    engine = gym.make("RigidRot/Reorient-v0", integrator="pybullet", substeps=20)
    accurate = gym.make("RigidRot/Reorient-v0")
    engine.reset(seed=3)
    accurate.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(20):
        a = rng.uniform(-1, 1, 3).astype(np.float32)
        engine.step(a)
        accurate.step(a)
    e, r = engine.unwrapped, accurate.unwrapped
    # First order at h = 10 ms over 4 s of rates ~0.1 rad/s: ~1e-3 rad apart, not more.
    assert 0 < angle(e.attitude, r.attitude) < 1e-2

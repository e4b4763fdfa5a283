"""MuJoCo as methods: the free joint's conventions, measured orders against the exact
solution and DOP853, implicitfast's energy, and the traps (moments changed at run time,
MuJoCo's silent reset of an unstable step)."""

from __future__ import annotations

import numpy as np
import pytest
from reference import angle, slope, solve

import rigidrot_gym  # noqa: F401  (registers the engine methods)
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.exact import torque_free
from rigidrot_gym.physics.rotation.propagate import propagate

mujoco = pytest.importorskip("mujoco")

pytestmark = pytest.mark.engines

I_ASYM = np.array([1.0, 2.0, 3.0])
Q0 = quat.normalize([0.9, 0.2, -0.3, 0.25])
W0 = np.array([0.4, 1.1, -0.3])
FIRST_ORDER = ["mujoco_euler", "mujoco_implicitfast", "mujoco_implicit"]


def _free_body(moments, integrator="Euler", h=1e-3):
    xml = (
        f'<mujoco><option gravity="0 0 0" timestep="{h}" integrator="{integrator}"/><worldbody><body>'
        f'<freejoint/><inertial pos="0 0 0" mass="1" diaginertia="{" ".join(map(str, moments))}"/>'
        "</body></worldbody></mujoco>"
    )
    model = mujoco.MjModel.from_xml_string(xml)
    return model, mujoco.MjData(model)


def test_free_joint_angular_velocity_is_in_the_body_frame():
    """At an attitude turned 90° about world x, qvel[3:6] = (0, 0, 1) turns the body about
    its own z axis (which points along world −y), not about world z."""
    model, data = _free_body([1.0, 1.0, 1.0], h=1e-3)  # a sphere: no gyroscopic term
    q0 = np.array([np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0])
    data.qpos[3:7], data.qvel[3:6] = q0, [0.0, 0.0, 1.0]
    mujoco.mj_step(model, data)
    increment = quat.as_rotvec(quat.multiply(quat.conjugate(q0), data.qpos[3:7]))  # body frame
    np.testing.assert_allclose(increment, [0.0, 0.0, 1e-3], atol=1e-15)


def test_xfrc_applied_is_a_world_torque_and_the_rotational_dofs_are_body_axes():
    """From rest, one Euler step under a torque τ_b (body frame) gives ω = h τ_b / I:
    through qfrc_applied[3:6] = τ_b and through xfrc_applied = R(q) τ_b alike."""
    q0 = quat.from_rotvec([0.7, -1.1, 0.4])
    tau_b, h = np.array([0.3, -0.2, 0.5]), 1e-3
    expected = h * tau_b / I_ASYM
    results = {}
    for how in ("qfrc", "xfrc world", "xfrc unrotated"):
        model, data = _free_body(I_ASYM, h=h)
        data.qpos[3:7] = q0
        if how == "qfrc":
            data.qfrc_applied[3:6] = tau_b
        else:
            data.xfrc_applied[1, 3:6] = quat.rotate(q0, tau_b) if how == "xfrc world" else tau_b
        mujoco.mj_step(model, data)
        results[how] = data.qvel[3:6].copy()
    np.testing.assert_allclose(results["qfrc"], expected, rtol=1e-12)
    np.testing.assert_allclose(results["xfrc world"], expected, rtol=1e-12)
    assert np.max(np.abs(results["xfrc unrotated"] - expected)) > 1e-4  # the frame matters


def _errors(method, steps, duration=4.0, **load):
    if load:
        q_ref, w_ref = solve(Q0, W0, I_ASYM, [duration], torque=lambda t, q, w: load["torque"])
        q_ref, w_ref = q_ref[-1], w_ref[-1]
    else:
        q_ref, w_ref = torque_free(Q0, W0, I_ASYM, duration)
    errors = []
    for n in steps:
        traj = propagate(Q0, W0, I_ASYM, duration / n, n, method=method, **load)
        errors.append(angle(traj.q[-1], q_ref) + np.max(np.abs(traj.omega[-1] - w_ref)))
    return [duration / n for n in steps], errors


@pytest.mark.parametrize("method", FIRST_ORDER)
def test_first_order_variants_converge_at_order_one(method):
    hs, errors = _errors(method, [400, 800, 1600, 3200])
    assert abs(slope(hs, errors) - 1.0) < 0.05, errors
    assert errors[-1] < 3e-3


def test_rk4_converges_at_order_four():
    hs, errors = _errors("mujoco_rk4", [50, 100, 200, 400])
    assert abs(slope(hs, errors) - 4.0) < 0.1, errors
    assert errors[-1] < 1e-9


@pytest.mark.parametrize(("method", "order"), [("mujoco_rk4", 4.0), ("mujoco_implicitfast", 1.0)])
def test_constant_body_torque_against_dop853(method, order):
    steps = [20, 40, 80, 160] if order == 4.0 else [400, 800, 1600, 3200]
    hs, errors = _errors(method, steps, duration=2.0, torque=np.array([0.3, -0.2, 0.5]))
    assert abs(slope(hs, errors) - order) < 0.1, errors


@pytest.mark.parametrize("method", ["mujoco_implicitfast", "mujoco_implicit"])
def test_implicit_kinetic_energy_never_increases_torque_free(method):
    rng = np.random.default_rng(4)
    for dt in (0.05, 0.01):
        w0 = rng.normal(size=(8, 3)) * 2.0
        traj = propagate(quat.random(rng, (8,)), w0, I_ASYM, dt, 400, method=method)
        energy = traj.kinetic_energy
        assert np.all(np.diff(energy, axis=0) <= 1e-15 * energy[0])
        assert np.all(energy[-1] < energy[0])  # and it does decrease: a damping
    euler = propagate(Q0, W0, I_ASYM, 0.01, 400, method="mujoco_euler").kinetic_energy
    assert euler[-1] > euler[0]  # explicit gyroscopic term: the energy grows


def test_implicitfast_energy_loss_per_step_scales_as_h_omega_squared():
    """One step's relative energy loss depends on h|ω| alone (Euler's equations are
    homogeneous of degree 2 in ω) and goes as (h|ω|)²: MuJoCo's documented damping."""

    def loss(scale, h):
        traj = propagate(Q0, scale * W0, I_ASYM, h, 1, method="mujoco_implicitfast")
        return 1.0 - traj.kinetic_energy[1] / traj.kinetic_energy[0]

    hs = np.array([0.04, 0.02, 0.01, 0.005])
    losses = [loss(1.0, h) for h in hs]
    assert abs(slope(hs, losses) - 2.0) < 0.02
    np.testing.assert_allclose(loss(4.0, 0.01), loss(1.0, 0.04), rtol=1e-9)


def test_new_moments_take_effect_in_a_reused_model():
    """A free body's mass matrix is MuJoCo's constant dof_M0: moments changed between runs
    on the same model must reach it (mj_setConst), from the first step on."""
    for moments in ([1.0, 2.0, 3.0], [2.0, 2.5, 3.5], [1.0, 2.0, 3.0]):
        traj = propagate(Q0, W0, moments, 0.01, 100, method="mujoco_rk4")
        q_ref, _ = torque_free(Q0, W0, moments, traj.t)
        assert np.max(angle(traj.q, q_ref)) < 1e-8


def test_an_unstable_step_raises_instead_of_a_silent_reset(tmp_path, monkeypatch):
    """MuJoCo resets an unstable simulation to its initial state by default: finite,
    plausible and wrong. A fast tumble under Euler's explicit gyroscopic term blows up.
    MuJoCo's own warning goes neither to MUJOCO_LOG.TXT in the working directory (where its
    default handler writes it) nor to a user's handler, and the handler in place before the
    run is back after it."""
    monkeypatch.chdir(tmp_path)
    seen = []
    for handler in (None, seen.append):
        mujoco.set_mju_user_warning(handler)
        try:
            with pytest.raises(ValueError, match=r"unstable|non-finite"):
                propagate([1, 0, 0, 0], [0.5, 20.0, 0.5], I_ASYM, 0.05, 200, method="mujoco_euler")
            assert mujoco.get_mju_user_warning() == handler
        finally:
            mujoco.set_mju_user_warning(None)
    assert seen == [] and list(tmp_path.iterdir()) == []


def test_large_batches_run_in_models_of_limited_size():
    """40 bodies: two models (32 + 8); every body as accurate as alone."""
    rng = np.random.default_rng(1)
    q0, w0 = quat.random(rng, (40,)), rng.normal(size=(40, 3))
    traj = propagate(q0, w0, I_ASYM, 0.01, 50, method="mujoco_rk4", torque=np.array([0.1, 0.0, -0.2]))
    for i in (0, 31, 32, 39):
        q_ref, _ = solve(q0[i], w0[i], I_ASYM, [0.5], torque=lambda t, q, w: np.array([0.1, 0.0, -0.2]))
        assert angle(traj.q[-1, i], q_ref[-1]) < 1e-8

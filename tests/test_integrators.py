"""Every registered method against independent references: the exact torque-free solution,
closed forms from the seeds, DOP853 at tight tolerance, and conservation laws."""

from __future__ import annotations

import numpy as np
import pytest
from reference import angle, body_to_world, slope, solve, world_to_body

from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.exact import torque_free
from rigidrot_gym.physics.rotation.propagate import propagate

ORDERS = {"euler": 1, "rk4": 4, "rk4_dcm": 4, "rkn": 4, "pcdm": 2, "nielsen_krenk": 2, "rkmk4": 4}
# Exact without torque: their order shows only under a torque.
SPLITTINGS = {"strang": 2, "yoshida4": 4}
# Step counts per method over T = 4 s: errors in the asymptotic range, above round-off.
STEPS = {1: [400, 800, 1600, 3200], 2: [50, 100, 200, 400], 4: [40, 80, 160, 320]}

I_ASYM = np.array([1.0, 2.0, 3.0])
Q0 = quat.normalize(np.array([0.9, 0.2, -0.3, 0.25]))
W0 = np.array([0.4, 1.1, -0.3])


def _error(traj, q_ref, w_ref) -> float:
    """Attitude error (rad) plus body-rate error (rad/s) at the final time."""
    return float(angle(traj.q[-1], q_ref) + np.max(np.abs(traj.omega[-1] - w_ref)))


def test_registry_lists_the_seed_methods():
    assert {"euler", "semi_implicit", "rk4", "rk4_dcm", "rkn", "pcdm", "exact"} <= set(integrators.names())


def test_unknown_method_lists_valid_names():
    with pytest.raises(ValueError, match=r"unknown integrator 'rk5'.*rk4.*pcdm"):
        propagate(Q0, W0, I_ASYM, 0.01, 1, method="rk5")


@pytest.mark.parametrize("name", ORDERS)
def test_order_torque_free_vs_exact(name):
    T = 4.0
    q_ref, w_ref = torque_free(Q0, W0, I_ASYM, T)
    hs, errs = [], []
    for n in STEPS[ORDERS[name]]:
        traj = propagate(Q0, W0, I_ASYM, T / n, n, method=name)
        hs.append(T / n)
        errs.append(_error(traj, q_ref, w_ref))
    assert abs(slope(hs, errs) - ORDERS[name]) <= 0.2, errs


def _gravity_torque(t, q, w):
    """Weight (world -z) on a point offset along body x, plus a slow body-frame wobble."""
    r = np.array([0.3, 0.0, 0.1])
    g_body = np.array([world_to_body(qi, np.array([0.0, 0.0, -2.0])) for qi in np.reshape(q, (-1, 4))])
    tau = np.cross(r, g_body) + 0.2 * np.array([np.sin(t), np.cos(2 * t), 0.5])
    return tau.reshape(np.shape(w))


@pytest.mark.parametrize("name", {**ORDERS, **SPLITTINGS})
@pytest.mark.slow
def test_order_with_orientation_dependent_torque_vs_dop853(name):
    T = 3.0
    q_ref, w_ref = solve(Q0, W0, I_ASYM, [T], torque=_gravity_torque)
    hs, errs = [], []
    order = {**ORDERS, **SPLITTINGS}[name]
    for n in STEPS[order][-3:]:
        traj = propagate(Q0, W0, I_ASYM, T / n, n, method=name, torque=_gravity_torque)
        hs.append(T / n)
        errs.append(_error(traj, q_ref[-1], w_ref[-1]))
    assert abs(slope(hs, errs) - order) <= 0.2, errs


@pytest.mark.parametrize("name", {**ORDERS, **SPLITTINGS})
def test_order_with_world_frame_torque_compiled_vs_dop853(name):
    # A constant world torque is orientation dependent in the body frame; it runs compiled.
    tau_world = np.array([0.3, -0.2, 0.5])
    T = 3.0
    q_ref, w_ref = solve(Q0, W0, I_ASYM, [T], world_torque=tau_world)
    hs, errs = [], []
    order = {**ORDERS, **SPLITTINGS}[name]
    for n in STEPS[order][-3:]:
        traj = propagate(Q0, W0, I_ASYM, T / n, n, method=name, torque=tau_world, torque_frame="world")
        hs.append(T / n)
        errs.append(_error(traj, q_ref[-1], w_ref[-1]))
    assert abs(slope(hs, errs) - order) <= 0.2, errs


@pytest.mark.parametrize("name", [*SPLITTINGS, "exact"])
def test_splittings_are_exact_without_torque(name):
    traj = propagate(Q0, W0, I_ASYM, 0.05, 200, method=name)
    q_ref, w_ref = torque_free(Q0, W0, I_ASYM, traj.t)
    assert np.max(angle(traj.q, q_ref)) < 1e-12
    assert np.max(np.abs(traj.omega - w_ref)) < 1e-12


@pytest.mark.parametrize("name", [*ORDERS, *SPLITTINGS, "semi_implicit"])
@pytest.mark.slow
def test_compiled_and_numpy_paths_agree(name):
    """The same step runs compiled (constant torque) and vectorised (callable torque)."""
    tau = np.array([0.1, -0.05, 0.2])
    q0 = quat.random(np.random.default_rng(3), (4,))
    compiled = propagate(q0, W0, I_ASYM, 0.01, 200, method=name, torque=tau, torque_frame="world")
    python = propagate(
        q0, W0, I_ASYM, 0.01, 200, method=name, torque=lambda t, q, w: np.broadcast_to(tau, w.shape)
    )
    world = propagate(
        q0, W0, I_ASYM, 0.01, 200, method=name, torque=lambda t, q, w: tau, torque_frame="world"
    )
    assert not np.allclose(compiled.q, python.q)  # body and world torque do differ ...
    np.testing.assert_allclose(world.q, compiled.q, atol=1e-13)  # ... and the paths agree
    np.testing.assert_allclose(world.omega, compiled.omega, atol=1e-13)


# ---------------------------------------------------------------- seeds' closed forms


@pytest.mark.parametrize("name", ["rk4", "rk4_dcm", "rkn"])
def test_sasaki_axisymmetric_body(name):
    """Sasaki (2019): I = diag(1, 1, 2), ω0 = (1, 0, 1) gives ω(t) = (cos t, sin t, 1)."""
    traj = propagate([1, 0, 0, 0], [1.0, 0.0, 1.0], np.diag([1.0, 1.0, 2.0]), 0.01, 3000, method=name)
    t = traj.t
    expected = np.stack([np.cos(t), np.sin(t), np.ones_like(t)], axis=-1)
    # O(h⁴) phase error over 30 s; a third-order slip would show ~1e-6.
    assert np.max(np.abs(traj.omega - expected)) < 2e-8


@pytest.mark.parametrize("name", ["rk4", "rkn"])
def test_ganapathi_symmetric_top(name):
    """Ganapathi (2005) §4: I = (2, 2, 8), ω0 = (1, 0, 1): the body rates turn at
    Ω = (λ3 − λ1)/λ1 ω3 = 3 rad/s and the symmetry axis precesses about L at |L|/λ1.
    (2 + 2 < 8: no rigid body has these moments, hence check_triangle=False.)"""
    inertia = np.array([2.0, 2.0, 8.0])
    with pytest.raises(ValueError, match="triangle inequality"):
        propagate([1, 0, 0, 0], [1.0, 0.0, 1.0], inertia, 0.005, 1, method=name)
    traj = propagate([1, 0, 0, 0], [1.0, 0.0, 1.0], inertia, 0.005, 2000, method=name, check_triangle=False)
    t = traj.t
    expected = np.stack([np.cos(3 * t), np.sin(3 * t), np.ones_like(t)], axis=-1)
    assert np.max(np.abs(traj.omega - expected)) < 5e-8
    L = inertia * np.array([1.0, 0.0, 1.0])
    L_hat = L / np.linalg.norm(L)
    axis = np.array([body_to_world(q, [0.0, 0.0, 1.0]) for q in traj.q])
    # Angle of the axis around L, measured in the plane normal to L.
    e1 = axis[0] - np.dot(axis[0], L_hat) * L_hat
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(L_hat, e1)
    phase = np.unwrap(np.arctan2(axis @ e2, axis @ e1))
    np.testing.assert_allclose(phase, np.linalg.norm(L) / 2.0 * t, atol=1e-7)


def _rate_wander(traj, axis):
    """Largest angle (rad) between ω(t) and the body axis it started near."""
    w = traj.omega / np.linalg.norm(traj.omega, axis=-1, keepdims=True)
    return float(np.max(np.arccos(np.clip(np.abs(w[:, axis]), 0.0, 1.0))))


@pytest.mark.parametrize("name", ["rk4", "pcdm", "exact"])
def test_intermediate_axis_instability(name):
    """Ganapathi (2005) figs. 4–5, I = (2, 8, 4): a spin near the major axis y stays close,
    a spin near the intermediate axis z wanders far from it (flips). (The issue text has
    the two cases the other way round; the seed's figures and Euler's equations agree
    with this. 2 + 4 < 8 violates the triangle inequality, hence check_triangle=False.)"""
    inertia = np.array([2.0, 8.0, 4.0])
    run = {"method": name, "check_triangle": False}
    major = propagate([1, 0, 0, 0], [0.0, 1.0, 0.1], inertia, 0.01, 3000, **run)
    middle = propagate([1, 0, 0, 0], [0.0, 0.1, 1.0], inertia, 0.01, 3000, **run)
    assert _rate_wander(major, 1) < np.radians(10.0)
    assert np.min(middle.omega[:, 2]) < -0.5  # the spin about z reverses
    assert _rate_wander(middle, 2) > np.radians(60.0)


# ---------------------------------------------------------------- the game-engine step


def test_semi_implicit_never_flips_and_does_not_conserve_momentum():
    inertia = np.array([1.0, 2.0, 3.0])
    steps, dt = 6000, 0.01
    t = dt * np.arange(steps + 1)
    flipping = propagate([1, 0, 0, 0], [0.01, 2.0, 0.01], inertia, dt, steps, method="semi_implicit")
    _, w_exact = torque_free([1, 0, 0, 0], [0.01, 2.0, 0.01], inertia, t)
    assert np.min(w_exact[:, 1]) < -1.9  # the true body flips within 60 s ...
    assert np.min(flipping.omega[:, 1]) > 1.99  # ... the game-engine body never does
    generic = propagate([1, 0, 0, 0], [1.0, 0.5, 0.3], inertia, dt, steps, method="semi_implicit")
    L = generic.angular_momentum
    assert np.max(np.linalg.norm(L - L[0], axis=-1)) / np.linalg.norm(L[0]) > 0.3
    # ... while the exact world angular momentum stays fixed (what the step violates).
    q_ex, w_ex = torque_free([1, 0, 0, 0], [1.0, 0.5, 0.3], inertia, t)
    L_ex = np.array([body_to_world(q, inertia * w) for q, w in zip(q_ex, w_ex, strict=True)])
    assert np.max(np.linalg.norm(L_ex - L_ex[0], axis=-1)) < 1e-10


# ---------------------------------------------------------------- options for every method


def test_substeps_shrink_the_error_by_the_order():
    T, n = 4.0, 40
    q_ref, w_ref = torque_free(Q0, W0, I_ASYM, T)
    coarse = _error(propagate(Q0, W0, I_ASYM, T / n, n, method="rk4"), q_ref, w_ref)
    fine = _error(propagate(Q0, W0, I_ASYM, T / n, n, method="rk4", substeps=4), q_ref, w_ref)
    assert 4**4 / 2 < coarse / fine < 4**4 * 2
    traj = propagate(Q0, W0, I_ASYM, T / n, n, method="rk4", substeps=4)
    assert traj.q.shape == (n + 1, 4) and traj.torque_evaluations == 4 * 4 * n


@pytest.mark.parametrize("name", ["euler", "rk4", "pcdm"])
def test_momentum_renormalisation_keeps_world_momentum(name):
    """Mandre (2008) §7.2: with ω reset from L after each step, L is kept to round-off."""
    plain = propagate(Q0, W0, I_ASYM, 0.02, 2000, method=name)
    fixed = propagate(Q0, W0, I_ASYM, 0.02, 2000, method=name, renormalize_momentum=True)
    L0 = np.linalg.norm(fixed.angular_momentum[0])
    drift = np.max(np.linalg.norm(fixed.angular_momentum - fixed.angular_momentum[0], axis=-1)) / L0
    plain_drift = np.max(np.linalg.norm(plain.angular_momentum - plain.angular_momentum[0], axis=-1)) / L0
    assert drift < 1e-13
    assert plain_drift > 100 * drift


@pytest.mark.parametrize("every", [1, 10, 1000])
def test_rkn_projection_cadence(every):
    """Between projections |q| drifts (truncation level); with every step it is round-off."""
    T, n = 10.0, 1000
    traj = propagate(Q0, W0, I_ASYM, T / n, n, method="rkn", project_every=every)
    q_ref, _ = torque_free(Q0, W0, I_ASYM, traj.t)
    assert np.max(angle(traj.q, q_ref)) < 1e-6
    norm_drift = np.max(np.abs(traj.norm_error))
    if every == 1:
        assert norm_drift < 1e-15
    else:
        assert 1e-15 < norm_drift < 1e-6


def test_full_inertia_tensor_is_diagonalised_and_results_come_back_in_the_body_frame():
    rot = quat.to_matrix(quat.normalize([0.8, 0.3, -0.4, 0.2]))
    J = rot @ np.diag([1.0, 2.5, 3.0]) @ rot.T
    tau = lambda t, q, w: np.array([0.1 * np.sin(t), 0.2, -0.1]) - 0.05 * w  # noqa: E731
    traj = propagate(Q0, W0, J, 0.01, 500, method="rk4", torque=tau)
    q_ref, w_ref = solve(Q0, W0, J, traj.t, torque=tau)
    assert np.max(angle(traj.q, q_ref)) < 1e-9
    assert np.max(np.abs(traj.omega - w_ref)) < 1e-9
    constant = propagate(Q0, W0, J, 0.01, 500, method="rk4", torque=[0.1, 0.2, -0.1])
    q_ref, w_ref = solve(Q0, W0, J, traj.t, torque=lambda t, q, w: np.array([0.1, 0.2, -0.1]))
    assert np.max(angle(constant.q, q_ref)) < 1e-9
    assert np.max(np.abs(constant.omega - w_ref)) < 1e-9


def test_batches_broadcast_and_each_body_is_right():
    rng = np.random.default_rng(7)
    q0 = quat.random(rng, (2, 4))
    w0 = rng.normal(size=(2, 4, 3))
    inertia = np.array([1.0, 2.0, 3.0]) * rng.uniform(0.8, 1.2, size=(2, 4, 1))
    inertia[..., 2] = np.minimum(inertia[..., 2], inertia[..., 0] + inertia[..., 1])
    traj = propagate(q0, w0, inertia, 0.01, 300, method="rk4")
    assert traj.q.shape == (301, 2, 4, 4) and traj.omega.shape == (301, 2, 4, 3)
    assert traj.kinetic_energy.shape == (301, 2, 4) and traj.angular_momentum.shape == (301, 2, 4, 3)
    for i in range(2):
        for j in range(4):
            q_ref, w_ref = solve(q0[i, j], w0[i, j], inertia[i, j], traj.t[[0, -1]])
            assert angle(traj.q[-1, i, j], q_ref[-1]) < 1e-8
            assert np.max(np.abs(traj.omega[-1, i, j] - w_ref[-1])) < 1e-8
    one_attitude = propagate([1, 0, 0, 0], w0[0], I_ASYM, 0.01, 3)
    assert one_attitude.q.shape == (4, 4, 4)


def test_diagnostics_match_hand_computation():
    J = np.diag([1.0, 2.0, 3.0])
    traj = propagate(Q0, W0, J, 0.01, 2)
    assert traj.kinetic_energy[0] == pytest.approx(0.5 * (0.16 + 2 * 1.21 + 3 * 0.09))
    np.testing.assert_allclose(traj.angular_momentum[0], body_to_world(Q0, J @ W0), atol=1e-15)
    assert np.max(np.abs(traj.norm_error)) < 1e-15


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"q0": [1.0, 0.0, 0.0, np.nan]}, r"q0 must be finite"),
        ({"q0": [2.0, 0.0, 0.0, 0.0]}, r"q0 must be a unit quaternion.*norm 2"),
        ({"q0": [1.0, 0.0, 0.0]}, r"q0 must have shape \(\.\.\., 4\)"),
        ({"omega0": [0.0, np.inf, 0.0]}, r"omega0 must be finite"),
        ({"inertia": [1.0, 1.0, 3.0]}, r"triangle"),
        ({"inertia": [1.0, -2.0, 3.0]}, r"inertia"),
        ({"inertia": [[1.0, 0.5, 0], [0, 2.0, 0], [0, 0, 3.0]]}, r"symmetric"),
        ({"dt": 0.0}, r"dt must be a positive finite number, got 0.0"),
        ({"dt": float("nan")}, r"dt must be a positive finite number"),
        ({"steps": -1}, r"steps must be an integer in \[0, 2\*\*53\], got -1"),
        ({"steps": 2.5}, r"steps must be an integer"),
        ({"substeps": 0}, r"substeps must be an integer in \[1, 2\*\*53\], got 0"),
        ({"torque": [0.0, np.nan, 0.0]}, r"torque must be finite"),
        ({"torque": [1.0, 2.0]}, r"torque must broadcast to shape \(3,\)"),
        ({"torque_frame": "inertial"}, r"torque_frame must be one of"),
        ({"bogus": 1}, r"method 'rk4' has no option\(s\) \['bogus'\]"),
        ({"method": "rkn", "project_every": 0}, r"project_every must be an integer in \[1, 2\*\*53\], got 0"),
        ({"method": "exact", "torque": [0.0, 0.0, 1.0]}, r"'exact' integrates torque-free motion only"),
        ({"torque": [0.0, 0.0, 1.0], "renormalize_momentum": True}, r"torque-free runs only"),
    ],
)
def test_bad_input_raises_a_clear_error(kwargs, match):
    args = {"q0": Q0, "omega0": W0, "inertia": I_ASYM, "dt": 0.01, "steps": 3, **kwargs}
    with pytest.raises(ValueError, match=match):
        propagate(**args)


def test_bad_torque_callable_output_raises():
    with pytest.raises(ValueError, match=r"the result of torque\(t=0.0, q, omega\) must be finite"):
        propagate(Q0, W0, I_ASYM, 0.01, 3, torque=lambda t, q, w: np.array([0.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match=r"must broadcast to shape \(3,\), got shape \(2,\)"):
        propagate(Q0, W0, I_ASYM, 0.01, 3, torque=lambda t, q, w: np.zeros(2))


def test_divergence_is_reported_not_returned_as_nan():
    with pytest.raises(ValueError, match=r"method 'euler' produced non-finite values at step \d+"):
        propagate(Q0, [50.0, 80.0, 30.0], I_ASYM, 1.0, 400, method="euler")

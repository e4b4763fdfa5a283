"""Conservation laws and closed forms for the structure-preserving methods
(nielsen_krenk, strang, yoshida4, rkmk4)."""

from __future__ import annotations

import numpy as np
import pytest
from reference import angle, body_to_world, solve, world_to_body

from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.heavy_top import HeavyTop
from rigidrot_gym.physics.rotation.integrators import ConvergenceError
from rigidrot_gym.physics.rotation.propagate import propagate

I_ASYM = np.array([1.0, 2.0, 3.0])
Q0 = quat.normalize(np.array([0.9, 0.2, -0.3, 0.25]))
W0 = np.array([0.4, 1.1, -0.3])


def _relative_drift(values) -> float:
    values = np.asarray(values)
    if values.ndim == 1:
        return float(np.max(np.abs(values - values[0])) / np.abs(values[0]))
    return float(np.max(np.linalg.norm(values - values[0], axis=-1)) / np.linalg.norm(values[0]))


def test_nielsen_krenk_long_run_conserves_energy_momentum_and_norm():
    traj = propagate(Q0, W0, I_ASYM, 0.01, 20_000, method="nielsen_krenk")
    assert _relative_drift(traj.kinetic_energy) <= 1e-12
    assert _relative_drift(traj.angular_momentum) <= 1e-12
    assert np.max(np.abs(traj.norm_error)) <= 1e-13
    assert 1 <= traj.iterations <= 20  # reported, and far from the cap


def _discrete_hamiltonian_step(q0, w0, inertia, h, j0, torque_body):
    """One step of the notes' 8-variable discrete Nielsen–Krenk equations, written out
    independently in plain numpy and solved by fixed-point iteration; returns q1, ω1 and
    q1·p1 (kept at zero by the scheme)."""

    def hprod(a, b):  # Hamilton product of arbitrary 4-vectors (not only unit)
        w1, v1, w2, v2 = a[0], a[1:], b[0], b[1:]
        return np.concatenate([[w1 * w2 - v1 @ v2], w1 * v2 + w2 * v1 + np.cross(v1, v2)])

    conj = np.array([1.0, -1.0, -1.0, -1.0])
    jbar = np.concatenate([[j0], inertia])
    p0 = 2.0 * hprod(q0, np.concatenate([[0.0], inertia * w0]))
    b0 = hprod(q0 * conj, p0)
    q1, p1 = q0.copy(), p0.copy()
    for _ in range(500):
        qm, pm = 0.5 * (q0 + q1), 0.5 * (p0 + p1)
        v = 0.5 * (b0 + hprod(q1 * conj, p1)) / jbar
        force = 2.0 * h * hprod(qm, np.concatenate([[0.0], torque_body]))
        q_new = q0 + 0.25 * h * hprod(qm, v)
        p_new = p0 - 0.25 * h * hprod(pm, v * conj) + force
        if np.max(np.abs(q_new - q1)) + np.max(np.abs(p_new - p1)) < 1e-16:
            break
        q1, p1 = q_new, p_new
    w1 = 0.5 * hprod(q1 * conj, p1)[1:] / inertia
    return q1, w1, float(q1 @ p1)


@pytest.mark.parametrize("j0", [1e-2, 1.0, 1e2])
@pytest.mark.parametrize("tau", [np.zeros(3), np.array([0.3, -0.2, 0.1])])
def test_nielsen_krenk_step_solves_the_hamiltonian_form_for_any_j0(j0, tau):
    h = 0.1
    q_ref, w_ref, q_dot_p = _discrete_hamiltonian_step(Q0, W0, I_ASYM, h, j0, tau)
    traj = propagate(Q0, W0, I_ASYM, h, 1, method="nielsen_krenk", torque=tau)
    np.testing.assert_allclose(traj.q[-1], q_ref, atol=2e-15)
    np.testing.assert_allclose(traj.omega[-1], w_ref, atol=2e-14)
    assert abs(q_dot_p) < 1e-14


@pytest.mark.parametrize("h", [0.02, 0.05, 0.1, 0.2])
def test_nielsen_krenk_steady_spin_rate_error(h):
    """A steady spin ω about a principal axis turns by 4 atan(ωh/4) per step: relative rate
    error −(ωh)²/48 + O((ωh)⁴) (Nielsen & Krenk's (ΩΔt)²/12 with Ω = ω/2)."""
    w = 3.0
    traj = propagate([1, 0, 0, 0], [0.0, 0.0, w], I_ASYM, h, 50, method="nielsen_krenk")
    turned = np.unwrap(2.0 * np.arctan2(traj.q[:, 3], traj.q[:, 0]))
    rate_error = (turned[-1] / traj.t[-1] - w) / w
    assert rate_error == pytest.approx(-((w * h) ** 2) / 48, rel=(w * h) ** 2 / 20 + 1e-9)


def test_nielsen_krenk_fails_loudly_when_it_cannot_converge():
    with pytest.raises(ConvergenceError, match=r"'nielsen_krenk' did not converge .* raise max_iter"):
        propagate(Q0, W0, I_ASYM, 0.1, 3, method="nielsen_krenk", max_iter=2)
    with pytest.raises(ConvergenceError, match=r"1 of 2 bodies"):  # the body at rest converges
        propagate(Q0, [W0, [0.0, 0.0, 0.0]], I_ASYM, 0.1, 3, method="nielsen_krenk", max_iter=3)


@pytest.mark.parametrize("name", ["strang", "yoshida4"])
def test_splitting_keeps_momentum_to_round_off(name):
    traj = propagate(Q0, W0, I_ASYM, 0.05, 10_000, method=name)
    assert _relative_drift(traj.angular_momentum) < 1e-13
    assert _relative_drift(traj.kinetic_energy) < 1e-13
    assert np.max(np.abs(traj.norm_error)) < 1e-13


def test_rkmk4_stays_on_the_rotation_group_without_projection():
    traj = propagate(Q0, W0, I_ASYM, 0.05, 10_000, method="rkmk4")
    assert np.max(np.abs(traj.norm_error)) < 1e-13


def _world_momentum(q, w, inertia):
    return body_to_world(q, inertia * w)


def test_constant_torque_impulse_nielsen_krenk():
    """ΔL = h q̄ (0, τ) q̄* with the (non-unit) midpoint q̄ = ½(q0 + q1)."""
    tau, h = np.array([0.3, -0.2, 0.5]), 0.1
    traj = propagate(Q0, W0, I_ASYM, h, 1, method="nielsen_krenk", torque=tau)
    q_mid = 0.5 * (traj.q[0] + traj.q[1])
    impulse = h * np.linalg.norm(q_mid) ** 2 * body_to_world(q_mid, tau)
    change = _world_momentum(traj.q[1], traj.omega[1], I_ASYM) - _world_momentum(Q0, W0, I_ASYM)
    np.testing.assert_allclose(change, impulse, atol=1e-15)


def test_constant_torque_impulse_strang():
    """Each half kick adds (h/2) R(q) τ at the attitude it acts on; the free rotation adds
    nothing: ΔL = (h/2)(R(q0) + R(q1)) τ."""
    tau, h = np.array([0.3, -0.2, 0.5]), 0.1
    traj = propagate(Q0, W0, I_ASYM, h, 1, method="strang", torque=tau)
    impulse = 0.5 * h * (body_to_world(traj.q[0], tau) + body_to_world(traj.q[1], tau))
    change = _world_momentum(traj.q[1], traj.omega[1], I_ASYM) - _world_momentum(Q0, W0, I_ASYM)
    np.testing.assert_allclose(change, impulse, atol=1e-14)


# ------------------------------------------------------------------------- heavy top


def _top_torque(top):
    def torque(t, q, w):
        return np.cross(top.center_of_mass, world_to_body(q, top.weight))

    return torque


def _top_reference(top, q0, w0, times):
    """DOP853 on the top's equations, the torque written independently of the library."""
    return solve(q0, w0, top.inertia, times, torque=_top_torque(top))


@pytest.fixture(scope="module")
def top():
    # Seed 002's second example: a symmetric top, axis body z, pivot at the tip.
    return HeavyTop.symmetric(mass=1.0, i_transverse=0.012, i_axial=0.02, length=0.12)


def test_heavy_top_torque_matches_independent_formula(top):
    rng = np.random.default_rng(2)
    q = quat.random(rng, (5,))
    w = rng.normal(size=(5, 3))
    traj = propagate(q, w, top.inertia, 1e-9, 1, method="euler", torque=top.torque)
    # ω1 − ω0 = h J⁻¹(τ − ω × Jω) for Euler: recover τ and compare.
    jw = w @ top.inertia.T
    tau = (traj.omega[1] - w) @ top.inertia.T / 1e-9 + np.cross(w, jw)
    expected = np.array([_top_torque(top)(0.0, qi, wi) for qi, wi in zip(q, w, strict=True)])
    np.testing.assert_allclose(tau, expected, atol=2e-6)


@pytest.mark.parametrize("form", ["torque", "potential"])
@pytest.mark.slow
def test_heavy_top_nielsen_krenk_conserves_energy_and_vertical_momentum(top, form):
    q0 = quat.from_rotvec([0.5, 0.0, 0.0])
    w0 = np.array([0.0, 0.0, 60.0])  # a fast top
    # The potential runs as Python callables (numpy mode): fewer steps keep the test fast.
    load, steps = (
        ({"torque": top.torque}, 10_000) if form == "torque" else ({"potential": top.potential}, 1000)
    )
    traj = propagate(q0, w0, top.inertia, 1e-3, steps, method="nielsen_krenk", **load)
    energy = top.total_energy(traj.q, traj.omega)
    vertical = top.vertical_momentum(traj.q, traj.omega)
    assert _relative_drift(energy) < 1e-12
    assert _relative_drift(vertical) < 1e-12


@pytest.mark.parametrize(
    ("name", "order"), [("nielsen_krenk", 2), ("strang", 2), ("yoshida4", 4), ("rkmk4", 4)]
)
def test_heavy_top_orders_vs_dop853(top, name, order):
    q0 = quat.from_rotvec([0.6, 0.1, 0.0])
    w0 = np.array([0.5, -0.3, 12.0])
    T = 1.0
    q_ref, w_ref = _top_reference(top, q0, w0, [T])
    steps = [200, 400, 800] if order == 2 else [100, 200, 400]
    hs, errs = [], []
    for n in steps:
        traj = propagate(q0, w0, top.inertia, T / n, n, method=name, torque=top.torque)
        hs.append(T / n)
        errs.append(angle(traj.q[-1], q_ref[-1]) + np.max(np.abs(traj.omega[-1] - w_ref[-1])) / 12.0)
    assert abs(np.polyfit(np.log(hs), np.log(errs), 1)[0] - order) <= 0.2, errs


def test_heavy_top_reference_conserves_what_the_physics_says(top):
    """Sanity of the independent reference itself: DOP853 keeps energy and L_z."""
    q0, w0 = quat.from_rotvec([0.5, 0.0, 0.0]), np.array([0.0, 0.0, 60.0])
    times = np.linspace(0.0, 2.0, 50)
    q, w = _top_reference(top, q0, w0, times)
    assert _relative_drift(top.total_energy(q, w)) < 1e-10
    assert _relative_drift(top.vertical_momentum(q, w)) < 1e-10

"""The magnetic torque term: a dipole m fixed in the body in a field B constant in the world
frame, τ = m × R(q)ᵀ B, against scipy's DOP853 of the ODE written out here in numpy, its
closed forms, its potential V = −m · R(q)ᵀ B, and Basilisk's ``MtbEffector``.

The dipole and field are order one (A·m², T) so that the torque matters over a few seconds;
a real magnetorquer's 0.1 A·m² in a 30 µT field would change no digit the tests look at.
"""

from __future__ import annotations

import numpy as np
import pytest
from reference import angle, slope, solve, world_to_body

import rigidrot_gym  # noqa: F401  (registers the engine methods)
from rigidrot_gym.engines.boundary import torque_of
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.propagate import propagate
from rigidrot_gym.physics.rotation.torques import BodyTorque, GravityGradient, MagneticDipole, resolve

I_ASYM = np.array([1.0, 2.0, 3.0])
Q0 = quat.normalize(np.array([0.9, 0.2, -0.3, 0.25]))
W0 = np.array([0.4, 1.1, -0.3])
DIPOLE = np.array([0.8, -0.5, 1.2])
FIELD = np.array([0.3, -0.4, 0.6])


def _reference(q0, w0, J, m, b, times) -> tuple[np.ndarray, np.ndarray]:
    """DOP853 (rtol = atol = 1e-13) of q̇ = ½ q ⊗ ω, J ω̇ = m × R(q)ᵀ B − ω × Jω."""
    return solve(q0, w0, J, times, torque=lambda t, q, w: np.cross(m, world_to_body(q, b)))


def _energy(q, w, J, m, b) -> np.ndarray:
    """½ ωᵀJω − m · R(q)ᵀ B along a trajectory."""
    return np.array([0.5 * wi @ J @ wi - m @ world_to_body(qi, b) for qi, wi in zip(q, w, strict=True)])


def _model(q: np.ndarray, m: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The model's torque on bodies (n, 4), as an engine evaluates it (numpy mode)."""
    loads = resolve(MagneticDipole(m, b), "body", (len(q),), None, I_ASYM)
    return torque_of(loads)(0.0, q, np.zeros((len(q), 3)))


class MagneticPotential:
    """V(q) = −m · R(q)ᵀ B, written as the quadratic form in q it is, with its gradient."""

    def __init__(self, m: np.ndarray, b: np.ndarray) -> None:
        self.m, self.b = m, b

    def energy(self, q: np.ndarray) -> np.ndarray:
        return -(quat.rotate_inverse(q, self.b) @ self.m)

    def gradient(self, q: np.ndarray) -> np.ndarray:
        # ∂/∂q of −Bᵀ((q_w² − |v|²) 1 + 2 v vᵀ + 2 q_w [v×]) m
        m, b = self.m, self.b
        qw, v = q[..., :1], q[..., 1:]
        bm = b @ m
        g_w = qw[..., 0] * bm + np.cross(v, m) @ b
        g_v = (v @ m)[..., None] * b + (v @ b)[..., None] * m - bm * v + qw * np.cross(m, b)
        return -2.0 * np.concatenate([g_w[..., None], g_v], axis=-1)


# ---------------------------------------------------------------- against DOP853


@pytest.mark.parametrize(
    ("method", "order", "steps", "finest"),
    [
        # measured at the finest step: 1.1e-8, 3.9e-5, 2.3e-5; slopes 3.994, 2.000, 2.000
        ("rk4", 4.0, (50, 100, 200), 3e-8),
        ("nielsen_krenk", 2.0, (100, 200, 400), 1e-4),
        ("strang", 2.0, (100, 200, 400), 1e-4),
    ],
)
def test_order_against_dop853(method, order, steps, finest):
    T = 4.0
    q_ref, w_ref = _reference(Q0, W0, np.diag(I_ASYM), DIPOLE, FIELD, [T])
    errors = []
    for n in steps:
        traj = propagate(Q0, W0, I_ASYM, T / n, n, method=method, torque=MagneticDipole(DIPOLE, FIELD))
        errors.append(angle(traj.q[-1], q_ref[-1]) + np.max(np.abs(traj.omega[-1] - w_ref[-1])))
    assert abs(slope([T / n for n in steps], errors) - order) < 0.05, errors
    assert errors[-1] < finest, errors


def test_full_tensor_and_a_batch_of_dipoles_against_dop853():
    # A body frame that is not principal (the dipole is turned into principal axes) and one
    # dipole per body in a shared field. Measured: 1.1e-8 (rad, rad/s) at most.
    turn = quat.from_rotvec(np.array([0.3, -0.7, 0.5]))
    P = quat.to_matrix(turn)
    J = P @ np.diag(I_ASYM) @ P.T
    dipoles = np.array([DIPOLE, [-1.0, 0.2, 0.4], [0.0, 0.9, -0.6]])
    T, n = 4.0, 200
    q0 = np.broadcast_to(Q0, (3, 4))
    traj = propagate(q0, W0, J, T / n, n, method="rk4", torque=MagneticDipole(dipoles, FIELD))
    for i, m in enumerate(dipoles):
        q_ref, w_ref = _reference(Q0, W0, J, m, FIELD, [T])
        assert angle(traj.q[-1, i], q_ref[-1]) < 5e-8
        assert np.max(np.abs(traj.omega[-1, i] - w_ref[-1])) < 5e-8


# ---------------------------------------------------------------- closed forms


def test_torque_is_perpendicular_to_dipole_and_field_with_magnitude_m_b_sin():
    rng = np.random.default_rng(11)
    q = quat.random(rng, (200,))
    m, b = rng.normal(size=(200, 3)), rng.normal(size=(200, 3))
    tau = _model(q, m, b)
    b_body = quat.rotate_inverse(q, b)
    scale = np.linalg.norm(m, axis=-1) * np.linalg.norm(b, axis=-1)
    assert np.max(np.abs(np.einsum("ij,ij->i", tau, m)) / scale) < 1e-14
    assert np.max(np.abs(np.einsum("ij,ij->i", tau, b_body)) / scale) < 1e-14
    cos = np.einsum("ij,ij->i", m, b_body) / scale
    sin = np.sqrt(np.maximum(0.0, 1.0 - cos**2))
    np.testing.assert_allclose(np.linalg.norm(tau, axis=-1), scale * sin, rtol=1e-12)
    # A dipole along the body-frame field feels no torque.
    parallel = 0.7 * b_body
    assert np.max(np.linalg.norm(_model(q, parallel, b), axis=-1) / scale) < 1e-14


def test_torque_is_the_potentials_minus_gradient():
    """V = −m · R(q)ᵀ B as a Python potential (its torque −½ vec(q* ⊗ ∇V)) runs the same
    trajectory as the term, to round-off (measured 3.4e-16 rad, 5.6e-17 rad/s)."""
    T, n = 2.0, 200
    term = propagate(Q0, W0, I_ASYM, T / n, n, method="rk4", torque=MagneticDipole(DIPOLE, FIELD))
    potential = propagate(Q0, W0, I_ASYM, T / n, n, method="rk4", potential=MagneticPotential(DIPOLE, FIELD))
    assert np.max(angle(term.q, potential.q)) < 1e-13
    assert np.max(np.abs(term.omega - potential.omega)) < 1e-13


def test_total_energy_is_conserved():
    """½ ωᵀIω − m · R(q)ᵀ B is an invariant. Measured over 10 s: DOP853 7e-13, rk4 at
    1 ms 2e-14, and nielsen_krenk at 0.1 s 1e-15 (the midpoint torque is the exact discrete
    gradient of the quadratic V), while the kinetic energy alone swings by 0.97 J."""
    T = 10.0
    J = np.diag(I_ASYM)
    q_ref, w_ref = _reference(Q0, W0, J, DIPOLE, FIELD, np.linspace(0.0, T, 101))
    reference = _energy(q_ref, w_ref, J, DIPOLE, FIELD)
    assert np.max(np.abs(reference - reference[0])) < 1e-11
    for method, n, bound in (("rk4", 10000, 1e-13), ("nielsen_krenk", 100, 1e-13)):
        traj = propagate(Q0, W0, I_ASYM, T / n, n, method=method, torque=MagneticDipole(DIPOLE, FIELD))
        energy = _energy(traj.q, traj.omega, J, DIPOLE, FIELD)
        assert energy[0] == pytest.approx(reference[0], abs=1e-15)
        assert np.max(np.abs(energy - energy[0])) < bound, method
        assert np.ptp(traj.kinetic_energy) > 0.5


def test_a_zero_dipole_or_field_changes_no_bit():
    # The term is skipped when its rows are zero: every other result stays as it was.
    base = [BodyTorque([0.1, -0.2, 0.05]), GravityGradient(0.1, 0.3)]
    T, n = 2.0, 100
    for method in ("rk4", "nielsen_krenk"):
        alone = propagate(Q0, W0, I_ASYM, T / n, n, method=method, torque=base)
        for term in (MagneticDipole(np.zeros(3), FIELD), MagneticDipole(DIPOLE, np.zeros(3))):
            with_term = propagate(Q0, W0, I_ASYM, T / n, n, method=method, torque=[*base, term])
            assert np.array_equal(with_term.q, alone.q) and np.array_equal(with_term.omega, alone.omega)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: MagneticDipole([1.0, 2.0], FIELD), r"^MagneticDipole.dipole must have shape \(\.\.\., 3\)"),
        (lambda: MagneticDipole(DIPOLE, [np.nan, 0, 0]), r"^MagneticDipole.field must be finite"),
        (lambda: MagneticDipole([np.inf, 0, 0], FIELD), r"^MagneticDipole.dipole must be finite"),
        (lambda: MagneticDipole(DIPOLE, "a"), r"^MagneticDipole.field must be real numbers, got strings"),
        (lambda: MagneticDipole(DIPOLE, None), r"^MagneticDipole.field must be real numbers"),
    ],
)
def test_bad_fields_are_refused_on_construction(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_bad_batches_and_two_dipoles_are_refused():
    q0 = np.broadcast_to(Q0, (3, 4))
    with pytest.raises(ValueError, match=r"^MagneticDipole.dipole must broadcast to shape \(3, 3\)"):
        propagate(q0, W0, I_ASYM, 0.01, 1, torque=MagneticDipole(np.ones((2, 3)), FIELD))
    with pytest.raises(ValueError, match=r"^at most one MagneticDipole per propagation"):
        propagate(Q0, W0, I_ASYM, 0.01, 1, torque=[MagneticDipole(DIPOLE, FIELD)] * 2)


# ---------------------------------------------------------------- engines


@pytest.mark.engines
@pytest.mark.parametrize(
    ("method", "module"), [("basilisk_rk4", "Basilisk"), ("mujoco_rk4", "mujoco"), ("pybullet", "pybullet")]
)
def test_engines_apply_the_term_at_first_order(method, module):
    """Engines hold the torque of a step's start over the step: first order in a torque that
    turns with the attitude (measured at 400 steps: 9.5e-3 for Basilisk and MuJoCo, 1.1e-2
    for PyBullet; slopes 1.008)."""
    pytest.importorskip(module)
    T = 4.0
    q_ref, w_ref = _reference(Q0, W0, np.diag(I_ASYM), DIPOLE, FIELD, [T])
    errors = []
    for n in (100, 200, 400):
        traj = propagate(Q0, W0, I_ASYM, T / n, n, method=method, torque=MagneticDipole(DIPOLE, FIELD))
        errors.append(angle(traj.q[-1], q_ref[-1]) + np.max(np.abs(traj.omega[-1] - w_ref[-1])))
    assert abs(slope([T / n for n in (100, 200, 400)], errors) - 1.0) < 0.05, errors
    assert errors[-1] < 0.02


@pytest.mark.engines
def test_basilisk_mtb_effector_applies_the_same_torque():
    """Basilisk's ``MtbEffector`` (three orthogonal rods, no clipping) in a constant field,
    read at the first tick, where it is the model itself (later ticks hold the last
    integration stage's attitude). Measured over 20 draws: |Δτ| / (|m| |B|) 9.3e-16 at
    most; |Δτ| / |τ| 6.9e-15 at most, where m is 4° off the field (sin 0.077)."""
    pytest.importorskip("Basilisk")
    from Basilisk.architecture import messaging
    from Basilisk.simulation import MtbEffector, spacecraft
    from Basilisk.utilities import RigidBodyKinematics as rbk
    from Basilisk.utilities import SimulationBaseClass, macros

    rng = np.random.default_rng(5)
    n = 20
    q = quat.random(rng, (n,))
    dipoles = rng.normal(scale=0.2, size=(n, 3))
    fields = rng.normal(scale=3e-5, size=(n, 3))
    ours = _model(q, dipoles, fields)
    worst = worst_scaled = 0.0
    for i in range(n):
        sim = SimulationBaseClass.SimBaseClass()
        sim.CreateNewProcess("dynamics").addTask(sim.CreateNewTask("task", macros.sec2nano(0.1)))
        craft = spacecraft.Spacecraft()
        craft.hub.IHubPntBc_B = np.diag(I_ASYM).tolist()
        craft.hub.sigma_BNInit = np.reshape(rbk.EP2MRP(q[i]), (3, 1)).tolist()
        mtb = MtbEffector.MtbEffector()
        craft.addDynamicEffector(mtb)
        sim.AddModelToTask("task", craft)
        sim.AddModelToTask("task", mtb)
        rods = messaging.MTBArrayConfigMsgPayload()
        rods.numMTB = 3
        rods.GtMatrix_B = np.eye(3).flatten().tolist()
        rods.maxMtbDipoles = [1e9] * 3
        command = messaging.MTBCmdMsgPayload()
        command.mtbDipoleCmds = dipoles[i].tolist()
        field = messaging.MagneticFieldMsgPayload()
        field.magField_N = fields[i].tolist()
        # The messages must outlive the run: the effector reads them through pointers.
        messages = (
            messaging.MTBArrayConfigMsg().write(rods),
            messaging.MTBCmdMsg().write(command),
            messaging.MagneticFieldMsg().write(field),
        )
        mtb.mtbParamsInMsg.subscribeTo(messages[0])
        mtb.mtbCmdInMsg.subscribeTo(messages[1])
        mtb.magInMsg.subscribeTo(messages[2])
        recorder = mtb.mtbOutMsg.recorder()
        sim.AddModelToTask("task", recorder)
        sim.InitializeSimulation()
        sim.ConfigureStopTime(0)
        sim.ExecuteSimulation()
        theirs = np.asarray(recorder.mtbNetTorque_B)[0]
        np.testing.assert_array_equal(theirs, np.ravel(mtb.torqueExternalPntB_B))
        difference = np.linalg.norm(theirs - ours[i])
        worst = max(worst, difference / np.linalg.norm(ours[i]))
        worst_scaled = max(
            worst_scaled, difference / (np.linalg.norm(dipoles[i]) * np.linalg.norm(fields[i]))
        )
    assert worst < 2e-14, worst
    assert worst_scaled < 3e-15, worst_scaled

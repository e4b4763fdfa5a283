"""Tests for :mod:`rigidrot_gym.physics.rotation.exact` against independent references.

The main reference is scipy's DOP853 at rtol = atol = 1e-13 on the 7-dimensional ODE
(Euler's equations and q̇ = ½ q ⊗ (0, ω)), written out below in plain numpy; attitudes
are compared through scipy's ``Rotation``. Other references: the closed-form solutions of
the seeds (Sasaki, Ganapathi), constant spins, the conservation laws, and values of the
separatrix motion computed offline with ``mpmath.odefun`` (Taylor series at 32 digits),
where DOP853 itself drifts.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit
from reference import angle, solve
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

from rigidrot_gym import propagate
from rigidrot_gym.physics.rotation.exact import free_rotation, symmetric_top, torque_free

pytestmark = pytest.mark.filterwarnings("error")


# ----------------------------------------------------------------------------------
# Independent references
# ----------------------------------------------------------------------------------


def rigid_body_rhs(t, y, inertia):
    w, (qw, qx, qy, qz) = y[:3], y[3:]
    wx, wy, wz = w
    w_dot = np.cross(inertia * w, w) / inertia
    q_dot = 0.5 * np.array(
        [
            -qx * wx - qy * wy - qz * wz,
            qw * wx + qy * wz - qz * wy,
            qw * wy - qx * wz + qz * wx,
            qw * wz + qx * wy - qy * wx,
        ]
    )
    return np.concatenate([w_dot, q_dot])


def dop853(q0, omega0, inertia, times):
    """(q, ω) at ``times`` (monotonic, starting at 0) by DOP853 at rtol = atol = 1e-13."""
    times = np.asarray(times, dtype=float)
    sol = solve_ivp(
        rigid_body_rhs,
        (0.0, times[-1]),
        np.concatenate([omega0, q0]),
        method="DOP853",
        rtol=1e-13,
        atol=1e-13,
        t_eval=times,
        args=(np.asarray(inertia, dtype=float),),
    )
    assert sol.success
    q = sol.y[3:].T
    return q / np.linalg.norm(q, axis=-1, keepdims=True), sol.y[:3].T


def rotation(q) -> Rotation:
    """scipy Rotation of scalar-first quaternions (..., 4); Rotations pass through."""
    if isinstance(q, Rotation):
        return q
    return Rotation.from_quat(np.roll(np.asarray(q, dtype=float).reshape(-1, 4), -1, axis=-1))


def attitude_error(p, q) -> float:
    """Largest rotation angle (rad) between corresponding attitudes."""
    return float(np.max((rotation(p).inv() * rotation(q)).magnitude()))


def spin(q0, omega, t):
    """q0 ⊗ exp(½ ω t): a constant body rate ω, by scipy's rotation vectors."""
    r = rotation(q0) * Rotation.from_rotvec(np.outer(t, omega))
    return np.roll(r.as_quat(), 1, axis=-1)


def delta_mid(inertia, omega):
    """G² − 2T I_mid, whose sign decides the regime."""
    order = np.argsort(inertia)
    i, m = np.asarray(inertia)[order], (np.asarray(inertia) * omega)[order]
    return float(np.sum(m * m) - np.sum(m * m / i) * i[1])


def unit_quaternion(rng) -> np.ndarray:
    q = rng.standard_normal(4)
    return q / np.linalg.norm(q)


@pytest.fixture
def rng():
    return np.random.default_rng(31415)


def random_case(rng, sign: float):
    """Random unsorted moments in [1, 2] (always a valid body) and |ω| = 1 in the regime
    sign(Δ_mid) = sign, kept 5 % of G² away from the separatrix."""
    while True:
        inertia = rng.uniform(1.0, 2.0, 3)
        omega = rng.standard_normal(3)
        omega /= np.linalg.norm(omega)
        g2 = np.sum((inertia * omega) ** 2)
        if sign * delta_mid(inertia, omega) > 0.05 * g2:
            return unit_quaternion(rng), omega, inertia


# ----------------------------------------------------------------------------------
# Against DOP853
# ----------------------------------------------------------------------------------

TIMES = np.linspace(0.0, 50.0, 51)


@pytest.mark.parametrize("sign", [-1.0, 1.0], ids=["about-minor-axis", "about-major-axis"])
def test_matches_dop853_in_both_regimes(rng, sign):
    for _ in range(4):
        q0, omega0, inertia = random_case(rng, sign)
        q_ref, w_ref = dop853(q0, omega0, inertia, TIMES)
        q, w = torque_free(q0, omega0, inertia, TIMES)
        assert np.max(np.abs(w - w_ref)) < 1e-10
        assert attitude_error(q, q_ref) < 1e-9


def test_matches_dop853_backwards_in_time(rng):
    q0, omega0, inertia = random_case(rng, 1.0)
    q_ref, w_ref = dop853(q0, omega0, inertia, -TIMES)
    q, w = torque_free(q0, omega0, inertia, -TIMES)
    assert np.max(np.abs(w - w_ref)) < 1e-10
    assert attitude_error(q, q_ref) < 1e-9


# Exactly on the separatrix: Δ_mid = m1²(I1 − I2)/I1 + m3²(I3 − I2)/I3 = −12 + 12 = 0 in
# floating point for I = (3, 4, 6) and ω = (±2, ω2, ±1), any ω2; also relabelled axes.
SEPARATRIX = [
    ((3.0, 4.0, 6.0), (2.0, 0.3, 1.0)),
    ((3.0, 4.0, 6.0), (-2.0, -0.3, 1.0)),
    ((3.0, 4.0, 6.0), (2.0, 0.0, -1.0)),
    ((6.0, 3.0, 4.0), (1.0, 2.0, -0.3)),
    ((4.0, 6.0, 3.0), (0.3, -1.0, 2.0)),
]


@pytest.mark.parametrize(("inertia", "omega0"), SEPARATRIX)
def test_exact_separatrix_matches_dop853(inertia, omega0):
    assert delta_mid(inertia, np.array(omega0)) == 0.0
    # On the separatrix any round-off of the reference grows like e^(λt) (λ ≈ 0.71 here,
    # the rate of the homoclinic orbit): about e^8.5 ≈ 5e3 over 12 time units.
    times = np.linspace(0.0, 12.0, 25)
    q0 = np.array([0.5, 0.5, -0.5, 0.5])
    q_ref, w_ref = dop853(q0, omega0, inertia, times)
    q, w = torque_free(q0, omega0, inertia, times)
    assert np.max(np.abs(w - w_ref)) < 1e-10
    assert attitude_error(q, q_ref) < 1e-10


def test_exact_separatrix_matches_high_precision_reference():
    # mpmath.odefun (32 digits) from q0 = 1, ω0 = (2, 0.3, 1), I = (3, 4, 6): [ω, q] at
    # t = 10, 20, 30. DOP853 is off by 3e-10 at t = 20 and 4e-7 at t = 30 here.
    reference = np.array(
        [
            [0.0027775462886171624, 2.1424265030313623, 0.0013887731443085812]
            + [-0.21126126561359565, -0.5750902872154761, -0.7244365564115528, -0.31596125543543174],
            [2.198763663183909e-06, 2.142428528561586, 1.0993818315919545e-06]
            + [-0.6369042306844744, -0.1421622733485086, 0.4054222900285898, 0.6401372163220755],
            [1.7405864236958137e-09, 2.142428528562855, 8.702932118479068e-10]
            + [0.5673581711480032, 0.6543528188544674, 0.4981151572560406, -0.04252510082992985],
        ]
    )
    q, w = torque_free([1.0, 0.0, 0.0, 0.0], [2.0, 0.3, 1.0], [3.0, 4.0, 6.0], [10.0, 20.0, 30.0])
    assert np.max(np.abs(w - reference[:, :3])) < 1e-14
    assert attitude_error(q, reference[:, 3:]) < 1e-13


@pytest.mark.parametrize(
    ("q0", "omega0", "inertia", "reference"),
    [
        (
            [0.4018599284535099, 0.23424641884246336, -0.368129004104766, -0.8050579168604296],
            [0.4707144452982249, 0.820356430370538, -0.32472024596149385],
            [1.8702492039700847, 1.2868172090875554, 1.6031481500515619],
            [
                [-0.22270130319348413, 0.6796579096850567, -0.6895492885430664]
                + [-0.23410532788969188, 0.7149204792880706, -0.1881185443885711, -0.6314228511903103],
                [-0.39922776464566184, 0.7724414387944467, 0.48913562045145825]
                + [0.36865398104888975, 0.7961074585939476, 0.4091233733834736, -0.25084900234846],
            ],
        ),
        (
            [-0.2913366650138346, 0.617064449427534, -0.22435901108813724, 0.695713624284349],
            [0.9451537930401057, 0.3095963310545483, 0.10408851665512166],
            [1.484944326977288, 1.0651541973701075, 1.005626050679393],
            [
                [0.9489046069203828, -0.12689437671043288, -0.29122566373556247]
                + [-0.27828461848431374, 0.7182993067542011, -0.44289764786479674, 0.45874333842281007],
                [0.9487354982546196, -0.14037263193690477, 0.2854307617428218]
                + [0.005848256751198406, 0.6435392861809967, -0.5946371490251575, 0.48190211250196674],
            ],
        ),
    ],
    ids=["about-minor-axis", "about-major-axis"],
)
def test_generic_matches_high_precision_reference(q0, omega0, inertia, reference):
    # mpmath.odefun (32 digits), [ω, q] at t = 25 and 50, unsorted moments. DOP853 at
    # 1e-13 is off by up to 1e-12 in attitude here; the exact solution by ~3e-15.
    reference = np.array(reference)
    q, w = torque_free(q0, omega0, inertia, [25.0, 50.0])
    assert np.max(np.abs(w - reference[:, :3])) < 1e-14
    assert attitude_error(q, reference[:, 3:]) < 1e-13


@pytest.mark.parametrize("offset", [1e-3, -1e-6, 1e-9])
def test_near_separatrix_matches_dop853(offset):
    # Close to the separatrix the problem itself amplifies perturbations by ~e^(λt) near
    # the saddle; over 20 time units the two solutions agree to ~1e-10 (measured 6e-11).
    inertia = (3.0, 4.0, 6.0)
    omega0 = np.array([2.0, 0.3, 1.0 + offset])
    times = np.linspace(0.0, 20.0, 41)
    q0 = np.array([0.5, 0.5, -0.5, 0.5])
    q_ref, w_ref = dop853(q0, omega0, inertia, times)
    q, w = torque_free(q0, omega0, inertia, times)
    assert np.max(np.abs(w - w_ref)) < 1e-9
    assert attitude_error(q, q_ref) < 1e-9


def test_separatrix_approaches_the_intermediate_axis():
    # m → (0, ±G, 0): ω2 → ±G/I2 while ω1, ω3 decay like e^(−λt).
    inertia = np.array([3.0, 4.0, 6.0])
    omega0 = np.array([2.0, 0.3, 1.0])
    g = np.linalg.norm(inertia * omega0)
    _, w = torque_free([1.0, 0.0, 0.0, 0.0], omega0, inertia, [60.0, 1e3, -1e3])
    assert w[0, 1] == pytest.approx(g / 4.0, rel=1e-14)
    assert np.all(np.abs(w[:, [0, 2]]) < 1e-15)
    assert w[1, 1] == pytest.approx(g / 4.0, rel=1e-14)
    assert w[2, 1] == pytest.approx(-g / 4.0, rel=1e-14)


# ----------------------------------------------------------------------------------
# Seeds: closed forms of symmetric tops
# ----------------------------------------------------------------------------------


def test_sasaki_seed():
    # Seed 004: I = diag(1, 1, 2), ω0 = (1, 0, 1) → ω(t) = (cos t, sin t, 1).
    t = np.linspace(-30.0, 100.0, 261)
    _, w = torque_free([0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 2.0], t)
    expected = np.stack([np.cos(t), np.sin(t), np.ones_like(t)], axis=-1)
    assert np.max(np.abs(w - expected)) < 1e-13


def test_ganapathi_seed():
    # Seed 003 (which prints cos twice): I = (2, 2, 8), ω0 = (1, 0, 1) →
    # ω = (cos Ωt, sin Ωt, 1), Ω = (λ3 − λ1)/λ1 ω3 = 3, and the body z-axis precesses
    # about L at |L|/λ1 on a cone of fixed opening. These moments violate the triangle
    # inequality (2 + 2 < 8: no rigid body has them), so torque_free rejects them unless
    # told to solve Euler's equations for them as bare parameters.
    t = np.linspace(0.0, 40.0, 401)
    q0 = np.array([0.9, 0.1, -0.3, 0.3]) / np.linalg.norm([0.9, 0.1, -0.3, 0.3])
    inertia = np.array([2.0, 2.0, 8.0])
    omega0 = np.array([1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="triangle inequality"):
        torque_free(q0, omega0, inertia, t)
    q, w = torque_free(q0, omega0, inertia, t, check_triangle=False)
    expected = np.stack([np.cos(3.0 * t), np.sin(3.0 * t), np.ones_like(t)], axis=-1)
    assert np.max(np.abs(w - expected)) < 1e-13

    big_l = rotation(q0).apply(inertia * omega0)[0]
    l_hat = big_l / np.linalg.norm(big_l)
    z = rotation(q).apply([0.0, 0.0, 1.0])
    assert np.allclose(z @ l_hat, 8.0 / np.sqrt(68.0), rtol=0.0, atol=1e-14)
    z_perp = z - np.outer(z @ l_hat, l_hat)
    angle = np.arctan2(np.cross(z_perp[0], z_perp) @ l_hat, z_perp @ z_perp[0])
    expected_angle = np.angle(np.exp(1j * np.linalg.norm(big_l) / 2.0 * t))
    assert np.max(np.abs(np.angle(np.exp(1j * (angle - expected_angle))))) < 1e-12


# ----------------------------------------------------------------------------------
# Symmetric tops
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("i_perp", "i_axial"), [(2.0, 1.0), (1.0, 1.8)], ids=["prolate", "oblate"])
def test_symmetric_top_matches_dop853(rng, i_perp, i_axial):
    q0, omega0 = unit_quaternion(rng), rng.standard_normal(3)
    q_ref, w_ref = dop853(q0, omega0, [i_perp, i_perp, i_axial], TIMES)
    q, w = symmetric_top(q0, omega0, i_perp, i_axial, TIMES)
    assert np.max(np.abs(w - w_ref)) < 1e-10
    assert attitude_error(q, q_ref) < 1e-9


@pytest.mark.parametrize(("i_perp", "i_axial"), [(2.0, 1.0), (1.0, 1.8)], ids=["prolate", "oblate"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_symmetric_top_matches_torque_free_on_any_axis(rng, i_perp, i_axial, axis):
    # Relabel the body axes cyclically so the symmetry axis of torque_free's body is
    # body axis `axis`; the attitude changes by the corresponding proper rotation.
    q0, omega0 = unit_quaternion(rng), rng.standard_normal(3)
    perm = np.roll([0, 1, 2], axis + 1)  # body axis perm[k] of the new body is axis k of the top
    inertia = np.empty(3)
    inertia[perm] = [i_perp, i_perp, i_axial]
    omega_new = np.empty(3)
    omega_new[perm] = omega0
    to_new = Rotation.from_matrix(np.eye(3)[:, perm])  # maps top components to new components
    q_new0 = np.roll((rotation(q0) * to_new.inv()).as_quat(), 1, axis=-1)[0]
    q_top, w_top = symmetric_top(q0, omega0, i_perp, i_axial, TIMES)
    q, w = torque_free(q_new0, omega_new, inertia, TIMES)
    assert np.max(np.abs(w[:, perm] - w_top)) < 1e-13
    assert attitude_error(rotation(q) * to_new, q_top) < 1e-12


@pytest.mark.parametrize(("i_perp", "i_axial"), [(2.0, 1.0), (1.0, 1.8)], ids=["prolate", "oblate"])
def test_nearly_symmetric_body_takes_the_elliptic_path_and_agrees(rng, i_perp, i_axial):
    # A split of 1e-10 is far above the 1e-12 threshold, so torque_free runs the elliptic
    # solution; it must differ from the symmetric top by O(1e-10 × |ω| t) only.
    q0, omega0 = unit_quaternion(rng), rng.standard_normal(3)
    q_top, w_top = symmetric_top(q0, omega0, i_perp, i_axial, TIMES)
    q, w = torque_free(q0, omega0, [i_perp, i_perp * (1.0 + 1e-10), i_axial], TIMES)
    assert np.max(np.abs(w - w_top)) < 1e-7
    assert attitude_error(q, q_top) < 1e-7


# ----------------------------------------------------------------------------------
# Special states and conservation
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("inertia", "omega0"),
    [
        ((3.0, 4.0, 6.0), (1.5, 0.0, 0.0)),  # minor axis
        ((3.0, 4.0, 6.0), (0.0, 0.0, -1.5)),  # major axis
        ((6.0, 3.0, 4.0), (-1.5, 0.0, 0.0)),  # major axis, unsorted moments
        ((3.0, 4.0, 6.0), (0.0, 1.5, 0.0)),  # intermediate axis: unstable, but exact
        ((4.0, 6.0, 3.0), (0.0, 0.0, -1.5)),  # minor axis, unsorted moments
        ((2.0, 2.0, 2.0), (0.3, -1.0, 0.7)),  # sphere: any axis
        ((1.0, 2.0, 2.5), (0.0, 0.0, 0.0)),  # at rest
        ((2.0, 2.0, 2.0), (0.0, 0.0, 0.0)),
    ],
)
def test_constant_spins(rng, inertia, omega0):
    q0 = unit_quaternion(rng)
    t = np.linspace(-100.0, 100.0, 41)
    q, w = torque_free(q0, omega0, inertia, t)
    assert np.array_equal(w, np.broadcast_to(omega0, w.shape))
    assert attitude_error(q, spin(q0, np.array(omega0), t)) < 1e-12


def test_conservation_over_long_times(rng):
    t = np.concatenate([[0.0], np.geomspace(1.0, 1e4, 60)])
    cases = [random_case(rng, s) for s in (-1.0, 1.0, -1.0, 1.0)]
    cases.append((unit_quaternion(rng), np.array([2.0, 0.3, 1.0 - 1e-7]), np.array([3.0, 4.0, 6.0])))
    for q0, omega0, inertia in cases:
        q, w = torque_free(q0, omega0, inertia, t)
        momentum = rotation(q).apply(inertia * w)
        energy = 0.5 * np.sum(inertia * w * w, axis=-1)
        assert np.max(np.linalg.norm(momentum - momentum[0], axis=-1)) < 1e-13 * np.linalg.norm(momentum[0])
        assert np.max(np.abs(energy / energy[0] - 1.0)) < 1e-13


def test_time_reversal(rng):
    for sign in (-1.0, 1.0):
        q0, omega0, inertia = random_case(rng, sign)
        q1, w1 = torque_free(q0, omega0, inertia, 37.0)
        q2, w2 = torque_free(q1, w1, inertia, -37.0)
        assert np.max(np.abs(w2 - omega0)) < 1e-13
        assert attitude_error(q2, q0) < 1e-12


# Generic (both regimes), near the intermediate axis, on the separatrix, a symmetric top.
SCALE_CASES = (
    np.array([[1.0, 2.0, 3.0], [2.0, 1.0, 1.5], [1.0, 2.0, 3.0], [3.0, 4.0, 6.0], [2.0, 2.0, 3.0]]),
    np.array([[0.3, 1.0, 0.2], [0.2, 0.3, 1.0], [1e-10, 1.0, -1e-9], [2.0, 0.3, 1.0], [0.4, -0.2, 1.0]]),
)


@pytest.mark.parametrize("scale", [2.0**600, 2.0**-600, 1e150, 1e-150, 1e300, 1e-300])
def test_scaled_moments_give_the_same_motion(scale):
    # I ω̇ = Iω × ω is unchanged by I → sI, so ω(t) and q(t) are those for I (issue 12,
    # item 15: products like I1 I2 I3 used to overflow or underflow, giving non-finite
    # states). Scaling by a power of two is exact, and so is the result.
    inertia, omega = SCALE_CASES
    q0 = np.array([0.5, 0.5, -0.5, 0.5])
    times = np.array([0.0, 1.0, 5.0, 10.0])
    exact_scale = np.log2(scale) == np.round(np.log2(scale))
    q_ref, w_ref = torque_free(q0, omega, inertia, times)
    q, w = torque_free(q0, omega, inertia * scale, times)
    if exact_scale:
        assert np.array_equal(q, q_ref) and np.array_equal(w, w_ref)
    # Otherwise s·I carries its own rounding (~1e-16), which the separatrix case amplifies.
    assert attitude_error(q, q_ref) < 1e-12
    assert np.max(np.abs(w - w_ref)) < 1e-12
    q_top, w_top = symmetric_top(q0, omega[-1], 2.0 * scale, 3.0 * scale, times)
    assert attitude_error(q_top, q_ref[:, -1]) < 1e-14 and np.max(np.abs(w_top - w_ref[:, -1])) < 1e-14
    for method in ("exact", "strang", "yoshida4"):
        unscaled = propagate(q0, omega, inertia, 0.5, 20, method=method)
        scaled = propagate(q0, omega, inertia * scale, 0.5, 20, method=method)
        if exact_scale:
            assert np.array_equal(scaled.q, unscaled.q) and np.array_equal(scaled.omega, unscaled.omega)
        assert attitude_error(scaled.q, unscaled.q) < 1e-12
        assert np.max(np.abs(scaled.omega - unscaled.omega)) < 1e-12


# ----------------------------------------------------------------------------------
# Compiled (numba) and numpy modes run the same source
# ----------------------------------------------------------------------------------


@njit(error_model="numpy", cache=False)
def _compiled(q, w, inertia, t):
    q_out = np.empty((t.size, 4))
    w_out = np.empty((t.size, 3))
    for i in range(t.size):
        q_t, w_t = free_rotation(
            (q[i, 0], q[i, 1], q[i, 2], q[i, 3]),
            (w[i, 0], w[i, 1], w[i, 2]),
            (inertia[i, 0], inertia[i, 1], inertia[i, 2]),
            t[i],
        )
        q_out[i, 0], q_out[i, 1], q_out[i, 2], q_out[i, 3] = q_t
        w_out[i, 0], w_out[i, 1], w_out[i, 2] = w_t
    return q_out, w_out


def test_compiled_and_numpy_modes_agree(rng):
    cases = [random_case(rng, s) for s in (-1.0, 1.0) * 20]
    special = [
        ((3.0, 4.0, 6.0), (2.0, 0.3, 1.0)),  # separatrix
        ((3.0, 4.0, 6.0), (0.0, 1.0, 0.0)),  # intermediate spin
        ((3.0, 4.0, 6.0), (1.0, 0.0, 0.0)),  # minor spin
        ((1.0, 2.0, 2.0), (0.5, 0.3, 1.0)),  # prolate
        ((2.0, 2.0, 3.0), (0.5, 0.3, 1.0)),  # oblate
        ((2.0, 2.0, 2.0), (0.5, 0.3, 1.0)),  # sphere
        ((1.0, 2.0, 2.5), (0.0, 0.0, 0.0)),  # at rest
        ((1.0, 2.0, 3.0), (1e-12, 1.0, -1e-13)),  # near the intermediate axis
        ((2.0, 1.0, 1.5), (1e-15, 0.0, 1.0)),  # nearer, intermediate axis along z
        ((1e150, 2e150, 3e150), (0.3, 1.0, 0.2)),  # huge moments
        ((1e-150, 3e-150, 2e-150), (0.3, 1.0, 0.2)),  # tiny moments
    ]
    cases += [(unit_quaternion(rng), np.array(w), np.array(i)) for i, w in special]
    q = np.array([c[0] for c in cases])
    w = np.array([c[1] for c in cases])
    inertia = np.array([c[2] for c in cases])
    t = rng.uniform(-50.0, 50.0, len(cases))
    q_c, w_c = _compiled(q, w, inertia, t)
    q_n, w_n = free_rotation(tuple(q.T), tuple(w.T), tuple(inertia.T), t)
    # Same source; only libm and contraction differences remain (|t| ≤ 50 rad of phase).
    assert np.max(np.abs(q_c - np.stack(q_n, axis=-1))) < 2e-14
    assert np.max(np.abs(w_c - np.stack(w_n, axis=-1))) < 2e-14


# ----------------------------------------------------------------------------------
# Shapes and input validation
# ----------------------------------------------------------------------------------


def test_output_shapes(rng):
    q0, omega0, inertia = random_case(rng, 1.0)
    q, w = torque_free(q0, omega0, inertia, 1.5)
    assert q.shape == (4,) and w.shape == (3,)
    q, w = torque_free(q0, omega0, inertia, np.linspace(0.0, 1.0, 7))
    assert q.shape == (7, 4) and w.shape == (7, 3)
    qs = np.array([unit_quaternion(rng) for _ in range(5)])
    q, w = torque_free(qs, omega0, inertia, 2.0)
    assert q.shape == (5, 4) and w.shape == (5, 3)
    q, w = torque_free(qs, omega0, inertia, np.linspace(0.0, 1.0, 7))
    assert q.shape == (7, 5, 4) and w.shape == (7, 5, 3)
    # Leading shapes broadcast: (2, 1) attitudes, (3,) rates, (1, 4) bodies.
    q, w = torque_free(qs[:2, None], omega0, np.tile(inertia, (1, 4, 1)), np.arange(3.0))
    assert q.shape == (3, 2, 4, 4) and w.shape == (3, 2, 4, 3)
    # Every batch entry equals the single-body call.
    q1, w1 = torque_free(qs[1], omega0, inertia, np.arange(3.0))
    assert np.array_equal(q[:, 1, 2], q1) and np.array_equal(w[:, 1, 2], w1)
    q, w = symmetric_top(qs, omega0, np.array([1.0, 2.0, 1.5, 1.0, 2.0]), 1.2, np.arange(3.0))
    assert q.shape == (3, 5, 4) and w.shape == (3, 5, 3)
    q, w = symmetric_top(q0, omega0, 1.0, 1.2, 0.5)
    assert q.shape == (4,) and w.shape == (3,)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"q0": [1.0, 0.0, 0.0, 0.1]}, r"unit quaternion.*\[1\.0, 0\.0, 0\.0, 0\.1\].*normalise"),
        ({"q0": [1.0, 0.0, 0.0]}, r"q0 must have shape \(\.\.\., 4\)"),
        ({"q0": [np.nan, 0.0, 0.0, 1.0]}, r"q0 must be finite, got \[nan, 0\.0, 0\.0, 1\.0\]"),
        ({"omega0": [0.0, np.inf, 0.0]}, r"omega0 must be finite, got \[0\.0, inf, 0\.0\]"),
        ({"omega0": [[0.0, 1.0]]}, r"omega0 must have shape"),
        ({"inertia": [1.0, -2.0, 2.5]}, r"inertia must be positive definite.*for \[1\.0, -2\.0, 2\.5\]"),
        ({"inertia": [1.0, 0.0, 1.0]}, r"inertia must be positive"),
        ({"inertia": [1.0, 2.0, 3.5]}, r"violates the triangle inequality.*\[1\.0, 2\.0, 3\.5\]"),
        ({"inertia": [[1.0, 1.0, 1.0], [4.0, 1.0, 2.0]]}, r"triangle inequality.*\[4\.0, 1\.0, 2\.0\]"),
        ({"t": [0.0, np.nan]}, r"t must be finite, got nan"),
        ({"t": [[0.0, 1.0]]}, r"t must be a scalar or a 1-D array"),
    ],
)
def test_torque_free_rejects_bad_input(kwargs, match):
    args = {"q0": [1.0, 0.0, 0.0, 0.0], "omega0": [0.1, 0.2, 0.3], "inertia": [1.0, 2.0, 2.5], "t": 1.0}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        torque_free(**args)


def test_a_body_tensor_is_a_body_not_three_bodies():
    """A full 3 × 3 tensor is one body in the user's frame (as ``propagate`` reads it):
    against DOP853 on J ω̇ = −ω × Jω with that tensor, and a batch of such tensors."""
    r = Rotation.from_rotvec([0.4, -0.7, 0.2])
    tensor = r.as_matrix() @ np.diag([1.0, 2.0, 2.5]) @ r.as_matrix().T
    q0, omega0 = np.array([0.6, 0.0, -0.8, 0.0]), np.array([0.3, -0.2, 0.1])
    times = np.array([0.0, 1.0, 7.5, 20.0])
    q, w = torque_free(q0, omega0, tensor, times)
    assert q.shape == (4, 4) and w.shape == (4, 3)
    q_ref, w_ref = solve(q0, omega0, tensor, times)
    assert np.max(angle(q, q_ref)) < 1e-10 and np.max(np.abs(w - w_ref)) < 1e-10
    assert np.allclose(q[0], q0, atol=1e-15)  # the user's attitude, sign included
    q2, w2 = torque_free(q0, omega0, np.stack([tensor, np.diag([1.0, 2.0, 2.5])]), times)
    assert q2.shape == (4, 2, 4)
    assert np.array_equal(q2[:, 0], q) and np.array_equal(w2[:, 0], w)
    with pytest.raises(ValueError, match="inertia must be symmetric"):
        torque_free(q0, omega0, [[1.0, 0.1, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.5]], 1.0)


def test_triangle_inequality_tolerance():
    # A flat body (I3 = I1 + I2, a lamina) is valid, also with 1e-10 relative round-off.
    torque_free([1.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.3], [1.0, 2.0, 3.0 * (1.0 + 1e-10)], 1.0)


def test_symmetric_top_rejects_bad_input():
    with pytest.raises(ValueError, match="must be positive definite"):
        symmetric_top([1.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.3], -1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="triangle inequality"):
        symmetric_top([1.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.3], 1.0, 2.5, 1.0)
    with pytest.raises(ValueError, match="unit quaternion"):
        symmetric_top([2.0, 0.0, 0.0, 0.0], [0.1, 0.2, 0.3], 1.0, 1.5, 1.0)

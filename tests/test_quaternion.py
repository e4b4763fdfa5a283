"""Tests for the public batched API of :mod:`rigidrot_gym.physics.rotation.quaternion`.

Every expected value comes from something independent of the code under test:
scipy's ``Rotation`` (scalar LAST, converted here with ``np.roll`` / fancy indexing,
never with the module's own converters), hand-computed values, Taylor series, or
algebraic identities on seeded random batches.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats
from scipy.spatial.transform import Rotation

from rigidrot_gym.physics.rotation import quaternion as Q

PI = np.pi
S2 = math.sqrt(0.5)

# ----------------------------------------------------------------------------------
# Independent helpers (scipy <-> scalar-first quaternions without the module)
# ----------------------------------------------------------------------------------


def sp(q) -> Rotation:
    """scipy Rotation of scalar-first quaternions (any leading shape, flattened)."""
    q = np.asarray(q, dtype=float)
    return Rotation.from_quat(np.roll(q.reshape(-1, 4), -1, axis=-1))


def sp_quat(r: Rotation, lead: tuple[int, ...] = (-1,)) -> np.ndarray:
    """Scalar-first quaternions of a scipy Rotation, reshaped to ``lead + (4,)``."""
    return np.roll(np.asarray(r.as_quat()).reshape(-1, 4), 1, axis=-1).reshape(tuple(lead) + (4,))


def rand_quats(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Unit quaternions from normalised Gaussians (both signs of w occur)."""
    g = rng.standard_normal(tuple(shape) + (4,))
    return g / np.sqrt(np.sum(g * g, axis=-1, keepdims=True))


def rand_unit_vectors(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    g = rng.standard_normal(tuple(shape) + (3,))
    return g / np.sqrt(np.sum(g * g, axis=-1, keepdims=True))


def sign_dist(p, q) -> np.ndarray:
    """Component-wise distance between p and q up to the sign ±q (same rotation)."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    return np.minimum(np.max(np.abs(p - q), axis=-1), np.max(np.abs(p + q), axis=-1))


def rotation_error(p, q) -> np.ndarray:
    """Angle (rad) of the rotation between attitudes p and q, computed by scipy."""
    return (sp(p).inv() * sp(q)).magnitude()


def wrap(a) -> np.ndarray:
    """Angle difference wrapped into [-π, π]."""
    return np.angle(np.exp(1j * np.asarray(a)))


def hamilton(p, q) -> np.ndarray:
    """Reference Hamilton product of two single quaternions, (a, u)(b, v) form."""
    a, u = p[0], np.asarray(p[1:], dtype=float)
    b, v = q[0], np.asarray(q[1:], dtype=float)
    return np.concatenate([[a * b - u @ v], a * v + b * u + np.cross(u, v)])


IDENT = np.array([1.0, 0.0, 0.0, 0.0])
I_ = np.array([0.0, 1.0, 0.0, 0.0])
J_ = np.array([0.0, 0.0, 1.0, 0.0])
K_ = np.array([0.0, 0.0, 0.0, 1.0])


# ----------------------------------------------------------------------------------
# identity
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (3,), (2, 5)])
def test_identity(shape):
    q = Q.identity(shape)
    assert q.shape == (*shape, 4)
    np.testing.assert_array_equal(q, np.broadcast_to([1.0, 0.0, 0.0, 0.0], (*shape, 4)))


# ----------------------------------------------------------------------------------
# multiply
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("p", "q", "expected"),
    [
        (I_, J_, K_),
        (J_, I_, -K_),
        (J_, K_, I_),
        (K_, J_, -I_),
        (K_, I_, J_),
        (I_, K_, -J_),
        (I_, I_, -IDENT),
        (J_, J_, -IDENT),
        (K_, K_, -IDENT),
        ([1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [-60.0, 12.0, 30.0, 24.0]),
        ([5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0], [-60.0, 20.0, 14.0, 32.0]),
        ([2.0, 0.0, 0.0, 0.0], [1.0, -1.0, 0.5, 3.0], [2.0, -2.0, 1.0, 6.0]),
    ],
)
def test_multiply_hand_computed(p, q, expected):
    np.testing.assert_array_equal(Q.multiply(p, q), expected)


def test_multiply_matches_reference_hamilton_formula():
    rng = np.random.default_rng(1)
    p = rng.standard_normal((20, 4))
    q = rng.standard_normal((20, 4))
    expected = np.array([hamilton(a, b) for a, b in zip(p, q, strict=True)])
    np.testing.assert_allclose(Q.multiply(p, q), expected, rtol=0, atol=1e-14)


def test_multiply_matches_scipy_composition():
    # R(p ⊗ q) = R(p) R(q): q applied first, then p.
    rng = np.random.default_rng(2)
    p = rand_quats(rng, (50,))
    q = rand_quats(rng, (50,))
    pq = Q.multiply(p, q)
    np.testing.assert_allclose((sp(pq)).as_matrix(), (sp(p) * sp(q)).as_matrix(), atol=1e-14)
    np.testing.assert_allclose(sp(pq).as_matrix(), sp(p).as_matrix() @ sp(q).as_matrix(), rtol=0, atol=1e-14)
    # Exact quaternion (not only up to sign): scipy's composition is the Hamilton product.
    np.testing.assert_allclose(sign_dist(pq, sp_quat(sp(p) * sp(q))), 0.0, atol=1e-15)


def test_multiply_inverse_and_identity():
    rng = np.random.default_rng(3)
    q = rand_quats(rng, (30,))
    np.testing.assert_allclose(Q.multiply(q, Q.conjugate(q)), np.tile(IDENT, (30, 1)), atol=1e-15)
    np.testing.assert_allclose(Q.multiply(Q.conjugate(q), q), np.tile(IDENT, (30, 1)), atol=1e-15)
    np.testing.assert_array_equal(Q.multiply(IDENT, q), q)
    np.testing.assert_array_equal(Q.multiply(q, IDENT), q)
    # Non-unit quaternions: q ⊗ q⁻¹ = q⁻¹ ⊗ q = 1.
    g = 3.0 * rng.standard_normal((30, 4))
    np.testing.assert_allclose(Q.multiply(g, Q.inverse(g)), np.tile(IDENT, (30, 1)), atol=1e-14)
    np.testing.assert_allclose(Q.multiply(Q.inverse(g), g), np.tile(IDENT, (30, 1)), atol=1e-14)


def test_multiply_associative_and_norm_multiplicative():
    rng = np.random.default_rng(4)
    a, b, c = (rng.standard_normal((40, 4)) for _ in range(3))
    np.testing.assert_allclose(
        Q.multiply(Q.multiply(a, b), c), Q.multiply(a, Q.multiply(b, c)), rtol=1e-13, atol=1e-13
    )
    np.testing.assert_allclose(
        np.linalg.norm(Q.multiply(a, b), axis=-1),
        np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1),
        rtol=1e-14,
    )
    # (p q)* = q* p*
    conj = np.array([1.0, -1.0, -1.0, -1.0])
    np.testing.assert_allclose(Q.multiply(a, b) * conj, Q.multiply(b * conj, a * conj), atol=1e-14)


def test_multiply_not_commutative():
    assert not np.allclose(Q.multiply(I_, J_), Q.multiply(J_, I_))


# ----------------------------------------------------------------------------------
# conjugate / inverse / norm / normalize
# ----------------------------------------------------------------------------------


def test_conjugate_hand_computed():
    np.testing.assert_array_equal(Q.conjugate([1.0, 2.0, -3.0, 4.0]), [1.0, -2.0, 3.0, -4.0])
    np.testing.assert_array_equal(
        Q.conjugate([[0.5, 0.5, 0.5, 0.5], [1.0, 0.0, 0.0, 0.0]]),
        [[0.5, -0.5, -0.5, -0.5], [1.0, 0.0, 0.0, 0.0]],
    )


def test_conjugate_is_scipy_inverse_for_unit():
    rng = np.random.default_rng(5)
    q = rand_quats(rng, (25,))
    np.testing.assert_allclose(sp(Q.conjugate(q)).as_matrix(), sp(q).inv().as_matrix(), atol=1e-15)


def test_inverse_hand_computed_non_unit():
    np.testing.assert_allclose(Q.inverse([1.0, 2.0, 3.0, 4.0]), np.array([1.0, -2.0, -3.0, -4.0]) / 30.0)
    np.testing.assert_allclose(Q.inverse([2.0, 0.0, 0.0, 0.0]), [0.5, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(Q.inverse([0.0, 0.0, -4.0, 0.0]), [0.0, 0.0, 0.25, 0.0])


def test_inverse_equals_conjugate_for_unit_and_scales():
    rng = np.random.default_rng(6)
    q = rand_quats(rng, (20,))
    np.testing.assert_allclose(Q.inverse(q), q * np.array([1.0, -1.0, -1.0, -1.0]), atol=1e-15)
    s = rng.uniform(0.1, 10.0, (20, 1))
    np.testing.assert_allclose(Q.inverse(s * q), Q.inverse(q) / s, rtol=1e-14)
    # Involution.
    g = rng.standard_normal((20, 4))
    np.testing.assert_allclose(Q.inverse(Q.inverse(g)), g, rtol=1e-13, atol=1e-14)


def test_norm():
    np.testing.assert_allclose(Q.norm([1.0, 2.0, 3.0, 4.0]), math.sqrt(30.0))
    np.testing.assert_allclose(Q.norm([[3.0, 0.0, 4.0, 0.0], [0.0, 0.0, 0.0, 0.0]]), [5.0, 0.0])
    assert Q.norm([1.0, 2.0, 3.0, 4.0]).shape == ()
    rng = np.random.default_rng(7)
    np.testing.assert_allclose(Q.norm(rand_quats(rng, (4, 6))), 1.0, atol=1e-15)


def test_normalize():
    np.testing.assert_allclose(Q.normalize([0.0, 3.0, 0.0, 4.0]), [0.0, 0.6, 0.0, 0.8])
    np.testing.assert_allclose(Q.normalize([-2.0, 0.0, 0.0, 0.0]), [-1.0, 0.0, 0.0, 0.0])
    rng = np.random.default_rng(8)
    g = rng.standard_normal((3, 5, 4)) * rng.uniform(1e-3, 1e3, (3, 5, 1))
    n = Q.normalize(g)
    np.testing.assert_allclose(np.sqrt(np.sum(n * n, axis=-1)), 1.0, atol=1e-15)
    # Same direction: n is a positive multiple of g.
    np.testing.assert_allclose(n * np.linalg.norm(g, axis=-1, keepdims=True), g, rtol=1e-14)


BAD_QUATERNIONS = [
    [0.0, 0.0, 0.0, 0.0],
    [np.nan, 0.0, 0.0, 1.0],
    [1.0, np.inf, 0.0, 0.0],
]


@pytest.mark.parametrize("bad", BAD_QUATERNIONS, ids=["zero", "nan", "inf"])
@pytest.mark.parametrize("layout", ["1d", "2d", "3d"])
def test_normalize_raises_naming_the_quaternion(bad, layout):
    if layout == "1d":
        q = np.array(bad)
    elif layout == "2d":
        q = np.array([[1.0, 0.0, 0.0, 0.0], bad, [0.0, 1.0, 0.0, 0.0]])
    else:
        q = np.tile([0.5, 0.5, 0.5, 0.5], (2, 3, 1))
        q[1, 2] = bad
    with pytest.raises(ValueError, match=re.escape(str([float(c) for c in bad]))):
        Q.normalize(q)


# ----------------------------------------------------------------------------------
# rotate / rotate_inverse
# ----------------------------------------------------------------------------------


def test_rotate_hand_computed_90_deg_about_z():
    q = np.array([S2, 0.0, 0.0, S2])  # +90° about z
    np.testing.assert_allclose(Q.rotate(q, [1.0, 0.0, 0.0]), [0.0, 1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(Q.rotate(q, [0.0, 1.0, 0.0]), [-1.0, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(Q.rotate(q, [0.0, 0.0, 2.5]), [0.0, 0.0, 2.5], atol=1e-15)
    np.testing.assert_allclose(Q.rotate_inverse(q, [1.0, 0.0, 0.0]), [0.0, -1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(Q.rotate_inverse(q, [0.0, 1.0, 0.0]), [1.0, 0.0, 0.0], atol=1e-15)
    # 180° about x: y -> -y, z -> -z.
    np.testing.assert_allclose(Q.rotate(I_, [1.0, 2.0, 3.0]), [1.0, -2.0, -3.0], atol=1e-15)
    # Rotation by 120° about (1,1,1)/√3 permutes the axes x -> y -> z -> x.
    q120 = np.array([0.5, 0.5, 0.5, 0.5])
    np.testing.assert_allclose(Q.rotate(q120, [1.0, 0.0, 0.0]), [0.0, 1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(Q.rotate(q120, [0.0, 1.0, 0.0]), [0.0, 0.0, 1.0], atol=1e-15)


def test_rotate_matches_scipy_apply():
    rng = np.random.default_rng(9)
    q = rand_quats(rng, (60,))
    v = rng.standard_normal((60, 3)) * 5.0
    np.testing.assert_allclose(Q.rotate(q, v), sp(q).apply(v), rtol=0, atol=1e-13)
    np.testing.assert_allclose(Q.rotate_inverse(q, v), sp(q).inv().apply(v), rtol=0, atol=1e-13)
    # q and -q rotate identically.
    np.testing.assert_allclose(Q.rotate(-q, v), sp(q).apply(v), rtol=0, atol=1e-13)


def test_rotate_round_trip_and_norm_preserved():
    rng = np.random.default_rng(10)
    q = rand_quats(rng, (40,))
    v = rng.standard_normal((40, 3))
    np.testing.assert_allclose(Q.rotate_inverse(q, Q.rotate(q, v)), v, atol=1e-14)
    np.testing.assert_allclose(Q.rotate(q, Q.rotate_inverse(q, v)), v, atol=1e-14)
    np.testing.assert_allclose(
        np.linalg.norm(Q.rotate(q, v), axis=-1), np.linalg.norm(v, axis=-1), rtol=1e-14
    )


def test_rotate_is_sandwich_product():
    # v_world = q (0, v) q* computed with the independent reference product.
    rng = np.random.default_rng(11)
    q = rand_quats(rng, (10,))
    v = rng.standard_normal((10, 3))
    for qi, vi in zip(q, v, strict=True):
        conj = qi * np.array([1.0, -1.0, -1.0, -1.0])
        s = hamilton(hamilton(qi, np.concatenate([[0.0], vi])), conj)
        np.testing.assert_allclose(Q.rotate(qi, vi), s[1:], atol=1e-14)
        s_inv = hamilton(hamilton(conj, np.concatenate([[0.0], vi])), qi)
        np.testing.assert_allclose(Q.rotate_inverse(qi, vi), s_inv[1:], atol=1e-14)


def test_rotate_composition():
    rng = np.random.default_rng(12)
    p = rand_quats(rng, (20,))
    q = rand_quats(rng, (20,))
    v = rng.standard_normal((20, 3))
    np.testing.assert_allclose(Q.rotate(Q.multiply(p, q), v), sp(p).apply(sp(q).apply(v)), atol=1e-13)


# ----------------------------------------------------------------------------------
# exp / log / from_rotvec / as_rotvec
# ----------------------------------------------------------------------------------


def test_exp_hand_computed():
    np.testing.assert_array_equal(Q.exp([0.0, 0.0, 0.0]), IDENT)
    np.testing.assert_allclose(Q.exp([0.0, 0.0, PI / 4]), [S2, 0.0, 0.0, S2], atol=1e-16)
    np.testing.assert_allclose(Q.exp([PI / 2, 0.0, 0.0]), [0.0, 1.0, 0.0, 0.0], atol=1e-16)
    np.testing.assert_allclose(Q.exp([0.0, PI, 0.0]), [-1.0, 0.0, 0.0, 0.0], atol=1e-15)
    a = 0.7
    np.testing.assert_allclose(
        Q.exp([0.0, 0.6 * a, 0.8 * a]), [math.cos(a), 0.0, 0.6 * math.sin(a), 0.8 * math.sin(a)], atol=1e-16
    )


def test_from_rotvec_matches_scipy():
    rng = np.random.default_rng(13)
    rv = rand_unit_vectors(rng, (50,)) * rng.uniform(0.0, PI, (50, 1))
    q = Q.from_rotvec(rv)
    # For θ ≤ π, w = cos(θ/2) ≥ 0 on both sides: equal without the sign ambiguity.
    np.testing.assert_allclose(q, sp_quat(Rotation.from_rotvec(rv)), atol=1e-15)
    np.testing.assert_allclose(Q.exp(0.5 * rv), q, atol=0)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-15)
    # Beyond π: same rotation as scipy's.
    rv_big = rand_unit_vectors(rng, (50,)) * rng.uniform(PI, 6.0 * PI, (50, 1))
    np.testing.assert_allclose(
        sign_dist(Q.from_rotvec(rv_big), sp_quat(Rotation.from_rotvec(rv_big))), 0.0, atol=1e-14
    )


def test_as_rotvec_matches_scipy():
    rng = np.random.default_rng(14)
    q = rand_quats(rng, (80,))  # both signs of w
    np.testing.assert_allclose(Q.as_rotvec(q), sp(q).as_rotvec(), rtol=0, atol=1e-14)
    assert np.all(np.linalg.norm(Q.as_rotvec(q), axis=-1) <= PI + 1e-15)
    np.testing.assert_allclose(Q.as_rotvec(-q), sp(q).as_rotvec(), rtol=0, atol=1e-14)


def test_log_inverts_exp():
    rng = np.random.default_rng(15)
    v = rand_unit_vectors(rng, (50,)) * rng.uniform(0.0, PI, (50, 1))
    np.testing.assert_allclose(Q.log(Q.exp(v)), v, atol=1e-13)
    # exp(log(q)) = q exactly (not only up to sign), for w of both signs.
    q = rand_quats(rng, (50,))
    np.testing.assert_allclose(Q.exp(Q.log(q)), q, atol=1e-15)
    assert np.all(np.linalg.norm(Q.log(q), axis=-1) <= PI)


def test_log_identity_is_zero():
    np.testing.assert_array_equal(Q.log(IDENT), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(Q.as_rotvec(IDENT), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(Q.as_rotvec(-IDENT), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(Q.log(np.tile(IDENT, (2, 3, 1))), np.zeros((2, 3, 3)))


@pytest.mark.parametrize("tiny", [1e-12, 1e-8, 1e-5])
def test_log_near_minus_identity(tiny):
    # q = -exp(u) with tiny |u|: w ≈ -1. log must return v with exp(v) = q, i.e. |v| ≈ π - |u|,
    # NOT the log of -q (|v| ≈ |u|), which is what the small-angle series would give.
    rng = np.random.default_rng(16)
    n = rand_unit_vectors(rng, (5,))
    q = np.concatenate([-np.full((5, 1), math.cos(tiny)), n * math.sin(tiny)], axis=-1)
    v = Q.log(q)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-1), PI - tiny, rtol=1e-14)
    np.testing.assert_allclose(v / np.linalg.norm(v, axis=-1, keepdims=True), n, atol=1e-12)
    np.testing.assert_allclose(Q.exp(v), q, atol=1e-15)


def test_log_of_minus_identity_exponentiates_back():
    # log(-1): any v with |v| = π works (exp(v) = (cos π, sin π n) = -1); 0 does not.
    v = Q.log(-IDENT)
    np.testing.assert_allclose(np.linalg.norm(v), PI, rtol=1e-15)
    np.testing.assert_allclose(Q.exp(v), -IDENT, atol=1e-15)


def _sin_h_over_h(h):
    """sin(h)/h by its Taylor series (h ≤ 1e-3: truncation below 1e-30)."""
    h2 = h * h
    return 1.0 - h2 / 6.0 + h2 * h2 / 120.0 - h2 * h2 * h2 / 5040.0


def _cos_series(h):
    h2 = h * h
    return 1.0 - h2 / 2.0 + h2 * h2 / 24.0 - h2 * h2 * h2 / 720.0


TINY_ANGLES = [1e-12, 1e-8, 1e-5, 1e-3]


@pytest.mark.parametrize("theta", TINY_ANGLES)
def test_from_rotvec_tiny_angles(theta):
    rng = np.random.default_rng(17)
    rv = rand_unit_vectors(rng, (20,)) * theta
    h = 0.5 * np.linalg.norm(rv, axis=-1)
    q = Q.from_rotvec(rv)
    expected_vec = 0.5 * rv * _sin_h_over_h(h)[:, None]
    rel = np.linalg.norm(q[:, 1:] - expected_vec, axis=-1) / np.linalg.norm(expected_vec, axis=-1)
    assert np.max(rel) <= 1e-15
    np.testing.assert_allclose(q[:, 0], _cos_series(h), rtol=1e-15, atol=0)
    # exp directly, too.
    q2 = Q.exp(0.5 * rv)
    rel2 = np.linalg.norm(q2[:, 1:] - expected_vec, axis=-1) / np.linalg.norm(expected_vec, axis=-1)
    assert np.max(rel2) <= 1e-15


@pytest.mark.parametrize("theta", TINY_ANGLES)
def test_as_rotvec_and_log_tiny_angles(theta):
    rng = np.random.default_rng(18)
    rv = rand_unit_vectors(rng, (20,)) * theta
    h = 0.5 * np.linalg.norm(rv, axis=-1)
    # Quaternion built from the series, not from the module.
    q = np.concatenate([_cos_series(h)[:, None], 0.5 * rv * _sin_h_over_h(h)[:, None]], axis=-1)
    out = Q.as_rotvec(q)
    rel = np.linalg.norm(out - rv, axis=-1) / np.linalg.norm(rv, axis=-1)
    assert np.max(rel) <= 1e-15
    # Also through -q (canonicalised to the short way).
    out_neg = Q.as_rotvec(-q)
    rel_neg = np.linalg.norm(out_neg - rv, axis=-1) / np.linalg.norm(rv, axis=-1)
    assert np.max(rel_neg) <= 1e-15
    lg = Q.log(q)
    rel_log = np.linalg.norm(lg - 0.5 * rv, axis=-1) / np.linalg.norm(0.5 * rv, axis=-1)
    assert np.max(rel_log) <= 1e-15
    # scipy agrees too (looser: its own round-off).
    np.testing.assert_allclose(out, sp(q).as_rotvec(), rtol=1e-13, atol=0)


@pytest.mark.parametrize("axis", [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.6, 0.0, 0.8]])
def test_rotvec_angle_exactly_pi(axis):
    n = np.array(axis)
    q = Q.from_rotvec(PI * n)
    np.testing.assert_allclose(q, np.concatenate([[0.0], n]), atol=1e-15)
    # Rotation by π about n (independent: R = 2 n nᵀ - 1).
    np.testing.assert_allclose(sp(q).as_matrix()[0], 2.0 * np.outer(n, n) - np.eye(3), atol=1e-15)
    # as_rotvec of (0, ±n): |rotvec| = π about the canonical (first non-zero > 0) axis ±n.
    for sign in (1.0, -1.0):
        rv = Q.as_rotvec(np.concatenate([[0.0], sign * n]))
        np.testing.assert_allclose(np.linalg.norm(rv), PI, rtol=1e-15)
        np.testing.assert_allclose(rv, PI * n, atol=1e-15)
    np.testing.assert_allclose(Q.log(np.concatenate([[0.0], n])), 0.5 * PI * n, atol=1e-15)


def test_as_rotvec_near_pi_matches_scipy():
    rng = np.random.default_rng(19)
    n = rand_unit_vectors(rng, (30,))
    theta = PI - np.array([1e-12, 1e-9, 1e-6] * 10)[:, None]
    rv = n * theta
    np.testing.assert_allclose(Q.as_rotvec(Q.from_rotvec(rv)), rv, atol=1e-14)
    np.testing.assert_allclose(
        Q.as_rotvec(Q.from_rotvec(rv)), Rotation.from_rotvec(rv).as_rotvec(), atol=1e-14
    )


# ----------------------------------------------------------------------------------
# to_matrix / from_matrix
# ----------------------------------------------------------------------------------


def test_to_matrix_hand_computed():
    np.testing.assert_array_equal(Q.to_matrix(IDENT), np.eye(3))
    rz90 = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(Q.to_matrix([S2, 0.0, 0.0, S2]), rz90, atol=1e-15)
    np.testing.assert_allclose(Q.to_matrix(I_), np.diag([1.0, -1.0, -1.0]), atol=0)
    np.testing.assert_allclose(Q.to_matrix([0.5, 0.5, 0.5, 0.5]), np.roll(np.eye(3), 1, axis=0), atol=1e-15)


def test_to_matrix_matches_scipy_and_composes():
    rng = np.random.default_rng(20)
    p = rand_quats(rng, (40,))
    q = rand_quats(rng, (40,))
    mp, mq = Q.to_matrix(p), Q.to_matrix(q)
    np.testing.assert_allclose(mp, sp(p).as_matrix(), atol=1e-15)
    np.testing.assert_allclose(Q.to_matrix(-p), sp(p).as_matrix(), atol=1e-15)
    np.testing.assert_allclose(Q.to_matrix(Q.multiply(p, q)), mp @ mq, atol=1e-14)
    np.testing.assert_allclose(mp @ np.swapaxes(mp, -1, -2), np.broadcast_to(np.eye(3), mp.shape), atol=1e-14)
    np.testing.assert_allclose(np.linalg.det(mp), 1.0, atol=1e-14)
    # v_world = R v_body: agrees with rotate.
    v = rng.standard_normal((40, 3))
    np.testing.assert_allclose(np.einsum("nij,nj->ni", mp, v), sp(p).apply(v), atol=1e-14)


def test_from_matrix_matches_scipy():
    rng = np.random.default_rng(21)
    r = Rotation.random(100, random_state=rng)
    m = r.as_matrix()
    q = Q.from_matrix(m)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-15)
    np.testing.assert_allclose(sign_dist(q, sp_quat(r)), 0.0, atol=1e-15)
    np.testing.assert_allclose(sign_dist(q, sp_quat(Rotation.from_matrix(m))), 0.0, atol=1e-15)
    # Round trip through to_matrix.
    np.testing.assert_allclose(Q.to_matrix(q), m, atol=1e-15)
    # Matrix products become quaternion products.
    m2 = Rotation.random(100, random_state=rng).as_matrix()
    np.testing.assert_allclose(
        sign_dist(Q.from_matrix(m @ m2), Q.multiply(Q.from_matrix(m), Q.from_matrix(m2))), 0.0, atol=1e-14
    )


def test_from_matrix_hand_computed():
    np.testing.assert_allclose(Q.from_matrix(np.eye(3)), IDENT, atol=0)
    rz90 = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(sign_dist(Q.from_matrix(rz90), [S2, 0.0, 0.0, S2]), 0.0, atol=3e-16)


@pytest.mark.parametrize(
    ("diag", "expected"),
    [
        ([1.0, -1.0, -1.0], I_),  # π about x: Shepperd's x branch
        ([-1.0, 1.0, -1.0], J_),  # π about y: y branch
        ([-1.0, -1.0, 1.0], K_),  # π about z: z branch
        ([1.0, 1.0, 1.0], IDENT),  # w branch
    ],
)
def test_from_matrix_all_shepperd_branches_exact(diag, expected):
    np.testing.assert_allclose(sign_dist(Q.from_matrix(np.diag(diag)), expected), 0.0, atol=0)


@pytest.mark.parametrize("axis", [0, 1, 2])
@pytest.mark.parametrize("offset", [0.0, 1e-12, 1e-8, 1e-4, 0.5, 2.0])
def test_from_matrix_each_branch_round_trip(axis, offset):
    # Rotations by π - offset about (mostly) one coordinate axis make that diagonal entry the
    # largest, so each of Shepperd's x/y/z branches is exercised (offset 2.0 -> w branch).
    rng = np.random.default_rng(22 + axis)
    n = np.zeros((10, 3))
    n[:, axis] = 1.0
    n += 0.2 * rng.standard_normal((10, 3))
    n /= np.linalg.norm(n, axis=-1, keepdims=True)
    rv = n * (PI - offset)
    r = Rotation.from_rotvec(rv)
    q = Q.from_matrix(r.as_matrix())
    np.testing.assert_allclose(sign_dist(q, sp_quat(r)), 0.0, atol=2e-16 * 5)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-15)


@pytest.mark.parametrize("w", [0.0, 1e-15, 1e-12, 1e-9, 1e-6, -1e-9])
def test_near_180_quaternions_round_trip(w):
    rng = np.random.default_rng(23)
    n = rand_unit_vectors(rng, (200,))
    q = np.concatenate([np.full((200, 1), w), math.sqrt(1.0 - w * w) * n], axis=-1)
    # Matrix from scipy (independent of to_matrix) and from to_matrix.
    for m in (sp(q).as_matrix(), Q.to_matrix(q)):
        q2 = Q.from_matrix(m)
        np.testing.assert_allclose(sign_dist(q2, q), 0.0, atol=1e-15)
        np.testing.assert_allclose(rotation_error(q, q2), 0.0, atol=2e-15)


# numpy's det warns on the NaN matrix before from_matrix raises; the ValueError is what counts.
@pytest.mark.filterwarnings("ignore:invalid value encountered in det:RuntimeWarning")
def test_from_matrix_rejects_non_rotations():
    with pytest.raises(ValueError, match="not a rotation"):
        Q.from_matrix(np.diag([1.0, 1.0, 1.01]))  # not orthonormal
    with pytest.raises(ValueError, match="not a rotation"):
        Q.from_matrix(np.diag([1.0, 1.0, -1.0]))  # reflection, det = -1
    with pytest.raises(ValueError, match="not a rotation"):
        Q.from_matrix(-np.eye(3))  # point reflection, orthonormal, det = -1
    with pytest.raises(ValueError, match="not a rotation"):
        Q.from_matrix(np.full((3, 3), np.nan))
    with pytest.raises(ValueError, match="not a rotation"):
        Q.from_matrix(np.zeros((3, 3)))
    shear = np.eye(3)
    shear[0, 1] = 1e-3
    with pytest.raises(ValueError, match="not a rotation"):
        Q.from_matrix(shear)
    # One bad matrix in a batch.
    batch = np.tile(np.eye(3), (2, 3, 1, 1))
    batch[1, 1] = np.diag([-1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="not a rotation"):
        Q.from_matrix(batch)


def test_from_matrix_accepts_slightly_perturbed_rotation():
    m = Rotation.from_rotvec([0.3, -0.2, 1.1]).as_matrix() + 1e-9
    q = Q.from_matrix(m)
    np.testing.assert_allclose(np.linalg.norm(q), 1.0, atol=1e-15)
    assert rotation_error(q, sp_quat(Rotation.from_rotvec([0.3, -0.2, 1.1])))[0] < 1e-8


# ----------------------------------------------------------------------------------
# Euler 3-2-1
# ----------------------------------------------------------------------------------


def _euler_samples(rng, n, max_pitch=PI / 2 - 1e-2):
    return np.stack(
        [rng.uniform(-PI, PI, n), rng.uniform(-max_pitch, max_pitch, n), rng.uniform(-PI, PI, n)], axis=-1
    )


def test_from_euler321_hand_computed():
    a = 0.8
    c, s = math.cos(a / 2), math.sin(a / 2)
    np.testing.assert_allclose(Q.from_euler321([a, 0.0, 0.0]), [c, 0.0, 0.0, s], atol=1e-16)
    np.testing.assert_allclose(Q.from_euler321([0.0, a, 0.0]), [c, 0.0, s, 0.0], atol=1e-16)
    np.testing.assert_allclose(Q.from_euler321([0.0, 0.0, a]), [c, s, 0.0, 0.0], atol=1e-16)
    # R = Rz(yaw) Ry(pitch) Rx(roll) with elementary matrices written out by hand.
    yaw, pitch, roll = 0.4, -0.7, 2.1

    def rz(t):
        return np.array([[math.cos(t), -math.sin(t), 0], [math.sin(t), math.cos(t), 0], [0, 0, 1]])

    def ry(t):
        return np.array([[math.cos(t), 0, math.sin(t)], [0, 1, 0], [-math.sin(t), 0, math.cos(t)]])

    def rx(t):
        return np.array([[1, 0, 0], [0, math.cos(t), -math.sin(t)], [0, math.sin(t), math.cos(t)]])

    q = Q.from_euler321([yaw, pitch, roll])
    np.testing.assert_allclose(sp(q).as_matrix()[0], rz(yaw) @ ry(pitch) @ rx(roll), atol=1e-15)


def test_from_euler321_matches_scipy():
    rng = np.random.default_rng(30)
    ang = np.stack(
        [rng.uniform(-PI, PI, 100), rng.uniform(-PI / 2, PI / 2, 100), rng.uniform(-PI, PI, 100)], -1
    )
    q = Q.from_euler321(ang)
    np.testing.assert_allclose(sign_dist(q, sp_quat(Rotation.from_euler("ZYX", ang))), 0.0, atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), 1.0, atol=1e-15)


def test_to_euler321_matches_scipy():
    rng = np.random.default_rng(31)
    r = Rotation.random(200, random_state=rng)
    q = sp_quat(r)
    ang = Q.to_euler321(q)
    ref = r.as_euler("ZYX")
    np.testing.assert_allclose(wrap(ang - ref), 0.0, atol=1e-12)
    np.testing.assert_allclose(wrap(Q.to_euler321(-q) - ref), 0.0, atol=1e-12)
    assert np.all(np.abs(ang[:, [0, 2]]) <= PI)
    assert np.all(np.abs(ang[:, 1]) <= PI / 2)


def test_euler321_round_trips():
    rng = np.random.default_rng(32)
    ang = _euler_samples(rng, 200)
    np.testing.assert_allclose(wrap(Q.to_euler321(Q.from_euler321(ang)) - ang), 0.0, atol=1e-13)
    q = rand_quats(rng, (200,))
    q2 = Q.from_euler321(Q.to_euler321(q))
    np.testing.assert_allclose(sign_dist(q2, q), 0.0, atol=1e-14)
    # Non-unit input is normalised first.
    np.testing.assert_allclose(Q.to_euler321(3.0 * q), Q.to_euler321(q), atol=1e-14)


@pytest.mark.parametrize("pitch_sign", [1.0, -1.0])
def test_euler321_exact_gimbal_lock(pitch_sign):
    rng = np.random.default_rng(33)
    n = 100
    ang = np.stack([rng.uniform(-PI, PI, n), np.full(n, pitch_sign * PI / 2), rng.uniform(-PI, PI, n)], -1)
    m_in = Rotation.from_euler("ZYX", ang).as_matrix()
    q = sp_quat(Rotation.from_euler("ZYX", ang))
    out = Q.to_euler321(q)
    np.testing.assert_array_equal(out[:, 2], 0.0)  # roll
    np.testing.assert_allclose(out[:, 1], pitch_sign * PI / 2, rtol=0, atol=1e-15)
    assert np.all(np.abs(out[:, 0]) <= PI)
    m_out = Rotation.from_euler("ZYX", out).as_matrix()
    np.testing.assert_allclose(m_out, m_in, atol=1e-14)
    # At lock only yaw ∓ roll is defined: yaw_out = yaw - (±1) roll (mod 2π).
    np.testing.assert_allclose(wrap(out[:, 0] - (ang[:, 0] - pitch_sign * ang[:, 2])), 0.0, atol=1e-13)
    # Also through the module's own from_euler321 input and the negated quaternion.
    out2 = Q.to_euler321(-Q.from_euler321(ang))
    np.testing.assert_allclose(Rotation.from_euler("ZYX", out2).as_matrix(), m_in, atol=1e-14)


# Rotation error (rad) allowed for the Euler round trip near gimbal lock. A stable
# extraction from the quaternion's half angles (yaw ± roll = 2 atan2(x + z, w - y) ±
# 2 atan2(z - x, w + y), pitch = 2 atan2(|(w + y, z - x)|, |(w - y, x + z)|) - π/2)
# achieves ~1e-15 at every distance from the lock, so 1e-12 is a loose bound. Formulas
# through arcsin(R[2, 0]) and atan2 of matrix entries lose accuracy like eps / cos(pitch).
NEAR_LOCK_TOL = 1e-12


@pytest.mark.parametrize("pitch_sign", [1.0, -1.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-7, 1e-6, 1e-3])
def test_euler321_near_gimbal_lock_round_trip(delta, pitch_sign):
    rng = np.random.default_rng(34)
    n = 200
    ang = np.stack(
        [rng.uniform(-PI, PI, n), np.full(n, pitch_sign * (PI / 2 - delta)), rng.uniform(-PI, PI, n)], -1
    )
    r = Rotation.from_euler("ZYX", ang)
    q = sp_quat(r)
    out = Q.to_euler321(q)
    err = rotation_error(q, sp_quat(Rotation.from_euler("ZYX", out)))
    assert np.max(err) <= NEAR_LOCK_TOL, f"worst rotation error {np.max(err):.3e} rad"


# ----------------------------------------------------------------------------------
# scalar-first <-> scalar-last
# ----------------------------------------------------------------------------------


def test_scalar_last_hand_computed():
    np.testing.assert_array_equal(Q.to_scalar_last([1.0, 2.0, 3.0, 4.0]), [2.0, 3.0, 4.0, 1.0])
    np.testing.assert_array_equal(Q.from_scalar_last([2.0, 3.0, 4.0, 1.0]), [1.0, 2.0, 3.0, 4.0])
    batch = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(Q.to_scalar_last(batch), batch[..., [1, 2, 3, 0]])
    np.testing.assert_array_equal(Q.from_scalar_last(batch), batch[..., [3, 0, 1, 2]])


def test_scalar_last_round_trip_and_scipy_boundary():
    rng = np.random.default_rng(40)
    q = rand_quats(rng, (5, 7))
    np.testing.assert_array_equal(Q.from_scalar_last(Q.to_scalar_last(q)), q)
    np.testing.assert_array_equal(Q.to_scalar_last(Q.from_scalar_last(q)), q)
    r = Rotation.random(10, random_state=rng)
    np.testing.assert_array_equal(Q.from_scalar_last(r.as_quat())[:, 0], r.as_quat()[:, 3])
    np.testing.assert_allclose(Q.to_matrix(Q.from_scalar_last(r.as_quat())), r.as_matrix(), atol=1e-15)


# ----------------------------------------------------------------------------------
# canonical
# ----------------------------------------------------------------------------------


def _scipy_canonical(q):
    return np.roll(sp(q).as_quat(canonical=True), 1, axis=-1)


def test_canonical_random_matches_scipy():
    rng = np.random.default_rng(50)
    q = rand_quats(rng, (100,))
    c = Q.canonical(q)
    assert np.all(c[:, 0] > 0.0)
    np.testing.assert_array_equal(Q.canonical(-q), c)
    np.testing.assert_allclose(c, _scipy_canonical(q), atol=1e-16)
    np.testing.assert_allclose(np.abs(c), np.abs(q), atol=0)


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        ([0.0, -1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]),
        ([0.0, 0.0, -1.0, 0.0], [0.0, 0.0, 1.0, 0.0]),
        ([0.0, 0.0, 0.0, -1.0], [0.0, 0.0, 0.0, 1.0]),
        ([0.0, 0.0, 0.6, -0.8], [0.0, 0.0, 0.6, -0.8]),
        ([0.0, 0.0, -0.6, 0.8], [0.0, 0.0, 0.6, -0.8]),
        ([0.0, -0.6, 0.8, 0.0], [0.0, 0.6, -0.8, 0.0]),
        ([0.0, 0.6, -0.8, 0.0], [0.0, 0.6, -0.8, 0.0]),
        ([-0.0, 0.0, -0.0, 1.0], [0.0, 0.0, 0.0, 1.0]),
        ([-1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]),
        ([-S2, 0.0, -S2, 0.0], [S2, 0.0, S2, 0.0]),
    ],
)
def test_canonical_hand_computed_including_w_zero(q, expected):
    c = Q.canonical(q)
    np.testing.assert_array_equal(c, expected)  # -0.0 == 0.0 here
    np.testing.assert_array_equal(Q.canonical(-np.asarray(q)), expected)
    np.testing.assert_allclose(c, _scipy_canonical(q)[0], atol=0)


def test_canonical_w_zero_batch_matches_scipy():
    rng = np.random.default_rng(51)
    n = rand_unit_vectors(rng, (50,))
    n[:10, 0] = 0.0  # first non-zero is y for these
    n[10:15, :2] = 0.0
    n /= np.linalg.norm(n, axis=-1, keepdims=True)
    q = np.concatenate([np.zeros((50, 1)), n], axis=-1)
    c = Q.canonical(q)
    np.testing.assert_allclose(c, _scipy_canonical(q), atol=1e-16)
    np.testing.assert_array_equal(Q.canonical(-q), c)


# ----------------------------------------------------------------------------------
# angle_between
# ----------------------------------------------------------------------------------


def test_angle_between_hand_computed():
    n = np.array([2.0, -1.0, 2.0]) / 3.0
    q = np.concatenate([[math.cos(0.15)], math.sin(0.15) * n])  # 0.3 rad about n
    np.testing.assert_allclose(Q.angle_between(IDENT, q), 0.3, rtol=1e-15)
    np.testing.assert_allclose(Q.angle_between(q, IDENT), 0.3, rtol=1e-15)
    np.testing.assert_allclose(Q.angle_between(IDENT, -q), 0.3, rtol=1e-15)
    np.testing.assert_allclose(Q.angle_between(IDENT, I_), PI, rtol=1e-15)
    np.testing.assert_allclose(Q.angle_between(I_, J_), PI, rtol=1e-15)  # i⁻¹ j = -k: π
    np.testing.assert_allclose(Q.angle_between([S2, 0, 0, S2], [S2, 0, 0, -S2]), PI, rtol=1e-15)
    np.testing.assert_allclose(Q.angle_between([S2, 0, 0, S2], K_), PI / 2, rtol=1e-15)
    np.testing.assert_allclose(Q.angle_between([S2, 0, 0, S2], IDENT), PI / 2, rtol=1e-15)
    np.testing.assert_allclose(Q.angle_between(q, q), 0.0, atol=1e-15)
    # Tiny angle stays accurate (arccos of the dot product would not).
    h = 5e-11
    np.testing.assert_allclose(
        Q.angle_between(IDENT, [math.cos(h), 0.0, math.sin(h), 0.0]), 2 * h, rtol=1e-15
    )


def test_angle_between_properties_and_scipy():
    rng = np.random.default_rng(60)
    p = rand_quats(rng, (100,))
    q = rand_quats(rng, (100,))
    a = Q.angle_between(p, q)
    np.testing.assert_allclose(a, (sp(p).inv() * sp(q)).magnitude(), atol=1e-14)
    np.testing.assert_allclose(Q.angle_between(q, p), a, atol=1e-15)
    np.testing.assert_allclose(Q.angle_between(-p, q), a, atol=1e-15)
    np.testing.assert_allclose(Q.angle_between(p, -q), a, atol=1e-15)
    assert np.all((a >= 0.0) & (a <= PI))
    # Invariant under a common left rotation.
    g = rand_quats(rng, (100,))
    np.testing.assert_allclose(Q.angle_between(sp_quat(sp(g) * sp(p)), sp_quat(sp(g) * sp(q))), a, atol=1e-13)


# ----------------------------------------------------------------------------------
# random
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (7,), (3, 4)])
def test_random_shape_and_unit(shape):
    q = Q.random(np.random.default_rng(70), shape)
    assert q.shape == (*shape, 4)
    np.testing.assert_allclose(np.sqrt(np.sum(q * q, axis=-1)), 1.0, atol=1e-15)
    assert np.all(np.isfinite(q))


def test_random_default_shape_and_seeding():
    assert Q.random(np.random.default_rng(0)).shape == (4,)
    np.testing.assert_array_equal(
        Q.random(np.random.default_rng(71), (10,)), Q.random(np.random.default_rng(71), (10,))
    )
    assert not np.allclose(
        Q.random(np.random.default_rng(71), (10,)), Q.random(np.random.default_rng(72), (10,))
    )


def test_random_uniform_on_so3():
    n = 20_000
    q = Q.random(np.random.default_rng(73), (n,))
    # Rotation angle θ = 2 atan2(|u|, |w|) has density (1 - cos θ)/π on [0, π].
    theta = 2.0 * np.arctan2(np.linalg.norm(q[:, 1:], axis=-1), np.abs(q[:, 0]))
    mean = PI / 2 + 2 / PI
    var = PI**2 / 3 + 2 - mean**2
    assert abs(theta.mean() - mean) < 5.0 * math.sqrt(var / n)
    ks = stats.kstest(theta, lambda t: (t - np.sin(t)) / PI)
    assert ks.pvalue > 1e-3
    # Haar measure: E[R] = 0, and each entry has variance 1/3.
    m = sp(q).as_matrix()
    assert np.max(np.abs(m.mean(axis=0))) < 5.0 * math.sqrt(1.0 / (3 * n))
    np.testing.assert_allclose(m.var(axis=0), 1.0 / 3.0, atol=0.02)
    # Rotation axis (of the canonical form) isotropic: E[n] = 0.
    axis = q[:, 1:] * np.sign(q[:, :1])
    axis /= np.linalg.norm(axis, axis=-1, keepdims=True)
    assert np.max(np.abs(axis.mean(axis=0))) < 5.0 * math.sqrt(1.0 / (3 * n))


# ----------------------------------------------------------------------------------
# Shapes, broadcasting and input validation for every function
# ----------------------------------------------------------------------------------

LEADING_SHAPES = [(), (6,), (2, 3)]


def _inputs(rng, lead, kind):
    if kind == "q":
        q = rand_quats(rng, lead)
        return q
    if kind == "q+":  # w > 0 (log's principal branch)
        q = rand_quats(rng, lead)
        return q * np.where(q[..., :1] < 0, -1.0, 1.0)
    if kind == "g":  # non-unit quaternion
        return rng.standard_normal((*lead, 4)) + np.array([3.0, 0.0, 0.0, 0.0])
    if kind == "v":
        return rng.standard_normal((*lead, 3))
    if kind == "small_v":  # |v| < π/2
        return rand_unit_vectors(rng, lead) * rng.uniform(0, 1.5, (*lead, 1))
    if kind == "euler":
        return _euler_samples(rng, int(np.prod(lead, dtype=int)) or 1).reshape((*lead, 3))
    if kind == "m":
        return (
            Rotation.random(int(np.prod(lead, dtype=int)), random_state=rng)
            .as_matrix()
            .reshape((*lead, 3, 3))
        )
    raise AssertionError(kind)


def _flat(a, core):
    a = np.asarray(a)
    return a.reshape((-1, *a.shape[a.ndim - core :]))


# name: (function, input kinds, reference on flattened (N, ...) inputs, output core shape,
#        compare up to quaternion sign)
UNARY = {
    "conjugate": (Q.conjugate, "g", lambda q: q * [1, -1, -1, -1], (4,), False),
    "norm": (Q.norm, "g", lambda q: np.sqrt(np.sum(q * q, -1)), (), False),
    "normalize": (Q.normalize, "g", lambda q: q / np.sqrt(np.sum(q * q, -1, keepdims=True)), (4,), False),
    "inverse": (
        Q.inverse,
        "g",
        lambda q: q * [1, -1, -1, -1] / np.sum(q * q, -1, keepdims=True),
        (4,),
        False,
    ),
    "log": (Q.log, "q+", lambda q: 0.5 * sp(q).as_rotvec(), (3,), False),
    "as_rotvec": (Q.as_rotvec, "q", lambda q: sp(q).as_rotvec(), (3,), False),
    "to_matrix": (Q.to_matrix, "q", lambda q: sp(q).as_matrix(), (3, 3), False),
    "to_euler321": (Q.to_euler321, "q", lambda q: sp(q).as_euler("ZYX"), (3,), False),
    "to_scalar_last": (Q.to_scalar_last, "g", lambda q: q[:, [1, 2, 3, 0]], (4,), False),
    "from_scalar_last": (Q.from_scalar_last, "g", lambda q: q[:, [3, 0, 1, 2]], (4,), False),
    "canonical": (Q.canonical, "q", lambda q: np.roll(sp(q).as_quat(canonical=True), 1, -1), (4,), False),
    "exp": (Q.exp, "small_v", lambda v: np.roll(Rotation.from_rotvec(2 * v).as_quat(), 1, -1), (4,), True),
    "from_rotvec": (
        Q.from_rotvec,
        "v",
        lambda v: np.roll(Rotation.from_rotvec(v).as_quat(), 1, -1),
        (4,),
        True,
    ),
    "from_euler321": (
        Q.from_euler321,
        "euler",
        lambda a: np.roll(Rotation.from_euler("ZYX", a).as_quat(), 1, -1),
        (4,),
        True,
    ),
    "from_matrix": (
        Q.from_matrix,
        "m",
        lambda m: np.roll(Rotation.from_matrix(m).as_quat(), 1, -1),
        (4,),
        True,
    ),
}

IN_CORE = {"q": 1, "q+": 1, "g": 1, "v": 1, "small_v": 1, "euler": 1, "m": 2}


def _check(out, expected, up_to_sign, name):
    if name == "to_euler321":
        np.testing.assert_allclose(wrap(out - expected), 0.0, atol=1e-12)
    elif up_to_sign:
        np.testing.assert_allclose(sign_dist(out, expected), 0.0, atol=1e-14)
    else:
        np.testing.assert_allclose(out, expected, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("lead", LEADING_SHAPES, ids=["1d", "2d", "3d"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_shapes(name, lead):
    func, kind, ref, core, up_to_sign = UNARY[name]
    rng = np.random.default_rng(80)
    x = _inputs(rng, lead, kind)
    out = np.asarray(func(x))
    assert out.shape == (*lead, *core)
    expected = np.asarray(ref(_flat(x, IN_CORE[kind]))).reshape(out.shape)
    _check(out, expected, up_to_sign, name)


BINARY = {
    "multiply": (Q.multiply, 4, lambda p, q: np.roll((sp(p) * sp(q)).as_quat(), 1, -1), (4,), True),
    "angle_between": (Q.angle_between, 4, lambda p, q: (sp(p).inv() * sp(q)).magnitude(), (), False),
    "rotate": (Q.rotate, 3, lambda q, v: sp(q).apply(v), (3,), False),
    "rotate_inverse": (Q.rotate_inverse, 3, lambda q, v: sp(q).inv().apply(v), (3,), False),
}

BROADCAST_CASES = [
    ((), ()),
    ((6,), (6,)),
    ((2, 3), (2, 3)),
    ((5, 1), (1, 3)),
    ((4,), ()),
    ((), (4,)),
    ((2, 1, 3), (5, 1)),
]


@pytest.mark.parametrize(("lead_a", "lead_b"), BROADCAST_CASES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_shapes_and_broadcasting(name, lead_a, lead_b):
    func, size_b, ref, core, up_to_sign = BINARY[name]
    rng = np.random.default_rng(81)
    a = rand_quats(rng, lead_a)
    b = rand_quats(rng, lead_b) if size_b == 4 else rng.standard_normal((*lead_b, 3))
    out = np.asarray(func(a, b))
    lead = np.broadcast_shapes(lead_a, lead_b)
    assert out.shape == (*lead, *core)
    ab, bb = np.broadcast_to(a, (*lead, 4)).copy(), np.broadcast_to(b, (*lead, size_b)).copy()
    expected = np.asarray(ref(_flat(ab, 1), _flat(bb, 1))).reshape(out.shape)
    _check(out, expected, up_to_sign, name)


def test_binary_incompatible_shapes_raise():
    with pytest.raises(ValueError):
        Q.multiply(np.ones((2, 4)), np.ones((3, 4)))
    with pytest.raises(ValueError):
        Q.rotate(np.ones((2, 4)), np.ones((3, 3)))


QUAT_FUNCS = [
    Q.conjugate,
    Q.norm,
    Q.normalize,
    Q.inverse,
    Q.log,
    Q.as_rotvec,
    Q.to_matrix,
    Q.to_euler321,
    Q.to_scalar_last,
    Q.from_scalar_last,
    Q.canonical,
]
VEC_FUNCS = [Q.exp, Q.from_rotvec, Q.from_euler321]


@pytest.mark.parametrize("bad_shape", [(3,), (5,), (2, 3), (2, 5), (1, 2, 7)])
@pytest.mark.parametrize("func", QUAT_FUNCS, ids=lambda f: f.__name__)
def test_quaternion_functions_reject_wrong_last_dim(func, bad_shape):
    with pytest.raises(ValueError, match=re.escape(str(bad_shape))):
        func(np.ones(bad_shape))


@pytest.mark.parametrize("bad_shape", [(4,), (2,), (5, 4), (2, 2, 1)])
@pytest.mark.parametrize("func", VEC_FUNCS, ids=lambda f: f.__name__)
def test_vector_functions_reject_wrong_last_dim(func, bad_shape):
    with pytest.raises(ValueError, match=re.escape(str(bad_shape))):
        func(np.ones(bad_shape))


@pytest.mark.parametrize("func", [*QUAT_FUNCS, *VEC_FUNCS], ids=lambda f: f.__name__)
def test_scalar_input_rejected(func):
    with pytest.raises(ValueError, match=re.escape("()")):
        func(1.0)


@pytest.mark.parametrize(
    ("args", "bad_shape"),
    [
        ((np.ones(3), np.ones(4)), (3,)),
        ((np.ones(4), np.ones(5)), (5,)),
        ((np.ones((2, 5)), np.ones((2, 4))), (2, 5)),
    ],
)
@pytest.mark.parametrize("func", [Q.multiply, Q.angle_between], ids=lambda f: f.__name__)
def test_binary_quaternion_functions_reject_wrong_last_dim(func, args, bad_shape):
    with pytest.raises(ValueError, match=re.escape(str(bad_shape))):
        func(*args)


@pytest.mark.parametrize(
    ("q", "v", "bad_shape"),
    [
        (np.ones(3), np.ones(3), (3,)),
        (np.array([1.0, 0, 0, 0]), np.ones(4), (4,)),
        (np.array([[1.0, 0, 0, 0]]), np.ones((1, 2)), (1, 2)),
    ],
)
@pytest.mark.parametrize("func", [Q.rotate, Q.rotate_inverse], ids=lambda f: f.__name__)
def test_rotate_functions_reject_wrong_last_dim(func, q, v, bad_shape):
    with pytest.raises(ValueError, match=re.escape(str(bad_shape))):
        func(q, v)


@pytest.mark.parametrize("bad_shape", [(3,), (3, 4), (4, 3), (2, 2), (5, 3, 2)])
def test_from_matrix_rejects_wrong_shape(bad_shape):
    with pytest.raises(ValueError, match=re.escape(str(bad_shape))):
        Q.from_matrix(np.ones(bad_shape))


def test_list_inputs_accepted():
    np.testing.assert_array_equal(Q.multiply([1, 0, 0, 0], [0, 1, 0, 0]), [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_allclose(Q.rotate([1, 0, 0, 0], [1, 2, 3]), [1.0, 2.0, 3.0])
    assert Q.to_matrix([[1, 0, 0, 0]]).dtype == np.float64

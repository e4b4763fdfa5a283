"""Tests for :mod:`rigidrot_gym.physics.rotation.elliptic` against independent references.

References: scipy.special (elliprf, elliprj, ellipk, ellipkinc, ellipj), scipy's adaptive
quadrature of the defining integrals, closed forms at m = 0 and m = 1, and a few values
computed offline with mpmath 1.4.1 at 40 significant digits (``mp.ellipfun``,
``mp.elliprj``) where scipy itself is inaccurate: scipy's ellipj switches to a
first-order expansion in 1 − m for m > 1 − 1e-9 that is wrong beyond |u| ≈ 5, and its
elliprj loses digits when p ≪ x, y, z. Every function is also compiled with numba and
checked against its numpy-mode result.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.special as sc
from numba import njit
from scipy.integrate import quad

from rigidrot_gym.physics.rotation import elliptic as E

pytestmark = pytest.mark.filterwarnings("error")

RTOL = 1e-13


def rel_err(a, b):
    return np.max(np.abs(np.asarray(a) - b) / np.abs(b))


@pytest.fixture
def rng():
    return np.random.default_rng(20240611)


def random_m(rng, n):
    """Parameters spread over [0, 1] with clusters near 0 and near 1 (down to 1 − 1e-12)."""
    return np.concatenate(
        [
            rng.uniform(0.0, 1.0, n),
            10.0 ** -rng.uniform(1.0, 16.0, n),
            1.0 - 10.0 ** -rng.uniform(1.0, 12.0, n),
            [0.0, 1.0 - 1e-12],
        ]
    )


# ----------------------------------------------------------------------------------
# Carlson's integrals
# ----------------------------------------------------------------------------------


def test_carlson_rf_matches_scipy(rng):
    x, y, z = rng.uniform(0.0, 10.0, (3, 2000))
    x[:500] *= 10.0 ** -rng.uniform(0.0, 300.0, 500)
    x[500:600] = 0.0
    assert rel_err(E.carlson_rf(x, y, z), sc.elliprf(x, y, z)) < RTOL


def test_carlson_rf_special_values():
    assert E.carlson_rf(0.0, 1.0, 1.0) == pytest.approx(np.pi / 2, rel=1e-15)
    assert E.carlson_rf(2.0, 2.0, 2.0) == pytest.approx(2.0**-0.5, rel=1e-15)
    assert E.carlson_rf(0.0, 0.0, 1.0) == np.inf


def test_carlson_rj_matches_scipy(rng):
    x, y, z = rng.uniform(0.0, 10.0, (3, 2000))
    x[:500] *= 10.0 ** -rng.uniform(0.0, 300.0, 500)
    x[500:600] = 0.0
    p = rng.uniform(0.01, 100.0, 2000)
    assert rel_err(E.carlson_rj(x, y, z, p), sc.elliprj(x, y, z, p)) < RTOL


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((0.5, 1.5, 2.0, 1e-8), 21.839524675301593),
        ((1e-3, 0.7, 4.0, 1e-6), 232.77577647279244),
        ((0.0, 1.0, 3.0, 1e-10), 272067.72021512775),
    ],
)
def test_carlson_rj_small_p_matches_mpmath(args, expected):
    # 1 + eₘ is formed without cancellation, so p ≪ x, y, z keeps full precision.
    assert E.carlson_rj(*args) == pytest.approx(expected, rel=1e-15)


def test_carlson_rj_special_values():
    assert E.carlson_rj(1.0, 1.0, 1.0, 1.0) == pytest.approx(1.0, rel=1e-15)
    # R_J(0, 1, 1, 1) = 3π/4 (DLMF 19.20.18 with R_D(0, 1, 1) = 3π/4).
    assert E.carlson_rj(0.0, 1.0, 1.0, 1.0) == pytest.approx(0.75 * np.pi, rel=1e-15)


# ----------------------------------------------------------------------------------
# Legendre integrals
# ----------------------------------------------------------------------------------


def test_ellipk_matches_scipy(rng):
    m = random_m(rng, 500)
    assert rel_err(E.ellipk(m), sc.ellipk(m)) < RTOL
    assert E.ellipk(0.0) == pytest.approx(np.pi / 2, rel=1e-16)
    assert E.ellipk(1.0) == np.inf


def test_ellipk_mc_resolves_tiny_complement():
    # K(m) ≈ ln(4/√mc) for mc → 0; 1 − mc would round to 1 and give +inf.
    mc = 1e-30
    assert E.ellipk_mc(mc) == pytest.approx(sc.ellipkm1(mc), rel=RTOL)


def test_ellipf_matches_scipy_over_several_periods(rng):
    m = random_m(rng, 500)
    phi = rng.uniform(-20.0, 20.0, m.size)
    assert rel_err(E.ellipf(phi, m), sc.ellipkinc(phi, m)) < RTOL


def test_ellipf_quasi_periodic(rng):
    m = rng.uniform(0.0, 1.0, 50)
    phi = rng.uniform(-1.5, 1.5, 50)
    for j in (-3, 1, 4):
        assert np.allclose(E.ellipf(phi + j * np.pi, m), E.ellipf(phi, m) + 2 * j * E.ellipk(m), rtol=RTOL)


def test_ellipf_at_m_one_is_atanh():
    phi = np.linspace(-1.5, 1.5, 31)
    assert np.allclose(E.ellipf(phi, 1.0), np.arctanh(np.sin(phi)), rtol=RTOL, atol=1e-15)


def pi_from_scipy_carlson(n, phi, m):
    """Π(n; φ|m) from scipy's R_F, R_J (DLMF 19.25.14) and the quasi-periodic extension."""
    j = np.floor(phi / np.pi + 0.5)
    r = phi - j * np.pi
    s, c = np.sin(r), np.cos(r)
    d2 = 1.0 - m * s * s
    partial = s * sc.elliprf(c * c, d2, 1.0) + n / 3.0 * s**3 * sc.elliprj(c * c, d2, 1.0, 1.0 - n * s * s)
    complete = sc.ellipk(m) + n / 3.0 * sc.elliprj(0.0, 1.0 - m, 1.0, 1.0 - n)
    return partial + 2.0 * j * complete


def test_ellippi_matches_scipy_carlson(rng):
    m = random_m(rng, 300)
    size = m.size
    # For n ≪ −100 the two terms of DLMF 19.25.14 cancel and both sides lose digits in
    # proportion to √(1 − n); the quadrature test below covers n = −40.
    n = np.concatenate([-(10.0 ** rng.uniform(-3.0, 2.0, size - 100)), rng.uniform(0.0, 0.9, 100)])
    phi = rng.uniform(-20.0, 20.0, size)
    assert rel_err(E.ellippi(n, phi, m), pi_from_scipy_carlson(n, phi, m)) < RTOL


@pytest.mark.parametrize(
    ("n", "phi", "m"),
    [
        (-0.5, 0.7, 0.3),
        (-3.0, 1.4, 0.9),
        (0.6, -1.2, 0.5),
        (-0.2, 9.5, 0.7),
        (-40.0, -7.0, 0.999),
        (0.0, 4.0, 0.2),
    ],
)
def test_ellippi_matches_quadrature(n, phi, m):
    def integrand(theta):
        s2 = np.sin(theta) ** 2
        return 1.0 / ((1.0 - n * s2) * np.sqrt(1.0 - m * s2))

    # Split at the peaks of the integrand, θ = π/2 + jπ.
    peaks = [p for p in np.pi / 2 + np.pi * np.arange(-4, 4) if min(0.0, phi) < p < max(0.0, phi)]
    edges = np.sort(np.concatenate([[0.0, phi], peaks]))
    total = sum(
        quad(integrand, a, b, epsabs=0.0, epsrel=1e-13, limit=200)[0] for a, b in itertools.pairwise(edges)
    )
    assert E.ellippi(n, phi, m) == pytest.approx(np.sign(phi) * total, rel=1e-12)


def test_ellippi_with_n_zero_is_ellipf(rng):
    m = rng.uniform(0.0, 1.0, 50)
    phi = rng.uniform(-10.0, 10.0, 50)
    assert rel_err(E.ellippi(0.0, phi, m), E.ellipf(phi, m)) < RTOL


# ----------------------------------------------------------------------------------
# Jacobi elliptic functions
# ----------------------------------------------------------------------------------


def test_ellipj_matches_scipy(rng):
    # scipy's ellipj is accurate only for m ≤ 1 − 1e-9 (see the module docstring).
    m = np.concatenate([rng.uniform(0.0, 1.0, 1000), 10.0 ** -rng.uniform(1.0, 16.0, 300)])
    m = np.concatenate([m, 1.0 - 10.0 ** -rng.uniform(1.0, 8.5, 300), [0.0]])
    u = rng.uniform(-100.0, 100.0, m.size)
    ours = E.ellipj(u, m)
    ref = sc.ellipj(u, m)
    # Relative to the phase: u carries an inherent |u|·2⁻⁵³ uncertainty.
    for a, b in zip(ours, ref, strict=True):
        assert np.max(np.abs(a - b) / (1.0 + np.abs(u))) < 1e-14


def test_ellipj_small_argument_relative_accuracy(rng):
    m = random_m(rng, 300)
    m = m[m < 1.0 - 1e-9]
    u = rng.uniform(-2.0, 2.0, m.size)
    sn, cn, dn, am = E.ellipj(u, m)
    ref = sc.ellipj(u, m)
    assert rel_err(sn, ref[0]) < RTOL
    assert rel_err(cn, ref[1]) < RTOL
    assert rel_err(dn, ref[2]) < RTOL
    assert rel_err(am, ref[3]) < RTOL


@pytest.mark.parametrize(
    ("u", "expected"),
    [
        (5.0, (0.9999092042628449, 0.013475282202772691, 0.013475282239870108)),
        (20.0, (0.999999998161384, -6.064018547687579e-05, 6.064843009134284e-05)),
        (37.5, (-0.9999986284783858, -0.0016562129534691522, 0.0016562132553551631)),
        (100.0, (-0.9999999535582252, -0.0003047680221962861, 0.0003047696627474942)),
        (-70.25, (-0.9999999874349274, 0.00015852490410755177, 0.00015852805808487543)),
    ],
)
def test_ellipj_near_m_one_matches_mpmath(u, expected):
    # m = 1 − 1e-12: K ≈ 15.2, so these span several periods.
    sn, cn, dn, _ = E.ellipj(u, 1.0 - 1e-12)
    assert sn == pytest.approx(expected[0], rel=1e-15)
    assert cn == pytest.approx(expected[1], abs=1e-15)
    assert dn == pytest.approx(expected[2], abs=1e-15)


def test_ellipj_m_zero_and_one():
    u = np.linspace(-30.0, 30.0, 121)
    sn, cn, dn, am = E.ellipj(u, 0.0)
    assert np.array_equal(sn, np.sin(u)) and np.array_equal(cn, np.cos(u))
    assert np.array_equal(dn, np.ones_like(u)) and np.array_equal(am, u)
    sn, cn, dn, am = E.ellipj(u, 1.0)
    assert np.allclose(sn, np.tanh(u), rtol=1e-15, atol=0.0)
    assert np.allclose(cn, 1.0 / np.cosh(u), rtol=1e-14, atol=0.0)
    assert np.array_equal(cn, dn)
    assert np.allclose(am, np.arctan(np.sinh(u)), rtol=1e-15, atol=0.0)


def test_ellipj_amplitude_is_continuous(rng):
    m = random_m(rng, 100)
    u = rng.uniform(-30.0, 30.0, m.size)
    k = E.ellipk(m)
    sn, cn, dn, am = E.ellipj(u, m)
    for j in (-2, 1, 3):
        sn_j, cn_j, dn_j, am_j = E.ellipj(u + 2 * j * k, m)
        scale = 1.0 + np.abs(u) + np.abs(j) * k
        assert np.max(np.abs(am_j - am - j * np.pi) / scale) < 1e-14
        assert np.max(np.abs(sn_j - (-1) ** j * sn) / scale) < 1e-14
        assert np.max(np.abs(cn_j - (-1) ** j * cn) / scale) < 1e-14
        assert np.max(np.abs(dn_j - dn) / scale) < 1e-14
    # am is increasing: dam/du = dn > 0.
    grid = np.linspace(-40.0, 40.0, 4001)
    assert np.all(np.diff(E.ellipj(grid, 1.0 - 1e-12)[3]) > 0.0)


def test_ellipj_inverts_ellipf(rng):
    m = rng.uniform(0.0, 0.99, 200)
    phi = rng.uniform(-20.0, 20.0, 200)
    am = E.ellipj(E.ellipf(phi, m), m)[3]
    assert np.max(np.abs(am - phi)) < 1e-13


# m = 1 − 1e-30 (passed as m = 1.0, mc = 1e-30; K ≈ 35.93): mpmath 1.3.0 at 50 digits,
# (sn, cn, dn) at u spanning the saddle of the period (cn, dn ~ √mc near u = K).
NEAR_ONE = [
    (17.9, (0.99999999999999943, 3.3663461393475177e-8, 3.3663461393475192e-8)),
    (34.9, (1.0, 1.2142607960319646e-15, 1.5730318753223599e-15)),
    (35.5, (1.0, 4.3798756131371499e-16, 1.0917110899251391e-15)),
    (50.0, (1.0, -6.4808819107299831e-10, 6.4808819107376981e-10)),
    (71.0, (0.69114339175707315, -0.72271765720129525, 0.72271765720129525)),
    (-20.0, (-0.99999999999999999, 4.122307244877055e-9, 4.1223072448771763e-9)),
]


@pytest.mark.parametrize(("u", "expected"), NEAR_ONE)
def test_ellipj_cn_dn_relative_accuracy_near_m_one(u, expected):
    # cn and dn to relative accuracy, however small: a cos of the amplitude (≈ π/2 here)
    # would give them only to 1e-16 absolute. Relative to the phase: |u|·2⁻⁵³/(K − |r|).
    sn, cn, dn, am = E.ellipj_mc(u, 1.0, 1e-30)
    assert sn == pytest.approx(expected[0], rel=1e-15)
    assert cn == pytest.approx(expected[1], rel=1e-13)
    assert dn == pytest.approx(expected[2], rel=1e-13)
    j, s, c, dn_r = E.ellipj_reduced_mc(u, 1.0, 1e-30)
    assert j == np.round(u / (2.0 * 35.925070756030576)) and c >= 0.0 and dn_r == dn
    assert (-1.0) ** j * s == sn and (-1.0) ** j * c == cn
    assert am == pytest.approx(j * np.pi + np.arctan2(s, c), rel=1e-15)


def test_ellipj_reduced_matches_ellipj(rng):
    m = random_m(rng, 200)
    u = rng.uniform(-60.0, 60.0, m.size)
    sn, cn, dn, am = E.ellipj(u, m)
    j, s, c, dn_r = E.ellipj_reduced_mc(u, m, 1.0 - m)
    assert np.all(c >= 0.0) and np.all(np.abs(s) <= 1.0) and np.array_equal(dn, dn_r)
    assert np.max(np.abs(am - j * np.pi)) <= np.pi / 2 + 1e-13
    # For m < ½, s and c are sin and cos of am − jπ: the phase's own |u|·2⁻⁵³.
    scale = 1.0 + np.abs(u)
    assert np.max(np.abs((-1.0) ** j * s - sn) / scale) < 1e-15
    assert np.max(np.abs((-1.0) ** j * c - cn) / scale) < 1e-15


def _reduced(phi):
    j, r = E.reduce_amplitude(phi)
    return j, np.sin(r), np.cos(r)


def test_ellipfe_reduced_matches_scipy(rng):
    m = np.concatenate([rng.uniform(0.0, 1.0, 300), 1.0 - 10.0 ** -rng.uniform(1.0, 8.0, 100)])
    phi = rng.uniform(-10.0, 10.0, m.size)
    f, e = E.ellipfe_reduced_mc(0.0, *_reduced(phi), 1.0 - m)
    scale = 1.0 + np.abs(phi) * sc.ellipk(m)
    assert np.max(np.abs(f - sc.ellipkinc(phi, m)) / scale) < 1e-14
    assert np.max(np.abs(e - sc.ellipeinc(phi, m)) / (1.0 + np.abs(phi))) < 1e-14


@pytest.mark.parametrize(
    ("n", "phi", "m"), [(-0.5, 1.2, 0.3), (-3.0, 4.0, 0.9), (0.7, -2.5, 0.5), (-40.0, 7.1, 1.0 - 1e-6)]
)
def test_ellipfe_reduced_matches_quadrature(n, phi, m):
    _, e_n = E.ellipfe_reduced_mc(n, *_reduced(phi), 1.0 - m)

    def integrand(t):
        # √(1 − m sin²t) as |(cos t, √(1 − m) sin t)|, without cancellation.
        return np.hypot(np.cos(t), np.sqrt(1.0 - m) * np.sin(t)) / (1.0 - n * np.sin(t) ** 2)

    # Split at the odd multiples of π/2, where the integrand has a kink of width √(1 − m);
    # it is even, so E_n(−φ) = −E_n(φ).
    kinks = np.pi * (np.arange(5) + 0.5)
    edges = np.concatenate([[0.0], kinks[kinks < abs(phi)], [abs(phi)]])
    pieces = [quad(integrand, a, b, epsabs=1e-15, epsrel=1e-13)[0] for a, b in itertools.pairwise(edges)]
    ref = np.sign(phi) * sum(pieces)
    assert e_n == pytest.approx(ref, rel=1e-13)


@pytest.mark.parametrize(
    ("n", "c", "f_ref", "e_ref"),
    [
        (0.0, 1e-20, 35.925060756030576, 1.0),
        (0.0, 1e-8, 19.113827924512308, 0.99999999999999995),
        (-0.5, 1e-20, 35.925060756030576, 0.8704197513671032),
        (-3.0, 1e-8, 19.113827924512308, 0.6045997880780726),
        (-3.0, 0.3, 1.8738202425274145, 0.59267425134331497),
    ],
)
def test_ellipfe_reduced_near_m_one_matches_mpmath(n, c, f_ref, e_ref):
    # m = 1 − 1e-30, φ = atan2(√(1 − c²), c) just below π/2 (mpmath 1.3.0, 50 digits):
    # F has slope ~1e15 in φ there, so it is only accurate from cos φ itself.
    f, e_n = E.ellipfe_reduced_mc(n, 0.0, np.sqrt(1.0 - c * c), c, 1e-30)
    assert f == pytest.approx(f_ref, rel=1e-15)
    # E_n ~ 1 is the difference of two terms ~ K: about K·2⁻⁵³ absolute.
    assert e_n == pytest.approx(e_ref, abs=2e-14)


# ----------------------------------------------------------------------------------
# Both modes run the same source
# ----------------------------------------------------------------------------------


@njit(error_model="numpy", cache=False)
def _compiled(x, y, z, p, phi, n, m):
    out = np.empty((x.size, 16))
    for i in range(x.size):
        out[i, 0] = E.carlson_rf(x[i], y[i], z[i])
        out[i, 1] = E.carlson_rj(x[i], y[i], z[i], p[i])
        out[i, 2] = E.ellipk(m[i])
        out[i, 3] = E.ellipf(phi[i], m[i])
        out[i, 4] = E.ellippi(n[i], phi[i], m[i])
        sn, cn, dn, am = E.ellipj(phi[i], m[i])
        out[i, 5], out[i, 6], out[i, 7], out[i, 8] = sn, cn, dn, am
        out[i, 9] = E.ellipf(phi[i], m[i])
        j, r = E.reduce_amplitude(phi[i])
        out[i, 10], out[i, 11] = E.ellipfe_reduced_mc(n[i], j, np.sin(r), np.cos(r), 1.0 - m[i])
        out[i, 12], out[i, 13], out[i, 14], out[i, 15] = E.ellipj_reduced_mc(phi[i], m[i], 1.0 - m[i])
    return out


@pytest.mark.slow
def test_compiled_and_numpy_modes_agree(rng):
    size = 300
    x, y, z = rng.uniform(0.0, 5.0, (3, size))
    p = rng.uniform(0.1, 5.0, size)
    phi = rng.uniform(-20.0, 20.0, size)
    n = -(10.0 ** rng.uniform(-2.0, 2.0, size))
    m = np.concatenate([rng.uniform(0.0, 1.0, size - 4), [0.0, 1e-300, 1.0 - 1e-12, 1.0]])
    phi[-1] = 1.3  # F and Π at m = 1 are finite only for |φ| < π/2
    compiled = _compiled(x, y, z, p, phi, n, m)
    sn, cn, dn, am = E.ellipj(phi, m)
    numpy_mode = np.stack(
        [
            E.carlson_rf(x, y, z),
            E.carlson_rj(x, y, z, p),
            E.ellipk(m),
            E.ellipf(phi, m),
            E.ellippi(n, phi, m),
            sn,
            cn,
            dn,
            am,
            E.ellipf(phi, m),
            *E.ellipfe_reduced_mc(n, *_reduced(phi), 1.0 - m),
            *E.ellipj_reduced_mc(phi, m, 1.0 - m),
        ],
        axis=-1,
    )
    finite = np.isfinite(numpy_mode)
    assert np.array_equal(finite, np.isfinite(compiled))
    scale = np.maximum(1.0, np.abs(numpy_mode[finite]))
    assert np.max(np.abs(compiled[finite] - numpy_mode[finite]) / scale) < 1e-14

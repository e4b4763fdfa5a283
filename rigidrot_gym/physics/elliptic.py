"""Elliptic integrals and Jacobi elliptic functions, component-wise (see :mod:`rigidrot_gym.physics.jit`).

Every function takes floats (inside compiled kernels) or equally shaped numpy arrays
(vectorised numpy path) and never calls scipy. The parameter is m = k² ∈ [0, 1]. The
``*_mc`` variants take the complementary parameter mc = 1 − m instead (and, for
:func:`ellipj_mc`, m as well): pass it when it is known more accurately than 1 − m,
e.g. near m = 1, where 1 − m would lose the digits that set the period.

* Carlson's symmetric integrals R_F and R_J by the duplication algorithm of
  B. C. Carlson, Numer. Algorithms 10 (1995) 13–26, to full double precision.
* K(m) by the arithmetic-geometric mean, F(φ|m) and Π(n; φ|m) from R_F and R_J
  (DLMF 19.25.5, 19.25.14), for any real φ via the quasi-periodic extension
  F(φ + jπ|m) = F(φ|m) + 2jK(m), Π(n; φ + jπ|m) = Π(n; φ|m) + 2jΠ(n|m).
* sn, cn, dn and the continuous amplitude am by the descending Landen (AGM) scheme
  of Abramowitz & Stegun 16.4, with each backward step written as an ``atan2`` whose
  arguments carry no cancellation (accurate up to m = 1 − 1e-16; m = 1 is exact).
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.physics.jit import all_true, any_true, jitable, select

_EPS = 2.0**-53
# Carlson (1995): stop duplicating when 4⁻ⁿ Q < |Aₙ| with Q = (3r)^(-1/6) max|A₀ − x|
# for R_F and (r/4)^(-1/6) max|A₀ − x| for R_J; r = 2⁻⁵³ gives full double precision.
_RF_Q = (3.0 * _EPS) ** (-1.0 / 6.0)
_RJ_Q = (0.25 * _EPS) ** (-1.0 / 6.0)
# Caps on the loops, far above what any finite argument needs (about 30 duplications
# for arguments spanning 1e-300..1, 15 AGM steps for mc = 1e-300); they only stop
# loops whose exact answer is infinite (two zero arguments, m = 1).
_MAX_DUPLICATIONS = 80
_MAX_AGM = 40
# Below this |e|, R_C(1, 1 + e) uses its Maclaurin series; the next term e⁶/13 < 1e-19.
_RC_SERIES = 1e-3
# Relative gap |a − b|/a at which the AGM for K stops: the mean (a + b)/2 is then within
# about gap²/8 of the limit.
_AGM_TOL = 1e-15


@jitable
def _rc_one(e, y):
    """R_C(1, y) with y = 1 + e > 0 given separately (both accurate).

    atan(√e)/√e for e > 0; atanh(s)/s = (log(1 + s) − ½ log y)/s with s = √−e for e < 0,
    which stays accurate as y → 0; the Maclaurin series near e = 0.
    """
    small = np.abs(e) < _RC_SERIES
    pos = e > 0.0
    s = np.sqrt(np.abs(select(small, 0.25, e)))
    # log y from whichever of y and e is known to more digits.
    log_y = select(y < 0.5, np.log(select(y < 0.5, y, 1.0)), np.log1p(select(y < 0.5, 0.0, e)))
    closed = select(pos, np.arctan(s), np.log1p(s) - 0.5 * log_y) / s
    series = 1.0 + e * (-1.0 / 3.0 + e * (0.2 + e * (-1.0 / 7.0 + e * (1.0 / 9.0 - e / 11.0))))
    return select(small, series, closed)


@jitable
def carlson_rf(x, y, z):
    """R_F(x, y, z) = ½ ∫₀^∞ dt / √((t+x)(t+y)(t+z)) for x, y, z ≥ 0 (Carlson 1995, §2).

    Infinite when two arguments vanish.
    """
    a0 = (x + y + z) / 3.0
    q = _RF_Q * np.maximum(np.maximum(np.abs(a0 - x), np.abs(a0 - y)), np.abs(a0 - z))
    xn, yn, zn, an, f = x, y, z, a0, 1.0
    for _ in range(_MAX_DUPLICATIONS):
        if all_true(q * f < np.abs(an)):
            break
        sx, sy, sz = np.sqrt(xn), np.sqrt(yn), np.sqrt(zn)
        lam = sx * sy + sx * sz + sy * sz
        xn, yn, zn = 0.25 * (xn + lam), 0.25 * (yn + lam), 0.25 * (zn + lam)
        an = 0.25 * (an + lam)
        f = 0.25 * f
    degenerate = (x + y == 0.0) | (x + z == 0.0) | (y + z == 0.0)
    an = select(degenerate, 1.0, an)
    dx = (a0 - x) * f / an
    dy = (a0 - y) * f / an
    dz = -(dx + dy)
    e2 = dx * dy - dz * dz
    e3 = dx * dy * dz
    series = 1.0 - e2 / 10.0 + e3 / 14.0 + e2 * e2 / 24.0 - 3.0 * e2 * e3 / 44.0
    return select(degenerate, np.inf, series / np.sqrt(an))


@jitable
def carlson_rj(x, y, z, p):
    """R_J(x, y, z, p) = 3/2 ∫₀^∞ dt / ((t+p) √((t+x)(t+y)(t+z))) for x, y, z ≥ 0, p > 0.

    Carlson (1995), §4: duplication with the sum of R_C(1, 1 + eₘ), eₘ = δₘ/dₘ².
    Infinite when two of x, y, z vanish.
    """
    a0 = (x + y + z + 2.0 * p) / 5.0
    delta = (p - x) * (p - y) * (p - z)
    q = _RJ_Q * np.maximum(
        np.maximum(np.abs(a0 - x), np.abs(a0 - y)), np.maximum(np.abs(a0 - z), np.abs(a0 - p))
    )
    xn, yn, zn, pn, an, f = x, y, z, p, a0, 1.0
    total = 0.0 * a0
    for _ in range(_MAX_DUPLICATIONS):
        if all_true(q * f < np.abs(an)):
            break
        sx, sy, sz, sp = np.sqrt(xn), np.sqrt(yn), np.sqrt(zn), np.sqrt(pn)
        lam = sx * sy + sx * sz + sy * sz
        d = (sp + sx) * (sp + sy) * (sp + sz)
        # 1 + eₘ = 2√pₘ(pₘ + λₘ)/dₘ exactly; computing it so avoids the cancellation of
        # 1 + δₘ/dₘ² when p ≪ x, y, z.
        e = f * f * f * delta / (d * d)
        total = total + f * _rc_one(e, 2.0 * sp * (pn + lam) / d) / d
        xn, yn, zn, pn = 0.25 * (xn + lam), 0.25 * (yn + lam), 0.25 * (zn + lam), 0.25 * (pn + lam)
        an = 0.25 * (an + lam)
        f = 0.25 * f
    degenerate = (x + y == 0.0) | (x + z == 0.0) | (y + z == 0.0)
    an = select(degenerate, 1.0, an)
    dx = (a0 - x) * f / an
    dy = (a0 - y) * f / an
    dz = (a0 - z) * f / an
    dp = -0.5 * (dx + dy + dz)
    xyz = dx * dy * dz
    e2 = dx * dy + dx * dz + dy * dz - 3.0 * dp * dp
    e3 = xyz + 2.0 * e2 * dp + 4.0 * dp * dp * dp
    e4 = (2.0 * xyz + e2 * dp + 3.0 * dp * dp * dp) * dp
    e5 = xyz * dp * dp
    series = (
        1.0
        - 3.0 * e2 / 14.0
        + e3 / 6.0
        + 9.0 * e2 * e2 / 88.0
        - 3.0 * e4 / 22.0
        - 9.0 * e2 * e3 / 52.0
        + 3.0 * e5 / 26.0
    )
    value = f * series / (an * np.sqrt(an)) + 6.0 * total
    return select(degenerate, np.inf, value)


@jitable
def ellipk_mc(mc):
    """K as a function of mc = 1 − m: π / (2 AGM(1, √mc)) (A&S 17.6.1); +inf at mc = 0."""
    a = 1.0 + 0.0 * mc
    b = np.sqrt(select(mc > 0.0, mc, 1.0))
    for _ in range(_MAX_AGM):
        if all_true(np.abs(a - b) <= _AGM_TOL * a):
            break
        a, b = 0.5 * (a + b), np.sqrt(a * b)
    return select(mc > 0.0, np.pi / (a + b), np.inf)


@jitable
def ellipk(m):
    """Complete elliptic integral of the first kind K(m), 0 ≤ m ≤ 1 (+inf at m = 1)."""
    return ellipk_mc(1.0 - m)


@jitable
def reduce_amplitude(phi):
    """(j, r) with φ = jπ + r, j integral (as a float) and |r| ≤ π/2."""
    j = np.floor(phi / np.pi + 0.5)
    return j, phi - j * np.pi


@jitable
def _periods(j, complete):
    """2j × complete integral, 0 when j = 0 even if the complete integral is infinite."""
    return 2.0 * j * select(j == 0.0, 0.0, complete)


@jitable
def ellipf_mc(phi, mc):
    """F(φ|m) from mc = 1 − m: sin r R_F(cos² r, 1 − m sin² r, 1) + 2jK for φ = jπ + r.

    DLMF 19.25.5 with 1 − m sin² r written as cos² r + mc sin² r (no cancellation).
    At m = 1 (mc = 0) finite only for |φ| < π/2.
    """
    j, r = reduce_amplitude(phi)
    s, c = np.sin(r), np.cos(r)
    c2 = c * c
    return s * carlson_rf(c2, c2 + mc * s * s, 1.0) + _periods(j, ellipk_mc(mc))


@jitable
def ellipf(phi, m):
    """Incomplete elliptic integral of the first kind F(φ|m) for any real φ, 0 ≤ m ≤ 1."""
    return ellipf_mc(phi, 1.0 - m)


@jitable
def ellippi_mc(n, phi, mc):
    """Π(n; φ|m) = ∫₀^φ dθ / ((1 − n sin²θ) √(1 − m sin²θ)) from mc = 1 − m, for n < 1.

    DLMF 19.25.14 on the reduced amplitude r = φ − jπ:
    Π(n; r|m) = s R_F(c², Δ², 1) + (n/3) s³ R_J(c², Δ², 1, 1 − n s²), Δ² = c² + mc s²,
    plus 2jΠ(n|m) with Π(n|m) = K(m) + (n/3) R_J(0, mc, 1, 1 − n). For n < 1 every R_J
    has p > 0. At m = 1 (mc = 0) finite only for |φ| < π/2.
    """
    j, r = reduce_amplitude(phi)
    s, c = np.sin(r), np.cos(r)
    s2, c2 = s * s, c * c
    d2 = c2 + mc * s2
    third = n / 3.0
    partial = s * (carlson_rf(c2, d2, 1.0) + third * s2 * carlson_rj(c2, d2, 1.0, 1.0 - n * s2))
    # The complete integral is only needed (and only finite at m = 1) where j ≠ 0; the
    # branch skips it in compiled code when |φ| ≤ π/2.
    complete = 0.0 * partial
    if any_true(j != 0.0):
        mc_full = select(j == 0.0, 1.0, mc)
        complete = ellipk_mc(mc_full) + third * carlson_rj(0.0, mc_full, 1.0, 1.0 - n)
    return partial + _periods(j, complete)


@jitable
def ellippi(n, phi, m):
    """Incomplete elliptic integral of the third kind Π(n; φ|m) for any real φ, n < 1, 0 ≤ m ≤ 1."""
    return ellippi_mc(n, phi, 1.0 - m)


@jitable
def _agm_level(b0, c0, level):
    """(aₙ, bₙ, cₙ) of the AGM started at (1, b0, c0), with cₙ₊₁ = cₙ²/(4aₙ₊₁)."""
    a, b, c = 1.0 + 0.0 * b0, b0, c0
    for _ in range(level):
        a, b, c = 0.5 * (a + b), np.sqrt(a * b), 0.5 * c * c / (a + b)
    return a, b, c


@jitable
def sech(u):
    """sech u = 2e^(−|u|)/(1 + e^(−2|u|)), without overflow for large |u|."""
    e = np.exp(-np.abs(u))
    return 2.0 * e / (1.0 + e * e)


@jitable
def ellipj_mc(u, m, mc):
    """(sn, cn, dn, am)(u|m) with both m and mc = 1 − m given, for real u.

    A&S 16.4: run the AGM from (a₀, b₀, c₀) = (1, √mc, √m) until c_N ≤ 2⁻⁵³ a_N, set
    φ_N = 2^N a_N u, then φₙ₋₁ = ½(φₙ + asin((cₙ/aₙ) sin φₙ)). The asin is evaluated as
    atan2(cₙ sin φₙ, √(bₙ² + cₙ² cos² φₙ)) since aₙ² − cₙ² = bₙ², which stays accurate
    where cₙ/aₙ → 1 (m → 1). The levels are recomputed rather than stored, so no array
    is allocated. am = φ₀ is continuous in u: am(u + 2K) = am(u) + π.
    At m = 1 (mc = 0): sn = tanh u, cn = dn = sech u, am = gd u.
    """
    hyperbolic = mc <= 0.0
    b0 = np.sqrt(select(hyperbolic, 0.5, mc))
    c0 = np.sqrt(select(hyperbolic, 0.5, m))
    a, b, c = 1.0 + 0.0 * b0, b0, c0
    levels = 0
    for _ in range(_MAX_AGM):
        if all_true(c <= _EPS * a):
            break
        a, b, c = 0.5 * (a + b), np.sqrt(a * b), 0.5 * c * c / (a + b)
        levels += 1
    phi = 2.0**levels * a * u
    for level in range(levels, 0, -1):
        _, b_n, c_n = _agm_level(b0, c0, level)
        cos_phi = np.cos(phi)
        phi = 0.5 * (phi + np.arctan2(c_n * np.sin(phi), np.sqrt(b_n * b_n + c_n * c_n * cos_phi * cos_phi)))
    sn, cn = np.sin(phi), np.cos(phi)
    # dn² = 1 − m sn² = cn² + mc sn²: the first form has no cancellation for m < ½ (and is
    # exactly 1 at m = 0), the second none for m ≥ ½.
    dn = np.sqrt(select(m < 0.5, 1.0 - m * sn * sn, cn * cn + mc * sn * sn))
    sech_u = sech(u)
    return (
        select(hyperbolic, np.tanh(u), sn),
        select(hyperbolic, sech_u, cn),
        select(hyperbolic, sech_u, dn),
        select(hyperbolic, 2.0 * np.arctan(np.tanh(0.5 * u)), phi),
    )


@jitable
def ellipj(u, m):
    """Jacobi elliptic functions (sn, cn, dn, am)(u|m) for real u and 0 ≤ m ≤ 1."""
    return ellipj_mc(u, m, 1.0 - m)

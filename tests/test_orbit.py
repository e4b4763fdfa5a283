"""The Kepler orbit and its J₂ drift against numerical integration of the equations of
motion (scipy's DOP853), the two-body integrals, published sun-synchronous inclinations and
Basilisk's ``orbitalMotion``."""

from __future__ import annotations

import re

import numba
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from rigidrot_gym.physics.environment import earth, orbit

MU, R = earth.MU, earth.RADIUS

# Circular LEO, a moderately eccentric orbit and a Molniya-like one (perigee 1600 km up).
ORBITS = {
    "circular LEO": (R + 500e3, 0.0),
    "e=0.1": (8.0e6, 0.1),
    "e=0.7": (26.6e6, 0.7),
}

# Largest differences allowed from DOP853 over three orbits, m and m/s: ~3× what was measured.
TWO_BODY_TOLERANCE = {"circular LEO": (3e-6, 3e-9), "e=0.1": (1.5e-5, 1e-8), "e=0.7": (2e-3, 1.5e-6)}


def _random_elements(rng, a, e):
    return orbit.elements(
        a,
        e,
        rng.uniform(0, np.pi),
        rng.uniform(0, 2 * np.pi),
        rng.uniform(0, 2 * np.pi),
        rng.uniform(0, 2 * np.pi),
    )


def _two_body(t, y):
    r = y[:3]
    return np.concatenate([y[3:], -MU * r / np.linalg.norm(r) ** 3])


def _two_body_j2(t, y):
    """r̈ = −μ r/|r|³ plus the J₂ acceleration, the gradient of the geopotential's J₂ term
    U₂ = −(μ/r) J₂ (R/r)² P₂(z/r), P₂(x) = (3x² − 1)/2."""
    r = y[:3]
    rn = np.linalg.norm(r)
    z2 = (r[2] / rn) ** 2
    k = 1.5 * earth.J2 * MU * R**2 / rn**5
    j2 = -k * r * np.array([1 - 5 * z2, 1 - 5 * z2, 3 - 5 * z2])
    return np.concatenate([y[3:], -MU * r / rn**3 + j2])


def _integrate(rhs, el, t, rtol):
    r0, v0 = orbit.position_velocity(el, 0.0)
    sol = solve_ivp(
        rhs, (0.0, t[-1]), np.concatenate([r0, v0]), method="DOP853", rtol=rtol, atol=rtol * 1e6, t_eval=t
    )
    assert sol.success, sol.message
    return sol.y[:3].T, sol.y[3:].T


@pytest.mark.parametrize("name", list(ORBITS))
def test_two_body_motion_matches_dop853(name):
    """Three orbits against DOP853 (rtol 3e-14, atol 3e-8 m): measured 9.1e-7 m and 9.7e-10 m/s
    (circular LEO), 4.3e-6 m and 2.5e-9 m/s (e = 0.1), 6.2e-4 m and 4.3e-7 m/s (e = 0.7, apogee
    45 000 km) apart at most. That is the integrator's own error: it shrinks with rtol (e = 0.7:
    6.4e-2 m at 1e-12, 3.9e-3 m at 1e-13) down to its rounding floor at ~3e-14."""
    a, e = ORBITS[name]
    el = _random_elements(np.random.default_rng(sum(map(ord, name))), a, e)
    t = np.linspace(0.0, 3 * orbit.period(a), 301)
    r_ref, v_ref = _integrate(_two_body, el, t, rtol=3e-14)
    r, v = orbit.position_velocity(el, t)
    position, velocity = TWO_BODY_TOLERANCE[name]
    assert np.max(np.linalg.norm(r - r_ref, axis=-1)) < position
    assert np.max(np.linalg.norm(v - v_ref, axis=-1)) < velocity


@pytest.mark.parametrize("name", list(ORBITS))
def test_the_two_body_integrals_and_the_elements_they_give_back(name):
    a, e = ORBITS[name]
    el = _random_elements(np.random.default_rng(len(name)), a, e)
    t = np.linspace(0.0, orbit.period(a), 97)
    r, v = orbit.position_velocity(el, t)
    rn, vn = np.linalg.norm(r, axis=-1), np.linalg.norm(v, axis=-1)
    energy = vn**2 / 2 - MU / rn
    np.testing.assert_allclose(energy, -MU / (2 * a), rtol=1e-13)
    h = np.cross(r, v)
    np.testing.assert_allclose(np.linalg.norm(h, axis=-1), np.sqrt(MU * a * (1 - e**2)), rtol=1e-13)
    # h's direction: i from its z component, Ω from the node line ẑ × h
    hat = h / np.linalg.norm(h, axis=-1, keepdims=True)
    np.testing.assert_allclose(np.arccos(hat[:, 2]), el.i, atol=1e-13)
    node = np.arctan2(h[:, 0], -h[:, 1])
    np.testing.assert_allclose(np.angle(np.exp(1j * (node - el.raan))), 0.0, atol=1e-13)
    # the eccentricity vector (v × h)/μ − r̂: its length e, its angle from the node line ω
    ecc = np.cross(v, h) / MU - r / rn[:, None]
    np.testing.assert_allclose(np.linalg.norm(ecc, axis=-1), e, atol=1e-13)
    if e > 0:
        line = np.stack([np.cos(node), np.sin(node), np.zeros_like(node)], axis=-1)
        sine = np.einsum("ij,ij->i", np.cross(line, ecc), hat)
        argp = np.arctan2(sine, np.einsum("ij,ij->i", line, ecc))
        np.testing.assert_allclose(np.angle(np.exp(1j * (argp - el.argp))), 0.0, atol=1e-11 / e)
    # one period 2π √(a³/μ) brings the spacecraft back where it was
    np.testing.assert_allclose(orbit.period(a), 2 * np.pi * np.sqrt(a**3 / MU), rtol=1e-15)
    np.testing.assert_allclose(r[-1], r[0], atol=1e-8 * a)
    np.testing.assert_allclose(v[-1], v[0], atol=1e-8 * np.sqrt(MU / a))
    # the perigee lies a (1 − e) from the Earth's centre, on the eccentricity vector
    r_p, _ = orbit.position_velocity(el._replace(mean_anomaly=0.0), 0.0)
    assert np.linalg.norm(r_p) == pytest.approx(a * (1 - e), rel=1e-14)


def test_kepler_residual_over_a_dense_grid():
    """|E − e sin E − M| ≤ 1e-14 for M ∈ [0, 2π) (and near its ends) and e ≤ 0.9, and for
    e ≤ 0.99: measured 8.9e-16 and 1.8e-15, the rounding of M near 2π."""
    M = np.concatenate([np.linspace(0, 2 * np.pi, 10000, endpoint=False), np.geomspace(1e-12, 0.1, 300)])
    M = np.concatenate([M, 2 * np.pi - M[M > 0]])[:, None]
    for top in (0.9, 0.99):
        e = np.linspace(0.0, top, 100)[None, :]
        E = orbit.eccentric_anomaly(M, e)
        assert np.max(np.abs(E - e * np.sin(E) - M)) <= 1e-14, top
    # whole revolutions of M carry over to E, and M = 0, π are fixed points
    np.testing.assert_allclose(
        orbit.eccentric_anomaly(np.array([1.0 + 20 * np.pi, -1.0]), 0.5),
        [orbit.eccentric_anomaly(1.0, 0.5) + 20 * np.pi, -orbit.eccentric_anomaly(1.0, 0.5)],
        rtol=1e-15,
    )
    assert orbit.eccentric_anomaly(0.0, 0.9) == 0.0
    assert orbit.eccentric_anomaly(np.pi, 0.9) == pytest.approx(np.pi, abs=1e-15)


def test_the_compiled_state_is_the_numpy_state():
    """The same source, compiled by numba on floats, gives the numpy path's numbers."""
    compiled = numba.njit(lambda a, e, i, raan, argp, m, mu: orbit.state(a, e, i, raan, argp, m, mu))
    rng = np.random.default_rng(3)
    m = rng.uniform(-10, 10, 7)
    r, v = orbit.state(8e6, 0.3, 1.1, 0.2, -0.4, m, MU)
    for k in range(m.size):
        rc, vc = compiled(8e6, 0.3, 1.1, 0.2, -0.4, m[k], MU)
        np.testing.assert_allclose(rc, np.array(r)[:, k], rtol=1e-15, atol=1e-8)
        np.testing.assert_allclose(vc, np.array(v)[:, k], rtol=1e-15, atol=1e-11)


@pytest.mark.parametrize(
    ("el", "which"),
    [
        # 700 km sun-synchronous-like, near circular: the node alone is well defined
        (orbit.elements(R + 700e3, 0.001, np.radians(98.0), 0.4, 1.0, 0.3), ("raan",)),
        (orbit.elements(8.0e6, 0.1, np.radians(50.0), 0.4, 1.0, 0.3), ("raan", "argp")),
    ],
    ids=["700 km i=98", "e=0.1 i=50"],
)
def test_j2_secular_rates_match_an_integration_with_the_j2_acceleration(el, which):
    """30 orbits of r̈ = −μr/|r|³ + a_J2 (DOP853); Ω (from the angular momentum h) and ω
    (from the eccentricity vector), osculating, averaged over the first and over the last
    orbit. Measured: dΩ/dt 0.52 % (700 km) and 0.20 % (e = 0.1) off, dω/dt 0.22 % off; the
    initial osculating elements are taken as mean ones, which accounts for it."""
    samples, orbits = 400, 30
    t = np.linspace(0.0, orbits * orbit.period(el.a), orbits * samples + 1)
    r, v = _integrate(_two_body_j2, el, t, rtol=1e-12)
    h = np.cross(r, v)
    hat = h / np.linalg.norm(h, axis=-1, keepdims=True)
    node = np.unwrap(np.arctan2(h[:, 0], -h[:, 1]))
    line = np.stack([np.cos(node), np.sin(node), np.zeros_like(node)], axis=-1)
    ecc = np.cross(v, h) / MU - r / np.linalg.norm(r, axis=-1, keepdims=True)
    argp = np.unwrap(
        np.arctan2(np.einsum("ij,ij->i", np.cross(line, ecc), hat), np.einsum("ij,ij->i", line, ecc))
    )
    first, last = slice(0, samples), slice(-samples - 1, -1)
    span = t[last].mean() - t[first].mean()
    measured = {
        "raan": (node[last].mean() - node[first].mean()) / span,
        "argp": (argp[last].mean() - argp[first].mean()) / span,
    }
    rates = dict(zip(("raan", "argp"), orbit.secular_rates(el)[:2], strict=True))
    for name in which:
        assert measured[name] == pytest.approx(rates[name], rel=0.01), name


def test_j2_moves_the_mean_elements_at_the_secular_rates():
    """After a day with J₂, the orbit's plane and perigee (from r and v) have turned by the
    rates of Vallado's eq. 9-41, written out here, and without J₂ they stand still."""
    a, e, i = R + 700e3, 0.05, 1.2
    el = orbit.elements(a, e, i, 0.4, 1.0, 0.3)
    n = np.sqrt(MU / a**3)
    k = n * earth.J2 * (R / (a * (1 - e**2))) ** 2
    raan_rate = -1.5 * k * np.cos(i)
    argp_rate = 0.75 * k * (5 * np.cos(i) ** 2 - 1)
    mean_rate = n + 0.75 * k * np.sqrt(1 - e**2) * (3 * np.cos(i) ** 2 - 1)
    np.testing.assert_allclose(orbit.secular_rates(el), (raan_rate, argp_rate, mean_rate), rtol=1e-14)
    t = 86400.0
    for j2, turned in ((True, 1.0), (False, 0.0)):
        r, v = orbit.position_velocity(el, t, j2=j2)
        h = np.cross(r, v)
        node = np.arctan2(h[0], -h[1])
        line = np.array([np.cos(node), np.sin(node), 0.0])
        ecc = np.cross(v, h) / MU - r / np.linalg.norm(r)
        argp = np.arctan2(np.cross(line, ecc) @ h / np.linalg.norm(h), line @ ecc)
        assert np.arccos(h[2] / np.linalg.norm(h)) == pytest.approx(i, abs=1e-13)
        assert np.angle(np.exp(1j * (node - el.raan - turned * raan_rate * t))) == pytest.approx(0, abs=1e-13)
        assert np.angle(np.exp(1j * (argp - el.argp - turned * argp_rate * t))) == pytest.approx(0, abs=1e-11)
        # the true anomaly gives back M through E (Kepler's equation, written out here)
        f = np.arctan2(np.cross(ecc, r) @ h / np.linalg.norm(h), ecc @ r)
        ecc_anomaly = 2 * np.arctan(np.sqrt((1 - e) / (1 + e)) * np.tan(f / 2))
        mean = ecc_anomaly - e * np.sin(ecc_anomaly)
        rate = mean_rate if j2 else n
        assert np.angle(np.exp(1j * (mean - el.mean_anomaly - rate * t))) == pytest.approx(0, abs=1e-11)


def test_sun_synchronous_inclination_of_a_500_km_orbit():
    # Vallado (4th ed., ch. 11) and Wertz & Larson (SMAD): about 97.40 deg at 500 km
    a = R + 500e3
    i = orbit.sun_synchronous_inclination(a)
    assert np.degrees(i) == pytest.approx(97.40, abs=0.01)
    raan_rate = orbit.secular_rates(orbit.elements(a, 0.0, i, 0.0, 0.0, 0.0))[0]
    assert np.degrees(raan_rate) * 86400 * 365.2422 == pytest.approx(360.0, rel=1e-12)
    # an eccentric orbit's p = a (1 − e²) is shorter, its J2 drift stronger: it needs less, nearer polar
    eccentric = orbit.sun_synchronous_inclination(8e6, 0.1)
    assert np.pi / 2 < eccentric < orbit.sun_synchronous_inclination(8e6)
    raan_rate = orbit.secular_rates(orbit.elements(8e6, 0.1, eccentric, 0.0, 0.0, 0.0))[0]
    assert raan_rate == pytest.approx(2 * np.pi / (365.2422 * 86400), rel=1e-12)


@pytest.mark.engines
@pytest.mark.parametrize("name", list(ORBITS))
def test_state_matches_basilisk_elem2rv(name):
    """Basilisk's ``elem2rv`` takes the true anomaly: converted from M by its own M2E and
    E2f. Its μ, MU_EARTH, is in km³/s²: we pass ours (m³/s²) with a in m instead. Measured:
    ≤ 2.1e-8 m, 9.1e-12 m/s and 8.9e-16 rad in E apart (rounding at 7 000-45 000 km)."""
    om = pytest.importorskip("Basilisk.utilities.orbitalMotion")
    a, e = ORBITS[name]
    rng = np.random.default_rng(11 + len(name))
    for _ in range(5):
        el = _random_elements(rng, a, e)
        t = rng.uniform(0, 2 * orbit.period(a))
        m = el.mean_anomaly + orbit.mean_motion(a) * t
        oe = om.ClassicElements()
        oe.a, oe.e, oe.i, oe.Omega, oe.omega = a, e, el.i, el.raan, el.argp
        ecc = om.M2E(float(np.mod(m, 2 * np.pi)), e)
        oe.f = om.E2f(ecc, e)
        r_bsk, v_bsk = om.elem2rv(MU, oe)
        r, v = orbit.position_velocity(el, t)
        np.testing.assert_allclose(r, r_bsk, rtol=0, atol=1e-6)
        np.testing.assert_allclose(v, v_bsk, rtol=0, atol=1e-9)
        assert np.mod(orbit.eccentric_anomaly(m, e) - ecc + np.pi, 2 * np.pi) - np.pi == pytest.approx(
            0, abs=1e-13
        )
    assert om.MU_EARTH * 1e9 == pytest.approx(MU, rel=1e-7)  # their km³/s² is our m³/s²


GOOD = {"a": R + 500e3, "e": 0.01, "i": 1.0, "raan": 0.5, "argp": 0.2, "mean_anomaly": 0.1}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("a", R - 1.0),
        ("a", np.nan),
        ("a", np.inf),
        ("a", "7e6"),
        ("e", 1.0),
        ("e", 1.5),
        ("e", -0.1),
        ("e", np.nan),
        ("i", -0.1),
        ("i", 4.0),
        ("i", np.nan),
        ("raan", np.inf),
        ("argp", np.nan),
        ("mean_anomaly", np.nan),
        ("mean_anomaly", True),
    ],
)
def test_each_bad_element_is_refused_by_name(name, value):
    with pytest.raises(ValueError, match=rf"^{name} must .*got {re.escape(repr(value))}"):
        orbit.elements(**{**GOOD, name: value})


def test_a_perigee_below_the_surface_is_refused():
    with pytest.raises(ValueError, match=r"perigee.*a = 7000000\.0 m and e = 0\.1"):
        orbit.elements(**{**GOOD, "a": 7.0e6, "e": 0.1})


def test_bad_arguments_of_the_public_functions():
    el = orbit.elements(**GOOD)
    with pytest.raises(ValueError, match="t must be finite"):
        orbit.position_velocity(el, [0.0, np.nan])
    with pytest.raises(ValueError, match="t must be real numbers"):
        orbit.position_velocity(el, "10")
    with pytest.raises(ValueError, match="j2 must be True or False"):
        orbit.position_velocity(el, 0.0, j2=1)
    with pytest.raises(ValueError, match=r"^e must"):  # unchecked Elements are checked on use
        orbit.position_velocity(el._replace(e=1.2), 0.0)
    with pytest.raises(ValueError, match=r"^el must be Elements"):
        orbit.secular_rates((1.0, 2.0))
    with pytest.raises(
        ValueError, match=r"no sun-synchronous inclination exists for a = 20000000\.0 m and e = 0\.0"
    ):
        orbit.sun_synchronous_inclination(20e6)


def test_shapes():
    el = orbit.elements(**GOOD)
    r, v = orbit.position_velocity(el, 10.0)
    assert r.shape == v.shape == (3,)
    for j2 in (False, True):
        t = np.arange(6.0).reshape(2, 3) * 100
        r, v = orbit.position_velocity(el, t, j2=j2)
        assert r.shape == v.shape == (2, 3, 3)
        np.testing.assert_array_equal(r[1, 2], orbit.position_velocity(el, 500.0, j2=j2)[0])

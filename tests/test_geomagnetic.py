"""The centred-dipole geomagnetic field against closed forms, Basilisk's
``magneticFieldCenteredDipole`` and (where installed) ppigrf's full IGRF."""

from __future__ import annotations

import datetime as dt

import numba
import numpy as np
import pytest
from scipy import optimize

from rigidrot_gym.physics.environment import earth
from rigidrot_gym.physics.environment import geomagnetic as gm

R = gm.REFERENCE_RADIUS


def _fixed(dipole, r):
    """field_fixed on an (N, 3) array of positions, as an (N, 3) array."""
    return np.stack(gm.field_fixed(dipole.moment, dipole.radius, tuple(np.asarray(r).T)), axis=-1)


def _rz(theta):
    """R_z(θ): Earth-fixed components to inertial ones (r_eci = R_z(θ) r_ecef)."""
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _random_positions(rng, n, low=6.6e6, high=4.2e7):
    u = rng.normal(size=(n, 3))
    return u / np.linalg.norm(u, axis=1, keepdims=True) * rng.uniform(low, high, (n, 1))


# --- 1. the axial dipole's closed form ----------------------------------------------------


def test_axial_dipole_against_its_closed_form():
    """g₁¹ = h₁¹ = 0: |B| = B0 (R/r)³ √(1 + 3 sin²λ), inclination tan I = 2 tan λ (downward in
    the north for g₁⁰ < 0), B along +z (north) and horizontal on the equator."""
    b0 = 3e-5
    axial = gm.Dipole(-b0, 0.0, 0.0)
    rng = np.random.default_rng(1)
    n = 200
    lat = rng.uniform(-np.pi / 2, np.pi / 2, n)
    lon = rng.uniform(-np.pi, np.pi, n)
    r = rng.uniform(R, 8 * R, n)
    up = np.stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)], axis=-1)
    north = np.stack([-np.sin(lat) * np.cos(lon), -np.sin(lat) * np.sin(lon), np.cos(lat)], axis=-1)
    b = _fixed(axial, r[:, None] * up)
    scale = b0 * (R / r) ** 3
    np.testing.assert_allclose(
        np.linalg.norm(b, axis=1), scale * np.sqrt(1 + 3 * np.sin(lat) ** 2), rtol=1e-14
    )
    # radial B_r = −2 B0 (R/r)³ sin λ and northward B_N = B0 (R/r)³ cos λ: tan I = −B_r/B_N = 2 tan λ
    np.testing.assert_allclose(np.sum(b * up, axis=1), -2 * scale * np.sin(lat), rtol=1e-13, atol=1e-25)
    np.testing.assert_allclose(np.sum(b * north, axis=1), scale * np.cos(lat), rtol=1e-13, atol=1e-25)
    # on the equator: horizontal, northward, B0 (R/r)³
    eq = np.stack([np.cos(lon), np.sin(lon), np.zeros(n)], axis=-1) * r[:, None]
    np.testing.assert_allclose(_fixed(axial, eq), np.stack([0 * r, 0 * r, b0 * (R / r) ** 3], -1), atol=1e-22)
    # at the surface of the reference sphere on the equator: exactly |g₁⁰|
    assert _fixed(axial, [[R, 0.0, 0.0]])[0, 2] == pytest.approx(b0, rel=1e-15)


def test_the_igrf_field_points_north_on_the_equator():
    """The real (tilted) dipole's field on the geographic equator: its northward (+z)
    component is −g₁⁰ (R/r)³ exactly, whatever the longitude (there m·r̂ has no z part)."""
    lon = np.linspace(-np.pi, np.pi, 73)
    for r in (R, 7e6):
        b = _fixed(gm.IGRF13_2020, r * np.stack([np.cos(lon), np.sin(lon), 0 * lon], axis=-1))
        np.testing.assert_allclose(b[:, 2], -gm.IGRF13_2020.g10 * (R / r) ** 3, rtol=1e-14)
        assert np.all(b[:, 2] > 0)


# --- 2. the tilted dipole's pole ----------------------------------------------------------


def test_the_field_is_radial_along_the_dipole_axis_and_twice_m_there():
    d = gm.IGRF13_2020
    m = np.array(d.moment)
    m_hat = m / np.linalg.norm(m)
    for sign in (1.0, -1.0):
        for r in (R, 7e6, 4.2e7):
            b = _fixed(d, [sign * r * m_hat])[0]
            # 3 (m·r̂) r̂ − m = 2m along ±m̂
            np.testing.assert_allclose(b, 2 * m * (R / r) ** 3, rtol=1e-14)


def test_the_dipole_pole_found_by_search_lies_at_the_tilt_of_the_coefficients():
    """The point of the reference sphere where the field is vertical, found by a numerical
    search of the field itself, against the tilt and longitude from the coefficients:
    atan(√(g₁¹² + h₁¹²)/|g₁⁰|) = 9.41° for IGRF-13 2020.0 (north pole 80.59° N, 72.68° W)."""
    d = gm.IGRF13_2020
    tilt = np.degrees(np.arctan(np.hypot(d.g11, d.h11) / abs(d.g10)))
    lon = np.degrees(np.arctan2(-d.h11, -d.g11))
    assert tilt == pytest.approx(9.4105, abs=1e-4)
    assert lon == pytest.approx(-72.680, abs=1e-3)

    def horizontal(x):
        colat, phi = np.radians(x)
        up = np.array([np.sin(colat) * np.cos(phi), np.sin(colat) * np.sin(phi), np.cos(colat)])
        b = _fixed(d, [R * up])[0]
        return np.linalg.norm(b - up * (b @ up)) / np.linalg.norm(b)

    found = optimize.minimize(horizontal, [5.0, -50.0], method="Nelder-Mead", options={"xatol": 1e-9})
    assert found.fun < 1e-8
    assert found.x[0] == pytest.approx(tilt, abs=1e-6)
    assert found.x[1] == pytest.approx(lon, abs=1e-5)


# --- the coefficients ---------------------------------------------------------------------


def test_igrf_dipole_is_linear_in_time_from_the_published_values():
    nt = gm.NANOTESLA
    d = gm.igrf_dipole(2020.0)
    assert d == gm.IGRF13_2020 and d.radius == 6371.2e3
    assert (d.g10, d.g11, d.h11) == pytest.approx((-29404.8 * nt, -1450.9 * nt, 4652.5 * nt), rel=1e-15)
    d = gm.igrf_dipole(2022.5)
    assert (d.g10, d.g11, d.h11) == pytest.approx(
        ((-29404.8 + 2.5 * 5.7) * nt, (-1450.9 + 2.5 * 7.4) * nt, (4652.5 - 2.5 * 25.9) * nt), rel=1e-14
    )
    # IGRF-14 from 2025.0: its 2025.0 model, then its secular variation to 2030.0
    d = gm.igrf_dipole(2025.0)
    assert (d.g10, d.g11, d.h11) == pytest.approx((-29350.0 * nt, -1410.3 * nt, 4545.5 * nt), rel=1e-15)
    d = gm.igrf_dipole(2030.0)
    assert (d.g10, d.g11, d.h11) == pytest.approx((-29287.0 * nt, -1360.3 * nt, 4438.0 * nt), rel=1e-14)


def test_decimal_year_counts_calendar_years():
    assert gm.decimal_year(earth.julian_date("2020-01-01T00:00:00")) == pytest.approx(2020.0, abs=1e-12)
    # 2022 has 365 days: its middle is 2 July 12:00
    assert gm.decimal_year(earth.julian_date("2022-07-02T12:00:00")) == pytest.approx(2022.5, abs=1e-9)
    # 2024 has 366: its middle is 2 July 00:00
    assert gm.decimal_year(earth.julian_date("2024-07-02T00:00:00")) == pytest.approx(2024.5, abs=1e-9)


def test_decimal_year_spans_the_years_1_to_9999_and_refuses_the_rest_by_name():
    # the ends of what a datetime holds, dated by earth.julian_date
    assert gm.FIRST_JD == earth.julian_date(dt.datetime.min)
    assert gm.END_JD == pytest.approx(earth.julian_date(dt.datetime.max), abs=2e-9)  # 1 µs short of it
    assert gm.decimal_year(gm.FIRST_JD) == 1.0
    last = gm.decimal_year(np.nextafter(gm.END_JD, 0.0))  # 80 µs before 10000-01-01
    assert 9999.0 < last < 10000.0 and last == pytest.approx(10000.0, abs=1e-11)
    for jd in (1e12, -1e12, 0.0, gm.END_JD, np.nextafter(gm.FIRST_JD, 0.0)):
        with pytest.raises(
            ValueError, match=r"jd must lie in \[1721425\.5, 5373484\.5\), the years 1 to 9999"
        ):
            gm.decimal_year(jd)


# --- 3. Basilisk side by side -------------------------------------------------------------


def _basilisk_fields(positions, j20002pfix):
    """magField_N of one tick of Basilisk's centred dipole, set up by its own Earth helper,
    for each position (one spacecraft message each) and the planet DCM ``j20002pfix``;
    with the coefficients it ran with."""
    from Basilisk.architecture import messaging
    from Basilisk.simulation import magneticFieldCenteredDipole
    from Basilisk.utilities import SimulationBaseClass, macros, simSetPlanetEnvironment

    sim = SimulationBaseClass.SimBaseClass()
    sim.CreateNewProcess("process").addTask(sim.CreateNewTask("task", macros.sec2nano(1.0)))
    module = magneticFieldCenteredDipole.MagneticFieldCenteredDipole()
    simSetPlanetEnvironment.centeredDipoleMagField(module, "earth")
    keep = []  # the messages must outlive the run
    for r in positions:
        state = messaging.SCStatesMsgPayload()
        state.r_BN_N = [float(x) for x in r]
        keep.append(messaging.SCStatesMsg().write(state))
        module.addSpacecraftToModel(keep[-1])
    planet = messaging.SpicePlanetStateMsgPayload()
    planet.PositionVector = [0.0, 0.0, 0.0]
    planet.J20002Pfix = np.asarray(j20002pfix).tolist()
    keep.append(messaging.SpicePlanetStateMsg().write(planet))
    module.planetPosInMsg.subscribeTo(keep[-1])
    sim.AddModelToTask("task", module)
    sim.InitializeSimulation()
    sim.ConfigureStopTime(0)
    sim.ExecuteSimulation()
    fields = np.array([module.envOutMsgs[i].read().magField_N for i in range(len(positions))])
    return fields, gm.Dipole(module.g10, module.g11, module.h11, module.planetRadius)


@pytest.mark.engines
@pytest.mark.parametrize("theta", [0.0, 1.234, 4.5])
def test_against_basilisk_centred_dipole(theta):
    """Basilisk maps N to the planet frame with J20002Pfix ([PN]: r_P = [PN] r_N) and the
    field back with its transpose. Our Earth-fixed frame has r_ecef = R_z(θ)ᵀ r_eci, so the
    matrix to give it is [PN] = R_z(θ)ᵀ; R_z(θ) itself would be the Earth turned by −θ."""
    pytest.importorskip("Basilisk")
    rng = np.random.default_rng(3)
    positions = _random_positions(rng, 6)
    fields, bsk = _basilisk_fields(positions, _rz(theta).T)
    # what Basilisk's helper actually sets: IGRF 1925.0's dipole in tesla (see the module notes)
    assert (bsk.g10, bsk.g11, bsk.h11, bsk.radius) == (-30926e-9, -2318e-9, 5817e-9, 6371.2e3)
    ours = np.stack(gm.field(bsk.moment, bsk.radius, theta, tuple(positions.T)), axis=-1)
    error = np.max(np.linalg.norm(ours - fields, axis=1) / np.linalg.norm(fields, axis=1))
    assert error < 1e-13, error
    if theta != 0.0:  # the transposed matrix gives another field: the test sees the convention
        wrong = np.stack(gm.field(bsk.moment, bsk.radius, -theta, tuple(positions.T)), axis=-1)
        assert np.max(np.linalg.norm(wrong - fields, axis=1) / np.linalg.norm(fields, axis=1)) > 1e-2


@pytest.mark.engines
def test_field_inertial_against_basilisk_at_an_epoch():
    """The public function: θ from the epoch and t, the same θ given to Basilisk as a DCM."""
    pytest.importorskip("Basilisk")
    rng = np.random.default_rng(4)
    positions = _random_positions(rng, 4)
    epoch, t = "2026-03-20T12:00:00", 5400.0
    theta = earth.gmst(earth.julian_date(epoch) + t / earth.SECONDS_PER_DAY)
    fields, bsk = _basilisk_fields(positions, _rz(theta).T)
    ours = gm.field_inertial(positions, t, epoch, dipole=bsk)
    error = np.max(np.linalg.norm(ours - fields, axis=1) / np.linalg.norm(fields, axis=1))
    assert error < 1e-13, error


# --- 4. ppigrf's IGRF ---------------------------------------------------------------------


def _ppigrf_cartesian(ppigrf, r, colat, lon, date, coeff_fn, max_degree):
    """ppigrf's geocentric (B_r, B_θ, B_φ) in nT at radius ``r`` (m, a number) on the grid
    (colatitude, east longitude, degrees) as Earth-fixed Cartesian components in T, and the
    grid's positions (m)."""
    br, bt, bp = (
        c[0] for c in ppigrf.igrf_gc(r / 1e3, colat, lon, date, coeff_fn=coeff_fn, max_degree=max_degree)
    )
    th, ph = np.radians(colat), np.radians(lon)
    up = np.stack([np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)], axis=-1)
    south = np.stack([np.cos(th) * np.cos(ph), np.cos(th) * np.sin(ph), -np.sin(th)], axis=-1)
    east = np.stack([-np.sin(ph), np.cos(ph), 0 * ph], axis=-1)
    b = br[..., None] * up + bt[..., None] * south + bp[..., None] * east
    return b * 1e-9, up * r


def _grid(step=4.0):
    colat = np.arange(step / 2, 180.0, step)
    lon = np.arange(-180.0 + step / 2, 180.0, step)
    return np.meshgrid(colat, lon, indexing="ij")


def test_coefficients_match_ppigrfs_tables():
    ppigrf = pytest.importorskip("ppigrf.ppigrf")
    nt = gm.NANOTESLA
    g13, h13 = ppigrf.read_shc(ppigrf.shc_fn_igrf13)
    g14, h14 = ppigrf.read_shc(ppigrf.shc_fn_igrf14)

    def first_degree(g, h, year):
        row = np.flatnonzero(g.index.year == year)[0]
        return (g[(1, 0)].iloc[row] * nt, g[(1, 1)].iloc[row] * nt, h[(1, 1)].iloc[row] * nt)

    d = gm.IGRF13_2020
    assert (d.g10, d.g11, d.h11) == pytest.approx(first_degree(g13, h13, 2020), rel=1e-15)
    d = gm.IGRF14_2025
    assert (d.g10, d.g11, d.h11) == pytest.approx(first_degree(g14, h14, 2025), rel=1e-15)
    # IGRF-14's 2030.0 column is its 2025.0 model plus five years of secular variation
    d = gm.igrf_dipole(2030.0)
    assert (d.g10, d.g11, d.h11) == pytest.approx(first_degree(g14, h14, 2030), rel=1e-14)
    # IGRF-13's 2025.0 column, 2020.0 + 5 SV rounded to 0.1 nT in ppigrf's file
    d = gm.igrf_dipole(np.nextafter(2025.0, 0.0))
    assert (d.g10, d.g11, d.h11) == pytest.approx(first_degree(g13, h13, 2025), abs=0.11 * nt)
    # Basilisk's "2020" Earth dipole is the 1925.0 column
    assert first_degree(g14, h14, 1925) == pytest.approx((-30926e-9, -2318e-9, 5817e-9), rel=1e-15)


@pytest.mark.parametrize(
    ("first", "fraction", "table"), [(2020, 0.5, "shc_fn_igrf13"), (2025, 0.3, "shc_fn_igrf14")]
)
def test_the_dipole_against_ppigrfs_first_degree(first, fraction, table):
    """ppigrf's own spherical-harmonic synthesis cut at degree 1, over a grid at 500 km.
    ppigrf interpolates its tables linearly in elapsed time between the epochs' dates, the
    IGRF linearly in decimal years (2022-07-02 12:00 is 2022.5, but 0.4997 of 2020-2025 by
    the clock: 2e-6 of the field apart); compared here where the two coincide."""
    ppigrf = pytest.importorskip("ppigrf.ppigrf")
    start, end = dt.datetime(first, 1, 1), dt.datetime(first + 5, 1, 1)
    date = start + fraction * (end - start)
    colat, lon = _grid()
    ref, pos = _ppigrf_cartesian(ppigrf, R + 500e3, colat, lon, date, getattr(ppigrf, table), 1)
    ours = _fixed(gm.igrf_dipole(first + 5 * fraction), pos.reshape(-1, 3)).reshape(pos.shape)
    error = np.max(np.linalg.norm(ours - ref, axis=-1) / np.linalg.norm(ref, axis=-1))
    # IGRF-13: ppigrf's 2025.0 column is 0.1 nT off 2020.0 + 5 SV in g₁⁰ and g₁¹ (rounded):
    # 0.05 nT at mid-span, 3.9e-6 of the field where it is weakest
    assert error < (5e-6 if table.endswith("13") else 1e-13), error


def test_the_dipole_against_the_full_igrf_in_low_earth_orbit():
    """How far the centred dipole is from the full IGRF-14 (degrees 1-13) at 500 km on
    2026-01-01, over a 2° grid weighted by area: the vector error |B_dip − B| / |B| has a
    median of 0.20 (0.24 area mean) and reaches 0.74 over the South Atlantic, where the real
    field is weakest; the magnitude is off by 0.09 in the median, the direction by 7.8°
    (35° at most)."""
    ppigrf = pytest.importorskip("ppigrf.ppigrf")
    colat, lon = _grid(2.0)
    date = dt.datetime(2026, 1, 1)
    full, pos = _ppigrf_cartesian(ppigrf, R + 500e3, colat, lon, date, ppigrf.shc_fn_igrf14, 13)
    dip = _fixed(gm.igrf_dipole(2026.0), pos.reshape(-1, 3)).reshape(pos.shape)
    size = np.linalg.norm(full, axis=-1)
    vector_error = np.linalg.norm(dip - full, axis=-1) / size
    magnitude_error = np.abs(np.linalg.norm(dip, axis=-1) - size) / size
    cosine = np.sum(dip * full, axis=-1) / (np.linalg.norm(dip, axis=-1) * size)
    angle = np.degrees(np.arccos(np.clip(cosine, -1.0, 1.0)))
    weight = np.sin(np.radians(colat))
    assert 0.15 < np.median(vector_error) < 0.25
    assert 0.2 < np.sum(vector_error * weight) / np.sum(weight) < 0.3
    assert 0.6 < np.max(vector_error) < 0.8
    assert 0.05 < np.median(magnitude_error) < 0.12
    assert 5.0 < np.median(angle) < 10.0 and np.max(angle) < 40.0


# --- the public function: frames, shapes and arguments --------------------------------------


def test_field_inertial_turns_with_the_earth():
    """At θ the inertial field is R_z(θ) B_fixed(R_z(θ)ᵀ r): a position fixed on the Earth
    sees the same field, in turned components, one sidereal day later."""
    epoch = "2026-03-20T00:00:00"
    jd = earth.julian_date(epoch)
    dipole = gm.igrf_dipole(gm.decimal_year(jd))
    rng = np.random.default_rng(5)
    r_fixed = _random_positions(rng, 5)
    t = np.array([0.0, 600.0, 3600.0, 40000.0, 86000.0])
    theta = earth.gmst(jd + t / earth.SECONDS_PER_DAY)
    r_inertial = np.einsum("nij,nj->ni", np.stack([_rz(a) for a in theta]), r_fixed)
    b = gm.field_inertial(r_inertial, t, epoch)
    expected = np.einsum("nij,nj->ni", np.stack([_rz(a) for a in theta]), _fixed(dipole, r_fixed))
    np.testing.assert_allclose(b, expected, rtol=1e-13, atol=1e-13 * np.max(np.abs(expected)))
    # the default dipole is the epoch's IGRF
    np.testing.assert_array_equal(gm.field_inertial(r_inertial, t, epoch, dipole=dipole), b)


def test_shapes():
    rng = np.random.default_rng(6)
    epoch = "2024-01-01T00:00:00"
    one = gm.field_inertial([7e6, 0.0, 0.0], 0.0, epoch)
    assert one.shape == (3,) and np.all(np.isfinite(one))
    r = _random_positions(rng, 8).reshape(4, 2, 3)
    b = gm.field_inertial(r, np.zeros((4, 2)), epoch)
    assert b.shape == (4, 2, 3)
    np.testing.assert_array_equal(gm.field_inertial(r, 0.0, epoch), b)
    np.testing.assert_array_equal(gm.field_inertial(r[1, 0], 0.0, epoch), b[1, 0])
    # one position at several times, and several positions at one time each
    assert gm.field_inertial(r[0, 0], np.arange(5.0), epoch).shape == (5, 3)
    assert gm.field_inertial(r, np.arange(2.0), epoch).shape == (4, 2, 3)


def test_the_same_source_runs_compiled_on_floats():
    d = gm.igrf_dipole(2023.0)

    @numba.njit
    def compiled(m, radius, theta, r):
        return gm.field(m, radius, theta, r)

    rng = np.random.default_rng(7)
    for r in _random_positions(rng, 4):
        theta = rng.uniform(0, 2 * np.pi)
        got = compiled(d.moment, d.radius, theta, tuple(r))
        np.testing.assert_allclose(got, gm.field(d.moment, d.radius, theta, tuple(r)), rtol=1e-14, atol=1e-20)


BAD = [
    (dict(r=[7e6, 0.0, np.nan]), "r must be finite"),
    (dict(r=[7e6, 0.0]), r"r must have shape \(\.\.\., 3\)"),
    (dict(r="7e6"), "r must be real numbers"),
    (dict(r=[7000.0, 0.0, 0.0]), "r must lie outside the Earth"),
    (dict(r=[0.0, 0.0, 0.0]), "r must lie outside the Earth"),
    (dict(t=np.inf), "t must be finite"),
    (dict(t=1e300), r"t must keep epoch \+ t within the years 1 to 9999, got t = 1e\+300 s"),
    (dict(t=[0.0, -1e12]), r"t must keep epoch \+ t within the years 1 to 9999, got t = -1000000000000\.0 s"),
    (dict(t=[0.0, 1.0, 2.0], r=np.full((2, 3), 7e6)), "batch shapes do not broadcast"),
    (dict(epoch="tomorrow"), "epoch must be an ISO 8601"),
    (dict(epoch="2019-12-31T23:00:00"), "epoch must lie in 2020–2030"),
    (dict(epoch="2030-01-01T00:00:01"), "epoch must lie in 2020–2030"),
    (dict(dipole=(-3e-5, 0.0, 0.0, 6.4e6)), "dipole must be a Dipole"),
    (dict(dipole=gm.Dipole(np.nan, 0.0, 0.0)), "dipole.g10 must be a finite number"),
    (dict(dipole=gm.Dipole(-3e-5, 0.0, 0.0, -1.0)), "dipole.radius must be a positive"),
]


@pytest.mark.parametrize(
    ("change", "message"), BAD, ids=[f"{k}-{'+'.join(c)}" for k, (c, _) in enumerate(BAD)]
)
def test_bad_arguments_are_refused_by_name(change, message):
    args = dict(r=[7e6, 0.0, 0.0], t=0.0, epoch="2026-03-20T12:00:00", dipole=None) | change
    with pytest.raises(ValueError, match=message):
        gm.field_inertial(**args)


@pytest.mark.parametrize("year", [2019.999, 2030.001, np.nan, "2025", True])
def test_igrf_dipole_refuses_years_outside_its_span(year):
    with pytest.raises(ValueError, match="year must"):
        gm.igrf_dipole(year)


def test_an_epoch_outside_the_span_is_fine_with_a_dipole_of_ones_own():
    b = gm.field_inertial(
        [7e6, 0.0, 0.0], 0.0, "1925-01-01T00:00:00", dipole=gm.Dipole(-30926e-9, -2318e-9, 5817e-9)
    )
    assert np.all(np.isfinite(b))

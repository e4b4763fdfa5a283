"""The Sun's position and the Earth's shadow against published values, astropy, closed-form
cone geometry, a 40-digit evaluation and Basilisk's ``eclipse`` module."""

from __future__ import annotations

import warnings

import numba
import numpy as np
import pytest

from rigidrot_gym.physics.environment import earth, sun

# Basilisk's eclipse constants (astroConstants REQ_EARTH, REQ_SUN), m.
BSK_RADIUS_EARTH = 6378136.6
BSK_RADIUS_SUN = 695000e3


def _ra_dec(v) -> tuple[float, float]:
    """Right ascension in [0, 360) and declination, degrees, of a vector."""
    v = np.asarray(v, dtype=float)
    ra = np.degrees(np.arctan2(v[1], v[0])) % 360.0
    return ra, np.degrees(np.arcsin(v[2] / np.linalg.norm(v)))


def _angle_deg(a, b) -> np.ndarray:
    """Angle between vectors, degrees (atan2 form, accurate at small angles)."""
    cross = np.linalg.norm(np.cross(a, b), axis=-1)
    return np.degrees(np.arctan2(cross, np.sum(np.asarray(a) * b, axis=-1)))


# --------------------------------------------------------------------------------------
# The Sun's position
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instant", "ra", "dec"),
    [
        # USNO / timeanddate: the 2026 March equinox and solstices (UTC, to the minute).
        ("2026-03-20T14:46:00", 0.0, 0.0),
        ("2026-06-21T08:24:00", 90.0, None),
        ("2026-12-21T20:50:00", 270.0, None),
    ],
)
def test_equinox_and_solstices_of_2026(instant, ra, dec):
    """In the mean equator and equinox of date the Sun crosses RA 0/90/270 degrees at the
    published instants, with declination 0 or ± the obliquity of the ecliptic: 23.4359 deg
    in 2026 by the IAU 2006 expression 84381.406" − 46.836769" T (Capitaine et al. 2003),
    not Vallado's. Measured: RA within 0.0045 deg, declination within 0.002 deg (the
    published instants are for the true equinox, with nutation, which the formula leaves
    out)."""
    jd = earth.julian_date(instant)
    t = (jd - earth.J2000) / earth.DAYS_PER_CENTURY
    obliquity = (84381.406 - 46.836769 * t) / 3600.0
    got_ra, got_dec = _ra_dec(sun.mean_of_date(jd))
    if dec is None:
        dec = obliquity if ra == 90.0 else -obliquity
    assert abs((got_ra - ra + 180.0) % 360.0 - 180.0) < 0.02
    assert abs(got_dec - dec) < 0.02


def test_perihelion_and_aphelion_distances_of_2026():
    """The Earth–Sun distance is least in early January, 0.98330 AU, and greatest in early
    July, 1.01664 AU (the almanacs' 2026 apsides; astropy's ephemeris: 0.983302 AU on
    January 3, 17 h UTC, and 1.016644 AU on July 6, 18 h). Measured: 0.983292 AU on January
    3, 18 h, and 1.016710 AU on July 5, 9 h (the formula follows the Earth–Moon barycentre:
    the Moon moves the Earth's centre by 3e-5 AU and a flat apsis by a day or two)."""
    hours = np.arange(0.0, 12 * 24 * 3600.0, 3600.0)
    january = np.linalg.norm(sun.sun_position(hours, "2025-12-29T00:00:00"), axis=-1) / sun.AU
    july = np.linalg.norm(sun.sun_position(hours, "2026-07-01T00:00:00"), axis=-1) / sun.AU
    assert january.min() == pytest.approx(0.98330, abs=2e-4)
    assert july.max() == pytest.approx(1.01664, abs=2e-4)
    # the day of each extreme: January 3, 17 h is 5.7 days after December 29, July 6, 18 h
    # 5.75 days after July 1
    assert abs(hours[np.argmin(january)] / 86400.0 - 5.7) < 2.0
    assert abs(hours[np.argmax(july)] / 86400.0 - 5.75) < 2.0


def test_vallados_example_5_1():
    """Vallado, 4th ed., example 5-1: 2006 April 2, 0 h UT1, r = (146186178, 28789122,
    12481127) km in the mean equator and equinox of date with AU = 149597870 km (the same
    numbers in two independent ports' tests). Measured: 1.7e-6 deg in direction, 4.1e-7
    (61 km) in distance, well inside the formula's 0.01 deg."""
    book = np.array([146186178.0, 28789122.0, 12481127.0]) * 1e3
    ours = np.array(sun.mean_of_date(2453827.5)) * (149597870.0e3 / sun.AU)
    assert _angle_deg(ours, book) < 1e-4
    assert np.linalg.norm(ours) / np.linalg.norm(book) - 1.0 == pytest.approx(0.0, abs=1e-6)


def test_against_astropy_over_2020_to_2030():
    """astropy's Sun (``get_sun``, its built-in ERFA ephemeris, GCRS: apparent, with
    aberration) at 2000 instants over 2020–2030: the direction within the formula's 0.01
    deg (measured: at most 0.0097 deg, 0.0035 deg rms) and the distance within 1e-4
    (measured 8.6e-5). The mean-of-date position against astropy's PrecessedGeocentric of
    date likewise, and the IAU 1976 precession turns astropy's own mean-of-date vectors into
    its GCRS ones within 1e-4 deg (measured 2.4e-5 deg = 0.09": the frame bias and the IAU
    2006 precession against 1976's)."""
    pytest.importorskip("astropy")
    import astropy.units as u
    from astropy.coordinates import PrecessedGeocentric, get_sun
    from astropy.time import Time
    from astropy.utils import iers
    from erfa import ErfaWarning

    iers.conf.auto_download = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ErfaWarning)  # "dubious year": leap seconds after the table
        t = Time("2020-01-01T00:00:00", scale="utc") + np.linspace(0.0, 3652.0, 2000) * u.day
        gcrs = get_sun(t)
        of_date = gcrs.transform_to(PrecessedGeocentric(equinox=t, obstime=t))
        jd = t.utc.jd1 + t.utc.jd2
    ref = gcrs.cartesian.xyz.to_value(u.m).T
    ref_mod = of_date.cartesian.xyz.to_value(u.m).T
    seconds = (jd - jd[0]) * earth.SECONDS_PER_DAY
    ours = sun.sun_position(seconds, "2020-01-01T00:00:00")
    ours_mod = np.stack(sun.mean_of_date(jd), axis=-1)
    assert _angle_deg(ours, ref).max() < 0.01
    assert np.abs(np.linalg.norm(ours, axis=-1) / np.linalg.norm(ref, axis=-1) - 1.0).max() < 1e-4
    assert _angle_deg(ours_mod, ref_mod).max() < 0.01
    precessed = np.stack(sun.precess(jd, tuple(ref_mod.T)), axis=-1)
    assert _angle_deg(precessed, ref).max() < 1e-4
    np.testing.assert_allclose(
        sun.sun_direction(seconds, "2020-01-01T00:00:00"),
        ref / np.linalg.norm(ref, axis=-1, keepdims=True),
        atol=2e-4,
    )


def test_shapes_and_units():
    assert sun.sun_position(0.0, "2026-03-20T12:00:00").shape == (3,)
    t = np.arange(6.0).reshape(2, 3) * 3600.0
    r = sun.sun_position(t, "2026-03-20T12:00:00")
    assert r.shape == (2, 3, 3)
    assert sun.sun_position(t[1, 2], "2026-03-20T12:00:00") == pytest.approx(r[1, 2], rel=1e-15)
    d = sun.sun_direction(t, "2026-03-20T12:00:00")
    assert d.shape == (2, 3, 3)
    np.testing.assert_allclose(np.linalg.norm(d, axis=-1), 1.0, atol=1e-15)
    assert 0.98 * sun.AU < np.linalg.norm(r[0, 0]) < 1.02 * sun.AU


@pytest.mark.parametrize(
    ("t", "epoch", "match"),
    [
        (np.nan, "2026-03-20T12:00:00", "t must be finite"),
        ([0.0, np.inf], "2026-03-20T12:00:00", "t must be finite"),
        ("10", "2026-03-20T12:00:00", "t must be real"),
        (0.0, "2026-03-20T12:00:00+02:00", "epoch"),
        (0.0, "spring", "epoch"),
    ],
)
def test_bad_times_are_refused(t, epoch, match):
    with pytest.raises(ValueError, match=match):
        sun.sun_position(t, epoch)
    with pytest.raises(ValueError, match=match):
        sun.sun_direction(t, epoch)


# --------------------------------------------------------------------------------------
# The Earth's shadow
# --------------------------------------------------------------------------------------

SUN_DISTANCE = 1.496e11
SUN_ON_X = np.array([SUN_DISTANCE, 0.0, 0.0])


def _ring(radius: float, phi) -> np.ndarray:
    """Points at ``radius`` from the Earth's centre, ``phi`` rad from the anti-Sun direction
    (the Sun on +x), in the xy plane."""
    phi = np.asarray(phi, dtype=float)
    return np.stack([-radius * np.cos(phi), radius * np.sin(phi), np.zeros_like(phi)], axis=-1)


def _cone_half_angles(radius: float) -> tuple[float, float]:
    """The angles from the anti-Sun direction, seen from the Earth's centre, at which a circle
    of ``radius`` in a plane through the shadow's axis leaves the umbra and the penumbra.

    Cone geometry: the umbra's cone has half-angle f2 = asin((R_s − R_e)/D) and its apex
    R_e/sin f2 behind the Earth; the penumbra's f1 = asin((R_s + R_e)/D), its apex R_e/sin f1
    before it. A point (−r cos φ, r sin φ) is on the umbra's surface when r sin(φ + f2) = R_e
    and on the penumbra's when r sin(φ − f1) = R_e."""
    f1 = np.arcsin((sun.RADIUS + earth.RADIUS) / SUN_DISTANCE)
    f2 = np.arcsin((sun.RADIUS - earth.RADIUS) / SUN_DISTANCE)
    limb = np.arcsin(earth.RADIUS / radius)
    return limb - f2, limb + f1


@pytest.mark.parametrize("altitude", [500e3, 35786e3])
def test_umbra_and_sunlight_and_the_cone_boundaries(altitude):
    """0 on the shadow's axis behind the Earth, 1 on the sunward side; the transitions lie at
    the cone geometry's angles (within 1e-9 rad on either side); monotone in between."""
    r = earth.RADIUS + altitude
    assert sun.shadow_factors([-r, 0.0, 0.0], SUN_ON_X) == 0.0
    assert sun.shadow_factors([r, 0.0, 0.0], SUN_ON_X) == 1.0
    assert sun.shadow_factors([0.0, r, 0.0], SUN_ON_X) == 1.0
    umbra, penumbra = _cone_half_angles(r)
    eps = 1e-9
    f = sun.shadow_factors(_ring(r, [umbra - eps, umbra + eps, penumbra - eps, penumbra + eps]), SUN_ON_X)
    assert f[0] == 0.0 and 0.0 < f[1] < 1e-6
    assert 1.0 - 1e-6 < f[2] < 1.0 and f[3] == 1.0
    sweep = sun.shadow_factors(_ring(r, np.linspace(umbra, penumbra, 2001)[1:-1]), SUN_ON_X)
    assert np.all(np.diff(sweep) > 0.0)
    assert sweep[0] < 1e-3 and sweep[-1] > 1 - 1e-3


def test_one_orbit_at_the_equinox_against_the_cylindrical_shadow():
    """A 500 km equatorial circular orbit at the 2026 March equinox (the Sun fixed over the
    orbit): the orbit-averaged lost sunlight, mean of 1 − ν, against the cylindrical shadow's
    eclipse fraction (1/π) acos(√(1 − (R/r)²)/cos β), β the Sun's angle to the orbit plane
    (−0.145 deg: the equinox of date is off the J2000 equator). The conical shadow's umbra is
    narrower and its penumbra wider than the cylinder by about the Sun's apparent radius on
    each side; across the penumbra ν goes from 0 to 1 nearly antisymmetrically, so the mean
    differs by about (f1 − f2)/2π = R_e/(π D) = 1.4e-5. Measured: 0.377894 against
    0.377881, 1.3e-5 apart; tolerance 5e-5. The time in the umbra is shorter than the
    cylinder's, the time with any shadow longer, by f2/π and f1/π (measured: within 8e-7
    and 1.2e-6 of those; tolerance 2e-5)."""
    s = sun.sun_position(0.0, "2026-03-20T14:46:00")
    beta = np.arcsin(s[2] / np.linalg.norm(s))
    r = earth.RADIUS + 500e3
    n = 400_000
    u = (np.arange(n) + 0.5) * (2 * np.pi / n)
    ring = np.stack([r * np.cos(u), r * np.sin(u), np.zeros(n)], axis=-1)
    f = sun.shadow_factors(ring, s)
    cylinder = np.arccos(np.sqrt(1.0 - (earth.RADIUS / r) ** 2) / np.cos(beta)) / np.pi
    lost = np.mean(1.0 - f)
    assert lost == pytest.approx(cylinder, abs=5e-5)
    f2 = np.arcsin((sun.RADIUS - earth.RADIUS) / np.linalg.norm(s))
    f1 = np.arcsin((sun.RADIUS + earth.RADIUS) / np.linalg.norm(s))
    assert np.mean(f == 0.0) == pytest.approx(cylinder - f2 / np.pi, abs=2e-5)
    assert np.mean(f < 1.0) == pytest.approx(cylinder + f1 / np.pi, abs=2e-5)


# r_sat (m) with the Sun at (148e9, 20e9, 8e9) m and the default radii: the shadow factor by
# the same formulas (Montenbruck & Gill's disc overlap, a, b, c by asin/acos) evaluated in
# mpmath 1.3.0 at 40 significant digits. Low orbit (500 km), geostationary radius, near the
# umbra's apex (a ≈ b) and beyond it (annular).
SUN_OFF_AXIS = (148e9, 20e9, 8e9)
MPMATH = [
    ((-3417620.0, 5967364.0, -138616.0), 0.15351697911344714749),
    ((-3402715.0, 5975895.0, -137763.0), 0.47407794693192360318),
    ((-3392567.0, 5981675.0, -137183.0), 0.70298795174175331388),
    ((-3378822.0, 5989468.0, -136398.0), 0.9549669489771179535),
    ((-42099338.0, 690115.0, -2229878.0), 0.31478383624536106641),
    ((-42098996.0, 711194.0, -2229709.0), 0.38131513846524465948),
    ((-42094999.0, 921969.0, -2227984.0), 0.97656120613277342433),
    ((-1188827602.0, -150561484.0, -64188563.0), 0.90749754096892279317),
    ((-4948136266.0, -666648884.0, -267452348.0), 0.91968595760182228095),
]


def test_penumbra_against_a_40_digit_evaluation():
    """Measured: within 3.5e-14 (Basilisk's acos form: up to 7.4e-9 in low orbit)."""
    r_sat = np.array([p for p, _ in MPMATH])
    expected = np.array([v for _, v in MPMATH])
    np.testing.assert_allclose(sun.shadow_factors(r_sat, SUN_OFF_AXIS), expected, rtol=0, atol=1e-13)


def test_the_compiled_core_matches_numpy():
    """The jitable cores compiled by numba give the numpy path's numbers (to rounding: the
    compiled libm may differ in the last bit)."""

    @numba.njit
    def both(jd, r_sat, r_sun):
        return sun.position(jd), sun.shadow_factor(r_sat, r_sun, earth.RADIUS, sun.RADIUS)

    jd = earth.julian_date("2026-05-01T06:00:00")
    for r_sat, expected in MPMATH + [((-7e6, 0.0, 0.0), 0.0), ((7e6, 0.0, 0.0), 1.0)]:
        position, factor = both(jd, r_sat, SUN_OFF_AXIS)
        np.testing.assert_allclose(position, sun.position(jd), rtol=1e-14)
        assert factor == pytest.approx(expected, abs=1e-13)


def test_shadow_shapes_broadcast():
    r = earth.RADIUS + 500e3
    ring = _ring(r, np.linspace(0, np.pi, 12)).reshape(3, 4, 3)
    assert sun.shadow_factors(ring, SUN_ON_X).shape == (3, 4)
    assert sun.shadow_factors(ring, np.broadcast_to(SUN_ON_X, (4, 3))).shape == (3, 4)
    assert isinstance(sun.shadow_factors(ring[0, 0], SUN_ON_X), float)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"r_sat": [np.nan, 7e6, 0.0]}, "r_sat must be finite"),
        ({"r_sat": [7e6, 0.0]}, r"r_sat must have shape \(\.\.\., 3\)"),
        ({"r_sat": ["7e6", "0", "0"]}, "r_sat must be real"),
        ({"r_sun": [np.inf, 0.0, 0.0]}, "r_sun must be finite"),
        ({"r_sat": [6e6, 0.0, 0.0]}, "r_sat must lie outside the Earth"),
        ({"r_sat": [0.0, 0.0, earth.RADIUS]}, "r_sat must lie outside the Earth"),
        ({"r_sat": [1.496e11 - 1e8, 0.0, 0.0]}, "r_sat must lie outside the Sun"),
        ({"r_sat": np.zeros((2, 3)) + 7e6, "r_sun": np.zeros((3, 3)) + 1.5e11}, "batch shapes"),
        ({"radius_earth": -1.0}, "radius_earth must be a positive"),
        ({"radius_sun": 0.0}, "radius_sun must be a positive"),
    ],
)
def test_bad_shadow_arguments_are_refused(kwargs, match):
    args = {"r_sat": [7e6, 0.0, 0.0], "r_sun": SUN_ON_X} | kwargs
    with pytest.raises(ValueError, match=match):
        sun.shadow_factors(**args)


# --------------------------------------------------------------------------------------
# Side by side with Basilisk's eclipse module
# --------------------------------------------------------------------------------------


def _basilisk_shadow(r_sats: np.ndarray, r_sun) -> np.ndarray:
    """Basilisk's ``eclipse`` shadow factors after one tick of a process: the Sun and the
    Earth as SpicePlanetStateMsg (the Earth at the origin, named "earth" so the module uses
    its REQ_EARTH), each spacecraft as an SCStatesMsg."""
    from Basilisk.architecture import messaging
    from Basilisk.simulation import eclipse
    from Basilisk.utilities import SimulationBaseClass, macros

    sim = SimulationBaseClass.SimBaseClass()
    process = sim.CreateNewProcess("process")
    process.addTask(sim.CreateNewTask("task", macros.sec2nano(1.0)))
    sun_state = messaging.SpicePlanetStateMsgPayload()
    sun_state.PositionVector = [float(x) for x in r_sun]
    sun_state.PlanetName = "sun"
    earth_state = messaging.SpicePlanetStateMsgPayload()
    earth_state.PositionVector = [0.0, 0.0, 0.0]
    earth_state.PlanetName = "earth"
    messages = [
        messaging.SpicePlanetStateMsg().write(sun_state),
        messaging.SpicePlanetStateMsg().write(earth_state),
    ]
    module = eclipse.Eclipse()
    module.sunInMsg.subscribeTo(messages[0])
    module.addPlanetToModel(messages[1])
    for r in r_sats:
        state = messaging.SCStatesMsgPayload()
        state.r_BN_N = [float(x) for x in r]
        messages.append(messaging.SCStatesMsg().write(state))  # kept alive with the sim
        module.addSpacecraftToModel(messages[-1])
    sim.AddModelToTask("task", module)
    sim.InitializeSimulation()
    sim.ConfigureStopTime(0)
    sim.ExecuteSimulation()
    return np.array([module.eclipseOutMsgs[i].read().shadowFactor for i in range(len(r_sats))])


@pytest.mark.engines
def test_side_by_side_with_basilisk_eclipse():
    """Sunlight, umbra, and dense sweeps through both edges of the penumbra in low and
    geostationary orbit, in and out of the Sun's plane, near the umbra's apex and beyond
    it (annular), with Basilisk's radii (6378.1366 km, 695 000 km): 2470 positions, 1243 in
    the penumbra. Measured: identical 0 and 1 outside the penumbra (and in the annular
    case); in it at most 7.4e-9 apart in low orbit, 3e-11 in geostationary orbit, 1.6e-11
    near the umbra's apex. That is Basilisk's rounding (its acos form): against a 40-digit
    evaluation of the same formulas at these positions Basilisk is 7.4e-9 off, ours 8e-14."""
    pytest.importorskip("Basilisk")
    from Basilisk.utilities import orbitalMotion

    assert orbitalMotion.REQ_EARTH * 1e3 == BSK_RADIUS_EARTH and orbitalMotion.REQ_SUN * 1e3 == BSK_RADIUS_SUN
    r_sun = sun.sun_position(0.0, "2026-03-20T14:46:00")
    axis = -r_sun / np.linalg.norm(r_sun)
    side = np.cross(axis, [0.0, 0.0, 1.0])
    side /= np.linalg.norm(side)
    up = np.cross(axis, side)
    points = []
    for radius in (BSK_RADIUS_EARTH + 500e3, 42164e3):
        limb = np.arcsin(BSK_RADIUS_EARTH / radius)
        a = BSK_RADIUS_SUN / np.linalg.norm(r_sun)
        phi = np.concatenate([np.linspace(limb - 2 * a, limb + 2 * a, 400), [0.0, 0.5 * limb, 2.0, np.pi]])
        for tilt in (0.0, 0.3 * a, 0.9):  # out of the plane through the shadow's axis
            direction = np.cos(tilt) * side + np.sin(tilt) * up
            points.append(radius * (np.cos(phi)[:, None] * axis + np.sin(phi)[:, None] * direction))
    far = np.array([1.2e9 * axis + d * side for d in np.linspace(-1.2e7, 1.2e7, 41)])
    annular = np.array([5e9 * axis + d * side for d in np.linspace(0.0, 2e6, 5)])
    r_sats = np.concatenate(points + [far, annular])
    theirs = _basilisk_shadow(r_sats, r_sun)
    ours = sun.shadow_factors(r_sats, r_sun, radius_earth=BSK_RADIUS_EARTH, radius_sun=BSK_RADIUS_SUN)
    penumbra = (theirs > 0.0) & (theirs < 1.0)
    assert penumbra.sum() > 500 and (theirs == 0.0).sum() > 100 and (theirs == 1.0).sum() > 100
    np.testing.assert_array_equal(ours[~penumbra], theirs[~penumbra])
    assert np.abs(ours - theirs).max() < 2e-8

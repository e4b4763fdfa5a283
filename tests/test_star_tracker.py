"""The star tracker against its statistics and its geometry: the sample covariance of the
attitude error (found with scipy's rotations, not the module's) against the declared
noise-equivalent angles; the outages against cone edges worked out by hand (the Earth's
limb from the tangent's right triangle) and against numpy's arccos over a random sweep; the
compiled jitable functions against the numpy path; every refused input."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from rigidrot_gym.physics.environment import earth
from rigidrot_gym.physics.sensors import star_tracker as st
from rigidrot_gym.physics.sensors.star_tracker import PRESETS, StarTrackerModel

DEG = np.pi / 180.0
ARCSEC = DEG / 3600.0
R_EARTH = 6378137.0  # WGS-84 equatorial radius, m

# A mounting that is not the identity nor a symmetry of the axes: 3-2-1 angles 70°, −35°, 120°.
MOUNTING = Rotation.from_euler("ZYX", [70.0, -35.0, 120.0], degrees=True)
ANISOTROPIC = StarTrackerModel(
    noise_across=3.0 * ARCSEC,
    noise_about=45.0 * ARCSEC,
    mounting=np.roll(MOUNTING.as_quat(), 1),  # scipy is scalar-last
    sun_exclusion=25.0 * DEG,
    earth_exclusion=15.0 * DEG,
)
MOUNTED_42 = StarTrackerModel(
    noise_across=PRESETS["42"].noise_across,
    noise_about=PRESETS["42"].noise_about,
    mounting=np.roll(MOUNTING.as_quat(), 1),
    sun_exclusion=PRESETS["42"].sun_exclusion,
    earth_exclusion=PRESETS["42"].earth_exclusion,
)


def _scipy(q: np.ndarray) -> Rotation:
    """A scalar-first quaternion array as scipy's rotation."""
    return Rotation.from_quat(np.roll(q, -1, axis=-1))


def _first(rotation: Rotation) -> np.ndarray:
    """scipy's rotation as scalar-first quaternions."""
    return np.roll(rotation.as_quat(), 1, axis=-1)


# --------------------------------------------------------------------------------------
# The preset
# --------------------------------------------------------------------------------------


def test_nasa_42s_star_tracker():
    """InOut/SC_Simple.txt: NEA 2.0 2.0 20.0 arcsec RMS, Sun and Earth exclusion 30° and
    10°; the mounting left at the identity, the boresight along body +z."""
    tracker = PRESETS["42"]
    assert tracker.noise_across == pytest.approx(2.0 / 3600.0 * np.pi / 180.0, rel=1e-15)
    assert tracker.noise_about == pytest.approx(20.0 / 3600.0 * np.pi / 180.0, rel=1e-15)
    assert tracker.sun_exclusion == pytest.approx(np.radians(30.0), rel=1e-15)
    assert tracker.earth_exclusion == pytest.approx(np.radians(10.0), rel=1e-15)
    np.testing.assert_array_equal(tracker.boresight, [0.0, 0.0, 1.0])
    # the boresight of a mounted tracker is the mounting's third column (scipy's matrix)
    np.testing.assert_allclose(ANISOTROPIC.boresight, MOUNTING.as_matrix()[:, 2], atol=1e-15)


# --------------------------------------------------------------------------------------
# The error's covariance
# --------------------------------------------------------------------------------------

N = 200_000


def _errors(model: StarTrackerModel, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The body-frame and the sensor-frame error rotation vectors (N, 3) of N measurements
    of one random attitude, by scipy: rotvec of R_true⁻¹ R_measured."""
    truth = Rotation.random(random_state=seed)
    q = np.broadcast_to(_first(truth), (N, 4))
    measured = st.measurements(q, model, np.random.default_rng(seed))
    body = (truth.inv() * _scipy(measured)).as_rotvec()
    sensor = _scipy(np.array(model.mounting)).inv().apply(body)
    return body, sensor


@pytest.mark.parametrize("model", [MOUNTED_42, ANISOTROPIC], ids=["42-mounted", "anisotropic"])
def test_the_error_has_the_declared_noise_equivalent_angles(model):
    """In the sensor frame the error's sample covariance is diag(σ_a², σ_a², σ_b²): each
    variance within 5 standard errors (√(2/N) = 0.32 % relative), the correlations within
    5/√N = 0.011 of 0, the means within 5 σ/√N of 0."""
    _, sensor = _errors(model, seed=11)
    sigma = np.array([model.noise_across, model.noise_across, model.noise_about])
    sample = np.cov(sensor, rowvar=False)
    ratios = np.diag(sample) / sigma**2
    np.testing.assert_allclose(ratios, 1.0, atol=5.0 * np.sqrt(2.0 / N))
    correlation = sample / np.outer(np.sqrt(np.diag(sample)), np.sqrt(np.diag(sample)))
    off = correlation[~np.eye(3, dtype=bool)]
    assert np.max(np.abs(off)) < 5.0 / np.sqrt(N)
    assert np.all(np.abs(np.mean(sensor, axis=0)) < 5.0 * sigma / np.sqrt(N))


@pytest.mark.parametrize("model", [MOUNTED_42, ANISOTROPIC], ids=["42-mounted", "anisotropic"])
def test_covariance_is_the_body_frame_errors_covariance(model):
    """covariance(model) against the sample covariance of the body-frame error, element by
    element within 5 standard errors, √((C_ii C_jj + C_ij²)/N) for a normal sample."""
    body, _ = _errors(model, seed=12)
    declared = st.covariance(model)
    sample = np.cov(body, rowvar=False)
    spread = np.sqrt((np.outer(np.diag(declared), np.diag(declared)) + declared**2) / N)
    assert np.all(np.abs(sample - declared) < 5.0 * spread)
    # and it is M diag(σ²) Mᵀ with scipy's matrix of the mounting
    m = MOUNTING.as_matrix()
    expected = m @ np.diag([model.noise_across, model.noise_across, model.noise_about]) ** 2 @ m.T
    np.testing.assert_allclose(declared, expected, rtol=1e-12, atol=1e-12 * np.max(expected))


def test_the_error_is_a_body_frame_rotation_of_the_drawn_normals():
    """With one draw known: the measured attitude is q ⊗ exp(½ M (σ_a ξ₀, σ_a ξ₁, σ_b ξ₂))
    for the normals rng.standard_normal(shape + (3,)) in order, built with scipy."""
    truth = Rotation.random(4, random_state=3)
    measured = st.measurements(_first(truth), ANISOTROPIC, np.random.default_rng(5))
    xi = np.random.default_rng(5).standard_normal((4, 3))
    sensor = xi * [ANISOTROPIC.noise_across, ANISOTROPIC.noise_across, ANISOTROPIC.noise_about]
    body = MOUNTING.apply(sensor)
    expected = _first(truth * Rotation.from_rotvec(body))
    sign = np.sign(np.sum(expected * measured, axis=-1, keepdims=True))
    np.testing.assert_allclose(measured, sign * expected, atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(measured, axis=-1), 1.0, atol=1e-15)


def test_a_noiseless_tracker_reports_the_truth():
    q = _first(Rotation.random(6, random_state=8)).reshape(3, 2, 4)
    model = StarTrackerModel(noise_across=0.0, noise_about=0.0, mounting=ANISOTROPIC.mounting)
    measured = st.measurements(q, model, np.random.default_rng(0))
    assert measured.shape == (3, 2, 4)
    np.testing.assert_allclose(measured, q, atol=1e-16)


# --------------------------------------------------------------------------------------
# Outages
# --------------------------------------------------------------------------------------


def _perpendicular(d: np.ndarray) -> np.ndarray:
    """A unit vector perpendicular to the unit vector ``d``."""
    p = np.cross(d, [1.0, 0.0, 0.0] if abs(d[0]) < 0.9 else [0.0, 1.0, 0.0])
    return p / np.linalg.norm(p)


def _pointing(boresight: np.ndarray, mounting: Rotation, twist: float) -> np.ndarray:
    """An attitude (scalar-first) that puts the sensor's +z along the world ``boresight``,
    turned by ``twist`` about it: R_body = R_sensor M⁻¹, R_sensor's third column the
    boresight."""
    z = boresight / np.linalg.norm(boresight)
    x = _perpendicular(z)
    sensor = Rotation.from_rotvec(twist * z) * Rotation.from_matrix(np.column_stack([x, np.cross(z, x), z]))
    return _first(sensor * mounting.inv())


def _at_angle(d: np.ndarray, angle: float, azimuth: float) -> np.ndarray:
    """The unit vector at ``angle`` from the unit vector ``d``, at ``azimuth`` about it."""
    p = _perpendicular(d)
    p = np.cos(azimuth) * p + np.sin(azimuth) * np.cross(d, p)
    return np.cos(angle) * d + np.sin(angle) * p


EDGE = [-0.1 * DEG, -1e-6, 1e-6, 0.1 * DEG]  # offsets from a cone's edge, rad


@pytest.mark.parametrize("model", [PRESETS["42"], ANISOTROPIC], ids=["42", "anisotropic"])
def test_the_sun_blinds_inside_its_cone_and_only_there(model):
    """The boresight 29.9°, 30° ∓ 1e-6 rad and 30.1° from the Sun (42's 30° cone), at four
    azimuths and twists, with the Earth behind the tracker: out inside the cone only."""
    to_sun = np.array([0.48, -0.6, 0.64])
    r = (R_EARTH + 500e3) * to_sun  # the Sun overhead: the Earth is behind the tracker
    mounting = _scipy(np.array(model.mounting))
    for offset in EDGE:
        for k in range(4):
            boresight = _at_angle(to_sun, model.sun_exclusion + offset, k * np.pi / 2 + 0.3)
            q = _pointing(boresight, mounting, twist=1.1 * k)
            assert bool(st.outages(q, r, to_sun, model)) == (offset < 0), (offset, k)


def test_the_sun_cone_of_a_degree():
    """A narrow cone, 1°, flips within 1e-9 rad of its edge (the atan2 angle)."""
    model = StarTrackerModel(1e-5, 1e-4, sun_exclusion=1.0 * DEG)
    to_sun = np.array([0.0, 0.0, 1.0])
    r = np.array([0.0, 0.0, R_EARTH + 700e3])
    for offset, out in [(-1e-9, True), (1e-9, False)]:
        q = _pointing(_at_angle(to_sun, 1.0 * DEG + offset, 0.7), Rotation.identity(), 0.0)
        assert bool(st.outages(q, r, to_sun, model)) is out


@pytest.mark.parametrize("altitude", [500e3, 35786e3])
@pytest.mark.parametrize("model", [PRESETS["42"], ANISOTROPIC], ids=["42", "anisotropic"])
def test_the_earth_blinds_within_its_margin_of_the_limb(model, altitude):
    """At 500 km the limb is 68.02° from nadir, asin(R/(R + h)), here found as the right
    triangle's arccos(√(h (2R + h))/(R + h)); 42's 10° margin puts the cone's edge at
    78.02°. Out from the boresight 0.1° or 1e-6 rad inside it, not outside."""
    r_norm = R_EARTH + altitude
    limb = np.arccos(np.sqrt(altitude * (2.0 * R_EARTH + altitude)) / r_norm)
    if altitude == 500e3:
        assert np.degrees(limb) == pytest.approx(68.0187, abs=1e-4)
    direction = np.array([0.36, 0.48, -0.8])
    r = r_norm * direction
    nadir = -direction
    mounting = _scipy(np.array(model.mounting))
    for offset in EDGE:
        for k in range(4):
            boresight = _at_angle(nadir, limb + model.earth_exclusion + offset, k * np.pi / 2 + 0.2)
            to_sun = -boresight  # the Sun behind the tracker
            q = _pointing(boresight, mounting, twist=0.9 * k)
            assert bool(st.outages(q, r, to_sun, model)) == (offset < 0), (offset, k)


def test_without_a_margin_the_earths_disc_blinds():
    """earth_exclusion = 0: the cone is the Earth's disc; nadir is out, just past the limb
    is not, and with no Sun cone the Sun in the boresight does not blind."""
    model = StarTrackerModel(1e-5, 1e-4)
    altitude = 1000e3
    r = np.array([R_EARTH + altitude, 0.0, 0.0])
    limb = np.arccos(np.sqrt(altitude * (2.0 * R_EARTH + altitude)) / (R_EARTH + altitude))
    nadir = np.array([-1.0, 0.0, 0.0])
    for angle, out in [(0.0, True), (limb - 1e-6, True), (limb + 1e-6, False), (np.pi, False)]:
        boresight = _at_angle(nadir, angle, 1.0)
        q = _pointing(boresight, Rotation.identity(), 0.0)
        assert bool(st.outages(q, r, boresight, model)) is out, angle


def test_outages_match_an_independent_computation_over_random_geometry():
    """50,000 random attitudes, positions from 300 km to 40,000 km of altitude and Sun
    directions, against numpy's arccos of the dot products, where the angles lie farther
    than 1e-7 rad from a cone's edge."""
    rng = np.random.default_rng(21)
    n = 50_000
    model = ANISOTROPIC
    q = _first(Rotation.random(n, random_state=22))
    r = rng.standard_normal((n, 3))
    r *= (R_EARTH + rng.uniform(300e3, 40_000e3, n))[:, None] / np.linalg.norm(r, axis=1, keepdims=True)
    to_sun = rng.standard_normal((n, 3))
    to_sun /= np.linalg.norm(to_sun, axis=1, keepdims=True)
    boresight = (_scipy(q) * MOUNTING).apply([0.0, 0.0, 1.0])
    sun_angle = np.arccos(np.clip(np.sum(boresight * to_sun, axis=1), -1.0, 1.0))
    nadir = -r / np.linalg.norm(r, axis=1, keepdims=True)
    earth_angle = np.arccos(np.clip(np.sum(boresight * nadir, axis=1), -1.0, 1.0))
    earth_edge = np.arcsin(R_EARTH / np.linalg.norm(r, axis=1)) + model.earth_exclusion
    expected = (sun_angle < model.sun_exclusion) | (earth_angle < earth_edge)
    clear = (np.abs(sun_angle - model.sun_exclusion) > 1e-7) & (np.abs(earth_angle - earth_edge) > 1e-7)
    got = st.outages(q, r, to_sun, model)
    assert got.shape == (n,) and got.dtype == bool
    np.testing.assert_array_equal(got[clear], expected[clear])
    assert np.count_nonzero(~clear) < 10
    # both causes, and clear sky, well represented
    assert np.count_nonzero(sun_angle < model.sun_exclusion) > 1000
    assert np.count_nonzero(earth_angle < earth_edge) > 1000
    assert np.count_nonzero(~expected) > n // 2


def test_outage_shapes_broadcast():
    q = _first(Rotation.random(5, random_state=1)).reshape(5, 1, 4)
    r = np.array([[7e6, 0.0, 0.0], [0.0, 7e6, 0.0], [0.0, 0.0, 7e6]])
    to_sun = np.array([1.0, 2.0, 2.0])  # any length: normalised
    out = st.outages(q, r, to_sun, PRESETS["42"])
    assert out.shape == (5, 3)
    assert st.outages(q[0, 0], r[0], to_sun, PRESETS["42"]).shape == ()
    # the length of to_sun does not matter
    np.testing.assert_array_equal(out, st.outages(q, r, to_sun / 3.0, PRESETS["42"]))


# --------------------------------------------------------------------------------------
# Compiled
# --------------------------------------------------------------------------------------


@numba.njit
def _compiled(q, mounting, r, to_sun, sigmas, exclusions, xi):
    return (
        st.error_rotation(mounting, sigmas[0], sigmas[1], xi),
        st.measure(q, mounting, sigmas[0], sigmas[1], xi),
        st.blinded(q, mounting, r, to_sun, exclusions[0], exclusions[1]),
    )


def test_the_jitable_functions_compile_and_agree_with_numpy():
    """Called on one body's floats inside numba.njit, the functions give the numpy path's
    numbers on arrays of bodies (to rounding), blinded outcomes included."""
    rng = np.random.default_rng(31)
    n = 64
    model = ANISOTROPIC
    q = _first(Rotation.random(n, random_state=32))
    r = rng.standard_normal((n, 3))
    r *= (R_EARTH + 600e3) / np.linalg.norm(r, axis=1, keepdims=True)
    to_sun = rng.standard_normal((n, 3))
    to_sun /= np.linalg.norm(to_sun, axis=1, keepdims=True)
    xi = rng.standard_normal((n, 3))
    sigmas = (model.noise_across, model.noise_about)
    exclusions = (model.sun_exclusion, model.earth_exclusion)

    def split(a):
        return tuple(a[:, i] for i in range(a.shape[1]))

    numpy_error = np.stack(st.error_rotation(model.mounting, *sigmas, split(xi)), axis=-1)
    numpy_measured = np.stack(st.measure(split(q), model.mounting, *sigmas, split(xi)), axis=-1)
    numpy_blinded = st.blinded(split(q), model.mounting, split(r), split(to_sun), *exclusions)
    for i in range(n):
        error, measured, blind = _compiled(
            tuple(q[i]), model.mounting, tuple(r[i]), tuple(to_sun[i]), sigmas, exclusions, tuple(xi[i])
        )
        np.testing.assert_allclose(error, numpy_error[i], rtol=1e-13, atol=1e-20)
        np.testing.assert_allclose(measured, numpy_measured[i], rtol=0, atol=1e-15)
        assert isinstance(blind, float) and blind == numpy_blinded[i]
    assert 0 < np.count_nonzero(numpy_blinded) < n
    np.testing.assert_array_equal(numpy_blinded > 0.5, st.outages(q, r, to_sun, model))


# --------------------------------------------------------------------------------------
# Refused input
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"noise_across": -1e-6}, "noise_across must be a finite number ≥ 0"),
        ({"noise_across": float("nan")}, "noise_across must be a finite number"),
        ({"noise_about": "1e-5"}, "noise_about must be a finite number"),
        ({"noise_about": True}, "noise_about must be a finite number"),
        ({"mounting": (1.0, 0.1, 0.0, 0.0)}, "mounting must be a unit quaternion"),
        ({"mounting": (1.0, 0.0, 0.0)}, r"mounting must have shape \(\.\.\., 4\)"),
        ({"mounting": np.eye(4)[:2]}, r"mounting must be one quaternion of shape \(4,\)"),
        ({"mounting": (np.nan, 0.0, 0.0, 0.0)}, "mounting must be finite"),
        ({"sun_exclusion": -0.1}, r"sun_exclusion must be an angle in \[0, π\]"),
        ({"sun_exclusion": 4.0}, r"sun_exclusion must be an angle in \[0, π\]"),
        ({"earth_exclusion": float("inf")}, "earth_exclusion must be a finite number"),
        ({"earth_exclusion": -1e-3}, r"earth_exclusion must be an angle in \[0, π\]"),
    ],
)
def test_bad_model_fields_are_named(kwargs, match):
    fields = {"noise_across": 1e-5, "noise_about": 1e-4} | kwargs
    with pytest.raises(ValueError, match=match):
        StarTrackerModel(**fields)


def test_the_mounting_is_normalised_and_stored_as_floats():
    model = StarTrackerModel(1e-5, 1e-4, mounting=[1.0 + 5e-7, 0, 0, 0])
    assert model.mounting == (1.0, 0.0, 0.0, 0.0)
    assert all(type(c) is float for c in model.mounting)
    hash(model)  # frozen and hashable


GOOD_Q = np.array([1.0, 0.0, 0.0, 0.0])
GOOD_R = np.array([0.0, 0.0, 7e6])
GOOD_SUN = np.array([1.0, 0.0, 0.0])


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: st.measurements([1.0, 0.0, 0.0], PRESETS["42"], np.random.default_rng()), r"q must have"),
        (
            lambda: st.measurements([1.0, 0.1, 0.0, 0.0], PRESETS["42"], np.random.default_rng()),
            "q must be a unit",
        ),
        (
            lambda: st.measurements([np.nan, 0, 0, 0], PRESETS["42"], np.random.default_rng()),
            "q must be finite",
        ),
        (
            lambda: st.measurements(["1", "0", "0", "0"], PRESETS["42"], np.random.default_rng()),
            "q must be real",
        ),
        (lambda: st.measurements(GOOD_Q, "42", np.random.default_rng()), "model must be a StarTrackerModel"),
        (lambda: st.measurements(GOOD_Q, PRESETS["42"], 0), "rng must be a numpy.random.Generator"),
        (lambda: st.outages(np.zeros((2, 3)), GOOD_R, GOOD_SUN, PRESETS["42"]), r"q must have shape"),
        (lambda: st.outages([0.0, 0.0, 0.0, 2.0], GOOD_R, GOOD_SUN, PRESETS["42"]), "q must be a unit"),
        (lambda: st.outages([np.inf, 0, 0, 0], GOOD_R, GOOD_SUN, PRESETS["42"]), "q must be finite"),
        (lambda: st.outages(GOOD_Q, [7e6, 0.0], GOOD_SUN, PRESETS["42"]), r"r must have shape \(\.\.\., 3\)"),
        (lambda: st.outages(GOOD_Q, [7e6, np.nan, 0.0], GOOD_SUN, PRESETS["42"]), "r must be finite"),
        (
            lambda: st.outages(GOOD_Q, [6e6, 0.0, 0.0], GOOD_SUN, PRESETS["42"]),
            "r must lie outside the Earth",
        ),
        (
            lambda: st.outages(GOOD_Q, [0.0, earth.RADIUS, 0.0], GOOD_SUN, PRESETS["42"]),
            "r must lie outside the Earth",
        ),
        (lambda: st.outages(GOOD_Q, GOOD_R, [0.0, 0.0, 0.0], PRESETS["42"]), "to_sun must be a non-zero"),
        (lambda: st.outages(GOOD_Q, GOOD_R, [1.0, np.nan, 0.0], PRESETS["42"]), "to_sun must be finite"),
        (lambda: st.outages(GOOD_Q, GOOD_R, [1.0, 0.0], PRESETS["42"]), r"to_sun must have shape"),
        (
            lambda: st.outages(np.tile(GOOD_Q, (2, 1)), np.tile(GOOD_R, (3, 1)), GOOD_SUN, PRESETS["42"]),
            r"batch shapes do not broadcast together: q \(2,\), r \(3,\)",
        ),
        (lambda: st.outages(GOOD_Q, GOOD_R, GOOD_SUN, None), "model must be a StarTrackerModel"),
        (lambda: st.covariance({"noise_across": 1e-5}), "model must be a StarTrackerModel"),
    ],
)
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()

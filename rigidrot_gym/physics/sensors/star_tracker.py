"""A star tracker: the attitude it reports, with noise-equivalent angles across and about its
boresight, and the outages while the Sun or the Earth is inside its exclusion cones.

Frames: the sensor frame has the boresight along its +z axis; the unit quaternion
``mounting`` (M as a matrix) maps the sensor frame to the body frame, and an attitude ``q``
maps the body frame to the world frame (ECI), so the boresight points along
b_body = M ẑ in the body frame and b = R(q) M ẑ in the world frame.

Noise: the tracker reports the attitude

    q̃ = q ⊗ exp(½ δθ),   δθ = M (σ_a ξ₀, σ_a ξ₁, σ_b ξ₂),

ξ independent standard normals, σ_a the noise-equivalent angle (1σ) about each of the two
sensor axes across the boresight and σ_b the one about the boresight (a star tracker
centroids stars across its field far better than it resolves a roll about the boresight:
NASA 42's default is 2″, 2″, 20″). δθ is a small rotation in the body frame: the reported
body frame is the true one turned by δθ, v_world = R(q̃) v = R(q) (v + δθ × v) to first
order. This is the multiplicative error convention of Markley & Crassidis, *Fundamentals of
Spacecraft Attitude Determination and Control* (2014), §6.2 (their A(q̃) = A(δq) A(q), A the
world → body attitude matrix, is q̃ = q ⊗ δq here; :mod:`~rigidrot_gym.physics.estimation.mekf` takes
it so), and an estimator's measurement covariance is R = M diag(σ_a², σ_a², σ_b²) Mᵀ
(:func:`covariance`). 42 (``Source/42sensors.c``, ``StarTrackerModel``) draws the same
error in the sensor frame, as the normalised quaternion (½ NEA ξ, 1): a turn by 2 atan(½|δθ|)
rather than |δθ|, 8e-10 relative at 42's 20″.

Outages, as 42's ``StarTrackerModel`` has them (no measurement, ``Valid = FALSE``):

* the Sun: while the angle between b and the unit vector to the Sun is below the half-angle
  ``sun_exclusion`` (42: ``BoS > CosSunExclAng``);
* the Earth: while the boresight is within ``earth_exclusion`` of the Earth's limb or on its
  disc, angle(b, −r̂) < asin(R_⊕/|r|) + ``earth_exclusion``, r the spacecraft's position
  from the Earth's centre. 42 counts the exclusion from the limb, not from nadir:
  ``LimbAng = asin(W->rad/OrbRad); ... if (BoN > cos(LimbAng + ST->EarthExclAng))
  ST->Valid = FALSE;`` with BoN the cosine of the boresight's angle from nadir. The Earth is
  a sphere of radius :data:`rigidrot_gym.physics.environment.earth.RADIUS` (WGS-84 equatorial).

The angles are formed as atan2(|b × d|, b · d), accurate to rounding at every angle (an
arccos of the dot product loses half its digits near 0 and π, where 42's cosines do too).

:data:`PRESETS` holds NASA 42's star tracker (``InOut/SC_Simple.txt``: noise-equivalent
angles 2.0 2.0 20.0 arcsec RMS, Sun, Earth, Moon exclusion angles 30, 10, 10 degrees); its
mounting (angles −90, 90, 0, sequence 321, in 42's file) belongs to a spacecraft's layout
and is left at the identity here.

Left out: the Moon's exclusion cone (42's third angle, 10° from the Moon's limb); the count
of stars in the field of view and the field of view itself (a tracker here always
identifies enough stars outside its exclusion cones); the update rate (the env's sensor
period sets when measurements are taken); stellar and velocity aberration, the spacecraft's
own rotation during an exposure (smear), bias, thermal misalignment and the low- and
high-frequency spatial errors of real trackers; the Earth's bright atmosphere above its
solid limb, and its oblateness; light reflected by the spacecraft.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidrot_gym.physics.environment import earth
from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable, select
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qexp, qmul, qnormalize, qrotate

_DEG = np.pi / 180.0
_ARCSEC = _DEG / 3600.0
_BORESIGHT = (0.0, 0.0, 1.0)  # in the sensor frame


@dataclass(frozen=True)
class StarTrackerModel:
    """One star tracker's noise, mounting and exclusion cones.

    Attributes:
        noise_across: σ_a, the 1σ noise-equivalent angle about each of the two sensor axes
            across the boresight (x and y), rad (≥ 0).
        noise_about: σ_b, the 1σ noise-equivalent angle about the boresight (sensor z), rad
            (≥ 0).
        mounting: the unit quaternion ``[w, x, y, z]`` from the sensor frame (boresight +z)
            to the body frame; default the identity, the boresight along body +z. Stored as
            a tuple of 4 floats, normalised (within 1e-6 of unit norm).
        sun_exclusion: the half-angle of the cone about the direction to the Sun inside
            which the boresight sees nothing, rad, in [0, π] (0: no Sun exclusion).
        earth_exclusion: how near the boresight may come to the Earth's limb, rad, in
            [0, π]; the boresight on the Earth's disc is always an outage.
    """

    noise_across: float
    noise_about: float
    mounting: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)
    sun_exclusion: float = 0.0
    earth_exclusion: float = 0.0

    def __post_init__(self) -> None:
        for name in ("noise_across", "noise_about"):
            value = validation.scalar(getattr(self, name), name)
            if value < 0.0:
                raise ValueError(f"{name} must be a finite number ≥ 0, got {value!r}")
            object.__setattr__(self, name, value)
        for name in ("sun_exclusion", "earth_exclusion"):
            value = validation.scalar(getattr(self, name), name)
            if not 0.0 <= value <= np.pi:
                raise ValueError(f"{name} must be an angle in [0, π] rad, got {value!r}")
            object.__setattr__(self, name, value)
        mounting = validation.unit_quaternions(self.mounting, "mounting")
        if mounting.shape != (4,):
            raise ValueError(f"mounting must be one quaternion of shape (4,), got shape {mounting.shape}")
        object.__setattr__(self, "mounting", tuple(float(c) for c in mounting))

    @property
    def boresight(self) -> np.ndarray:
        """The boresight's unit vector in the body frame, M ẑ (3,)."""
        return np.array(qrotate(self.mounting, _BORESIGHT), dtype=np.float64)


PRESETS = {
    # NASA 42, InOut/SC_Simple.txt: NEA 2.0 2.0 20.0 arcsec RMS (sensor x, y, z; boresight z),
    # Sun, Earth, Moon exclusion 30, 10, 10 deg (the Moon's left out).
    "42": StarTrackerModel(
        noise_across=2.0 * _ARCSEC,
        noise_about=20.0 * _ARCSEC,
        sun_exclusion=30.0 * _DEG,
        earth_exclusion=10.0 * _DEG,
    ),
}


# ----------------------------------------------------------------------------------
# Component-wise functions (floats and tuples, or tuples of arrays; see jit.py)
# ----------------------------------------------------------------------------------


@jitable
def error_rotation(mounting, noise_across, noise_about, xi):
    """The measurement error δθ (3-tuple, rad) as a rotation vector in the body frame:
    (σ_a ξ₀, σ_a ξ₁, σ_b ξ₂) in the sensor frame, turned into the body frame by
    ``mounting`` (4-tuple, sensor → body); ``xi`` a 3-tuple of standard normals."""
    return qrotate(mounting, (noise_across * xi[0], noise_across * xi[1], noise_about * xi[2]))


@jitable
def measure(q, mounting, noise_across, noise_about, xi):
    """The reported attitude q ⊗ exp(½ δθ) (4-tuple, normalised) of the true attitude ``q``
    (4-tuple, body → world), δθ = :func:`error_rotation` (a body-frame rotation)."""
    dtheta = error_rotation(mounting, noise_across, noise_about, xi)
    return qnormalize(qmul(q, qexp(vec.scale(0.5, dtheta))))


@jitable
def _angle(a, b):
    """The angle between two 3-vectors (any non-zero lengths), atan2(|a × b|, a · b)."""
    return np.arctan2(vec.norm(vec.cross(a, b)), vec.dot(a, b))


@jitable
def blinded(q, mounting, r, to_sun, sun_exclusion, earth_exclusion):
    """1.0 while the Sun or the Earth is inside its exclusion cone, else 0.0.

    Args:
        q: the attitude (4-tuple, body → world).
        mounting: sensor → body (4-tuple); the boresight is the sensor's +z.
        r: the spacecraft's position from the Earth's centre (3-tuple, m, world frame);
            outside the Earth (inside, the whole sky counts as Earth).
        to_sun: the direction to the Sun (3-tuple, world frame; need not be unit).
        sun_exclusion: the Sun cone's half-angle, rad.
        earth_exclusion: the margin beyond the Earth's limb, rad.

    No checks: :func:`outages` is the checked, batched door.
    """
    boresight = qrotate(q, qrotate(mounting, _BORESIGHT))
    nadir = (-r[0], -r[1], -r[2])
    limb = np.arcsin(np.minimum(earth.RADIUS / vec.norm(r), 1.0))
    sun_in = _angle(boresight, to_sun) < sun_exclusion
    earth_in = _angle(boresight, nadir) < limb + earth_exclusion
    return select(sun_in | earth_in, 1.0, 0.0)


# ----------------------------------------------------------------------------------
# Batched public functions
# ----------------------------------------------------------------------------------


def _model(model) -> StarTrackerModel:
    if not isinstance(model, StarTrackerModel):
        raise ValueError(f"model must be a StarTrackerModel, got {validation.show(model)}")
    return model


def _split(a: np.ndarray) -> tuple:
    return tuple(a[..., i] for i in range(a.shape[-1]))


def covariance(model: StarTrackerModel) -> np.ndarray:
    """The covariance (3, 3), rad², of the body-frame error rotation δθ:
    M diag(σ_a², σ_a², σ_b²) Mᵀ, M the mounting's rotation matrix; the measurement
    covariance of a multiplicative attitude filter (Markley & Crassidis 2014, §6.2)."""
    model = _model(model)
    m = quat.to_matrix(np.array(model.mounting))
    sigma2 = np.array([model.noise_across, model.noise_across, model.noise_about]) ** 2
    return (m * sigma2) @ m.T


def measurements(q, model: StarTrackerModel, rng: np.random.Generator) -> np.ndarray:
    """The attitudes the star tracker reports for the true attitudes ``q``.

    Args:
        q: (..., 4) unit quaternions, body → world.
        model: the tracker.
        rng: the source of the normals, one draw ``rng.standard_normal(q.shape[:-1] + (3,))``
            (sensor x, y, z).

    Returns:
        (..., 4) the reported attitudes, q ⊗ exp(½ δθ); outages are not applied here
        (:func:`outages`).

    Raises:
        ValueError: naming the argument, for a ``q`` that is not a finite (..., 4) array of
            unit quaternions (within 1e-6; they are normalised), a ``model`` that is not a
            :class:`StarTrackerModel`, an ``rng`` that is not a ``numpy.random.Generator``.
    """
    q = validation.unit_quaternions(q, "q")
    model = _model(model)
    rng = validation.generator(rng)
    xi = rng.standard_normal(q.shape[:-1] + (3,))
    out = measure(_split(q), model.mounting, model.noise_across, model.noise_about, _split(xi))
    return np.stack(np.broadcast_arrays(*out), axis=-1)


def outages(q, r, to_sun, model: StarTrackerModel) -> np.ndarray:
    """Whether the Sun or the Earth blinds the star tracker (:func:`blinded`).

    Args:
        q: (..., 4) unit quaternions, body → world.
        r: (..., 3) the spacecraft's positions from the Earth's centre, m (world frame),
            outside the Earth.
        to_sun: (..., 3) the directions to the Sun (world frame), non-zero (normalised
            here).
        model: the tracker.

    Returns:
        A boolean array of the arguments' broadcast leading shape (0-d for one of each):
        True where no measurement is made.

    Raises:
        ValueError: naming the argument, for values that are not finite real arrays of
            the right last size, a ``q`` not of unit norm, an ``r`` inside (or on) the
            Earth, a zero ``to_sun``, leading shapes that do not broadcast, or a ``model``
            that is not a :class:`StarTrackerModel`.
    """
    q = validation.unit_quaternions(q, "q")
    r = validation.vectors(r, "r", 3)
    to_sun = validation.vectors(to_sun, "to_sun", 3)
    model = _model(model)
    distance = np.linalg.norm(r, axis=-1)
    if np.any(distance <= earth.RADIUS):
        first = r.reshape(-1, 3)[int(np.argmin(distance.reshape(-1)))]
        raise ValueError(
            f"r must lie outside the Earth (radius {earth.RADIUS:.9g} m), got {first.tolist()} "
            f"at {np.linalg.norm(first):.9g} m from its centre"
        )
    length = np.linalg.norm(to_sun, axis=-1, keepdims=True)
    if np.any(length == 0.0):
        raise ValueError("to_sun must be a non-zero direction, got [0.0, 0.0, 0.0]")
    to_sun = to_sun / length
    shape = validation.batch_shape(q=q.shape[:-1], r=r.shape[:-1], to_sun=to_sun.shape[:-1])
    out = blinded(
        _split(np.broadcast_to(q, shape + (4,))),
        model.mounting,
        _split(np.broadcast_to(r, shape + (3,))),
        _split(np.broadcast_to(to_sun, shape + (3,))),
        model.sun_exclusion,
        model.earth_exclusion,
    )
    return np.asarray(out, dtype=np.float64).reshape(shape) > 0.5

"""Coarse Sun sensors (CSS): photodiodes whose output follows the cosine of the Sun's incidence
angle, each within its field of view, dimmed by distance and by the Earth's shadow, and the
Sun's direction estimated from a set of them.

The model is Basilisk's ``coarseSunSensor`` (2.12; ``src/simulation/sensors/coarseSunSensor/
coarseSunSensor.cpp``, ``_Documentation/secModelDescription.tex``), in its order. With n̂ a
sensor's unit normal and ŝ the unit vector to the Sun, both in the body frame:

1. γ = n̂·ŝ, set to 0 where γ < cos(fov) (``computeTrueOutput``: ``signal >= cos(fov) ?
   signal : 0``; ``fov`` the half-angle of the field of view);
2. the Kelly factor: γ ← γ (1 − exp(−γ²/κ)) where κ > 10⁻¹⁰ (``kellyFactor``, its ``kPower``
   left at 2; κ ≤ 10⁻¹⁰ leaves γ as it is);
3. the Sun's distance: γ ← γ · (1 AU)²/r² (``computeSunData``'s ``sunDistanceFactor``, r the
   distance from the spacecraft to the Sun);
4. the eclipse: γ ← γ ν, ν the fraction of the Sun's disc in view (``EclipseMsgPayload.
   illuminationFactor``, which 2.12.1 reads in place of the deprecated ``shadowFactor``;
   :func:`rigidrot_gym.physics.environment.sun.shadow_factors`);
5. noise, then the scale: y = (γ + n) f (``applySensorErrors`` then ``scaleSensorValues``,
   f = ``scaleFactor``, the output at normal incidence in full sunlight at 1 AU);
6. the clamp: y ← min(max(y, min_output), max_output) (``applySaturation``, ``minOutput`` and
   ``maxOutput``).

The noise here is declared in output units, σ = f × Basilisk's ``senNoiseStd`` (so y = f γ +
σ ξ, the same distribution), and it is white, as Basilisk 2.12.1's is at its default settings
(its ``GaussMarkov`` utility; the test measures it): the same in distribution, not sample for
sample. As in Basilisk, the noise is added in eclipse too, so that a sensor in the dark reads
max(σ ξ, 0) rather than exactly 0: ask :func:`sun_direction` for a ``threshold`` a few σ above
0. (NASA 42's ``CssModel``, ``Source/42sensors.c``, reads 0 in any eclipse, penumbra included,
and quantises.) Basilisk's astronomical unit is 149 597 870 693 m
(``astroConstants.h``, ``AU2M``), 7 m short of the IAU's :data:`rigidrot_gym.physics.environment.sun.AU`
used here: a relative 9.4e-11 in the distance factor. Left out: albedo, the sensor bias,
Basilisk's faults, its ``kPower`` other than 2, and the 42 model's quantisation.

:data:`PRESETS` ``["cube"]`` holds six sensors facing ±x, ±y, ±z with a 90° half-cone, as
NASA 42's CSS (``InOut/SC_Simple.txt``, "Half-cone Angle, deg 90.0", "Scale Factor 1.0";
Basilisk's default ``fov`` is 60°): a direction off the cube's coordinate planes lights
three of them, one on each axis.

Direction estimate (:func:`sun_direction`): with N the normals of the lit sensors (reading
above a threshold) as rows and y their readings, y ≈ c N ŝ (c = f (1 AU/r)² ν > 0 and no Kelly
factor), so ŝ is the normalised least-squares solution of (Nᵀ N) s = Nᵀ y. It is the standard
CSS estimate, Basilisk's ``cssWlsEst`` (``src/fswAlgorithms/attDetermination/CSSEst/
cssWlsEst.c``, ``computeWlsmn``) with ``useWeights`` off and three sensors or more; it needs
three lit sensors whose normals are not coplanar.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidrot_gym.physics.environment.sun import AU
from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable, kernel, select
from rigidrot_gym.physics.rotation import vector as vec

# Basilisk applies the Kelly factor only above this κ (computeTrueOutput's eps).
KELLY_MIN = 1e-10
# The lit sensors' normals count as coplanar when det Nᵀ N is below this share of the cube of
# its mean eigenvalue (tr Nᵀ N / 3).
_COPLANAR = 1e-10


@dataclass(frozen=True, eq=False)
class CoarseSunSensors:
    """A set of k coarse Sun sensors (compared by identity: ``normals`` is an array).

    Attributes:
        normals: (k, 3) unit normals in the body frame (within 1e-6 of unit length; they are
            normalised and stored read-only).
        field_of_view: the half-angle of each sensor's field of view, rad, in (0, π]
            (Basilisk's ``fov``).
        kelly: κ of the Kelly factor 1 − exp(−γ²/κ) (≥ 0; Basilisk's ``kellyFactor``: up to
            1e-10, off).
        scale: the output at normal incidence in full sunlight at 1 AU (> 0; Basilisk's
            ``scaleFactor``).
        noise: σ of the white noise, output units (≥ 0).
        max_output: the largest output (Basilisk's ``maxOutput``; inf: none).
        min_output: the smallest output (Basilisk's ``minOutput``), below ``max_output``.
    """

    normals: np.ndarray
    field_of_view: float = np.pi / 2.0
    kelly: float = 0.0
    scale: float = 1.0
    noise: float = 0.0
    max_output: float = np.inf
    min_output: float = 0.0

    def __post_init__(self) -> None:
        normals = validation.floats(self.normals, "normals")
        if normals.ndim != 2 or normals.shape[1] != 3 or normals.shape[0] == 0:
            raise ValueError(f"normals must have shape (k, 3) with k ≥ 1, got shape {normals.shape}")
        if not np.all(np.isfinite(normals)):
            raise ValueError(f"normals must be finite, got {validation.show(normals.tolist())}")
        length = np.linalg.norm(normals, axis=-1)
        off = np.abs(length - 1.0)
        if np.any(off > validation.UNIT_TOLERANCE):
            i = int(np.argmax(off))
            raise ValueError(
                f"normals must be unit vectors, got {normals[i].tolist()} (row {i}) with norm {length[i]:.9g}"
            )
        normals = normals / length[:, None]
        normals.setflags(write=False)
        object.__setattr__(self, "normals", normals)
        fov = validation.scalar(self.field_of_view, "field_of_view")
        if not 0.0 < fov <= np.pi:
            raise ValueError(f"field_of_view must be in (0, π] rad, got {fov!r}")
        object.__setattr__(self, "field_of_view", fov)
        for name in ("kelly", "noise"):
            value = validation.scalar(getattr(self, name), name)
            if value < 0.0:
                raise ValueError(f"{name} must be a finite number ≥ 0, got {value!r}")
            object.__setattr__(self, name, value)
        object.__setattr__(self, "scale", validation.scalar(self.scale, "scale", positive=True))
        low = validation.scalar(self.min_output, "min_output")
        high = validation.floats(self.max_output, "max_output")
        if high.ndim or not high > low:
            raise ValueError(
                f"max_output must be a number above min_output ({low!r}) or inf, got {self.max_output!r}"
            )
        object.__setattr__(self, "min_output", low)
        object.__setattr__(self, "max_output", float(high))

    @property
    def count(self) -> int:
        """k, the number of sensors."""
        return self.normals.shape[0]


PRESETS = {
    # Six sensors on the faces of a cube, 90° half-cone, scale 1 (NASA 42's CSS, SC_Simple.txt).
    "cube": CoarseSunSensors(np.vstack([np.eye(3), -np.eye(3)]), field_of_view=np.pi / 2.0),
}


@jitable
def response(normal, sun_body, distance_au, shadow, cos_fov, kelly, scale):
    """The noise-free, unclamped output of one sensor of unit ``normal`` (3-tuple, body frame)
    with the Sun in the unit direction ``sun_body`` (3-tuple, body frame), ``distance_au`` AU
    away, ``shadow`` (ν, 0 to 1) of its disc in view: Basilisk's γ (steps 1-5 of the module's
    notes without the noise) for the field of view's cosine ``cos_fov``, the Kelly factor's κ
    ``kelly`` (off up to :data:`KELLY_MIN`) and the ``scale``. No checks."""
    g = vec.dot(normal, sun_body)
    g = select(g >= cos_fov, g, 0.0)
    on = kelly > KELLY_MIN
    k = select(on, kelly, 1.0)
    g = g * select(on, 1.0 - np.exp(-(g * g) / k), 1.0)
    g = g * (1.0 / (distance_au * distance_au))
    g = g * shadow
    return g * scale


def readings(sun_body, distance, shadow, sensors: CoarseSunSensors, rng: np.random.Generator) -> np.ndarray:
    """The sensors' outputs.

    Args:
        sun_body: (..., 3) the unit vector from the spacecraft to the Sun in the body frame
            (within 1e-6 of unit length; normalised).
        distance: (...) the distance from the spacecraft to the Sun, m (positive).
        shadow: (...) ν, the fraction of the Sun's disc in view, in [0, 1] (1: full sunlight).
        sensors: the sensors.
        rng: the source of the noise: one standard normal per sensor (an array of the
            result's shape), drawn even when the noise is 0.

    The leading shapes broadcast together.

    Returns:
        The outputs (..., k): the scale times the cosine response, plus noise, clamped to
        [``min_output``, ``max_output``].

    Raises:
        ValueError: naming the argument, for values that are not finite real numbers, a
            ``sun_body`` not (..., 3) or not of unit length, a distance that is not positive,
            a ``shadow`` outside [0, 1], shapes that do not broadcast, ``sensors`` that are
            not :class:`CoarseSunSensors` or an ``rng`` that is not a numpy Generator.
    """
    sun_body = validation.vectors(sun_body, "sun_body", 3)
    length = np.linalg.norm(sun_body, axis=-1)
    off = np.abs(length - 1.0)
    if np.any(off > validation.UNIT_TOLERANCE):
        i = int(np.argmax(off.reshape(-1)))
        raise ValueError(
            f"sun_body must be unit vectors, got {sun_body.reshape(-1, 3)[i].tolist()} "
            f"with norm {length.reshape(-1)[i]:.9g}"
        )
    sun_body = sun_body / length[..., None]
    distance = validation.finite_floats(distance, "distance")
    if not np.all(distance > 0.0):
        raise ValueError(f"distance must be positive, got {validation.show(distance.tolist())}")
    shadow = validation.finite_floats(shadow, "shadow")
    if not np.all((shadow >= 0.0) & (shadow <= 1.0)):
        raise ValueError(f"shadow must lie in [0, 1], got {validation.show(shadow.tolist())}")
    if not isinstance(sensors, CoarseSunSensors):
        raise ValueError(f"sensors must be CoarseSunSensors, got {validation.show(sensors)}")
    rng = validation.generator(rng)
    shape = validation.batch_shape(sun_body=sun_body.shape[:-1], distance=distance.shape, shadow=shadow.shape)
    sun = tuple(np.broadcast_to(c, shape)[..., None] for c in np.moveaxis(sun_body, -1, 0))
    clean = response(
        tuple(sensors.normals.T),
        sun,
        np.broadcast_to(distance / AU, shape)[..., None],
        np.broadcast_to(shadow, shape)[..., None],
        np.cos(sensors.field_of_view),
        sensors.kelly,
        sensors.scale,
    )
    out = np.broadcast_to(clean, shape + (sensors.count,)) + sensors.noise * rng.standard_normal(
        shape + (sensors.count,)
    )
    return np.clip(out, sensors.min_output, sensors.max_output)


def sun_direction(
    readings, sensors: CoarseSunSensors, threshold: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """The Sun's direction in the body frame estimated from the sensors' ``readings``: the
    normalised least-squares solution s of (Nᵀ N) s = Nᵀ y over the lit sensors (reading above
    ``threshold``), N their normals as rows and y their readings (Basilisk's ``cssWlsEst``
    with ``useWeights`` off and ``sensorUseThresh`` = ``threshold``). Exact, without noise and
    Kelly factor, wherever three sensors of non-coplanar normals are lit.

    Args:
        readings: (..., k) the outputs of ``sensors``.
        sensors: the sensors.
        threshold: the reading a sensor must exceed to count as lit (≥ 0).

    Returns:
        The unit vectors (..., 3), and (...) whether each is valid: at least three lit
        sensors whose normals are not coplanar. Invalid entries are (0, 0, 0).

    Raises:
        ValueError: naming the argument, for readings that are not finite real numbers of
            shape (..., k), ``sensors`` that are not :class:`CoarseSunSensors` or a bad
            ``threshold``.
    """
    if not isinstance(sensors, CoarseSunSensors):
        raise ValueError(f"sensors must be CoarseSunSensors, got {validation.show(sensors)}")
    y = validation.vectors(readings, "readings", sensors.count)
    threshold = validation.scalar(threshold, "threshold")
    if threshold < 0.0:
        raise ValueError(f"threshold must be a finite number ≥ 0, got {threshold!r}")
    flat = np.ascontiguousarray(y.reshape(-1, sensors.count))
    direction, valid = np.empty((flat.shape[0], 3)), np.empty(flat.shape[0], dtype=bool)
    _directions(np.ascontiguousarray(sensors.normals), flat, threshold, direction, valid)
    return direction.reshape(y.shape[:-1] + (3,)), valid.reshape(y.shape[:-1])


@jitable
def direction(normals, readings, threshold):
    """One body's least-squares Sun direction (:func:`sun_direction`) from its ``readings``
    (k,) of sensors of ``normals`` (k, 3): the unit vector (3-tuple) and the length of the
    solution before it was normalised (the output at normal incidence: the scale × (1 AU/r)²
    × ν, by which noise on the readings turns it, an estimator's weight); (0, 0, 0) and 0
    when invalid. Coplanar normals give a singular Nᵀ N: valid needs its determinant above
    1e-10 of (tr Nᵀ N / 3)³ (the cube of its mean eigenvalue)."""
    # Nᵀ N's six distinct entries (a b c / b d e / c e f) and Nᵀ y, summed in scalars: a
    # kernel that allocates nothing can call this (jit.kernel)
    a = b = c = d = e = f = 0.0
    rhs = (0.0, 0.0, 0.0)
    lit = 0
    for i in range(readings.shape[0]):
        if readings[i] > threshold:
            lit += 1
            n = (normals[i, 0], normals[i, 1], normals[i, 2])
            y = readings[i]
            rhs = (rhs[0] + y * n[0], rhs[1] + y * n[1], rhs[2] + y * n[2])
            a, b, c = a + n[0] * n[0], b + n[0] * n[1], c + n[0] * n[2]
            d, e, f = d + n[1] * n[1], e + n[1] * n[2], f + n[2] * n[2]
    cof = (d * f - e * e, c * e - b * f, b * e - c * d, a * f - c * c, b * c - a * e, a * d - b * b)
    det = a * cof[0] + b * cof[1] + c * cof[2]
    mean = (a + d + f) / 3.0
    if lit < 3 or not det > _COPLANAR * mean * mean * mean:
        return (0.0, 0.0, 0.0), 0.0
    s = (
        (cof[0] * rhs[0] + cof[1] * rhs[1] + cof[2] * rhs[2]) / det,
        (cof[1] * rhs[0] + cof[3] * rhs[1] + cof[4] * rhs[2]) / det,
        (cof[2] * rhs[0] + cof[4] * rhs[1] + cof[5] * rhs[2]) / det,
    )
    length = vec.norm(s)
    if not length > 0.0:
        return (0.0, 0.0, 0.0), 0.0
    return vec.scale(1.0 / length, s), length


def _all_directions(normals, readings, threshold, out, valid):
    for i in range(readings.shape[0]):
        d, length = direction(normals, readings[i], threshold)
        valid[i] = length > 0.0
        out[i, 0], out[i, 1], out[i, 2] = d


_directions = kernel(_all_directions)

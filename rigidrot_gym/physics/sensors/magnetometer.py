"""A three-axis magnetometer (TAM): the body-frame geomagnetic field with a constant bias,
white noise, quantisation and saturation.

Each axis of the body frame (the sensor frame is the body frame) reads

    b̃ = sat(quant(b + β + σ ξ)),

b the true field's body component (T), β a constant bias (T; one draw per episode, of
standard deviation ``bias_std``: :meth:`MagnetometerModel.biases`), σ the white noise's
standard deviation (T) and ξ a standard normal, independent per axis and sample;
quant(x) = q ⌊x/q + ½⌋ rounds to the nearest whole quantum q (halves up; off when q = 0) and
sat(x) = min(max(x, −s), s) clips to the saturation s (none when s = inf).

The noise-free reading with a bias and saturation is Basilisk's ``magnetometer`` module
(``src/simulation/sensors/magnetometer/magnetometer.cpp``: ``computeMagData`` forms
tam_S = ``[SB][BN] B_N``, ``applySensorErrors`` adds its noise then ``senBias`` and multiplies by
``scaleFactor`` (1 by default), ``applySaturation`` clips to [``minOutput``, ``maxOutput``]);
tests/test_magnetometer.py runs it against this module. Its noise (``senNoiseStd``, through its
``GaussMarkov`` utility) is, at its default settings in Basilisk 2.12.1, white with σ =
``senNoiseStd`` per sample, as here (the test measures it): the same in distribution, not
sample for sample. Basilisk has no quantiser.

NASA 42 (``Source/42sensors.c``, ``MagnetometerModel``) reads scale·(b·axis) + noise·N,
clips to ±saturation, then truncates (long)(x/q + ½) counts; here the quantiser acts before
the clip, so that no reading exceeds the saturation, which is the same wherever the
saturation is a whole number of quanta (42's 60 µT of 1 µT quanta), and it rounds negative
values to the nearest quantum as it does positive ones (42's cast truncates x/q + ½ towards
zero, so that a negative reading comes out one quantum high: −2.3 quanta as −1).
:data:`PRESETS` holds 42's magnetometer (``InOut/SC_Simple.txt``, lines 103-106: saturation
60.0E-6 T, scale factor error 0 ppm, quantization 1.0E-6 T, noise 1.0E-6 T RMS); 42 has no
bias. Left out here: scale factor error and misalignment (the sensor frame is the body
frame; the env draws them per episode, :mod:`~rigidrot_gym.attitude.components.sensor_errors`),
Basilisk's faults.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable, select


@dataclass(frozen=True)
class MagnetometerModel:
    """A three-axis magnetometer's errors, each axis the same and independent.

    Attributes:
        noise: σ, white noise per axis and sample, T (≥ 0).
        bias_std: the standard deviation of the constant bias per axis, T (≥ 0): an episode
            draws its bias once (:meth:`biases`) and passes it to :func:`readings`.
        quantum: the output's resolution, T (0: unquantised).
        saturation: the largest field it reads per axis, T (inf: no limit).
    """

    noise: float
    bias_std: float = 0.0
    quantum: float = 0.0
    saturation: float = np.inf

    def __post_init__(self) -> None:
        for name in ("noise", "bias_std", "quantum"):
            value = validation.scalar(getattr(self, name), name)
            if value < 0.0:
                raise ValueError(f"{name} must be a finite number ≥ 0, got {value!r}")
            object.__setattr__(self, name, value)
        saturation = validation.floats(self.saturation, "saturation")
        if saturation.ndim or not saturation > 0:
            raise ValueError(f"saturation must be a positive number or inf, got {self.saturation!r}")
        object.__setattr__(self, "saturation", float(saturation))

    def biases(self, rng: np.random.Generator, shape: tuple[int, ...] = ()) -> np.ndarray:
        """Constant biases (``shape`` + (3,)), T: ``bias_std`` times standard normals."""
        rng = validation.generator(rng)
        sizes = (shape,) if isinstance(shape, numbers.Integral) else shape
        if not isinstance(sizes, tuple | list):
            raise ValueError(f"shape must be a tuple of integers ≥ 0, got {validation.show(shape)}")
        shape = tuple(validation.count(n, "shape", 0) for n in sizes)
        return self.bias_std * rng.standard_normal(shape + (3,))


PRESETS = {
    # NASA 42, InOut/SC_Simple.txt: saturation 60 µT, quantisation 1 µT, noise 1 µT RMS.
    "42": MagnetometerModel(noise=1.0e-6, quantum=1.0e-6, saturation=60.0e-6),
}


@jitable
def quantise_clip(value, quantum, saturation):
    """One axis's output stage: ``value`` (T) rounded to whole ``quantum`` (T; 0: not rounded),
    then clipped to ±``saturation`` (T; inf: not clipped). No checks."""
    on = quantum > 0.0
    q = select(on, quantum, 1.0)
    value = select(on, np.floor(value / q + 0.5) * q, value)
    return np.minimum(np.maximum(value, -saturation), saturation)


@jitable
def read(field_body, bias, noise, quantum, saturation, xi):
    """The reading (3-tuple, T) of the body-frame field ``field_body`` (3-tuple, T): plus the
    ``bias`` (3-tuple, T) and the white noise ``noise`` · ``xi`` (σ in T, ``xi`` a 3-tuple of
    standard normals), rounded to whole ``quantum`` (T; 0: not rounded) and clipped to
    ±``saturation`` (T; inf: not clipped). No checks."""
    return (
        quantise_clip(field_body[0] + bias[0] + noise * xi[0], quantum, saturation),
        quantise_clip(field_body[1] + bias[1] + noise * xi[1], quantum, saturation),
        quantise_clip(field_body[2] + bias[2] + noise * xi[2], quantum, saturation),
    )


def readings(field_body, model: MagnetometerModel, rng: np.random.Generator, bias=None) -> np.ndarray:
    """The magnetometer's readings of the true body-frame field.

    Args:
        field_body: (..., 3) the field in the body frame, T.
        model: the magnetometer's errors.
        rng: the source of the noise: one standard normal per axis (an array of
            ``field_body``'s shape), drawn even when the noise is 0.
        bias: the constant bias, T, an array that broadcasts to ``field_body``'s shape, e.g.
            (3,) or one per episode (default 0; draw one with :meth:`MagnetometerModel.biases`).

    Returns:
        The readings (..., 3), T.

    Raises:
        ValueError: naming the argument, for a non-finite field or bias, a field that is not
            (..., 3), a bias that does not broadcast to it, a model that is not a
            :class:`MagnetometerModel` or an ``rng`` that is not a numpy Generator.
    """
    field_body = validation.vectors(field_body, "field_body", 3)
    if not isinstance(model, MagnetometerModel):
        raise ValueError(f"model must be a MagnetometerModel, got {validation.show(model)}")
    rng = validation.generator(rng)
    shape = field_body.shape
    beta = np.zeros(3) if bias is None else validation.vectors(bias, "bias", 3)
    if not validation.broadcasts_to(beta.shape, shape):
        raise ValueError(f"bias must broadcast to field_body's shape {shape}, got shape {beta.shape}")
    beta = np.broadcast_to(beta, shape)
    xi = rng.standard_normal(shape)
    out = read(
        tuple(np.moveaxis(field_body, -1, 0)),
        tuple(np.moveaxis(beta, -1, 0)),
        model.noise,
        model.quantum,
        model.saturation,
        tuple(np.moveaxis(xi, -1, 0)),
    )
    return np.stack(np.broadcast_arrays(*out), axis=-1)

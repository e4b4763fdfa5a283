"""A rate-integrating gyro: Farrenkopf's model of angle and rate random walk in its exact
discrete form, with quantised angle increments and a full-scale rate.

The continuous model (Farrenkopf, "Analytic steady-state accuracy solutions for two common
spacecraft attitude estimators", J. Guidance 1(4), 1978; Crassidis & Junkins, *Optimal
Estimation of Dynamic Systems*, 2nd ed., 2012, §7.2.1) of each axis:

    ω̃ = ω + β + η_v,   β̇ = η_u,

η_v and η_u white noises of spectral densities σ_v² (angle random walk, ARW, rad/√s) and
σ_u² (rate random walk, rad/s^{3/2}), β the bias. A rate-integrating gyro reports the
angle turned over each sample period Δt; as a rate, the mean over the period, whose exact
discrete form is (Crassidis & Junkins, eq. 7.40)

    β_{k+1} = β_k + σ_u √Δt N_u,
    ω̃_{k+1} = ω̄_{k+1} + ½ (β_{k+1} + β_k) + √(σ_v²/Δt + σ_u² Δt/12) N_v,

N_u and N_v independent standard normals and ω̄_{k+1} the true mean rate over the period.
At a constant rate the readings' Allan variance is then σ²(τ) = σ_v²/τ + σ_u² τ/3 for any
averaging time τ that is a whole number of periods (IEEE Std 952-1997, annex C): the Allan
deviation falls as τ^{−1/2} (angle random walk) and rises as τ^{+1/2} (rate random walk),
crossing at τ = √3 σ_v/σ_u.

A quantum q > 0 rounds the accumulated angle to whole quanta (the remainder carries over,
as in a counter of pulses), so each reading is a whole number of quanta over Δt; a
full-scale rate clips each reading. :func:`sample` is one period of one gyro (compiled into
the env's control period); :func:`readings` runs it over a record of many.

:data:`PRESETS` holds NASA 42's gyro (``InOut/SC_Simple.txt``; its bias stability, 0.1°/h
over 1 h, read as the bias random walk's standard deviation after an hour: σ_u = 0.1°/h /
√(3600 s)). Left out: 42's angle noise (0.1″ RMS), scale factor error and misalignment.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable, kernel

_DEG = np.pi / 180.0
_ARCSEC = _DEG / 3600.0


@dataclass(frozen=True)
class GyroModel:
    """One gyro axis's errors.

    Attributes:
        arw: σ_v, angle random walk, rad/√s (≥ 0).
        rrw: σ_u, rate random walk, rad/s^{3/2} (≥ 0).
        quantum: angle per output pulse, rad (0: unquantised).
        full_scale: the largest rate it reads, rad/s (inf: no limit).
    """

    arw: float
    rrw: float
    quantum: float = 0.0
    full_scale: float = np.inf

    def __post_init__(self) -> None:
        for name in ("arw", "rrw", "quantum"):
            value = validation.scalar(getattr(self, name), name)
            if value < 0.0:
                raise ValueError(f"{name} must be a finite number ≥ 0, got {value!r}")
            object.__setattr__(self, name, value)
        full_scale = validation.floats(self.full_scale, "full_scale")
        if full_scale.ndim or not full_scale > 0:
            raise ValueError(f"full_scale must be a positive number or inf, got {self.full_scale!r}")
        object.__setattr__(self, "full_scale", float(full_scale))

    def allan_deviation(self, tau) -> np.ndarray:
        """σ(τ) = √(σ_v²/τ + σ_u² τ/3), rad/s, of the unquantised readings at averaging times
        ``tau`` (s, positive; whole numbers of sample periods)."""
        tau = validation.floats(tau, "tau")
        if not np.all(np.isfinite(tau) & (tau > 0)):
            raise ValueError(f"tau must be positive and finite, got {validation.show(tau.tolist())}")
        return np.sqrt(self.arw**2 / tau + self.rrw**2 * tau / 3.0)


PRESETS = {
    # NASA 42, InOut/SC_Simple.txt: ARW 0.07°/√h, bias stability 0.1°/h over 1 h, quantisation 1″.
    "42": GyroModel(
        arw=0.07 * _DEG / 60.0,
        rrw=0.1 * _DEG / 3600.0 / 60.0,
        quantum=1.0 * _ARCSEC,
    ),
}


@jitable
def sample(rate, bias, carry, dt, arw, rrw, quantum, full_scale, n_u, n_v):
    """One period of one gyro (eq. 7.40 above), on 3-tuples: the true mean rate ``rate``
    over the period, the bias β_k and the angle ``carry`` not yet output (quantised gyros),
    the model's numbers, and the period's standard normals ``n_u`` and ``n_v``. Returns the
    reading ω̃_{k+1}, β_{k+1} and the new carry (rad/s, rad/s, rad)."""
    white = np.sqrt(arw * arw / dt + rrw * rrw * dt / 12.0)
    step = rrw * np.sqrt(dt)
    x = _sample_axis(rate[0], bias[0], carry[0], dt, white, step, quantum, full_scale, n_u[0], n_v[0])
    y = _sample_axis(rate[1], bias[1], carry[1], dt, white, step, quantum, full_scale, n_u[1], n_v[1])
    z = _sample_axis(rate[2], bias[2], carry[2], dt, white, step, quantum, full_scale, n_u[2], n_v[2])
    return (x[0], y[0], z[0]), (x[1], y[1], z[1]), (x[2], y[2], z[2])


@jitable
def _sample_axis(rate, bias, carry, dt, white, step, quantum, full_scale, n_u, n_v):
    """One axis of :func:`sample`: its reading, bias and carry."""
    end = bias + step * n_u
    out = rate + 0.5 * (bias + end) + white * n_v
    carried = 0.0
    if quantum > 0.0:  # whole pulses of the angle, the remainder carried
        angle = carry + out * dt
        out = np.round(angle / quantum) * quantum / dt
        carried = angle - out * dt
    return min(max(out, -full_scale), full_scale), end, carried


def _record(rates, beta, n_u, n_v, dt, arw, rrw, quantum, full_scale, out, ends):
    for j in range(rates.shape[1]):
        bias = (beta[j, 0], beta[j, 1], beta[j, 2])
        carry = (0.0, 0.0, 0.0)
        for t in range(rates.shape[0]):
            reading, bias, carry = sample(
                (rates[t, j, 0], rates[t, j, 1], rates[t, j, 2]),
                bias,
                carry,
                dt,
                arw,
                rrw,
                quantum,
                full_scale,
                (n_u[t, j, 0], n_u[t, j, 1], n_u[t, j, 2]),
                (n_v[t, j, 0], n_v[t, j, 1], n_v[t, j, 2]),
            )
            out[t, j, 0], out[t, j, 1], out[t, j, 2] = reading
            ends[t, j, 0], ends[t, j, 1], ends[t, j, 2] = bias


_record_kernel = kernel(_record)


def readings(
    rates,
    dt: float,
    model: GyroModel,
    rng: np.random.Generator,
    bias=None,
) -> tuple[np.ndarray, np.ndarray]:
    """The gyro's readings of the true mean rates over consecutive sample periods.

    Args:
        rates: (T, ..., 3) the true mean body rates over each of T periods, rad/s.
        dt: the sample period Δt, s.
        model: the gyro's errors (each axis the same, independent).
        rng: the source of the normals: every period's N_u (an array of the rates' shape),
            then every period's N_v.
        bias: (..., 3) β at the first period's start, rad/s (default 0).

    Returns:
        The readings (T, ..., 3), rad/s, and the bias at every period's end (T, ..., 3).

    Raises:
        ValueError: naming the argument, for non-finite rates or bias, a bad ``dt``, a
            bias whose shape is not the rates' (..., 3), a ``model`` that is not a
            :class:`GyroModel` or an ``rng`` that is not a ``numpy.random.Generator``.
    """
    rates = validation.vectors(rates, "rates", 3)
    if rates.ndim < 2:
        raise ValueError(f"rates must have shape (T, ..., 3), got shape {rates.shape}")
    dt = validation.scalar(dt, "dt", positive=True)
    if not isinstance(model, GyroModel):
        raise ValueError(f"model must be a GyroModel, got {validation.show(model)}")
    rng = validation.generator(rng)
    shape = rates.shape[1:]
    beta = np.zeros(shape) if bias is None else validation.vectors(bias, "bias", 3)
    if beta.shape != shape:
        raise ValueError(f"bias must have shape {shape}, got shape {beta.shape}")
    n_u = rng.standard_normal(rates.shape)
    n_v = rng.standard_normal(rates.shape)
    flat = (rates.shape[0], int(np.prod(shape[:-1])), 3)  # not -1: with no periods it is undetermined
    out, ends = np.empty(rates.shape), np.empty(rates.shape)
    _record_kernel(
        np.ascontiguousarray(rates.reshape(flat)),
        np.ascontiguousarray(beta.reshape(-1, 3)),
        n_u.reshape(flat),
        n_v.reshape(flat),
        dt,
        model.arw,
        model.rrw,
        model.quantum,
        model.full_scale,
        out.reshape(flat),
        ends.reshape(flat),
    )
    return out, ends

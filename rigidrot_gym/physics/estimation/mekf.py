"""The multiplicative extended Kalman filter (MEKF) of a spacecraft's attitude and gyro bias,
propagated with a rate-integrating gyro and corrected with attitude and vector measurements.

Markley & Crassidis, *Fundamentals of Spacecraft Attitude Determination and Control*
(2014), §6.2.4 (Table 6.3), in this package's conventions (:mod:`~rigidrot_gym.physics.rotation.quaternion`:
q maps the body frame to the world frame, q̇ = ½ q ⊗ ω). The estimate is the attitude q̂
and the gyro bias β̂ (body frame, rad/s); the filter's state is the error

    q = q̂ ⊗ δq(δϑ),   Δβ = β − β̂,

δϑ a rotation vector in the body frame (δq = exp(δϑ/2)), with covariance P (6 × 6, δϑ
first; the per-body functions take n × n, n ≥ 6, the states after the sixth a sensor's
constant bias that the caller keeps, such as a magnetometer's). With the gyro of
:mod:`~rigidrot_gym.physics.sensors.gyro` (ω̃ = ω + β + η_v, β̇ = η_u), ω̂ = ω̃ − β̂ and the
error obeys δϑ̇ = −[ω̂×] δϑ − Δβ − η_v, Δβ̇ = η_u.

Prediction over a sample period Δt, ω̂ held (:func:`predict`; Markley & Crassidis
eqs. 6.60, 6.83, 6.93): q̂⁺ = q̂ ⊗ exp(½ ω̂ Δt) (exact for a rate-integrating gyro's mean
rate about a fixed axis), β̂⁺ = β̂ and P⁺ = Φ P Φᵀ + Q, with, θ = |ω̂| Δt,

    Φ₁₁ = I − [ω̂×] sin θ/|ω̂| + [ω̂×]² (1 − cos θ)/|ω̂|²,
    Φ₁₂ = [ω̂×] (1 − cos θ)/|ω̂|² − I Δt − [ω̂×]² (θ − sin θ)/|ω̂|³,   Φ₂₁ = 0, Φ₂₂ = I,
    Q = [[(σ_v² Δt + σ_u² Δt³/3) I, −½ σ_u² Δt² I], [−½ σ_u² Δt² I, σ_u² Δt I]].

Correction with a measurement whose error is linear in δϑ alone, z = H_a δϑ + v, v of
covariance R (:func:`correct`; Markley & Crassidis eqs. 6.25–6.30): K = P Hᵀ (H P Hᵀ + R)⁻¹,
Δx = K z, P ← (I − K H) P (I − K H)ᵀ + K R Kᵀ (Joseph's form, which keeps P symmetric
and positive), then the reset q̂ ← q̂ ⊗ exp(½ δϑ̂), β̂ ← β̂ + Δβ̂. Two measurements:

* an attitude q̃ = q ⊗ δq(v) (a star tracker, :mod:`~rigidrot_gym.physics.sensors.star_tracker`):
  z = the rotation vector of q̂* ⊗ q̃ (the shorter way), H_a = I, exact at any angle, so
  that a first fix acquires the attitude from any initial error (the small-angle
  2 vec(q̂* ⊗ q̃) of Markley & Crassidis eq. 6.53 leaves |δϑ| − 2 sin(|δϑ|/2): 1,229″
  at 30°);
* a vector known in the world frame, r, measured in the body frame, b̃ = R(q)ᵀ r + v (a
  magnetometer's field, a Sun sensor's direction): b̂ = R(q̂)ᵀ r, z = b̃ − b̂,
  H_a = [b̂×] (from R(q)ᵀ r = (I − [δϑ×]) b̂ to first order), R = σ² I; valid while
  the second-order term ½ |δϑ|² |b| is below the noise (:func:`linear_enough`).

The per-body functions work on one body's covariance, an array updated in place, and are
compiled into the env's control period; the batched front doors (:func:`propagate`,
:func:`correct_attitude`, :func:`correct_vector`) run them over an :class:`Estimate` of any
batch shape. Left out: the gyro's quantisation in Q (its angle error does not accumulate:
a quantum of 1″ adds less than 0.3″ to an update's innovation), scale factors and
misalignments, and the second-order terms of the reset.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable, kernel
from rigidrot_gym.physics.rotation import quaternion
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qconj, qexp, qlog, qmul, qnormalize, qrotate_inv, sinc
from rigidrot_gym.physics.sensors.gyro import GyroModel

# Size of the filter's state: the attitude error δϑ (rows 0-2), then the bias error Δβ (3-5).
STATES = 6
# Below this θ = |ω̂| Δt, (θ − sin θ)/θ³ is its series (the difference cancels).
_SERIES = 1e-2


# ------------------------------------------------------------------- one body (compiled)


@jitable
def transition(rate, dt, phi):
    """Φ of the error over ``dt`` at the bias-corrected rate ``rate`` (3-tuple, rad/s)
    into ``phi`` (n × n, n ≥ 6: states after the sixth are constants, Φ = I there)."""
    theta = vec.norm(rate) * dt
    s = dt * sinc(theta)  # sin θ/|ω̂|
    half = 0.5 * dt * sinc(0.5 * theta)
    c = 2.0 * half * half  # (1 − cos θ)/|ω̂|² = 2 sin²(θ/2)/|ω̂|²
    if theta < _SERIES:
        d = dt**3 * (1.0 / 6.0 - theta * theta / 120.0)
    else:
        d = dt**3 * (theta - np.sin(theta)) / theta**3  # (θ − sin θ)/|ω̂|³
    x, y, z = rate
    cross = ((0.0, -z, y), (z, 0.0, -x), (-y, x, 0.0))
    n = phi.shape[0]
    for i in range(n):
        for j in range(n):
            phi[i, j] = 1.0 if i == j else 0.0
    for i in range(3):
        for j in range(3):
            square = 0.0
            for k in range(3):
                square += cross[i][k] * cross[k][j]
            phi[i, j] += -cross[i][j] * s + square * c
            phi[i, 3 + j] = cross[i][j] * c - square * d - (dt if i == j else 0.0)


@jitable
def predict(q, bias, p, reading, dt, arw, rrw, phi, scratch):
    """One body's estimate q̂ (``q``, 4-tuple) with bias β̂ (``bias``, 3-tuple, rad/s)
    carried over a gyro sample period ``dt`` by the gyro's mean rate over it, ``reading``
    (3-tuple, rad/s), whose σ_v and σ_u are ``arw`` (rad/√s) and ``rrw`` (rad/s^{3/2}):
    returns q̂⁺ (4-tuple); P (``p``, n × n) is updated in place, with ``phi`` and
    ``scratch`` (n × n) its work. States after the sixth (a sensor's constant bias) have
    Φ = I and no process noise."""
    n = p.shape[0]
    rate = vec.sub(reading, bias)
    transition(rate, dt, phi)
    # Φ P and (Φ P) Φᵀ over Φ's non-zero entries alone (Φ₂₁ = 0, Φ = I after the third
    # row), in the order of the full sums: the terms left out are exact zeros, and a
    # product by Φ's ones is exact, so that P⁺ is bit for bit the full product's.
    for i in range(3):
        for j in range(n):
            total = 0.0
            for k in range(STATES):
                total += phi[i, k] * p[k, j]
            scratch[i, j] = total
    for i in range(3, n):
        for j in range(n):
            scratch[i, j] = 0.0 + p[i, j]
    angle = arw * arw * dt + rrw * rrw * dt**3 / 3.0
    cross = -0.5 * rrw * rrw * dt * dt
    drift = rrw * rrw * dt
    for i in range(n):
        for j in range(i, n):
            total = 0.0
            if j < 3:
                for k in range(STATES):
                    total += scratch[i, k] * phi[j, k]
            else:
                total += scratch[i, j]
            if i == j and i < STATES:
                total += angle if i < 3 else drift
            elif j == i + 3 and i < 3:
                total += cross
            p[i, j] = total
            p[j, i] = total
    return qnormalize(qmul(q, qexp(vec.scale(0.5 * dt, rate))))


@jitable
def correct(q, bias, p, z, h, r, work, dx):
    """One body's estimate corrected by the measurement residual ``z`` (3-tuple) of
    sensitivity ``h`` (3 × n, to every state) and noise covariance ``r`` (3 × 3): returns
    (q̂, β̂) and writes the whole correction Δx̂ = K z into ``dx`` (n,), whose entries after
    the sixth the caller adds to its own states; P (``p``, n × n) is updated in place,
    ``work`` (3, n, n) is its scratch (the caller's: an allocation per call would cost
    more than the arithmetic)."""
    n = p.shape[0]
    gain, scratch, a_mat = work[0], work[1], work[2]
    # H's bias columns (3-5) are zero, so A = I − K H is the identity there and K R Kᵀ has
    # R's zeros: the sums below leave those terms out, in the order of the full sums, which
    # is exact (a zero term adds nothing, a product by one is exact), so that P is bit for
    # bit the full products'.
    # P Hᵀ into scratch's first three columns, then S = H P Hᵀ + R, inverted by its cofactors.
    for i in range(n):
        for j in range(3):
            total = 0.0
            for k in range(3):
                total += p[i, k] * h[j, k]
            for k in range(STATES, n):
                total += p[i, k] * h[j, k]
            scratch[i, j] = total
    s = work[0, :3, 3:6]
    for i in range(3):
        for j in range(3):
            total = r[i, j]
            for k in range(3):
                total += h[i, k] * scratch[k, j]
            for k in range(STATES, n):
                total += h[i, k] * scratch[k, j]
            s[i, j] = total
    a, b, c = s[0, 0], s[0, 1], s[0, 2]
    d, e, f = s[1, 0], s[1, 1], s[1, 2]
    g, k_, m = s[2, 0], s[2, 1], s[2, 2]
    det = a * (e * m - f * k_) - b * (d * m - f * g) + c * (d * k_ - e * g)
    inverse = (
        ((e * m - f * k_) / det, (c * k_ - b * m) / det, (b * f - c * e) / det),
        ((f * g - d * m) / det, (a * m - c * g) / det, (c * d - a * f) / det),
        ((d * k_ - e * g) / det, (b * g - a * k_) / det, (a * e - b * d) / det),
    )
    for i in range(n):
        for j in range(3):
            gain[i, j] = (
                scratch[i, 0] * inverse[0][j] + scratch[i, 1] * inverse[1][j] + scratch[i, 2] * inverse[2][j]
            )
    for i in range(n):
        dx[i] = gain[i, 0] * z[0] + gain[i, 1] * z[1] + gain[i, 2] * z[2]
    # Joseph's form: A = I − K H, P ← A P Aᵀ + K R Kᵀ (A's bias columns are I's).
    for i in range(n):
        for j in range(n):
            if j < 3 or j >= STATES:
                a_mat[i, j] = (1.0 if i == j else 0.0) - (
                    gain[i, 0] * h[0, j] + gain[i, 1] * h[1, j] + gain[i, 2] * h[2, j]
                )
    for i in range(n):
        for j in range(n):
            total = 0.0
            for k in range(3):
                total += a_mat[i, k] * p[k, j]
            if 3 <= i < STATES:
                total += p[i, j]
            for k in range(STATES, n):
                total += a_mat[i, k] * p[k, j]
            scratch[i, j] = total
    for i in range(n):
        for j in range(i, n):
            total = 0.0
            for k in range(3):
                total += scratch[i, k] * a_mat[j, k]
            if 3 <= j < STATES:
                total += scratch[i, j]
            for k in range(STATES, n):
                total += scratch[i, k] * a_mat[j, k]
            for k in range(3):
                for m_ in range(3):
                    if r[k, m_] != 0.0:
                        total += gain[i, k] * r[k, m_] * gain[j, m_]
            p[i, j] = total
            p[j, i] = total
    q = qnormalize(qmul(q, qexp((0.5 * dx[0], 0.5 * dx[1], 0.5 * dx[2]))))
    return q, (bias[0] + dx[3], bias[1] + dx[4], bias[2] + dx[5])


@jitable
def rotation_vector(q, other):
    """The rotation vector φ (3-tuple, |φ| ≤ π) of q* ⊗ ``other`` (4-tuples): the turn in
    q's frame from q to ``other``, the shorter way round, exact at any angle (qlog)."""
    e = qmul(qconj(q), other)
    half = qlog(e if e[0] >= 0.0 else (-e[0], -e[1], -e[2], -e[3]))
    return (2.0 * half[0], 2.0 * half[1], 2.0 * half[2])


@jitable
def attitude_residual(q, measured):
    """z = φ(q̂* ⊗ q̃) of a measured attitude (4-tuples): the rotation vector from the
    estimate to the measurement in the body frame (:func:`rotation_vector`). With
    q̃ = q̂ ⊗ δq(δϑ) ⊗ δq(v) it is δϑ + v to first order in v at any δϑ, so that H_a = I
    holds for large errors too; the small-angle form 2 vec(q̂* ⊗ q̃) would leave
    |δϑ| − 2 sin(|δϑ|/2) uncorrected (46″ at 10°, 1,229″ at 30°)."""
    return rotation_vector(q, measured)


@jitable
def vector_residual(q, measured, reference, h):
    """z = b̃ − R(q̂)ᵀ r of a vector ``reference`` (world frame) measured as ``measured``
    (body frame), both 3-tuples; its sensitivity to δϑ, [b̂×], into ``h[:, :3]`` (h is
    3 × n; the caller sets the other columns)."""
    x, y, z = qrotate_inv(q, reference)
    h[0, 0], h[0, 1], h[0, 2] = 0.0, -z, y
    h[1, 0], h[1, 1], h[1, 2] = z, 0.0, -x
    h[2, 0], h[2, 1], h[2, 2] = -y, x, 0.0
    return (measured[0] - x, measured[1] - y, measured[2] - z)


@jitable
def linear_enough(p, size, std):
    """Whether a vector measurement of magnitude ``size`` and per-axis noise ``std`` (same
    unit) may correct the estimate of covariance ``p``: its residual's second-order term
    in δϑ, ½ |δϑ|² |b| (R(q)ᵀ r = (I − [δϑ×] + ½ [δϑ×]²) b̂ + O(|δϑ|³)), stays below the
    noise at |δϑ| = 3 √tr P_θθ. Until then (a large initial error, before a first star-
    tracker fix) the linearised update would pull the estimate off, not towards, the truth."""
    spread = p[0, 0] + p[1, 1] + p[2, 2]
    return 4.5 * spread * size <= std


# ------------------------------------------------------------------- batched front doors


class Estimate(NamedTuple):
    """An MEKF's estimate of a batch of bodies.

    Attributes:
        attitude: (..., 4) q̂, unit quaternions (body to world).
        bias: (..., 3) β̂, the gyro bias, rad/s.
        covariance: (..., 6, 6) P of the error (δϑ (rad), Δβ (rad/s)).
    """

    attitude: np.ndarray
    bias: np.ndarray
    covariance: np.ndarray


def initial(attitude, attitude_std: float, bias_std: float, bias=None) -> Estimate:
    """A first estimate: ``attitude`` (..., 4) and ``bias`` (..., 3; default 0) with
    independent errors of per-axis std ``attitude_std`` (rad) and ``bias_std`` (rad/s)."""
    q = validation.unit_quaternions(attitude, "attitude")
    beta = np.zeros(q.shape[:-1] + (3,)) if bias is None else validation.vectors(bias, "bias", 3)
    if beta.shape != q.shape[:-1] + (3,):
        raise ValueError(f"bias must have shape {q.shape[:-1] + (3,)}, got shape {beta.shape}")
    sigma = np.array(
        [validation.scalar(attitude_std, "attitude_std")] * 3 + [validation.scalar(bias_std, "bias_std")] * 3
    )
    if not np.all(sigma > 0.0):
        raise ValueError(f"attitude_std and bias_std must be positive, got {attitude_std!r} and {bias_std!r}")
    covariance = np.broadcast_to(np.diag(sigma**2), q.shape[:-1] + (STATES, STATES)).copy()
    return Estimate(q, beta, covariance)


def _checked(estimate: Estimate) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not isinstance(estimate, Estimate):
        raise ValueError(f"estimate must be an Estimate, got {validation.show(estimate)}")
    q = validation.unit_quaternions(estimate.attitude, "estimate.attitude")
    shape = q.shape[:-1]
    beta = validation.vectors(estimate.bias, "estimate.bias", 3)
    p = validation.finite_floats(estimate.covariance, "estimate.covariance")
    if beta.shape != shape + (3,) or p.shape != shape + (STATES, STATES):
        raise ValueError(
            f"estimate's bias and covariance must have shapes {shape + (3,)} and {shape + (STATES, STATES)}, "
            f"got {beta.shape} and {p.shape}"
        )
    flat = (-1,)
    return (
        np.ascontiguousarray(q.reshape(flat + (4,))),
        np.array(beta.reshape(flat + (3,))),
        np.array(p.reshape(flat + (STATES, STATES))),
    )


def _rebuilt(q: np.ndarray, beta: np.ndarray, p: np.ndarray, shape: tuple[int, ...]) -> Estimate:
    return Estimate(q.reshape(shape + (4,)), beta.reshape(shape + (3,)), p.reshape(shape + (STATES, STATES)))


def _predict_all(q, beta, p, readings, dt, arw, rrw):
    phi, scratch = np.empty((STATES, STATES)), np.empty((STATES, STATES))
    for i in range(q.shape[0]):
        body = predict(
            (q[i, 0], q[i, 1], q[i, 2], q[i, 3]),
            (beta[i, 0], beta[i, 1], beta[i, 2]),
            p[i],
            (readings[i, 0], readings[i, 1], readings[i, 2]),
            dt,
            arw,
            rrw,
            phi,
            scratch,
        )
        q[i, 0], q[i, 1], q[i, 2], q[i, 3] = body


def _correct_all(q, beta, p, measured, reference, variance, covariance):
    """An attitude update where ``reference`` is empty, else a vector update."""
    h, r = np.zeros((3, STATES)), np.empty((3, 3))  # H's bias columns stay zero
    work, dx = np.empty((3, STATES, STATES)), np.empty(STATES)
    attitude = reference.shape[0] == 0
    for i in range(q.shape[0]):
        qi = (q[i, 0], q[i, 1], q[i, 2], q[i, 3])
        if attitude:
            z = attitude_residual(qi, (measured[i, 0], measured[i, 1], measured[i, 2], measured[i, 3]))
            for j in range(3):
                for k in range(3):
                    h[j, k] = 1.0 if j == k else 0.0
                    r[j, k] = covariance[j, k]
        else:
            z = vector_residual(
                qi,
                (measured[i, 0], measured[i, 1], measured[i, 2]),
                (reference[i, 0], reference[i, 1], reference[i, 2]),
                h,
            )
            for j in range(3):
                for k in range(3):
                    r[j, k] = variance if j == k else 0.0
        qi, bi = correct(qi, (beta[i, 0], beta[i, 1], beta[i, 2]), p[i], z, h, r, work, dx)
        q[i, 0], q[i, 1], q[i, 2], q[i, 3] = qi
        beta[i, 0], beta[i, 1], beta[i, 2] = bi


_predict_kernel = kernel(_predict_all)
_correct_kernel = kernel(_correct_all)


def propagate(estimate: Estimate, readings, dt: float, gyro: GyroModel) -> Estimate:
    """The estimate carried over one gyro sample period (:func:`predict`, per body).

    Args:
        estimate: the estimate at the period's start, batch shape (...).
        readings: (..., 3) the gyro's readings over the period (its mean rates), rad/s.
        dt: the sample period, s.
        gyro: the gyro's model, whose ``arw`` and ``rrw`` are the filter's σ_v and σ_u.

    Returns:
        A new :class:`Estimate` (the argument is not changed).
    """
    q, beta, p = _checked(estimate)
    shape = np.shape(estimate.attitude)[:-1]
    w = validation.vectors(readings, "readings", 3)
    if w.shape != shape + (3,):
        raise ValueError(f"readings must have shape {shape + (3,)}, got shape {w.shape}")
    dt = validation.scalar(dt, "dt", positive=True)
    if not isinstance(gyro, GyroModel):
        raise ValueError(f"gyro must be a GyroModel, got {validation.show(gyro)}")
    _predict_kernel(q, beta, p, np.ascontiguousarray(w.reshape(-1, 3)), dt, gyro.arw, gyro.rrw)
    return _rebuilt(q, beta, p, shape)


def correct_attitude(estimate: Estimate, measured, covariance) -> Estimate:
    """The estimate corrected by measured attitudes (a star tracker's).

    Args:
        estimate: the estimate, batch shape (...).
        measured: (..., 4) measured attitudes q̃ = q ⊗ δq(v), unit quaternions.
        covariance: (3, 3) the covariance of v (body frame, rad²), symmetric positive
            definite (:func:`~rigidrot_gym.physics.sensors.star_tracker.covariance`).
    """
    q, beta, p = _checked(estimate)
    shape = np.shape(estimate.attitude)[:-1]
    m = validation.unit_quaternions(measured, "measured")
    if m.shape != shape + (4,):
        raise ValueError(f"measured must have shape {shape + (4,)}, got shape {m.shape}")
    r = validation.finite_floats(covariance, "covariance")
    if r.shape != (3, 3) or not np.allclose(r, r.T) or np.any(np.linalg.eigvalsh(r) <= 0.0):
        raise ValueError(
            f"covariance must be a symmetric positive definite 3 × 3 array, got {validation.show(r.tolist())}"
        )
    _correct_kernel(q, beta, p, np.ascontiguousarray(m.reshape(-1, 4)), np.zeros((0, 3)), 0.0, r)
    return _rebuilt(q, beta, p, shape)


def correct_vector(estimate: Estimate, measured, reference, std: float) -> Estimate:
    """The estimate corrected by a vector measured in the body frame.

    Args:
        estimate: the estimate, batch shape (...).
        measured: (..., 3) the measured vectors b̃ = R(q)ᵀ r + v (body frame).
        reference: (..., 3) the vectors r in the world frame (the field's model, the Sun's
            direction), in the units of ``measured``.
        std: the per-axis std of v, in those units.
    """
    q, beta, p = _checked(estimate)
    shape = np.shape(estimate.attitude)[:-1]
    b = validation.vectors(measured, "measured", 3)
    r = validation.vectors(reference, "reference", 3)
    for name, a in (("measured", b), ("reference", r)):
        if a.shape != shape + (3,):
            raise ValueError(f"{name} must have shape {shape + (3,)}, got shape {a.shape}")
    std = validation.scalar(std, "std", positive=True)
    _correct_kernel(
        q,
        beta,
        p,
        np.ascontiguousarray(b.reshape(-1, 3)),
        np.ascontiguousarray(r.reshape(-1, 3)),
        std * std,
        np.zeros((3, 3)),
    )
    return _rebuilt(q, beta, p, shape)


def errors(estimate: Estimate, attitude, bias) -> np.ndarray:
    """(..., 6) the estimate's errors against the truth, the filter's state: δϑ, the
    rotation vector of q̂* ⊗ q (rad, the shorter way; exact at any angle, as the filter's
    attitude residual), and Δβ = β − β̂ (rad/s); ``attitude`` (..., 4) and ``bias``
    (..., 3) of the estimate's batch shape."""
    q_hat, beta_hat, _ = _checked(estimate)
    shape = np.shape(estimate.attitude)[:-1]
    q = validation.unit_quaternions(attitude, "attitude")
    beta = validation.vectors(bias, "bias", 3)
    for name, a, size in (("attitude", q, 4), ("bias", beta, 3)):
        if a.shape != shape + (size,):
            raise ValueError(f"{name} must have the estimate's shape {shape + (size,)}, got shape {a.shape}")
    turn = quaternion.as_rotvec(quaternion.multiply(quaternion.conjugate(q_hat), q.reshape(-1, 4)))
    return np.concatenate([turn, beta.reshape(-1, 3) - beta_hat], axis=-1).reshape(shape + (STATES,))


def nees(estimate: Estimate, attitude, bias) -> np.ndarray:
    """(...) the normalised estimation error squared εᵀ P⁻¹ ε of each body (ε =
    :func:`errors`): χ² with 6 degrees of freedom where the filter is consistent, so that
    the mean over N bodies lies within χ²₆ₙ's quantiles over N (Bar-Shalom, Li &
    Kirubarajan, *Estimation with Applications to Tracking and Navigation*, 2001, §5.4.2)."""
    e = errors(estimate, attitude, bias)
    p = np.asarray(estimate.covariance, dtype=float)  # checked by errors()
    return np.einsum("...i,...i->...", e, np.linalg.solve(p, e[..., None])[..., 0])

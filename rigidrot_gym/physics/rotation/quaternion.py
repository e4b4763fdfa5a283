"""Unit quaternions for attitude, batched over any leading shape.

Conventions (the same everywhere in rigidrot_gym, and in the README and the docs):

* Quaternions are **scalar-first** ``[w, x, y, z]`` and multiply by the **Hamilton
  product**: ``(a, u)(b, v) = (ab - u·v, a v + b u + u × v)``.
* An attitude ``q`` maps **body to world**: ``v_world = q v_body q*``, i.e.
  ``v_world = R(q) v_body`` with ``R = to_matrix(q)``. ``R`` is the transpose of the
  aerospace direction-cosine matrix (which maps world to body).
* Angular velocity ``omega`` and torques are in the **body frame** (rad/s, N·m), so the
  kinematics read ``q̇ = ½ q ⊗ (0, ω)``.
* SI units throughout; angles in radians.
* Arrays are batched: quaternions ``(..., 4)``, vectors ``(..., 3)``, matrices
  ``(..., 3, 3)``; leading shapes broadcast. PyBullet and scipy put the scalar last:
  convert with :func:`to_scalar_last` / :func:`from_scalar_last` at that boundary only.

The module has two layers. The public functions take and return numpy arrays. They are
thin wrappers around component-wise primitives (names starting with ``q``) that take
tuples ``(w, x, y, z)`` of floats or arrays and run both in numpy and inside the
compiled integrator kernels (see :mod:`rigidrot_gym.physics.plumbing.jit`).

The public functions take arrays of real numbers: strings, complex numbers, booleans and
other objects raise a ``ValueError`` naming the argument. Those that build an attitude
from parameters (:func:`exp`, :func:`from_rotvec`, :func:`from_euler321`,
:func:`from_matrix`, :func:`normalize`) refuse NaN and ±inf; the algebra on quaternions
already in hand (:func:`multiply`, :func:`rotate`, ...) is IEEE arithmetic like numpy's,
NaN in, NaN out, so that it costs no check in the integrators' hot paths.
"""

from __future__ import annotations

import numbers

import numpy as np

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable, select
from rigidrot_gym.physics.rotation import vector as vec

# Below this angle (rad) sin(x)/x and atan(x)/x use their Taylor series; the
# truncation errors (x⁴/120 and x⁴/5) are then below 1e-16.
_SMALL_ANGLE = 1e-4
# Gimbal lock when one of the half-angle moduli of to_euler321 vanishes to round-off:
# yaw and roll are then no longer separately defined and roll is set to zero.
_GIMBAL_LOCK = 1e-14


# ----------------------------------------------------------------------------------
# Component-wise primitives (tuples of floats or arrays)
# ----------------------------------------------------------------------------------


@jitable
def qmul(p, q):
    """Hamilton product p ⊗ q."""
    pw, px, py, pz = p
    qw, qx, qy, qz = q
    return (
        pw * qw - px * qx - py * qy - pz * qz,
        pw * qx + px * qw + py * qz - pz * qy,
        pw * qy - px * qz + py * qw + pz * qx,
        pw * qz + px * qy - py * qx + pz * qw,
    )


@jitable
def qmul_vec(q, v):
    """q ⊗ (0, v) for a 3-vector v."""
    qw, qx, qy, qz = q
    vx, vy, vz = v
    return (
        -qx * vx - qy * vy - qz * vz,
        qw * vx + qy * vz - qz * vy,
        qw * vy - qx * vz + qz * vx,
        qw * vz + qx * vy - qy * vx,
    )


@jitable
def qconj(q):
    """Conjugate q* = (w, -x, -y, -z)."""
    return (q[0], -q[1], -q[2], -q[3])


@jitable
def qdot(p, q):
    """Euclidean inner product p · q of two 4-vectors."""
    return p[0] * q[0] + p[1] * q[1] + p[2] * q[2] + p[3] * q[3]


@jitable
def qnorm(q):
    """|q|."""
    return np.sqrt(qdot(q, q))


@jitable
def qscale(s, q):
    """s q."""
    return (s * q[0], s * q[1], s * q[2], s * q[3])


@jitable
def qaxpy(s, a, b):
    """s a + b for 4-vectors."""
    return (s * a[0] + b[0], s * a[1] + b[1], s * a[2] + b[2], s * a[3] + b[3])


@jitable
def qnormalize(q):
    """q / |q|."""
    return qscale(1.0 / qnorm(q), q)


@jitable
def qrotate(q, v):
    """Body to world: vector part of q ⊗ (0, v) ⊗ q* for a unit q.

    Uses v + 2w (u × v) + 2 u × (u × v) with u the vector part of q.
    """
    u = (q[1], q[2], q[3])
    t = vec.cross(u, v)
    t = (2.0 * t[0], 2.0 * t[1], 2.0 * t[2])
    return vec.add(vec.axpy(q[0], t, v), vec.cross(u, t))


@jitable
def qrotate_inv(q, v):
    """World to body: vector part of q* ⊗ (0, v) ⊗ q for a unit q."""
    return qrotate(qconj(q), v)


@jitable
def sinc(x):
    """sin(x)/x, exact to round-off at and near x = 0."""
    small = np.abs(x) < _SMALL_ANGLE
    x_safe = select(small, 1.0, x)
    return select(small, 1.0 - x * x / 6.0, np.sin(x_safe) / x_safe)


@jitable
def qexp(v):
    """exp of the pure quaternion (0, v): (cos|v|, sin|v| v/|v|), a rotation by 2|v|."""
    a = vec.norm(v)
    s = sinc(a)
    return (np.cos(a), s * v[0], s * v[1], s * v[2])


@jitable
def qlog(q):
    """Inverse of :func:`qexp` for a unit q: v with exp(v) = q, |v| ∈ [0, π].

    For q = (−1, 0, 0, 0), a turn by 2π about no particular axis, v = (π, 0, 0).
    """
    n = vec.norm((q[1], q[2], q[3]))
    # atan2(n, w)/n -> (1 - n²/(3w²))/w as n -> 0, but only for w > 0 (else -> π/n).
    series = (n < _SMALL_ANGLE * q[0]) & (q[0] > 0.0)
    n_safe = select(n > 0.0, n, 1.0)
    w_safe = select(series, q[0], 1.0)
    f = select(series, (1.0 - n * n / (3.0 * w_safe * w_safe)) / w_safe, np.arctan2(n, q[0]) / n_safe)
    half_turn = (n == 0.0) & (q[0] < 0.0)
    return (select(half_turn, np.pi, f * q[1]), f * q[2], f * q[3])


@jitable
def qto_matrix(q):
    """Rotation matrix R(q) (body to world) as a row-major 9-tuple, for a unit q."""
    w, x, y, z = q
    return (
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y - w * z),
        2.0 * (x * z + w * y),
        2.0 * (x * y + w * z),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z - w * x),
        2.0 * (x * z - w * y),
        2.0 * (y * z + w * x),
        1.0 - 2.0 * (x * x + y * y),
    )


@jitable
def qfrom_matrix(m):
    """Unit quaternion of a rotation matrix (row-major 9-tuple), Shepperd's method.

    Of the four algebraically equivalent formulas, the one dividing by the largest of
    4w², 4x², 4y², 4z² is taken, so no division loses precision.
    """
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = m
    trace = m00 + m11 + m22
    # Candidate k holds 4 × (the k-th component)², the pivot of that formula.
    s_w = np.sqrt(np.maximum(1.0 + trace, 1e-300)) * 2.0
    s_x = np.sqrt(np.maximum(1.0 + m00 - m11 - m22, 1e-300)) * 2.0
    s_y = np.sqrt(np.maximum(1.0 - m00 + m11 - m22, 1e-300)) * 2.0
    s_z = np.sqrt(np.maximum(1.0 - m00 - m11 + m22, 1e-300)) * 2.0
    qw = (0.25 * s_w, (m21 - m12) / s_w, (m02 - m20) / s_w, (m10 - m01) / s_w)
    qx = ((m21 - m12) / s_x, 0.25 * s_x, (m01 + m10) / s_x, (m02 + m20) / s_x)
    qy = ((m02 - m20) / s_y, (m01 + m10) / s_y, 0.25 * s_y, (m12 + m21) / s_y)
    qz = ((m10 - m01) / s_z, (m02 + m20) / s_z, (m12 + m21) / s_z, 0.25 * s_z)
    use_w = (trace >= m00) & (trace >= m11) & (trace >= m22)
    use_x = ~use_w & (m00 >= m11) & (m00 >= m22)
    use_y = ~use_w & ~use_x & (m11 >= m22)
    out = (
        select(use_w, qw[0], select(use_x, qx[0], select(use_y, qy[0], qz[0]))),
        select(use_w, qw[1], select(use_x, qx[1], select(use_y, qy[1], qz[1]))),
        select(use_w, qw[2], select(use_x, qx[2], select(use_y, qy[2], qz[2]))),
        select(use_w, qw[3], select(use_x, qx[3], select(use_y, qy[3], qz[3]))),
    )
    return qnormalize(out)


# ----------------------------------------------------------------------------------
# Public batched API on numpy arrays
# ----------------------------------------------------------------------------------


def _as_array(a, size: int, what: str) -> np.ndarray:
    arr = validation.floats(a, what)
    if arr.ndim == 0 or arr.shape[-1] != size:
        raise ValueError(f"{what} must have shape (..., {size}), got shape {arr.shape}")
    return arr


def _finite(a, size: int, what: str) -> np.ndarray:
    """As :func:`_as_array`, for the functions that build attitudes from parameters: these
    refuse NaN and ±inf rather than return a NaN quaternion."""
    arr = _as_array(a, size, what)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be finite, got {validation.show(arr.tolist())}")
    return arr


def _shape(shape, what: str = "shape") -> tuple[int, ...]:
    """``shape`` as a tuple of non-negative ints (an int n means (n,))."""
    dims = (shape,) if isinstance(shape, numbers.Integral) else shape
    try:
        return tuple(validation.count(d, f"{what} entries", 0) for d in dims)
    except TypeError:
        shown = validation.show(shape)
        raise ValueError(f"{what} must be a tuple of non-negative integers, got {shown}") from None


def _split(a: np.ndarray) -> tuple:
    return tuple(a[..., i] for i in range(a.shape[-1]))


def _stack(components) -> np.ndarray:
    return np.stack(np.broadcast_arrays(*components), axis=-1)


def identity(shape: tuple[int, ...] = ()) -> np.ndarray:
    """Identity attitudes ``[1, 0, 0, 0]`` of shape ``shape + (4,)``."""
    q = np.zeros((*_shape(shape), 4))
    q[..., 0] = 1.0
    return q


def multiply(p, q) -> np.ndarray:
    """Hamilton product ``p ⊗ q``; applies ``q`` first, then ``p``.

    Args:
        p ((..., 4) array): left quaternions.
        q ((..., 4) array): right quaternions.

    Returns:
        (..., 4) array: the products, broadcast over the leading shapes.
    """
    return _stack(qmul(_split(_as_array(p, 4, "p")), _split(_as_array(q, 4, "q"))))


def conjugate(q) -> np.ndarray:
    """Conjugate ``(w, -x, -y, -z)`` of ``q`` ((..., 4) array) as a (..., 4) array."""
    q = _as_array(q, 4, "q")
    return q * np.array([1.0, -1.0, -1.0, -1.0])


def norm(q) -> np.ndarray:
    """Euclidean norm |q| of ``q`` ((..., 4) array) as a (...) array."""
    return np.linalg.norm(_as_array(q, 4, "q"), axis=-1)


def normalize(q) -> np.ndarray:
    """``q / |q|`` for ``q`` ((..., 4) array).

    Raises:
        ValueError: if some ``q`` has zero or non-finite norm.
    """
    q = _as_array(q, 4, "q")
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    bad = ~np.isfinite(n) | (n == 0.0)
    if np.any(bad):
        first = q.reshape(-1, 4)[int(np.argmax(bad.reshape(-1)))]
        raise ValueError(f"cannot normalise quaternion {first.tolist()}: norm is {np.linalg.norm(first)}")
    return q / n


def inverse(q) -> np.ndarray:
    """Inverse ``q* / |q|²`` of ``q`` ((..., 4) array); equals the conjugate for unit q."""
    q = _as_array(q, 4, "q")
    return conjugate(q) / np.sum(q * q, axis=-1, keepdims=True)


def rotate(q, v) -> np.ndarray:
    """Body to world: ``q v q*``.

    Args:
        q ((..., 4) array): unit attitudes.
        v ((..., 3) array): body-frame vectors.

    Returns:
        (..., 3) array: the vectors in the world frame.
    """
    return _stack(qrotate(_split(_as_array(q, 4, "q")), _split(_as_array(v, 3, "v"))))


def rotate_inverse(q, v) -> np.ndarray:
    """World to body: ``q* v q`` for unit ``q`` ((..., 4)) and world ``v`` ((..., 3))."""
    return _stack(qrotate_inv(_split(_as_array(q, 4, "q")), _split(_as_array(v, 3, "v"))))


def exp(v) -> np.ndarray:
    """Exponential of the pure quaternion ``(0, v)``: ``(cos|v|, sin|v| v/|v|)``.

    ``exp(θ n / 2)`` is the rotation by angle θ about the unit axis n.

    Args:
        v ((..., 3) array): half rotation vectors.

    Returns:
        (..., 4) array: unit quaternions.
    """
    return _stack(qexp(_split(_finite(v, 3, "v"))))


def log(q) -> np.ndarray:
    """Logarithm of a unit quaternion: ``v`` ((..., 3)) with ``exp(v) = q``, |v| ≤ π."""
    return _stack(qlog(_split(_as_array(q, 4, "q"))))


def from_rotvec(rotvec) -> np.ndarray:
    """Attitude of the rotation vector θ n ((..., 3), angle θ in rad about unit axis n)."""
    return exp(0.5 * _finite(rotvec, 3, "rotvec"))


def as_rotvec(q) -> np.ndarray:
    """Rotation vector θ n ((..., 3)) of ``q`` ((..., 4)), taking the short way (θ ≤ π)."""
    return 2.0 * log(canonical(q))


def to_matrix(q) -> np.ndarray:
    """Rotation matrix ``R`` with ``v_world = R v_body``.

    Args:
        q ((..., 4) array): unit attitudes.

    Returns:
        (..., 3, 3) array: rotation matrices (``R.T`` is the direction-cosine matrix).
    """
    q = _as_array(q, 4, "q")
    return _stack(qto_matrix(_split(q))).reshape(q.shape[:-1] + (3, 3))


def from_matrix(matrix) -> np.ndarray:
    """Unit quaternion ((..., 4)) of a rotation matrix ((..., 3, 3), body to world).

    Raises:
        ValueError: if the shape is wrong or the matrix is not a rotation (R Rᵀ = 1 and
            det R = +1 to 1e-6).
    """
    m = validation.floats(matrix, "matrix")
    if m.ndim < 2 or m.shape[-2:] != (3, 3):
        raise ValueError(f"matrix must have shape (..., 3, 3), got shape {m.shape}")
    if not np.all(np.isfinite(m)):
        raise ValueError(f"matrix is not a rotation: it has non-finite entries {m.tolist()}")
    gram = m @ np.swapaxes(m, -1, -2)
    err = np.max(np.abs(gram - np.eye(3)), axis=(-2, -1))
    det = np.linalg.det(m)
    bad = ~np.isfinite(err) | (err > 1e-6) | (np.abs(det - 1.0) > 1e-6)
    if np.any(bad):
        first = m[np.nonzero(bad)][0] if m.ndim > 2 else m
        raise ValueError(f"matrix is not a rotation (R Rᵀ = 1, det R = +1): {first.tolist()}")
    flat = m.reshape(m.shape[:-2] + (9,))
    return _stack(qfrom_matrix(_split(flat)))


def from_euler321(angles) -> np.ndarray:
    """Attitude from Euler 3-2-1 angles ``[yaw, pitch, roll]`` (rad).

    ``R = Rz(yaw) Ry(pitch) Rx(roll)``: yaw about z, then pitch about the new y, then
    roll about the newest x (intrinsic z-y'-x'', scipy's ``"ZYX"``).

    Args:
        angles ((..., 3) array): yaw, pitch, roll.

    Returns:
        (..., 4) array: unit attitudes.
    """
    a = 0.5 * _finite(angles, 3, "angles")
    cy, sy = np.cos(a[..., 0]), np.sin(a[..., 0])
    cp, sp = np.cos(a[..., 1]), np.sin(a[..., 1])
    cr, sr = np.cos(a[..., 2]), np.sin(a[..., 2])
    zero = np.zeros_like(cy)
    qz = (cy, zero, zero, sy)
    qy = (cp, zero, sp, zero)
    qx = (cr, sr, zero, zero)
    return _stack(qmul(qmul(qz, qy), qx))


def to_euler321(q) -> np.ndarray:
    """Euler 3-2-1 angles ``[yaw, pitch, roll]`` ((..., 3), rad) of ``q`` ((..., 4)).

    Yaw and roll lie in (-π, π], pitch in [-π/2, π/2]. The angles come from the half
    angles a = yaw/2, b = pitch/2, c = roll/2, which are well conditioned everywhere:
    w + y = (cos b + sin b) cos(a − c), z − x = (cos b + sin b) sin(a − c),
    w − y = (cos b − sin b) cos(a + c), x + z = (cos b − sin b) sin(a + c).
    At pitch = ±90° (gimbal lock) only yaw ∓ roll is defined; roll is then reported
    as 0 and yaw carries the rotation.
    """
    w, x, y, z = _split(normalize(q))
    plus = np.hypot(w + y, z - x)  # √2 |sin(b + π/4)|
    minus = np.hypot(w - y, x + z)  # √2 |cos(b + π/4)|
    pitch = 2.0 * np.arctan2(plus, minus) - 0.5 * np.pi
    half_sum = np.arctan2(x + z, w - y)  # (yaw + roll)/2
    half_diff = np.arctan2(z - x, w + y)  # (yaw − roll)/2
    up, down = minus < _GIMBAL_LOCK, plus < _GIMBAL_LOCK
    yaw = np.where(up, 2.0 * half_diff, np.where(down, 2.0 * half_sum, half_sum + half_diff))
    roll = np.where(up | down, 0.0, half_sum - half_diff)
    pitch = np.where(up, 0.5 * np.pi, np.where(down, -0.5 * np.pi, pitch))
    return np.stack([_wrap(yaw), pitch, _wrap(roll)], axis=-1)


def _wrap(angle: np.ndarray) -> np.ndarray:
    """Angle in (-π, π]."""
    return np.pi - np.mod(np.pi - angle, 2.0 * np.pi)


def to_scalar_last(q) -> np.ndarray:
    """``[w, x, y, z]`` → ``[x, y, z, w]`` (PyBullet, scipy) for (..., 4) arrays."""
    return np.roll(_as_array(q, 4, "q"), -1, axis=-1)


def from_scalar_last(q) -> np.ndarray:
    """``[x, y, z, w]`` (PyBullet, scipy) → ``[w, x, y, z]`` for (..., 4) arrays."""
    return np.roll(_as_array(q, 4, "q"), 1, axis=-1)


def canonical(q) -> np.ndarray:
    """The one of ``±q`` ((..., 4)) with ``w > 0``; for ``w = 0`` the first non-zero of
    ``x, y, z`` is made positive (scipy's ``canonical=True`` rule)."""
    q = _as_array(q, 4, "q")
    # Index of the first non-zero component decides the sign.
    first = np.argmax(q != 0.0, axis=-1)
    lead = np.take_along_axis(q, first[..., None], axis=-1)
    return np.where(lead < 0.0, -q, q)


def angle_between(p, q) -> np.ndarray:
    """Rotation angle (rad, in [0, π]) of ``p⁻¹ ⊗ q``: how far attitude q is from p.

    Args:
        p ((..., 4) array): unit attitudes.
        q ((..., 4) array): unit attitudes.

    Returns:
        (...) array: angles; q and -q count as the same attitude.
    """
    d = qmul(qconj(_split(_as_array(p, 4, "p"))), _split(_as_array(q, 4, "q")))
    return 2.0 * np.arctan2(vec.norm(d[1:]), np.abs(d[0]))


def random(rng: np.random.Generator, shape: tuple[int, ...] = ()) -> np.ndarray:
    """Attitudes ((shape..., 4)) drawn uniformly on SO(3) from ``rng``.

    A normalised 4-D standard normal vector is uniform on the unit sphere S³, and the
    double cover S³ → SO(3) carries that to the Haar measure.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator, got {validation.show(rng)}")
    g = rng.standard_normal((*_shape(shape), 4))
    return g / np.linalg.norm(g, axis=-1, keepdims=True)

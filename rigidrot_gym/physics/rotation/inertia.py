"""Inertia tensors: standard shapes, composition of parts, re-referencing, principal axes.

SI units (kg, m, kg·m²); quaternion conventions are those of :mod:`rigidrot_gym.physics.rotation.quaternion`.

* Standard shapes give the tensor about their own centre of mass in their own frame.
* :func:`compose` sums parts, each placed in the body frame by a position and an
  orientation, following Mandre (2008), *Rigid Body Dynamics Using Euler's Equations,
  Runge-Kutta, and Quaternions*, §3::

      I = Σ_i [A_i I_i A_iᵀ + m_i ((r_i·r_i) 1 − r_i ⊗ r_i)]

  with A_i the part-to-body rotation and r_i the part's centre of mass relative to the
  composite one.
* :func:`parallel_axis` moves a tensor from the centre of mass to another point and
  :func:`to_center_of_mass` back, as Sasaki (2019) ``inertia_conversion`` does.
* :func:`principal_axes` diagonalises a tensor into a right-handed (det = +1) set of
  axes, as in Mandre (2008) §7.1, returned as a unit quaternion.
* ``validate_*`` check that tensors, principal moments and masses are physical.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.rotation import quaternion

# Relative tolerances: asymmetry is measured against max|I|, a negative eigenvalue of a
# singular part and a triangle-inequality deficit against the largest moment. 1e-9 is
# far above round-off of tensors built from floats, far below any physical asymmetry.
_SYMMETRY_RTOL = 1e-9
_SINGULAR_RTOL = 1e-9
_TRIANGLE_RTOL = 1e-9
# A part's orientation must be unit to this; it is then normalised exactly.
_UNIT_QUATERNION_TOL = 1e-6


# ----------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------


def validate_mass(mass: ArrayLike, name: str = "mass") -> np.ndarray:
    """Check that ``mass`` (a scalar or (...) array, kg) is positive and finite.

    Returns:
        The masses as a float64 array of the input's shape.

    Raises:
        ValueError: if some mass is NaN, ±inf, zero or negative.
    """
    m = validation.floats(mass, name)
    bad = ~np.isfinite(m) | (m <= 0.0)
    if np.any(bad):
        raise ValueError(f"{name} must be positive and finite, got {m[bad].ravel()[0]}")
    return m


def _positive_scalar(value: ArrayLike, name: str) -> float:
    m = validate_mass(value, name)
    if m.ndim != 0:
        raise ValueError(f"{name} must be a scalar, got shape {m.shape}")
    return float(m)


def _positive_vector(value: ArrayLike, size: int, name: str) -> np.ndarray:
    v = validation.floats(value, name)
    if v.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got shape {v.shape}")
    if not np.all(np.isfinite(v) & (v > 0.0)):
        raise ValueError(f"{name} must be positive and finite, got {v.tolist()}")
    return v


def _finite_vectors(value: ArrayLike, name: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    v = validation.floats(value, name)
    if v.ndim == 0 or v.shape[-1] != 3 or (shape is not None and v.shape != shape):
        want = shape if shape is not None else "(..., 3)"
        raise ValueError(f"{name} must have shape {want}, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite, got {v.tolist()}")
    return v


def _first_bad(values: np.ndarray, bad: np.ndarray) -> list:
    """The first offending entry of a batch (``bad`` over the leading shape), as a list."""
    return values[bad][0].tolist() if bad.ndim else values.tolist()


def _check_moments(
    moments: np.ndarray, name: str, shown: np.ndarray, allow_singular: bool, triangle: bool = True
) -> None:
    """Positivity and triangle inequality of ascending moments (..., 3); ``shown`` is
    what the error message prints for the offending batch entry."""
    largest = moments[..., 2]
    if allow_singular:
        bad = moments[..., 0] < -_SINGULAR_RTOL * largest
        problem = "positive semi-definite"
    else:
        bad = moments[..., 0] <= 0.0
        problem = "positive definite"
    if np.any(bad):
        raise ValueError(
            f"{name} must be {problem}, got principal moments {_first_bad(moments, bad)} "
            f"for {_first_bad(shown, bad)}"
        )
    # With 0 ≤ I1 ≤ I2 ≤ I3 only I1 + I2 ≥ I3 can fail; the other two permutations hold.
    bad = triangle & (moments[..., 0] + moments[..., 1] < largest * (1.0 - _TRIANGLE_RTOL))
    if np.any(bad):
        raise ValueError(
            f"{name} violates the triangle inequality I1 + I2 >= I3 of its principal moments "
            f"{_first_bad(moments, bad)}: {_first_bad(shown, bad)}"
        )


def validate_inertia(
    inertia: ArrayLike, name: str = "inertia", *, allow_singular: bool = False, triangle: bool = True
) -> np.ndarray:
    """Check that ``inertia`` ((..., 3, 3), kg·m²) is a physical inertia tensor.

    Checks, in order: shape (..., 3, 3); all entries finite; symmetric
    (|I − Iᵀ| ≤ 1e-9 max|I|); positive definite (smallest eigenvalue > 0); and the
    triangle inequality I1 + I2 ≥ I3 of the principal moments, to a relative 1e-9 so a
    thin plate at equality passes.

    Args:
        inertia: tensors to check.
        name: what the error messages call the argument.
        allow_singular: accept a zero smallest moment (to −1e-9 of the largest), as
            for a thin rod or a point mass used as a part of a composite.
        triangle: check the triangle inequality (see :func:`validate_moments`).

    Returns:
        (..., 3, 3) float64 array: the tensors.

    Raises:
        ValueError: naming the first problem found and showing the offending tensor.
    """
    triangle = validation.boolean(triangle, "triangle")
    allow_singular = validation.boolean(allow_singular, "allow_singular")
    t = validation.floats(inertia, name)
    if t.ndim < 2 or t.shape[-2:] != (3, 3):
        raise ValueError(f"{name} must have shape (..., 3, 3), got shape {t.shape}")
    bad = ~np.all(np.isfinite(t), axis=(-2, -1))
    if np.any(bad):
        raise ValueError(f"{name} must be finite (no NaN or inf), got {_first_bad(t, bad)}")
    asym = np.max(np.abs(t - np.swapaxes(t, -1, -2)), axis=(-2, -1))
    bad = asym > _SYMMETRY_RTOL * np.max(np.abs(t), axis=(-2, -1))
    if np.any(bad):
        raise ValueError(f"{name} must be symmetric, got {_first_bad(t, bad)}")
    _check_moments(np.linalg.eigvalsh(t), name, t, allow_singular, triangle)
    return t


def validate_moments(moments: ArrayLike, name: str = "moments", *, triangle: bool = True) -> np.ndarray:
    """Check principal moments ((..., 3), kg·m², any order): finite, positive, and
    I1 + I2 ≥ I3 for every permutation (to a relative 1e-9).

    Every rigid body satisfies the triangle inequality; ``triangle=False`` skips it for
    moments that are only parameters of Euler's equations, such as seed 003's
    I = (2, 2, 8) and (2, 8, 4).

    Returns:
        (..., 3) float64 array: the moments, in the order given.

    Raises:
        ValueError: naming the problem and showing the offending moments.
    """
    triangle = validation.boolean(triangle, "triangle")
    m = validation.floats(moments, name)
    if m.ndim == 0 or m.shape[-1] != 3:
        raise ValueError(f"{name} must have shape (..., 3), got shape {m.shape}")
    bad = ~np.all(np.isfinite(m), axis=-1)
    if np.any(bad):
        raise ValueError(f"{name} must be finite (no NaN or inf), got {_first_bad(m, bad)}")
    _check_moments(np.sort(m, axis=-1), name, m, allow_singular=False, triangle=triangle)
    return m


# ----------------------------------------------------------------------------------
# Standard shapes, about their centre of mass, in their own frame
# ----------------------------------------------------------------------------------


def solid_box(mass: float, size: ArrayLike) -> np.ndarray:
    """Solid cuboid of edge lengths ``size = (lx, ly, lz)`` (m) along x, y, z.

    I = m/12 diag(ly² + lz², lx² + lz², lx² + ly²); returns (3, 3).
    """
    m = _positive_scalar(mass, "mass")
    lx, ly, lz = _positive_vector(size, 3, "size") ** 2
    return m / 12.0 * np.diag([ly + lz, lx + lz, lx + ly])


def _cylinder(mass: float, radii_sq_sum: float, height: float) -> np.ndarray:
    """diag(m(3s + h²)/12, m(3s + h²)/12, m s/2) with s = r_in² + r_out²."""
    transverse = mass * (3.0 * radii_sq_sum + height**2) / 12.0
    return np.diag([transverse, transverse, 0.5 * mass * radii_sq_sum])


def solid_cylinder(mass: float, radius: float, height: float) -> np.ndarray:
    """Solid circular cylinder, axis along z.

    I = diag(m(3r² + h²)/12, m(3r² + h²)/12, m r²/2); returns (3, 3).
    """
    m = _positive_scalar(mass, "mass")
    r = _positive_scalar(radius, "radius")
    return _cylinder(m, r**2, _positive_scalar(height, "height"))


def hollow_cylinder(mass: float, inner_radius: float, outer_radius: float, height: float) -> np.ndarray:
    """Thick-walled tube, axis along z; 0 ≤ inner_radius ≤ outer_radius, equality
    giving a thin shell and inner_radius = 0 a solid cylinder.

    With s = r_in² + r_out²: I = diag(m(3s + h²)/12, m(3s + h²)/12, m s/2); returns (3, 3).
    """
    m = _positive_scalar(mass, "mass")
    r_out = _positive_scalar(outer_radius, "outer_radius")
    h = _positive_scalar(height, "height")
    r_in = validation.floats(inner_radius, "inner_radius")
    if r_in.ndim != 0 or not 0.0 <= r_in <= r_out:
        raise ValueError(f"inner_radius must be a scalar in [0, outer_radius = {r_out}], got {inner_radius}")
    return _cylinder(m, float(r_in) ** 2 + r_out**2, h)


def solid_sphere(mass: float, radius: float) -> np.ndarray:
    """Solid ball: I = 2/5 m r² 1; returns (3, 3)."""
    m = _positive_scalar(mass, "mass")
    r = _positive_scalar(radius, "radius")
    return 0.4 * m * r**2 * np.eye(3)


def ellipsoid(mass: float, semi_axes: ArrayLike) -> np.ndarray:
    """Solid ellipsoid of semi-axes ``(a, b, c)`` (m) along x, y, z.

    I = m/5 diag(b² + c², a² + c², a² + b²); returns (3, 3).
    """
    m = _positive_scalar(mass, "mass")
    a, b, c = _positive_vector(semi_axes, 3, "semi_axes") ** 2
    return m / 5.0 * np.diag([b + c, a + c, a + b])


def thin_rod(mass: float, length: float) -> np.ndarray:
    """Thin rod along z: I = diag(m L²/12, m L²/12, 0); returns (3, 3).

    The moment about z is zero, so the tensor alone is singular: it is meant only as a
    :class:`Part` of a composite, not as the inertia of a body.
    """
    m = _positive_scalar(mass, "mass")
    transverse = m * _positive_scalar(length, "length") ** 2 / 12.0
    return np.diag([transverse, transverse, 0.0])


def thin_plate(mass: float, size: ArrayLike) -> np.ndarray:
    """Thin rectangular plate of edges ``size = (lx, ly)`` (m) in the x-y plane (normal z).

    I = m/12 diag(ly², lx², lx² + ly²) (I1 + I2 = I3 exactly); returns (3, 3).
    """
    m = _positive_scalar(mass, "mass")
    lx, ly = _positive_vector(size, 2, "size") ** 2
    return m / 12.0 * np.diag([ly, lx, lx + ly])


# ----------------------------------------------------------------------------------
# Composition and re-referencing
# ----------------------------------------------------------------------------------


def _frozen(a: np.ndarray) -> np.ndarray:
    # Own copy, read-only, so a frozen dataclass holding it cannot be changed in place.
    a = np.array(a, dtype=np.float64)
    a.setflags(write=False)
    return a


def _point_mass_tensor(mass: ArrayLike, r: np.ndarray) -> np.ndarray:
    """m((r·r) 1 − r ⊗ r) for masses (...) and offsets (..., 3); returns (..., 3, 3)."""
    rr = np.einsum("...i,...i->...", r, r)
    outer = r[..., :, None] * r[..., None, :]
    return np.asarray(mass)[..., None, None] * (rr[..., None, None] * np.eye(3) - outer)


@dataclass(frozen=True, eq=False)
class Part:
    """A rigid part of a composite body.

    Attributes:
        mass: kg, positive.
        inertia: (3, 3) tensor about the part's own centre of mass, in the part's frame;
            may be singular (thin rod, or zeros for a point mass).
        position: (3,) the part's centre of mass in the body frame (m).
        orientation: (4,) unit quaternion mapping the part frame to the body frame
            (``v_body = to_matrix(orientation) v_part``); identity by default.
    """

    mass: float
    inertia: np.ndarray
    position: np.ndarray
    orientation: np.ndarray = field(default_factory=quaternion.identity)

    def __post_init__(self) -> None:
        inertia = validation.floats(self.inertia, "Part inertia")
        if inertia.shape != (3, 3):
            raise ValueError(f"Part inertia must have shape (3, 3), got shape {inertia.shape}")
        inertia = validate_inertia(inertia, "Part inertia", allow_singular=True)
        q = validation.floats(self.orientation, "Part orientation")
        if q.shape != (4,) or not abs(quaternion.norm(q) - 1.0) <= _UNIT_QUATERNION_TOL:
            raise ValueError(f"Part orientation must be a unit quaternion of shape (4,), got {q.tolist()}")
        object.__setattr__(self, "mass", _positive_scalar(self.mass, "Part mass"))
        object.__setattr__(self, "inertia", _frozen(inertia))
        object.__setattr__(self, "position", _frozen(_finite_vectors(self.position, "Part position", (3,))))
        object.__setattr__(self, "orientation", _frozen(quaternion.normalize(q)))


@dataclass(frozen=True, eq=False)
class MassProperties:
    """Mass properties of a composite body, in the body frame.

    Attributes:
        mass: total mass (kg).
        center_of_mass: (3,) centre of mass (m).
        inertia: (3, 3) tensor about the centre of mass (kg·m²).
    """

    mass: float
    center_of_mass: np.ndarray
    inertia: np.ndarray


def compose(parts: Iterable[Part]) -> MassProperties:
    """Mass properties of a body made of ``parts`` (Mandre 2008, §3).

    M = Σ m_i, c = Σ m_i p_i / M, and with A_i = to_matrix(orientation_i), r_i = p_i − c:
    I = Σ_i [A_i I_i A_iᵀ + m_i ((r_i·r_i) 1 − r_i ⊗ r_i)].

    Raises:
        ValueError: if ``parts`` is empty or holds something other than :class:`Part`.
    """
    try:
        parts = list(parts)
    except TypeError:
        raise ValueError(f"parts must be an iterable of Part, got {validation.show(parts)}") from None
    if not parts:
        raise ValueError("compose needs at least one part, got none")
    for i, part in enumerate(parts):
        if not isinstance(part, Part):
            raise ValueError(f"parts[{i}] must be a Part, got {validation.show(part)}")
    masses = np.array([p.mass for p in parts])
    positions = np.stack([p.position for p in parts])
    rotations = quaternion.to_matrix(np.stack([p.orientation for p in parts]))
    inertias = np.stack([p.inertia for p in parts])
    total = masses.sum()
    com = masses @ positions / total
    rotated = rotations @ inertias @ np.swapaxes(rotations, -1, -2)
    inertia = np.sum(rotated + _point_mass_tensor(masses, positions - com), axis=0)
    # Symmetrise: the rotated terms are symmetric only to round-off.
    inertia = 0.5 * (inertia + inertia.T)
    return MassProperties(float(total), _frozen(com), _frozen(inertia))


def parallel_axis(inertia_com: ArrayLike, mass: ArrayLike, offset: ArrayLike) -> np.ndarray:
    """Tensor about a point P displaced by ``offset`` d from the centre of mass C.

    I_P = I_C + m ((d·d) 1 − d ⊗ d).

    Args:
        inertia_com ((..., 3, 3) array): tensor about C (may be singular).
        mass ((...) array or float): kg.
        offset ((..., 3) array): d = P − C (m), in the tensor's frame.

    Returns:
        (..., 3, 3) array: I_P, broadcast over the leading shapes.
    """
    inertia_com = validate_inertia(inertia_com, "inertia_com", allow_singular=True)
    d = _finite_vectors(offset, "offset")
    m = validate_mass(mass)
    validation.batch_shape(inertia_com=inertia_com.shape[:-2], mass=m.shape, offset=d.shape[:-1])
    return inertia_com + _point_mass_tensor(m, d)


def to_center_of_mass(inertia_about_point: ArrayLike, mass: ArrayLike, com_offset: ArrayLike) -> np.ndarray:
    """Tensor about the centre of mass C from the tensor about a reference point P
    (Sasaki 2019, ``inertia_conversion``); the inverse of :func:`parallel_axis`.

    I_C = I_P − m ((c·c) 1 − c ⊗ c) with c = C − P.

    Args:
        inertia_about_point ((..., 3, 3) array): tensor about P.
        mass ((...) array or float): kg.
        com_offset ((..., 3) array): c = C − P (m), in the tensor's frame.

    Returns:
        (..., 3, 3) array: I_C.

    Raises:
        ValueError: for invalid inputs, or if I_C is not a physical tensor (the mass or
            offset do not belong to this I_P).
    """
    inertia_p = validate_inertia(inertia_about_point, "inertia_about_point", allow_singular=True)
    c = _finite_vectors(com_offset, "com_offset")
    m = validate_mass(mass)
    validation.batch_shape(inertia_about_point=inertia_p.shape[:-2], mass=m.shape, com_offset=c.shape[:-1])
    inertia_c = inertia_p - _point_mass_tensor(m, c)
    return validate_inertia(inertia_c, "inertia about the centre of mass", allow_singular=True)


# ----------------------------------------------------------------------------------
# Principal axes
# ----------------------------------------------------------------------------------


def principal_axes(inertia: ArrayLike, *, triangle: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Principal moments and axes of ``inertia`` ((..., 3, 3)), Mandre (2008) §7.1.

    Returns:
        moments ((..., 3) array): ascending.
        q ((..., 4) array): unit quaternion whose R = to_matrix(q) has the principal
            axes as columns, in the input frame, with det R = +1, so that
            inertia = R diag(moments) Rᵀ.

    Raises:
        ValueError: if ``inertia`` fails :func:`validate_inertia`.
    """
    moments, axes = np.linalg.eigh(validate_inertia(inertia, triangle=triangle))
    # eigh returns an orthonormal but possibly left-handed basis; flipping one axis keeps
    # the diagonalisation and makes it a rotation.
    axes[..., :, 2] *= np.sign(np.linalg.det(axes))[..., None]
    return moments, quaternion.from_matrix(axes)


def principal_frame(
    inertia: ArrayLike, *, triangle: bool = True
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """Read an inertia argument as principal moments or as a body-frame tensor.

    Args:
        inertia: (..., 3) principal moments (the body frame is principal), or a
            (..., 3, 3) body-frame tensor (any array whose last two axes are 3 × 3).
        triangle: check the triangle inequality (see :func:`validate_moments`).

    Returns:
        ``(moments, rotation, tensor)``: (..., 3) principal moments; the (..., 4)
        rotation from principal axes to the body frame, or ``None`` for moments and for
        diagonal tensors (whose moments keep their order); and
        the (..., 3, 3) body-frame tensor.

    Raises:
        ValueError: for a shape that is neither, or an unphysical inertia.
    """
    a = validation.floats(inertia, "inertia")
    if a.ndim >= 2 and a.shape[-2:] == (3, 3):
        if not np.any(a[..., ~np.eye(3, dtype=bool)]):
            # Already principal: its frame is kept (no rotation for the kernels to apply),
            # its moments in the order given, as for moments.
            t = validate_inertia(a, triangle=triangle)
            return np.diagonal(t, axis1=-2, axis2=-1).copy(), None, t
        moments, rotation = principal_axes(a, triangle=triangle)
        return moments, rotation, a
    if a.ndim >= 1 and a.shape[-1] == 3:
        moments = validate_moments(a, "inertia", triangle=triangle)
        return moments, None, moments[..., :, None] * np.eye(3)
    raise ValueError(
        f"inertia must be (..., 3) principal moments or a (..., 3, 3) tensor, got shape {a.shape}"
    )

"""Geometry of the drawing: the ellipsoid that stands for a body, and arrow orientations.

Conventions are those of :mod:`rigidrot_gym.physics.rotation.quaternion` (scalar-first, body to
world). Pure numpy: nothing here needs PyBullet.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rigidrot_gym.physics.rotation import quaternion
from rigidrot_gym.physics.rotation.inertia import principal_frame

# Semi-axes below this fraction of the largest are raised to it: a thin plate (I1 + I2 = I3)
# has a zero semi-axis, and moments violating the triangle inequality (check_triangle=False)
# a negative squared one; neither can be drawn.
MIN_SEMI_AXIS = 0.05


def ellipsoid_semi_axes(moments: ArrayLike, *, check_triangle: bool = True) -> np.ndarray:
    """Semi-axes (a, b, c) of the uniform solid ellipsoid with principal moments ∝ ``moments``.

    A solid ellipsoid of mass m has I1 = m(b² + c²)/5, I2 = m(a² + c²)/5,
    I3 = m(a² + b²)/5, so a² = 5(I2 + I3 − I1)/(2m), b² = 5(I1 + I3 − I2)/(2m),
    c² = 5(I1 + I2 − I3)/(2m). The mass only scales the result, which is normalised so that
    the largest semi-axis is 1; semi-axes below 0.05 (a thin plate, or moments violating the
    triangle inequality when ``check_triangle=False``) are raised to 0.05 to stay visible.

    Args:
        moments: (3,) principal moments (kg·m²), any order.
        check_triangle: reject moments violating I1 + I2 ≥ I3.

    Returns:
        (3,) semi-axes along the principal axes of ``moments``, in its order.

    Raises:
        ValueError: for moments that are not finite and positive, or (by default) that
            violate the triangle inequality.
    """
    m = np.asarray(moments, dtype=np.float64)
    if m.shape != (3,):
        raise ValueError(f"moments must have shape (3,), got shape {m.shape}")
    moments, _, _ = principal_frame(m, triangle=check_triangle)
    squared = moments.sum() - 2.0 * moments  # I_j + I_k − I_i, ∝ the squared semi-axis i
    squared = squared / squared.max()  # > 0: at most one of the three can be ≤ 0
    return np.sqrt(np.maximum(squared, MIN_SEMI_AXIS**2))


def rotation_from_x(direction: np.ndarray) -> np.ndarray:
    """Unit quaternion (scalar-first) turning e_x onto the unit ``direction``, shortest arc."""
    axis = np.array([0.0, -direction[2], direction[1]])  # e_x × direction
    sine = float(np.linalg.norm(axis))
    if sine < 1e-12:
        # Parallel or antiparallel: no axis from the cross product; any ⟂ axis turns e_x to −e_x.
        return quaternion.identity() if direction[0] > 0.0 else quaternion.from_rotvec([0.0, 0.0, np.pi])
    return quaternion.from_rotvec(axis / sine * np.arctan2(sine, direction[0]))

"""A heavy top: a rigid body pivoting about a fixed point in uniform gravity.

Seed 002's second example. Body frame at the pivot; ``r`` is the centre of mass in
the body frame, ``J`` the inertia tensor about the pivot (parallel-axis theorem from
the tensor about the centre of mass). The weight F = m g acts at r:

    τ = r × (q* F q)                     (body-frame torque)
    V(q) = −F · (q r q*)                 (potential: m g × height of the centre of mass)
    ∇V(q) = 2 (0, F) ⊗ q ⊗ (0, r)        (V is quadratic in q, written with the sandwich
                                          product so that it is defined off |q| = 1)

Energy ½ ωᵀJω + V and the angular momentum about the vertical, ĝ · R(q) J ω, are
conserved. Pass :attr:`HeavyTop.torque` (compiled) to any method, or
:attr:`HeavyTop.potential` to ``propagate(..., potential=...)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.rotation import inertia as inertia_module
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.torques import PointForce

STANDARD_GRAVITY = 9.80665  # m/s²


@dataclass(frozen=True)
class HeavyTop:
    """A top of mass ``mass`` (kg) with its centre of mass at ``center_of_mass`` (m, body
    frame, from the pivot), inertia ``inertia`` (3 × 3, kg·m², about the pivot), in the
    uniform field ``gravity`` (m/s², world frame)."""

    mass: float
    center_of_mass: np.ndarray
    inertia: np.ndarray
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -STANDARD_GRAVITY]))

    def __post_init__(self) -> None:
        def frozen(a):
            a = np.array(a)
            a.setflags(write=False)
            return a

        mass = inertia_module.validate_mass(self.mass, "HeavyTop.mass")
        if mass.ndim != 0:
            raise ValueError(f"HeavyTop.mass must be a scalar, got shape {mass.shape}")
        com = validation.vectors(self.center_of_mass, "HeavyTop.center_of_mass", 3)
        gravity = validation.vectors(self.gravity, "HeavyTop.gravity", 3)
        for name, value in (("center_of_mass", com), ("gravity", gravity)):
            if value.shape != (3,):
                raise ValueError(f"HeavyTop.{name} must have shape (3,), got shape {value.shape}")
        tensor = inertia_module.validate_inertia(self.inertia, "HeavyTop.inertia")
        if tensor.shape != (3, 3):
            raise ValueError(f"HeavyTop.inertia must have shape (3, 3), got shape {tensor.shape}")
        object.__setattr__(self, "mass", float(mass))
        object.__setattr__(self, "center_of_mass", frozen(com))
        object.__setattr__(self, "inertia", frozen(tensor))
        object.__setattr__(self, "gravity", frozen(gravity))

    @classmethod
    def symmetric(
        cls, mass: float, i_transverse: float, i_axial: float, length: float, g: float = STANDARD_GRAVITY
    ) -> HeavyTop:
        """Symmetric top with axis body z: moments about the centre of mass
        (i_transverse, i_transverse, i_axial), centre of mass at distance ``length``
        from the pivot along z, gravity −g ẑ."""
        com = np.array([0.0, 0.0, validation.scalar(length, "length")])
        moments = validation.floats([i_transverse, i_transverse, i_axial], "i_transverse, i_axial")
        about_pivot = inertia_module.parallel_axis(np.diag(moments), mass, com)
        return cls(mass, com, about_pivot, np.array([0.0, 0.0, -validation.scalar(g, "g")]))

    @property
    def weight(self) -> np.ndarray:
        """(3,) the force m g, N, world frame."""
        return self.mass * self.gravity

    @property
    def torque(self) -> PointForce:
        """The weight as a compiled torque term: r × (q* F q)."""
        return PointForce(self.weight, self.center_of_mass)

    @property
    def potential(self) -> HeavyTop:
        """The top itself, as a :class:`~rigidrot_gym.physics.rotation.torques.Potential`."""
        return self

    def energy(self, q) -> np.ndarray:
        """(...) potential energy V(q) = −F · (q r q*), J, for (..., 4) attitudes."""
        q = validation.floats(q, "q")
        r = np.concatenate([[0.0], self.center_of_mass])
        f = np.concatenate([[0.0], self.weight])
        sandwich = quat.multiply(quat.multiply(q, r), quat.conjugate(q))
        return -np.sum(sandwich * f, axis=-1)

    def gradient(self, q) -> np.ndarray:
        """(..., 4) ∇V(q) = 2 (0, F) ⊗ q ⊗ (0, r)."""
        r = np.concatenate([[0.0], self.center_of_mass])
        f = np.concatenate([[0.0], self.weight])
        return 2.0 * quat.multiply(quat.multiply(f, q), r)

    def total_energy(self, q, omega) -> np.ndarray:
        """(...) ½ ωᵀJω + V(q), J."""
        omega = validation.vectors(omega, "omega", 3)
        return 0.5 * np.einsum("...i,ij,...j->...", omega, self.inertia, omega) + self.energy(q)

    def vertical_momentum(self, q, omega) -> np.ndarray:
        """(...) angular momentum about the vertical through the pivot, ĝ · R(q) J ω."""
        g = np.linalg.norm(self.gravity)
        if g == 0.0:
            raise ValueError("vertical_momentum needs a vertical: this top's gravity is zero")
        momentum = quat.rotate(quat.normalize(q), validation.vectors(omega, "omega", 3) @ self.inertia.T)
        up = -self.gravity / g
        return momentum @ up

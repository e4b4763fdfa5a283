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

from rigidrot_gym.physics import inertia as inertia_module
from rigidrot_gym.physics import quaternion as quat
from rigidrot_gym.physics.torques import PointForce

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

    @classmethod
    def symmetric(
        cls, mass: float, i_transverse: float, i_axial: float, length: float, g: float = STANDARD_GRAVITY
    ) -> HeavyTop:
        """Symmetric top with axis body z: moments about the centre of mass
        (i_transverse, i_transverse, i_axial), centre of mass at distance ``length``
        from the pivot along z, gravity −g ẑ."""
        com = np.array([0.0, 0.0, float(length)])
        about_pivot = inertia_module.parallel_axis(np.diag([i_transverse, i_transverse, i_axial]), mass, com)
        return cls(float(mass), com, about_pivot, np.array([0.0, 0.0, -float(g)]))

    @property
    def weight(self) -> np.ndarray:
        """(3,) the force m g, N, world frame."""
        return self.mass * np.asarray(self.gravity, dtype=float)

    @property
    def torque(self) -> PointForce:
        """The weight as a compiled torque term: r × (q* F q)."""
        return PointForce(self.weight, self.center_of_mass)

    @property
    def potential(self) -> HeavyTop:
        """The top itself, as a :class:`~rigidrot_gym.physics.torques.Potential`."""
        return self

    def energy(self, q) -> np.ndarray:
        """(...) potential energy V(q) = −F · (q r q*), J, for (..., 4) attitudes."""
        q = np.asarray(q, dtype=float)
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
        omega = np.asarray(omega, dtype=float)
        return 0.5 * np.einsum("...i,ij,...j->...", omega, self.inertia, omega) + self.energy(q)

    def vertical_momentum(self, q, omega) -> np.ndarray:
        """(...) angular momentum about the vertical through the pivot, ĝ · R(q) J ω."""
        up = -np.asarray(self.gravity, dtype=float) / np.linalg.norm(self.gravity)
        momentum = quat.rotate(quat.normalize(q), np.asarray(omega, dtype=float) @ self.inertia.T)
        return momentum @ up

"""Magnetic momentum dumping: the cross-product law by which magnetorquers unload
reaction wheels.

The rods are asked for the torque τ_d = −k_p h, h the wheels' momentum in the body frame
and k_p a gain (1/s); a rod's torque m × B lies across the field B, so the law takes the
dipole m = B × τ_d / |B|², whose torque m × B = τ_d − (τ_d·b̂) b̂ is τ_d's part across
the field (b̂ = B/|B|): Camillo & Markley, "Orbit-averaged behavior of magnetic control
laws for momentum unloading", J. Guidance 3(6), 1980; Basilisk's
``mtbMomentumManagementSimple`` (τ_d) and ``torque2Dipole`` (m), side by side in
``tests/test_momentum_dumping.py``. The attitude law's torque u stays what the body gets:
the wheels give u − m × B (Basilisk's ``mtbFeedforward``), so the rods' torque is taken
out of the wheels' momentum. As the field turns over an orbit, every component of h is
across it for part of the time, and h decays on average.
"""

from __future__ import annotations

import numpy as np

# k_p, 1/s: Basilisk's example of this law (scenarioMtbMomentumManagementSimple.py).
DUMPING_GAIN = 0.003


def dumping_dipole(gain: float, momentum: np.ndarray, field: np.ndarray) -> np.ndarray:
    """m = B × (−k_p h) / |B|² (..., 3), A·m², unclipped, from the wheels' momentum h
    (..., 3), N·m·s, and the field B (..., 3), T, both in the body frame; 0 where B is 0."""
    field = np.asarray(field, dtype=np.float64)
    square = np.sum(field * field, axis=-1, keepdims=True)
    safe = np.where(square > 0.0, square, 1.0)
    return np.where(square > 0.0, np.cross(field, -gain * np.asarray(momentum)) / safe, 0.0)

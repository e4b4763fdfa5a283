"""Linear-quadratic regulator on the linearised attitude dynamics.

About the target (δq ≈ (1, q_v), small ω) the kinematics and Euler's equations with the
gyroscopic term cancelled linearise to q̇_v ≈ ω/2, ω̇ = Ĵ⁻¹ u. With x = [q_v; ω]:

    ẋ = A x + B u,   A = [[0, ½I], [0, 0]],   B = [0; Ĵ⁻¹]

The gain minimises ∫ (xᵀ Q x + uᵀ R u) dt with Q = diag(a I, b I), R = r I:
K = R⁻¹ Bᵀ P, P from the continuous algebraic Riccati equation
Aᵀ P + P A − P B R⁻¹ Bᵀ P + Q = 0 (scipy.linalg.solve_continuous_are), and

    u = −K x  (+ ω × (Ĵ ω + h), the gyroscopic compensation, on by default)

The compensation makes the nonlinear rate dynamics match the linear model's ω̇ = Ĵ⁻¹ u
when Ĵ = J. For a diagonal Ĵ the Riccati equation decouples into 2 × 2 blocks with the
closed form (shared notes, controllers.md; :func:`diagonal_gains`)

    u_i = −√(a/r) q_i − √(b/r + J_i √(a/r)) ω_i

so the linearised axis i has ωn² = √(a/r) / (2 J_i) and 2ζωn = √(b/r + J_i √(a/r)) / J_i.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_continuous_are

from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.control.base import Controller, gyroscopic
from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.rotation.inertia import principal_frame, validate_moments


def _weights(attitude_weight: float, rate_weight: float, control_weight: float) -> tuple[float, float, float]:
    """(a, b, r), checked: a > 0 (with b ≥ 0 it makes (A, √Q) observable, so the Riccati
    solution is stabilising), b ≥ 0, r > 0."""
    a = validation.scalar(attitude_weight, "attitude_weight", positive=True)
    b = validation.scalar(rate_weight, "rate_weight")
    if b < 0:
        raise ValueError(f"rate_weight must be a non-negative finite number, got {rate_weight!r}")
    r = validation.scalar(control_weight, "control_weight", positive=True)
    return a, b, r


def linearisation(inertia: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A (6, 6), B (6, 3)) of the linearised attitude dynamics for a (3, 3) tensor Ĵ."""
    zero, eye = np.zeros((3, 3)), np.eye(3)
    a = np.block([[zero, 0.5 * eye], [zero, zero]])
    b = np.vstack([zero, np.linalg.inv(inertia)])
    return a, b


def diagonal_gains(
    moments, attitude_weight: float, rate_weight: float, control_weight: float
) -> tuple[np.ndarray, np.ndarray]:
    """Closed-form LQR gains for a diagonal Ĵ: u_i = −k_q q_i − k_ω,i ω_i with
    k_q = √(a/r) (the same on every axis) and k_ω,i = √(b/r + J_i √(a/r)).

    Args:
        moments: (..., 3) principal moments J_i, kg·m².
        attitude_weight: a.
        rate_weight: b.
        control_weight: r.

    Returns:
        (k_q, k_ω), each (..., 3), N·m and N·m·s.
    """
    j = validate_moments(moments, "moments")
    a, b, r = _weights(attitude_weight, rate_weight, control_weight)
    k_q = np.sqrt(a / r)
    return np.full_like(j, k_q), np.sqrt(b / r + j * k_q)


class LQR(Controller):
    """u = −K [δq_v; ω] (+ ω × (Ĵ ω + h)), K from the Riccati equation of the linearisation.

    Args:
        inertia: the estimate Ĵ: (3,) principal moments or (3, 3) tensor, kg·m².
        attitude_weight: a, the weight of |q_v|² (positive).
        rate_weight: b, the weight of |ω|², s² (non-negative).
        control_weight: r, the weight of |u|², 1/(N·m)² (positive).
        actuators: see :class:`~rigidrot_gym.control.base.Controller`.
        max_rate: see :class:`~rigidrot_gym.control.base.Controller`.
        gyroscopic_compensation: add ω × (Ĵ ω + h) (default on), so that the rate dynamics are
            the linear model's ω̇ = Ĵ⁻¹ u when Ĵ = J.

    Attributes:
        gain: K (3, 6): columns 0–2 act on q_v, 3–5 on ω.
    """

    def __init__(
        self,
        inertia,
        attitude_weight: float,
        rate_weight: float,
        control_weight: float,
        actuators,
        max_rate: float,
        gyroscopic_compensation: bool = True,
    ):
        super().__init__(actuators, max_rate)
        _, _, self.inertia = principal_frame(inertia)
        a, b, r = _weights(attitude_weight, rate_weight, control_weight)
        a_mat, b_mat = linearisation(self.inertia)
        p = solve_continuous_are(a_mat, b_mat, np.diag([a] * 3 + [b] * 3), r * np.eye(3))
        self.gain = b_mat.T @ p / r
        self.gyroscopic_compensation = bool(gyroscopic_compensation)

    @classmethod
    def for_scenario(
        cls,
        scenario: Scenario,
        attitude_weight: float,
        rate_weight: float,
        control_weight: float,
        gyroscopic_compensation: bool = True,
    ) -> LQR:
        """On a scenario's own inertia and limits."""
        return cls(
            scenario.inertia,
            attitude_weight,
            rate_weight,
            control_weight,
            gyroscopic_compensation=gyroscopic_compensation,
            **cls.limits_of(scenario),
        )

    def torque(self, error: np.ndarray, omega: np.ndarray, momentum: np.ndarray) -> np.ndarray:
        u = -error[:, 1:4] @ self.gain[:, :3].T - omega @ self.gain[:, 3:].T
        return u + gyroscopic(omega, self.inertia, momentum) if self.gyroscopic_compensation else u

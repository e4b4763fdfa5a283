"""The result of a propagation: times, attitudes, body rates and their diagnostics.

Drifts of the conserved quantities are reported two ways. The absolute drift
max_k |X_k − X_0| is always defined. The relative drift divides it by |X_0|; for a zero
reference (a body at rest: E_0 = 0, L_0 = 0) that quotient is undefined, and it is
reported as 0 when the quantity stayed exactly zero (exactly conserved) and as inf when
it moved, never as the NaN of 0/0 — a NaN would read as a failure of the integrator.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidrot_gym.physics.rotation import quaternion as quat


@dataclass(frozen=True)
class Trajectory:
    """States at ``t = t0 + k·dt`` for ``k = 0 … steps``, in the user's body frame.

    Attributes:
        t: (steps + 1,) times, s.
        q: (steps + 1, ..., 4) attitudes, body to world (not renormalised for display:
            |q| − 1 is a diagnostic).
        omega: (steps + 1, ..., 3) body rates, rad/s.
        inertia: (..., 3, 3) body-frame inertia tensor, kg·m².
        method: name of the integrator.
        torque_evaluations: (...) torque evaluations per body over the whole run.
        iterations: (...) largest number of solver iterations in any step (implicit
            methods; 0 for explicit ones).
    """

    t: np.ndarray
    q: np.ndarray
    omega: np.ndarray
    inertia: np.ndarray
    method: str
    torque_evaluations: np.ndarray
    iterations: np.ndarray

    @property
    def body_momentum(self) -> np.ndarray:
        """(steps + 1, ..., 3) body-frame angular momentum I ω, N·m·s."""
        return np.einsum("...ij,...j->...i", self.inertia, self.omega)

    @property
    def kinetic_energy(self) -> np.ndarray:
        """(steps + 1, ...) rotational kinetic energy ½ ω · I ω, J."""
        return 0.5 * np.sum(self.omega * self.body_momentum, axis=-1)

    @property
    def angular_momentum(self) -> np.ndarray:
        """(steps + 1, ..., 3) world-frame angular momentum q (I ω) q*, N·m·s."""
        return quat.rotate(quat.normalize(self.q), self.body_momentum)

    @property
    def norm_error(self) -> np.ndarray:
        """(steps + 1, ...) |q| − 1."""
        return quat.norm(self.q) - 1.0

    @property
    def energy_drift(self) -> np.ndarray:
        """(...) largest change of the kinetic energy over the run, max_k |E_k − E_0|, J."""
        energy = self.kinetic_energy
        return np.max(np.abs(energy - energy[0]), axis=0)

    @property
    def momentum_drift(self) -> np.ndarray:
        """(...) largest change of the world angular momentum over the run,
        max_k |L_k − L_0| (the vector's change, not only its length's), N·m·s."""
        momentum = self.angular_momentum
        return np.max(np.linalg.norm(momentum - momentum[0], axis=-1), axis=0)

    @property
    def relative_energy_drift(self) -> np.ndarray:
        """(...) :attr:`energy_drift` / E_0; for E_0 = 0, 0 if E stayed 0 and inf otherwise."""
        return _relative(self.energy_drift, np.abs(self.kinetic_energy[0]))

    @property
    def relative_momentum_drift(self) -> np.ndarray:
        """(...) :attr:`momentum_drift` / |L_0|; for L_0 = 0, 0 if L stayed 0 and inf otherwise."""
        return _relative(self.momentum_drift, np.linalg.norm(self.angular_momentum[0], axis=-1))


def _relative(drift: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """drift / reference, with the zero reference's cases of the module docstring."""
    zero = reference == 0.0
    quotient = drift / np.where(zero, 1.0, reference)
    return np.where(zero, np.where(drift == 0.0, 0.0, np.inf), quotient)

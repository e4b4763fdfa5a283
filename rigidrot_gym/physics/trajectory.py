"""The result of a propagation: times, attitudes, body rates and their diagnostics."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidrot_gym.physics import quaternion as quat


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

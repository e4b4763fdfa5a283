"""The bodies of :class:`~rigidrot_gym.attitude.batch.AttitudeBatch` read by rows.

The batch stores its per-body arrays component-major, as the compiled period takes them
(:class:`~rigidrot_gym.attitude.data.Carried`: a loop over bodies vectorises on them);
:class:`BodyViews` shows them body first, as transposed views, and derives the body-frame
state and inertia from the principal-axes state the integrators carry.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from rigidrot_gym.physics.rotation import quaternion as quat

if TYPE_CHECKING:
    from rigidrot_gym.attitude.data import Equipment


class BodyViews:
    """Row views of the batch's per-body arrays (a part of
    :class:`~rigidrot_gym.attitude.batch.AttitudeBatch`, whose ``_state``, ``_moments``,
    ``_principal``, ``_limits``, ``_target``, ``_steps``, ``_hold`` and
    ``_equipment`` it reads). Every view writes through to the batch."""

    @property
    def state(self) -> np.ndarray:
        """(N, 8) integrator states in principal axes: q, ω, the method's scalar (a view)."""
        return self._state.T

    @property
    def moments(self) -> np.ndarray:
        """(N, 3) principal moments of inertia, kg·m² (a view)."""
        return self._moments.T

    @property
    def principal(self) -> np.ndarray:
        """(N, 4) principal frames B, principal axes to body (a view)."""
        return self._principal.T

    @property
    def limits(self) -> np.ndarray:
        """(N, n) each body's actuator limits, in each kind's unit (N·m; A·m² for rods; a
        view)."""
        return self._limits.T

    @property
    def target(self) -> np.ndarray:
        """(N, 4) target attitudes (a view)."""
        return self._target.T

    @property
    def steps(self) -> np.ndarray:
        """(N,) int64 steps of each body's episode (a view)."""
        return self._steps

    @property
    def hold(self) -> np.ndarray:
        """(N,) int64 consecutive steps each body has been inside the tolerance (a view)."""
        return self._hold

    @property
    def equipment(self) -> Equipment:
        """The realism components' per-body state and constants, a field per component's
        :class:`~rigidrot_gym.attitude.components.declaration.State` (the batch's own
        arrays, as the compiled period reads and writes them)."""
        return self._equipment

    @property
    def wheel_momentum(self) -> np.ndarray:
        """(N, n) wheel momenta about their spin axes, N·m·s (empty without wheels; a view)."""
        return self._equipment.wheel_momentum

    @property
    def wheel_saturated(self) -> np.ndarray:
        """(N,) a wheel at its momentum limit (a view)."""
        return self._equipment.saturated

    def inertia(self) -> np.ndarray:
        """(N, 3, 3) body-frame inertia tensors J = B diag(m) Bᵀ of this episode's bodies
        (the scenario's, unless domain randomisation re-drew them), kg·m²."""
        b = quat.to_matrix(self.principal)
        return np.einsum("nij,nj,nkj->nik", b, self.moments, b)

    def body_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(N, 4) attitudes and (N, 3) body rates in each body's own frame."""
        q_p, w_p = self.state[:, 0:4], self.state[:, 4:7]
        return quat.multiply(q_p, quat.conjugate(self.principal)), quat.rotate(self.principal, w_p)

"""Torque known only at the main steps, extrapolated to the stages (Mandre 2008, §7.3).

When an application updates the torque once per main step, the integrator still asks
for it at its stage times. Holding the last value makes a smoothly varying torque
first-order accurate; extrapolating through the last three values with the Lagrange
polynomial (quadratic in time; the seed calls it cubic) makes it third-order. With
a, b, c the values at t₀ − 2h, t₀ − h, t₀ and x = (t − t₀)/h:

    τ(t) = ½ a x(x + 1) − b x(x + 2) + ½ c (x + 1)(x + 2)

(the seed writes x = (t₀ − t)/h, which does not reproduce b at x = −1). After a
discontinuity (a collision, a switched actuator) the history must be reset, or the
polynomial swings wildly; with one or two values it holds or extrapolates linearly.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.physics.plumbing import validation


class TorqueExtrapolator:
    """A torque callable ``τ(t, q, omega)`` built from values pushed at the main steps.

    Example::

        extrapolate = TorqueExtrapolator(dt)
        for k in range(steps):
            extrapolate.push(t, measured_torque())   # once per main step
            traj = propagate(q, w, inertia, dt, 1, torque=extrapolate, t0=t)
            q, w, t = traj.q[-1], traj.omega[-1], t + dt
    """

    def __init__(self, dt: float):
        self.dt = validation.scalar(dt, "dt", positive=True)
        self._times: list[float] = []
        self._values: list[np.ndarray] = []

    def reset(self) -> None:
        """Forget the history (call after a discontinuity in the torque)."""
        self._times.clear()
        self._values.clear()

    def push(self, t: float, torque) -> None:
        """Record the torque ((..., 3), N·m) known at main step time ``t`` (s).

        Raises:
            ValueError: if ``t`` is not one step ``dt`` after the previous value, or the
                torque is not finite or not of the previous values' shape; the history is
                left as it was.
        """
        t = validation.scalar(t, "t")
        value = validation.vectors(torque, "torque", 3)
        if self._values and value.shape != self._values[-1].shape:
            raise ValueError(
                f"torque must have the shape of the values pushed before, {self._values[-1].shape}, "
                f"got shape {value.shape}; call reset() to start a history of another shape"
            )
        if self._times and not np.isclose(t - self._times[-1], self.dt, rtol=1e-9, atol=0.0):
            raise ValueError(
                f"push at t = {t} is not one step dt = {self.dt} after t = {self._times[-1]}; "
                "call reset() after a gap or a discontinuity"
            )
        self._times = [*self._times, t][-3:]
        self._values = [*self._values, value][-3:]

    def __call__(self, t: float, q=None, omega=None) -> np.ndarray:
        """The extrapolated torque at time ``t`` (the attitude and rates are ignored)."""
        if not self._values:
            raise ValueError("TorqueExtrapolator has no torque yet: push() one first")
        x = (validation.scalar(t, "t") - self._times[-1]) / self.dt
        if len(self._values) == 1:
            return self._values[0]
        if len(self._values) == 2:
            b, c = self._values
            return c + x * (c - b)
        a, b, c = self._values
        return 0.5 * a * x * (x + 1.0) - b * x * (x + 2.0) + 0.5 * c * (x + 1.0) * (x + 2.0)

"""Drift diagnostics of a Trajectory (issue 12, item 17): hand-computed values, and an
honest answer for a zero reference (a body at rest) instead of the NaN of 0/0."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.physics.rotation.integrators import ComponentMethod
from rigidrot_gym.physics.rotation.propagate import propagate

I_ASYM = np.array([1.0, 2.0, 3.0])
OURS = [name for name in integrators.names() if isinstance(integrators.get(name), ComponentMethod)]


@pytest.mark.parametrize("method", OURS)
def test_a_body_at_rest_has_zero_drift_not_nan(method):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0 RuntimeWarning either
        traj = propagate([1, 0, 0, 0], [0.0, 0.0, 0.0], I_ASYM, 0.1, 5, method)
        assert traj.energy_drift == 0.0 and traj.momentum_drift == 0.0
        assert traj.relative_energy_drift == 0.0 and traj.relative_momentum_drift == 0.0


def test_spin_up_from_rest_matches_the_closed_form():
    """A constant torque τ about principal axis z from rest: ω = τt/I3 about z, which stays
    the world z axis, so E = τ²t²/(2 I3) and L = τt ẑ. RK4 is exact for ω linear in t.
    Relative to the zero start the drift is infinite, and reported so."""
    tau, steps, dt = 0.5, 40, 0.05
    traj = propagate([1, 0, 0, 0], [0.0, 0.0, 0.0], I_ASYM, dt, steps, "rk4", [0.0, 0.0, tau])
    t = steps * dt
    assert traj.energy_drift == pytest.approx(tau**2 * t**2 / (2 * I_ASYM[2]), rel=1e-13)
    assert traj.momentum_drift == pytest.approx(tau * t, rel=1e-13)
    assert traj.relative_energy_drift == np.inf and traj.relative_momentum_drift == np.inf


def test_relative_drift_of_a_spinning_body_matches_the_closed_form():
    """ω0 = 2 rad/s about z, τ = 0.5 N·m about z: ω(t) = ω0 + τt/I3, so the relative drifts
    are (ω² − ω0²)/ω0² for the energy and (ω − ω0)/ω0 for the momentum at the end."""
    w0, tau, steps, dt = 2.0, 0.5, 40, 0.05
    traj = propagate([1, 0, 0, 0], [0.0, 0.0, w0], I_ASYM, dt, steps, "rk4", [0.0, 0.0, tau])
    w = w0 + tau * steps * dt / I_ASYM[2]
    assert traj.relative_energy_drift == pytest.approx((w**2 - w0**2) / w0**2, rel=1e-13)
    assert traj.relative_momentum_drift == pytest.approx((w - w0) / w0, rel=1e-13)


def test_batches_mix_rest_and_motion_without_nan():
    traj = propagate([1, 0, 0, 0], [[0.0, 0.0, 0.0], [0.3, 1.0, -0.2]], I_ASYM, 0.01, 50, "exact")
    assert traj.relative_energy_drift.shape == (2,)
    assert traj.relative_energy_drift[0] == 0.0
    assert 0.0 <= traj.relative_energy_drift[1] < 1e-13 and 0.0 <= traj.relative_momentum_drift[1] < 1e-13

"""Torque known only at the main steps (Mandre 2008, §7.3)."""

from __future__ import annotations

import numpy as np
import pytest
from reference import angle, slope, solve

from rigidrot_gym.physics.rotation.extrapolation import TorqueExtrapolator
from rigidrot_gym.physics.rotation.propagate import propagate

INERTIA = np.array([1.0, 2.0, 3.0])
Q0, W0 = np.array([1.0, 0.0, 0.0, 0.0]), np.array([0.2, 0.7, -0.1])


def smooth_torque(t):
    return np.array([0.3 * np.sin(1.3 * t), 0.2 * np.cos(0.7 * t), 0.1 * np.sin(2.1 * t + 0.4)])


def _run(dt, steps, extrapolate: bool):
    """Main loop of an application that updates the torque once per step. The torque was
    already known at the two steps before t = 0; without that history the start-up steps
    (held, then linear) would leave a second-order error."""
    q, w, t = Q0, W0, 0.0
    extrapolator = TorqueExtrapolator(dt)
    for k in (-2, -1):
        extrapolator.push(k * dt, smooth_torque(k * dt))
    for _ in range(steps):
        extrapolator.push(t, smooth_torque(t))
        torque = extrapolator if extrapolate else smooth_torque(t)
        traj = propagate(q, w, INERTIA, dt, 1, method="rk4", torque=torque, t0=t)
        q, w, t = traj.q[-1], traj.omega[-1], t + dt
    return q, w


def test_extrapolation_beats_holding_and_raises_the_order():
    T = 4.0
    q_ref, w_ref = solve(Q0, W0, INERTIA, [T], torque=lambda t, q, w: smooth_torque(t))
    hs, held, extrapolated = [], [], []
    for n in [40, 80, 160]:
        hs.append(T / n)
        for errors, flag in ((held, False), (extrapolated, True)):
            q, w = _run(T / n, n, flag)
            errors.append(angle(q, q_ref[-1]) + np.max(np.abs(w - w_ref[-1])))
    assert all(e < h / 20 for e, h in zip(extrapolated, held, strict=True))
    assert abs(slope(hs, held) - 1.0) <= 0.2
    assert abs(slope(hs, extrapolated) - 3.0) <= 0.3


def test_lagrange_polynomial_reproduces_a_quadratic_and_the_history():
    dt, t0 = 0.5, 1.0
    extrapolator = TorqueExtrapolator(dt)

    def quadratic(t):
        return np.array([1.0 + 2.0 * t - 0.5 * t**2, 3.0 * t, -t * t])

    for k in range(3):
        extrapolator.push(t0 + k * dt, quadratic(t0 + k * dt))
    for t in [t0, t0 + dt, t0 + 2 * dt, t0 + 2.3 * dt, t0 + 3 * dt]:
        np.testing.assert_allclose(extrapolator(t), quadratic(t), atol=1e-13)


def test_reset_and_bad_input():
    extrapolator = TorqueExtrapolator(0.1)
    with pytest.raises(ValueError, match="has no torque yet"):
        extrapolator(0.0)
    extrapolator.push(0.0, [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(extrapolator(0.05), [1.0, 0.0, 0.0])  # one value: held
    extrapolator.push(0.1, [2.0, 0.0, 0.0])
    np.testing.assert_allclose(extrapolator(0.15), [2.5, 0.0, 0.0])  # two: linear
    with pytest.raises(ValueError, match=r"push at t = 0.5 is not one step dt = 0.1 after t = 0.1"):
        extrapolator.push(0.5, [0.0, 0.0, 0.0])
    np.testing.assert_allclose(extrapolator(0.15), [2.5, 0.0, 0.0])  # history kept
    with pytest.raises(ValueError, match="torque must be finite"):
        extrapolator.push(0.2, [np.nan, 0.0, 0.0])
    extrapolator.reset()
    extrapolator.push(0.5, [7.0, 0.0, 0.0])  # after a discontinuity: starts over
    np.testing.assert_array_equal(extrapolator(0.6), [7.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="dt must be a positive finite number"):
        TorqueExtrapolator(0.0)

"""Reaction-wheel momentum and gravity-gradient torque terms, against conservation laws
and the small-angle libration frequency of a gravity-gradient-stabilised body."""

from __future__ import annotations

import numpy as np
import pytest

from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.propagate import propagate
from rigidrot_gym.physics.rotation.torques import BodyTorque, GravityGradient, WheelMomentum

I_ASYM = np.array([1.0, 2.0, 3.0])
Q0 = quat.normalize(np.array([0.9, 0.2, -0.3, 0.25]))
W0 = np.array([0.4, 1.1, -0.3])


def _world_total_momentum(traj, wheel_momentum: np.ndarray) -> np.ndarray:
    """q (I ω + h) q*: body plus wheels, world frame, (steps + 1, 3)."""
    return quat.rotate(quat.normalize(traj.q), traj.body_momentum + wheel_momentum)


@pytest.mark.parametrize("method", ["rk4", "nielsen_krenk", "rkmk4"])
def test_gyrostat_with_constant_wheel_momentum_conserves_momentum_and_energy(method):
    # With h constant the wheels only add −ω × h, which does no work: both ½ ω·Iω and the
    # world total momentum q (Iω + h) q* are invariants of the gyrostat.
    h = np.array([0.5, -0.2, 0.8])
    traj = propagate(Q0, W0, I_ASYM, 0.005, 4000, method=method, torque=WheelMomentum(h, np.zeros(3)))
    total = _world_total_momentum(traj, h)
    assert np.max(np.linalg.norm(total - total[0], axis=-1)) / np.linalg.norm(total[0]) < 1e-9
    energy = traj.kinetic_energy
    assert np.max(np.abs(energy - energy[0])) / energy[0] < 1e-9
    # and the wheels matter: without them the body momentum alone is what is conserved
    body_only = quat.rotate(quat.normalize(traj.q), traj.body_momentum)
    assert np.max(np.linalg.norm(body_only - body_only[0], axis=-1)) > 0.1


def test_spinning_up_wheels_turn_the_body_and_conserve_total_momentum():
    # Motor torques u spin the wheels (ḣ = u) and turn the body by −u: no external torque,
    # so the total momentum stays at its initial value while the body re-orients.
    h0, u = np.array([0.1, 0.0, -0.05]), np.array([0.02, -0.03, 0.01])
    steps, dt = 2000, 0.01
    traj = propagate(Q0, W0, I_ASYM, dt, steps, method="rk4", torque=[WheelMomentum(h0, u), BodyTorque(-u)])
    h = h0 + traj.t[:, None] * u
    total = _world_total_momentum(traj, h)
    assert np.max(np.linalg.norm(total - total[0], axis=-1)) / np.linalg.norm(total[0]) < 1e-9
    free = propagate(Q0, W0, I_ASYM, dt, steps, method="rk4")
    assert np.degrees(quat.angle_between(traj.q[-1], free.q[-1])) > 10.0


# Orbit normal world z; body x along the local vertical, y along the track, z the orbit
# normal. The pitch libration about z is stable when I_y > I_x, with frequency
# n √(3 (I_y − I_x) / I_z) (Wertz 1978, §18.3; Hughes 1986, §9.3).
N_ORBIT = 0.1  # rad/s: the dynamics scale with n, so a fast orbit keeps the test short
I_GG = np.array([1.0, 2.0, 2.5])


def _pitch_run(pitch0: float, periods: float = 6.0):
    libration = N_ORBIT * np.sqrt(3.0 * (I_GG[1] - I_GG[0]) / I_GG[2])
    dt = 0.01 / N_ORBIT
    steps = int(periods * 2.0 * np.pi / libration / dt)
    q0 = quat.from_rotvec(np.array([0.0, 0.0, pitch0]))  # orbit phase 0: vertical = world x
    omega0 = np.array([0.0, 0.0, N_ORBIT])  # turning with the local frame
    traj = propagate(q0, omega0, I_GG, dt, steps, method="rk4", torque=GravityGradient(N_ORBIT))
    x_world = quat.rotate(quat.normalize(traj.q), np.array([1.0, 0.0, 0.0]))
    pitch = np.unwrap(np.arctan2(x_world[:, 1], x_world[:, 0])) - N_ORBIT * traj.t
    return traj, pitch, libration


def test_gravity_gradient_equilibrium_is_held():
    traj, pitch, _ = _pitch_run(0.0, periods=2.0)
    assert np.max(np.abs(pitch)) < 1e-9
    assert np.max(np.abs(traj.omega[:, :2])) < 1e-9


def test_gravity_gradient_pitch_libration_frequency():
    traj, pitch, libration = _pitch_run(0.01)
    upward = np.nonzero((pitch[:-1] < 0.0) & (pitch[1:] >= 0.0))[0]
    # linear interpolation of the upward zero crossings: one per libration period
    times = traj.t[upward] - pitch[upward] * (traj.t[upward + 1] - traj.t[upward]) / (
        pitch[upward + 1] - pitch[upward]
    )
    measured = 2.0 * np.pi / np.mean(np.diff(times))
    assert len(upward) >= 5
    assert measured == pytest.approx(libration, rel=2e-4)
    assert np.max(np.abs(pitch)) == pytest.approx(0.01, rel=1e-3)  # amplitude kept (no damping)


def test_gravity_gradient_rejects_a_bad_orbit():
    # On construction, before any propagation; 1e200 rad/s would make 3n² overflow.
    for bad in (-1.0, 0.0, np.nan, np.inf, 1e200, "a", 1j, None):
        with pytest.raises(ValueError, match=r"GravityGradient.mean_motion must"):
            GravityGradient(bad)
    with pytest.raises(ValueError, match=r"GravityGradient.phase must be a finite number, got inf"):
        GravityGradient(1e-3, np.inf)


def test_gravity_gradient_in_an_inclined_plane_is_the_equatorial_one_turned():
    # The orbit plane (P, Q) = R (x, y) for a rotation R: the run in that plane from
    # q0' = R q0 is the equatorial run turned by R (the torque depends on the body's
    # attitude relative to r̂ only), body rates identical.
    turn = quat.from_rotvec(np.array([0.3, -1.1, 0.7]))
    plane = quat.rotate(turn, np.eye(3)[:2])
    dt, steps = 0.01 / N_ORBIT, 500
    flat = propagate(Q0, W0 * 0.1, I_GG, dt, steps, method="rk4", torque=GravityGradient(N_ORBIT, 0.4))
    tilted = propagate(
        quat.multiply(turn, Q0),
        W0 * 0.1,
        I_GG,
        dt,
        steps,
        method="rk4",
        torque=GravityGradient(N_ORBIT, 0.4, plane=plane),
    )
    np.testing.assert_allclose(tilted.omega, flat.omega, rtol=0, atol=1e-12)
    assert np.max(quat.angle_between(tilted.q, quat.multiply(turn, flat.q))) < 1e-11
    # and the plane matters: the equatorial plane from the turned start is another motion
    other = propagate(
        quat.multiply(turn, Q0), W0 * 0.1, I_GG, dt, steps, method="rk4", torque=GravityGradient(N_ORBIT, 0.4)
    )
    assert np.max(np.abs(other.omega - flat.omega)) > 1e-3


@pytest.mark.parametrize(
    "plane", [((1.0, 0.0, 0.0), (1.0, 0.0, 0.0)), ((2.0, 0.0, 0.0), (0.0, 1.0, 0.0)), ((1.0, 0.0, 0.0),)]
)
def test_gravity_gradient_rejects_a_plane_that_is_not_two_orthonormal_axes(plane):
    with pytest.raises(ValueError, match=r"GravityGradient.plane must be two orthonormal 3-vectors"):
        GravityGradient(1e-3, 0.0, plane=plane)


@pytest.mark.parametrize(
    "terms", [(True, False, False), (False, True, True), (True, True, True), (False, False, True)]
)
def test_a_specialised_model_is_the_whole_model_bit_for_bit(terms):
    # A refactor's check (the two share the terms' functions): where the terms a
    # specialised model leaves out are zero, it gives the whole model's torque exactly.
    from rigidrot_gym.physics.rotation import torques

    wheels, gravity, magnetic = terms
    rng = np.random.default_rng(3)
    n = 64
    p = np.zeros((torques.SIZE, n))
    p[torques.BODY : torques.BODY + 3] = rng.normal(size=(3, n))
    if wheels:
        p[torques.WHEEL_H : torques.WHEEL_HDOT + 3] = rng.normal(size=(6, n))
    if gravity:
        p[torques.GG_RATE], p[torques.GG_MOTION], p[torques.GG_PHASE] = 3e-6, 1e-3, rng.uniform(0, 6, n)
        p[torques.GG_MOMENTS : torques.GG_MOMENTS + 3] = rng.uniform(0.1, 1.0, (3, n))
        p[torques.GG_PLANE : torques.GG_PLANE + 6] = np.array([[1.0], [0.0], [0.0], [0.0], [0.6], [0.8]])
    if magnetic:
        p[torques.MAG_DIPOLE : torques.MAG_FIELD + 3] = rng.normal(size=(6, n))
    q = tuple(quat.normalize(rng.normal(size=(n, 4))).T)
    w = tuple(rng.normal(size=(3, n)))
    params = tuple(p)
    specialised = torques.model_of(wheels, gravity, magnetic)(0.7, q, w, params)
    whole = torques.model_torque(0.7, q, w, params)
    for a, b in zip(specialised, whole, strict=True):
        np.testing.assert_array_equal(a, b)

"""Reaction wheels and magnetorquers together: the env's step against DOP853, the
cross-product law against Basilisk's modules, and the wheels' momentum held against a
constant disturbance over two orbits (without the law it grows as the disturbance's
impulse, the conservation of angular momentum's closed form).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from reference import body_to_world, solve, world_to_body

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.attitude.actuators import Actuators
from rigidrot_gym.attitude.components.wheels import wheel_axes
from rigidrot_gym.attitude.env import AttitudeEnv
from rigidrot_gym.control import CONTROLLERS, QuaternionFeedback
from rigidrot_gym.control.momentum_dumping import DUMPING_GAIN, dumping_dipole
from rigidrot_gym.physics.environment import geomagnetic
from rigidrot_gym.physics.environment import orbit as kepler

ID = "RigidRot/MagDetumble-v0"
A = 6378137.0 + 500e3  # the scenario's circular orbit, m
EPOCH = "2026-01-01T00:00:00Z"
FIELD_SCALE = 6e-5  # T: the observation's field columns are B_body over this
MAX_DIPOLE = 0.2  # A·m² per rod
WHEEL_TORQUE, WHEEL_MOMENTUM = 2e-3, 0.02  # N·m, N·m·s per ideal wheel
# The 6U box of the scenario file: 12 kg, 0.1 × 0.226 × 0.34 m, I = m/12 (b² + c², ...).
J = 12.0 / 12.0 * np.diag([0.226**2 + 0.34**2, 0.1**2 + 0.34**2, 0.1**2 + 0.226**2])
PYRAMID = wheel_axes("pyramid")
WHEELS_AND_RODS = {
    "wheel_layout": "pyramid",
    "wheel_max_torque": WHEEL_TORQUE,
    "wheel_max_momentum": WHEEL_MOMENTUM,
}


def test_the_action_is_the_wheels_then_the_rods():
    env = gym.make(ID, **WHEELS_AND_RODS)
    assert env.action_space.shape == (7,)
    assert env.observation_space.shape == (7 + 4 + 3,)  # wheel momenta, then the field
    actuators = Actuators.of(env.unwrapped.scenario)
    assert (actuators.torquing, actuators.rods) == (4, 3)
    np.testing.assert_array_equal(actuators.max_dipole, [MAX_DIPOLE] * 3)


def test_a_step_with_wheels_and_rods_matches_dop853():
    env = gym.make(ID, substeps=8, **WHEELS_AND_RODS).unwrapped
    obs, _ = env.reset(seed=4, options={"rate": [0.02, -0.01, 0.015]})
    # a first step, so that the wheels hold momentum when the checked one starts
    obs, *_, info = env.step(np.array([0.5, -0.3, 0.8, 0.1, 0.0, 0.0, 0.0], dtype=np.float32))
    q0, w0, h0 = env.attitude.copy(), env.body_rates.copy(), info["wheel_momentum"].copy()
    field = body_to_world(q0, obs[-3:].astype(np.float64) * FIELD_SCALE)  # held over the period
    action = np.array([-0.6, 0.9, 0.2, -1.0, 0.7, -1.0, 0.4], dtype=np.float32)
    u, dipole = action[:4].astype(np.float64) * WHEEL_TORQUE, action[4:].astype(np.float64) * MAX_DIPOLE
    _, *_, info = env.step(action)

    def loads(rods: bool):
        # J ω̇ = m × R(q)ᵀB − A u − ω × (Jω + A h_w(t)), h_w(t) = h_w0 + u t (solve adds −ω × Jω)
        def torque(t, q, w):
            magnetic = np.cross(dipole, world_to_body(q, field)) if rods else 0.0
            return magnetic - PYRAMID @ u - np.cross(w, PYRAMID @ (h0 + u * t))

        return torque

    q_ref, w_ref = solve(q0, w0, J, [0.0, 1.0], torque=loads(True))
    _, w_wheels = solve(q0, w0, J, [0.0, 1.0], torque=loads(False))
    rods_share = np.linalg.norm(w_ref[-1] - w_wheels[-1])
    assert rods_share > 1e-5  # the rods' torque shows beside the wheels'
    # rk4 at 1/8 s sub-steps; the observation's float32 field bounds the rest
    assert np.linalg.norm(env.body_rates - w_ref[-1]) < 1e-4 * rods_share
    assert min(np.linalg.norm(env.attitude - q_ref[-1]), np.linalg.norm(env.attitude + q_ref[-1])) < 1e-8
    np.testing.assert_allclose(info["wheel_momentum"], h0 + u, rtol=0, atol=1e-15)


def test_the_wheels_take_the_rods_torque_out_of_theirs():
    # Feedforward: the body's torque, wheels' and rods' together, is the attitude law's own.
    scenario = gym.make(ID, **WHEELS_AND_RODS).unwrapped.scenario
    controller = CONTROLLERS["quaternion_feedback"](scenario)
    rng = np.random.default_rng(2)
    error = np.array([0.999, 0.02, -0.03, 0.01])
    error /= np.linalg.norm(error)
    omega = np.array([1e-3, -2e-3, 5e-4])
    momenta = rng.uniform(-0.05, 0.05, 4)  # fractions of the wheels' limit
    field = np.array([1.2e-5, -2.5e-5, 0.8e-5])
    obs = np.concatenate([error, omega / scenario.max_rate, momenta, field / FIELD_SCALE]).astype(np.float32)
    action, _ = controller.predict(obs)
    assert np.all(np.abs(action) < 1)  # nothing clipped
    actuators = controller.actuators
    wheels_torque = actuators.body_torque(action[:4].astype(np.float64) * WHEEL_TORQUE)
    dipole = action[4:].astype(np.float64) * MAX_DIPOLE
    field_seen = obs[-3:].astype(np.float64) * FIELD_SCALE
    h = PYRAMID @ (obs[7:11].astype(np.float64) * WHEEL_MOMENTUM)
    rates = obs[4:7].astype(np.float64) * scenario.max_rate
    law = controller.torque(obs[None, :4].astype(np.float64), rates[None], h[None])[0]
    np.testing.assert_allclose(wheels_torque + np.cross(dipole, field_seen), law, rtol=1e-5, atol=1e-9)
    # and the rods' torque is the wanted −k_p h across the field (float32 actions: 1e-6)
    wanted = -DUMPING_GAIN * h
    b = field_seen / np.linalg.norm(field_seen)
    np.testing.assert_allclose(np.cross(dipole, field_seen), wanted - (wanted @ b) * b, rtol=1e-5, atol=1e-12)


@pytest.mark.engines
def test_the_cross_product_law_is_basilisks():
    """Basilisk's ``mtbMomentumManagementSimple`` (τ_d = −K_p h from the wheels' speeds,
    spin inertias and axes) then ``torque2Dipole`` (m = B × τ_d / |B|²), one tick, on 20
    draws of four wheels' axes and speeds and of the field."""
    pytest.importorskip("Basilisk")
    from Basilisk.architecture import messaging
    from Basilisk.fswAlgorithms import mtbMomentumManagementSimple, torque2Dipole
    from Basilisk.utilities import SimulationBaseClass, macros

    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(20):
        axes = rng.normal(size=(3, 4))
        axes /= np.linalg.norm(axes, axis=0)
        spin_inertia = rng.uniform(1e-5, 1e-4, 4)
        speeds = rng.normal(scale=300.0, size=4)
        field = rng.normal(scale=3e-5, size=3)
        gain = rng.uniform(1e-4, 1e-2)
        sim = SimulationBaseClass.SimBaseClass()
        sim.CreateNewProcess("fsw").addTask(sim.CreateNewTask("task", macros.sec2nano(1.0)))
        momentum = mtbMomentumManagementSimple.mtbMomentumManagementSimple()
        momentum.Kp = gain
        dipole = torque2Dipole.torque2Dipole()
        sim.AddModelToTask("task", momentum)
        sim.AddModelToTask("task", dipole)
        wheels = messaging.RWArrayConfigMsgPayload()
        wheels.numRW = 4
        wheels.GsMatrix_B = axes.T.flatten().tolist()  # row k: wheel k's axis
        wheels.JsList = spin_inertia.tolist()
        rates = messaging.RWSpeedMsgPayload()
        rates.wheelSpeeds = speeds.tolist()
        sensed = messaging.TAMSensorBodyMsgPayload()
        sensed.tam_B = field.tolist()
        # The messages must outlive the run: the modules read them through pointers.
        messages = (
            messaging.RWArrayConfigMsg().write(wheels),
            messaging.RWSpeedMsg().write(rates),
            messaging.TAMSensorBodyMsg().write(sensed),
        )
        momentum.rwParamsInMsg.subscribeTo(messages[0])
        momentum.rwSpeedsInMsg.subscribeTo(messages[1])
        dipole.tauRequestInMsg.subscribeTo(momentum.tauMtbRequestOutMsg)
        dipole.tamSensorBodyInMsg.subscribeTo(messages[2])
        recorder = dipole.dipoleRequestOutMsg.recorder()
        sim.AddModelToTask("task", recorder)
        sim.InitializeSimulation()
        sim.ConfigureStopTime(0)
        sim.ExecuteSimulation()
        theirs = np.asarray(recorder.dipole_B)[0]
        ours = dumping_dipole(gain, axes @ (spin_inertia * speeds), field)
        worst = max(worst, np.linalg.norm(theirs - ours) / np.linalg.norm(ours))
    assert worst < 1e-14, worst


def _orbit_averaged_dumping(period: float) -> np.ndarray:
    """⟨1 − b̂ b̂ᵀ⟩ over two orbits in the world frame: the orbit-averaged share of each
    direction the rods can act in (Camillo & Markley 1980), from the library's numpy orbit
    and field (checked against Basilisk's modules in test_orbit and test_geomagnetic)."""
    t = np.linspace(0.0, 2.0 * period, 4001)
    r, _ = kepler.position_velocity(kepler.elements(A, 0.0, np.radians(97.40), 0.0, 0.0, 0.0), t)
    field = geomagnetic.field_inertial(r, t, EPOCH)
    b = field / np.linalg.norm(field, axis=-1, keepdims=True)
    return np.eye(3) - np.einsum("ti,tj->ij", b, b) / len(t)


@pytest.mark.slow
def test_the_rods_hold_the_wheels_momentum_against_a_constant_disturbance():
    # Held inertially against a torque d constant in the body frame, the wheels store its
    # impulse: |h(T)| = |d| T without the rods (conservation of angular momentum). With the
    # cross-product law the orbit-averaged balance k_p ⟨1 − b̂ b̂ᵀ⟩ h = d bounds the stored
    # momentum by |d| / (k_p λ_min) (6.5e-4 N·m·s here); it swings about that balance as
    # the field turns.
    period = kepler.period(A)
    steps = round(2 * period)  # two orbits at dt = 1 s
    d = 1e-6  # N·m: a 6U's aerodynamic and solar torques at 500 km are of this order
    scenario = gym.make(
        ID,
        **WHEELS_AND_RODS,
        disturbance_constant=d,
        start_attitude="near_target",
        start_max_angle_deg=0.0,
        start_rate_spread=0.0,
        target_attitude=[1.0, 0.0, 0.0, 0.0],
        success_hold_steps=0,
    ).unwrapped.scenario
    stored = {}
    for gain in (0.0, DUMPING_GAIN):
        controller = QuaternionFeedback.for_scenario(scenario, natural_frequency=0.1)
        controller.dumping_gain = gain
        env = AttitudeEnv(scenario=scenario)
        obs, _ = env.reset(seed=7)
        momentum = np.zeros((steps, 3))
        for k in range(steps):
            obs, _, terminated, _, info = env.step(controller.predict(obs)[0])
            assert not terminated
            momentum[k] = PYRAMID @ info["wheel_momentum"]
        assert info["pointing_error_deg"] < 0.1  # the attitude was held
        stored[gain] = momentum
    np.testing.assert_allclose(np.linalg.norm(stored[0.0][-1]), d * steps, rtol=0.01)
    balance = d / (DUMPING_GAIN * np.linalg.eigvalsh(_orbit_averaged_dumping(period))[0])
    second_orbit = stored[DUMPING_GAIN][steps // 2 :]
    # The average neglects how h's swing correlates with the field's (measured: the mean
    # of the second orbit 1.04 × the bound, its largest 1.51 ×); the wheels alone reach 17 ×.
    assert np.linalg.norm(second_orbit.mean(axis=0)) < 1.25 * balance
    assert np.linalg.norm(second_orbit, axis=-1).max() < 2.0 * balance

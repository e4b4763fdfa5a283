"""The cost of simulating the MagDetumble and NadirPoint spacecraft: our native vector env
against Basilisk running the same spacecraft, measured in one run on one core each.

The first spacecraft is ``RigidRot/MagDetumble-v0``'s: a 6U CubeSat (the scenario's inertia) on a
circular 500 km Sun-synchronous orbit, in the IGRF centred-dipole field of the epoch with
the Earth turning under it, three magnetorquer rods along the body axes under a constant
dipole command, RK4 at the scenario's sub-step (0.5 s).

Basilisk (:func:`basilisk_spacecraft`) builds it from its own modules: a ``Spacecraft`` hub
with point-mass Earth gravity (our μ) integrating the orbit numerically, a
``planetEphemeris`` Earth whose ``J20002Pfix`` turns at the sidereal rate from the epoch's
GMST, ``magneticFieldCenteredDipole`` with our IGRF coefficients and reference radius, and
an ``MtbEffector``. Both evaluate the field once per 1 s control period and hold it over
the period's two sub-steps (Basilisk's field module runs in a task of its own at the
period): the leanest set-up that flies our spacecraft's model. Our env (:func:`ours`)
takes the orbit in closed form, Basilisk integrates it. ``tests/test_bench_spacecraft.py``
checks that the two fly the same spacecraft (their body rates after 120 s agree to
rounding, 1e-8 of what the magnetorquers change).

The second is ``RigidRot/NadirPoint-v0``'s: the same CubeSat and orbit with the gravity
gradient, four NanoAvionics RW0 reaction wheels in a pyramid (motor limits, deadband and
bearing friction) beside the rods, all under a constant command (:data:`NADIR_ACTION`),
and its sensors. Basilisk (:func:`basilisk_nadir_spacecraft`) adds to the set-up above a
``GravityGradientEffector`` and a ``reactionWheelStateEffector`` of ``rwFactory``'s RW0
wheels along our axes, and, in a task at the 1 s control period, an ``imuSensor`` (its
gyro), a ``magnetometer``, a ``starTracker`` and a ``CSSConstellation`` of six
``coarseSunSensor``: without the filter, without disturbance torques (the scenario's are
random: none in Basilisk) and without eclipses. fswAlgorithms' ``inertialUKF`` was tried
and left out: fed by the star tracker through ``stComm`` and by the wheels' speeds it
tracks the attitude, but its gyro input is an ``AccDataMsg`` buffer that no installed
module writes (``imuSensor`` writes ``IMUSensorMsg``), so it would estimate the rates from
its own model (the hub and the wheels' speeds, no torques) where our MEKF integrates the
gyro (in a trial, untuned, its rates were 0.06 rad/s off after 600 s), and its reset reads
the star tracker's message before one is written (a ``MSG_ERROR`` at every
initialisation). Ours is measured in full (the scenario as it is: its disturbance torques,
its gyro, star tracker, magnetometer and Sun sensors and the MEKF between them and the
observation) and with the truth observed and the sensors off
(``benchmarks/spacecraft_shares.py``'s overrides, :data:`TRUTH`). The test compares the
dynamics only (no sensors, our disturbances off): from rest the two agree to rounding; its
docstring explains the rest.

Costs are wall-clock seconds per body per simulated second, stepping only: our env's
construction, reset and compilation (a warm-up step) and Basilisk's set-up and
``InitializeSimulation`` are left out; our step includes the env's observation, reward
and episode-end checks, which Basilisk has no counterpart of. Basilisk simulates one
spacecraft: it has no batch (a task with N hubs costs what N separate ones do,
:mod:`rigidrot_gym.engines.basilisk`), so its cost per body does not fall with more
bodies, while ours is measured at the batch size a trainer uses. Both run on one thread
(our env's default ``num_threads=1``).

The machine is shared and noisy: the two measurements alternate over several rounds and
the medians are reported, the ratio as the median of the per-round ratios.

Basilisk traps met here (bsk 2.12.1):

* ``planetEphemeris`` always puts its planet on a heliocentric Kepler orbit (there is no
  way to pin it at the origin): the Earth sits 1 AU from the origin and must be the
  gravity's central body, so that the hub's states are relative to it. The field module
  subtracts the planet's position from the hub's ``r_BN_N``; at 1 AU that costs ~2e-5 m
  of rounding. Measured over 600 s at 0.5 s steps: the field agrees with
  :func:`~rigidrot_gym.physics.environment.geomagnetic.field_inertial` at Basilisk's own positions to
  1.4e-10 relative, and those positions with our Kepler orbit to 0.23 mm.
* ``planetEphemeris`` turns its planet only when all four of ``rightAscension``,
  ``declination``, ``lst0`` and ``rotRate`` are set, one per planet. With none set,
  ``J20002Pfix`` is silently the identity (an Earth that does not turn); with only some,
  ``InitializeSimulation`` raises ``BasiliskError``.
  With right ascension 0 and declination π/2 its 3-2-3 angles give
  ``J20002Pfix`` = R_z(lst)ᵀ, our Earth-fixed frame at θ = lst.
* ``gravBodyFactory.createEarth`` sets μ = 398600.436 km³/s², not WGS-84's: set ours.
* ``MtbEffector`` reads the field message at every integration stage: with the field
  module in a task at the control period, after the sub-steps' task (ephemeris,
  spacecraft, magnetorquers) at the ticks they share, each sub-step of the period
  (t_{k−1}, t_k] uses the field computed at the period's start, which is the field our
  env holds. (With the field module in the sub-steps' task, Basilisk's field was 0.25 s
  younger on average, and the rates after 120 s differed from ours by 1e-3 of the
  magnetorquers' change.)
* ``GravityGradientEffector`` takes the planet's position from the state manager's
  ``<planet>.r_PN_N``, the Earth's heliocentric one (1 AU away), and subtracts it from the
  hub's position state, which is relative to the central body: with the Earth named, its
  torque is that of a planet 1 AU away (~1e-20 N·m, measured). It is given a planet of its
  own instead, two properties created in the hub's ``dynManager`` before the
  initialisation: the origin of the hub's states and our μ.
* ``reactionWheelStateEffector``'s hub inertia includes the wheels' spin inertia
  (J + J_s Σ ĝĝᵀ; our ``inertia`` excludes it), its wheel state is the speed relative to
  the body, Ω = h_w/J_s − ĝ·ω (ours the spin momentum h_w), and it reads its motor
  command at its update: ahead of the hub in the task, the command read at t_k drives
  (t_{k−1}, t_k] (``tests/test_wheel_presets.py``).
"""

from __future__ import annotations

import csv
import math
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rigidrot_gym.attitude import scenario as scenarios
from rigidrot_gym.attitude.components.magnetic_field import SIDEREAL_RATE
from rigidrot_gym.attitude.components.orbit import elements_of
from rigidrot_gym.attitude.components.wheels import model_constants, wheel_axes
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.attitude.vector_env import AttitudeVectorEnv
from rigidrot_gym.engines.basilisk import import_basilisk
from rigidrot_gym.physics.environment import earth, geomagnetic
from rigidrot_gym.physics.environment import orbit as kepler
from rigidrot_gym.tools.bench.throughput import machine
from rigidrot_gym.tools.report import markdown_table

ID = "RigidRot/MagDetumble-v0"
# The measured start: a tumble of a few °/s, the rods at a fixed mixed command.
ACTION = (0.7, -1.0, 0.4)
RATE = (0.05, -0.03, 0.04)  # rad/s
ANOMALY = 1.0  # rad
SEED = 7  # of the start attitude
NADIR_ID = "RigidRot/NadirPoint-v0"
# NadirPoint's constant command: the wheels (fractions of RW0's 3.2 mN·m) nearly in the
# pyramid's null space (1, −1, 1, −1), so that over the test's 120 s they spin up, short of
# RW0's top speed, without tumbling the body past the scenario's 0.2 rad/s; then the rods'.
NADIR_ACTION = (0.05, -0.04, 0.05, -0.05, *ACTION)
_NANO = 1_000_000_000  # ns per s
# planetEphemeris's heliocentric orbit for the Earth (see the module's traps): circular at
# 1 AU; where on it does not matter, only that the Earth is the central body.
_AU = 1.495978707e11  # m
_GRADIENT_PLANET = "earth_centred"  # GravityGradientEffector's planet (see the traps)
# Basilisk's rwFactory names (and options) of our wheel presets (HR16: the 50 N·m·s variant).
_BASILISK_WHEELS = {
    "HR16": ("Honeywell_HR16", {"maxMomentum": 50.0}),
    "RWP015": ("BCT_RWP015", {}),
    "RW0": ("NanoAvionics_RW0", {}),
}


def _check(scenario: Scenario) -> None:
    """Refuse a scenario that Basilisk's set-up here would not reproduce."""
    if not (scenario.flight.enabled and scenario.geomagnetism.enabled and scenario.rods.enabled):
        raise ValueError(f"{scenario.id}: the orbit, the magnetic field and the magnetorquers must be on")
    if scenario.flight.j2:
        raise ValueError(f"{scenario.id}: the J2 drift has no counterpart in this Basilisk set-up")


def _task_steps(scenario: Scenario, seconds: float) -> int:
    """The task steps of ``seconds``, a whole number of sub-steps (else Basilisk would stop
    at another time than our env)."""
    h = scenario.dt / scenario.substeps
    steps = round(seconds / h)
    if steps < 1 or not math.isclose(steps * h, seconds, rel_tol=1e-12):
        raise ValueError(f"seconds must be a positive multiple of the sub-step {h} s, got {seconds!r}")
    return steps


@dataclass
class _Flight:
    """A Basilisk simulation of a scenario's magnetic spacecraft (hub, gravity, turning
    Earth, field, rods), not yet initialised: :func:`_magnetic_flight` builds it, a caller
    adds effectors and models and runs it with :func:`_execute`."""

    sim: object
    craft: object
    ephemeris: object
    field: object
    torquers: object
    gravity: object  # the Earth's gravity body (its planet name, μ)
    keep: list  # what Basilisk reads through pointers: it must outlive the run
    step_ns: int


def _magnetic_flight(
    scenario: Scenario,
    q0: np.ndarray,
    omega0: np.ndarray,
    anomaly: float,
    dipole: np.ndarray,
    hub_inertia: np.ndarray,
) -> _Flight:
    """The module docstring's Basilisk set-up of ``scenario``'s spacecraft, its hub of
    inertia ``hub_inertia`` (kg·m²) from attitude ``q0``, body rates ``omega0`` and mean
    anomaly ``anomaly``, its rods holding ``dipole`` (A·m²); the models not yet in a task."""
    import_basilisk()
    from Basilisk.architecture import messaging
    from Basilisk.simulation import (
        MtbEffector,
        magneticFieldCenteredDipole,
        planetEphemeris,
        spacecraft,
        svIntegrators,
    )
    from Basilisk.utilities import RigidBodyKinematics, SimulationBaseClass, simIncludeGravBody

    flight = scenario.flight
    r0, v0 = kepler.position_velocity(elements_of(flight)._replace(mean_anomaly=float(anomaly)), 0.0)
    jd = earth.julian_date(flight.epoch)
    dipole_model = geomagnetic.igrf_dipole(geomagnetic.decimal_year(jd))
    step_ns = round(scenario.dt / scenario.substeps * _NANO)

    sim = SimulationBaseClass.SimBaseClass()
    process = sim.CreateNewProcess("dynamics")
    # The field once per control period, as our env evaluates it: its task runs after the
    # sub-steps' at a tick they share (a higher priority runs first).
    process.addTask(sim.CreateNewTask("task", step_ns), 2)
    process.addTask(sim.CreateNewTask("period", round(scenario.dt * _NANO)), 1)

    ephemeris = planetEphemeris.PlanetEphemeris()
    ephemeris.setPlanetNames(planetEphemeris.StringVector(["earth"]))
    sun_orbit = planetEphemeris.ClassicElements()
    sun_orbit.a, sun_orbit.e, sun_orbit.i = _AU, 0.0, 0.0
    sun_orbit.Omega, sun_orbit.omega, sun_orbit.f = 0.0, 0.0, 0.0
    ephemeris.planetElements = planetEphemeris.classicElementVector([sun_orbit])
    # The pole along z (RA 0, declination 90°): J20002Pfix = R_z(θ)ᵀ with θ = lst0 + rotRate t,
    # the env's θ(t) = gmst(epoch) + SIDEREAL_RATE t.
    ephemeris.rightAscension = planetEphemeris.DoubleVector([0.0])
    ephemeris.declination = planetEphemeris.DoubleVector([np.pi / 2])
    ephemeris.lst0 = planetEphemeris.DoubleVector([earth.gmst(jd)])
    ephemeris.rotRate = planetEphemeris.DoubleVector([SIDEREAL_RATE])

    craft = spacecraft.Spacecraft()
    # The hub's mass stays Basilisk's default: with its centre of mass at B and point-mass
    # gravity it enters neither the orbit nor the attitude.
    craft.hub.IHubPntBc_B = np.asarray(hub_inertia, dtype=float).tolist()
    craft.hub.sigma_BNInit = np.reshape(RigidBodyKinematics.EP2MRP(np.asarray(q0, float)), (3, 1)).tolist()
    craft.hub.omega_BN_BInit = np.reshape(np.asarray(omega0, float), (3, 1)).tolist()
    craft.hub.r_CN_NInit = r0.reshape(3, 1).tolist()
    craft.hub.v_CN_NInit = v0.reshape(3, 1).tolist()
    integrator = svIntegrators.svIntegratorRK4(craft)  # kept: the hub holds only a pointer
    craft.setIntegrator(integrator)

    gravity = simIncludeGravBody.gravBodyFactory()
    body = gravity.createEarth()
    body.isCentralBody = True
    body.mu = earth.MU
    body.planetBodyInMsg.subscribeTo(ephemeris.planetOutMsgs[0])
    gravity.addBodiesTo(craft)

    field = magneticFieldCenteredDipole.MagneticFieldCenteredDipole()
    field.g10, field.g11, field.h11 = dipole_model.g10, dipole_model.g11, dipole_model.h11
    field.planetRadius = dipole_model.radius
    field.planetPosInMsg.subscribeTo(ephemeris.planetOutMsgs[0])
    field.addSpacecraftToModel(craft.scStateOutMsg)

    rods = messaging.MTBArrayConfigMsgPayload()
    rods.numMTB = 3
    rods.GtMatrix_B = np.eye(3).flatten().tolist()
    rods.maxMtbDipoles = [float(m) for m in scenario.magnetorquer_max_dipole]
    command = messaging.MTBCmdMsgPayload()
    command.mtbDipoleCmds = [float(m) for m in dipole]
    messages = (messaging.MTBArrayConfigMsg().write(rods), messaging.MTBCmdMsg().write(command))
    torquers = MtbEffector.MtbEffector()
    torquers.mtbParamsInMsg.subscribeTo(messages[0])
    torquers.mtbCmdInMsg.subscribeTo(messages[1])
    torquers.magInMsg.subscribeTo(field.envOutMsgs[0])
    craft.addDynamicEffector(torquers)
    return _Flight(sim, craft, ephemeris, field, torquers, body, [integrator, gravity, *messages], step_ns)


def _execute(flight: _Flight, steps: int) -> tuple[float, np.ndarray, np.ndarray]:
    """Initialise ``flight`` and run it ``steps`` task steps: the wall-clock seconds of
    ``ExecuteSimulation`` alone, the final attitude q (scalar-first, body to world; either
    sign) and body rates (rad/s)."""
    from Basilisk.utilities import RigidBodyKinematics

    flight.sim.InitializeSimulation()
    flight.sim.ConfigureStopTime(steps * flight.step_ns)
    start = time.perf_counter()
    flight.sim.ExecuteSimulation()
    elapsed = time.perf_counter() - start
    state = flight.craft.scStateOutMsg.read()
    q = np.asarray(RigidBodyKinematics.MRP2EP(np.ravel(state.sigma_BN)), dtype=float)
    return elapsed, q, np.asarray(state.omega_BN_B, dtype=float)


def basilisk_spacecraft(
    scenario: Scenario,
    q0: np.ndarray,
    omega0: np.ndarray,
    anomaly: float,
    dipole: np.ndarray,
    seconds: float,
) -> tuple[float, np.ndarray, np.ndarray]:
    """Basilisk simulating ``scenario``'s spacecraft for ``seconds`` from attitude ``q0``
    (scalar-first, body to world), body rates ``omega0`` (rad/s) and the orbit's mean
    anomaly ``anomaly`` (rad) at the epoch, its rods holding the constant body-frame
    ``dipole`` (A·m², clipped by Basilisk to the scenario's limits), as the module's
    docstring describes.

    Returns:
        The wall-clock seconds of ``ExecuteSimulation`` alone, the final attitude q
        (scalar-first, body to world; either sign) and the final body rates (rad/s).

    Raises:
        ValueError: for a scenario without orbit, field or magnetorquers, or with J₂, or a
            ``seconds`` that is not a positive multiple of the sub-step.
        gymnasium.error.DependencyNotInstalled: without Basilisk.
    """
    _check(scenario)
    steps = _task_steps(scenario, seconds)
    flight = _magnetic_flight(scenario, q0, omega0, anomaly, dipole, scenario.inertia)
    # In this order at each tick t_k (equal priorities run in the order added): the Earth
    # at t_k, the hub integrated over (t_{k-1}, t_k] with the field message of the control
    # period's start, then, at the start of the next period, the field at the hub's position.
    for model in (flight.ephemeris, flight.craft, flight.torquers):
        flight.sim.AddModelToTask("task", model)
    flight.sim.AddModelToTask("period", flight.field)
    return _execute(flight, steps)


def _check_nadir(scenario: Scenario) -> None:
    """Refuse a scenario that the NadirPoint set-up here would not reproduce."""
    _check(scenario)
    if not (scenario.wheels and scenario.gravity_gradient):
        raise ValueError(f"{scenario.id}: the reaction wheels and the gravity gradient must be on")
    if scenario.wheel_model == "ideal":
        raise ValueError(f"{scenario.id}: ideal wheels have no counterpart in Basilisk's wheel effector")


def _sensors(scenario: Scenario, flight: _Flight) -> list:
    """Basilisk's sensor modules of the NadirPoint spacecraft, reading the hub (and the
    field, the Sun) once per control period: an ``imuSensor`` gyro, a ``magnetometer``, a
    ``starTracker`` along body −z and a ``CSSConstellation`` of six ``coarseSunSensor`` on
    the cube's faces. Their noise is on but not the scenario's sensors' error models (they
    are here for their cost); the Sun sits at the heliocentric origin of
    ``planetEphemeris`` (its direction is not our epoch's) and nothing eclipses it."""
    from Basilisk.architecture import messaging
    from Basilisk.simulation import coarseSunSensor, imuSensor, magnetometer, starTracker
    from Basilisk.utilities import RigidBodyKinematics

    state = flight.craft.scStateOutMsg
    gyro = imuSensor.ImuSensor()
    gyro.scStateInMsg.subscribeTo(state)
    gyro.PMatrixGyro = (1e-5 * np.eye(3)).tolist()  # rad/s (1σ)
    gyro.setWalkBoundsGyro(np.full(3, 1e-6))  # rad/s
    tam = magnetometer.Magnetometer()
    tam.stateInMsg.subscribeTo(state)
    tam.magInMsg.subscribeTo(flight.field.envOutMsgs[0])
    tam.senNoiseStd = [1e-6, 1e-6, 1e-6]  # T
    tracker = starTracker.StarTracker()
    tracker.scStateInMsg.subscribeTo(state)
    tracker.dcm_CB = RigidBodyKinematics.EP2C(np.asarray(scenario.star_tracker_mounting, float)).tolist()
    tracker.PMatrix = np.diag([2.5e-6, 2.5e-6, 2.5e-5]).tolist()  # MRP (1σ): 2″, 2″, 20″
    tracker.setWalkBounds(np.zeros(3))
    sun = messaging.SpicePlanetStateMsgPayload()
    sun.PlanetName = "sun"
    sun_message = messaging.SpicePlanetStateMsg().write(sun)
    eyes = []
    for normal in (*np.eye(3), *-np.eye(3)):
        eye = coarseSunSensor.CoarseSunSensor()
        eye.nHat_B = normal.tolist()
        eye.fov = np.pi / 2
        eye.scaleFactor = 1.0
        eye.senNoiseStd = scenario.sun_sensor_noise
        eye.sunInMsg.subscribeTo(sun_message)
        eye.stateInMsg.subscribeTo(state)
        eyes.append(eye)
    sun_sensors = coarseSunSensor.CSSConstellation()
    sun_sensors.sensorList = coarseSunSensor.CSSVector(eyes)
    models = [gyro, tam, tracker, sun_sensors]
    flight.keep += [sun_message, *eyes, *models]  # a task holds its models by pointer only
    return models


def basilisk_nadir_spacecraft(
    scenario: Scenario,
    q0: np.ndarray,
    omega0: np.ndarray,
    anomaly: float,
    wheel_momentum: np.ndarray,
    wheel_torque: np.ndarray,
    dipole: np.ndarray,
    seconds: float,
    sensors: bool = True,
) -> tuple[float, np.ndarray, np.ndarray]:
    """Basilisk simulating ``RigidRot/NadirPoint-v0``'s spacecraft (``scenario``) for
    ``seconds``: :func:`basilisk_spacecraft`'s set-up (from ``q0``, ``omega0``, ``anomaly``,
    the rods holding ``dipole``) with a ``GravityGradientEffector`` and a
    ``reactionWheelStateEffector`` of the scenario's four wheels in its pyramid
    (:func:`~rigidrot_gym.attitude.components.wheels.wheel_axes`), the preset's motor limits and
    friction from Basilisk's ``rwFactory`` (as ``tests/test_wheel_presets.py`` builds them),
    their spin momenta at the start ``wheel_momentum`` (N·m·s, our env's state: the speed
    relative to the body Ω = h_w/J_s − ĝ·ω), holding the motor torques ``wheel_torque`` (N·m,
    saturated by Basilisk); with ``sensors``, :func:`_sensors`' modules in a second task at
    the control period. No estimator, no disturbance torques.

    The hub's inertia is the scenario's plus the wheels' spin inertia, J + J_s Σ ĝĝᵀ (our
    ``inertia`` excludes it, Basilisk's hub includes it: ``tests/test_wheel_presets.py``).

    Returns:
        As :func:`basilisk_spacecraft`.

    Raises:
        ValueError: as :func:`basilisk_spacecraft`, and for a scenario without the wheels or
            the gravity gradient, or with ideal wheels, or ``wheel_momentum`` or
            ``wheel_torque`` not one entry per wheel.
        gymnasium.error.DependencyNotInstalled: without Basilisk.
    """
    _check_nadir(scenario)
    steps = _task_steps(scenario, seconds)
    axes = wheel_axes(scenario.wheel_layout)
    for name, value in (("wheel_momentum", wheel_momentum), ("wheel_torque", wheel_torque)):
        if np.shape(value) != (axes.shape[1],):
            raise ValueError(f"{name} must hold one entry per wheel ({axes.shape[1]} numbers), got {value!r}")
    import_basilisk()
    from Basilisk.architecture import messaging
    from Basilisk.simulation import GravityGradientEffector, reactionWheelStateEffector
    from Basilisk.utilities import macros, simIncludeRW

    js = model_constants(scenario.wheel_model).js
    spin = axes.T @ np.asarray(omega0, dtype=float)
    name, options = _BASILISK_WHEELS[scenario.wheel_model]
    factory = simIncludeRW.rwFactory()
    for g, h, w in zip(axes.T, wheel_momentum, spin, strict=True):
        factory.create(
            name,
            g.tolist(),
            Omega=float((h / js - w) / macros.RPM),
            useRWfriction=True,
            useMinTorque=True,
            **options,
        )
    hub = np.asarray(scenario.inertia, dtype=float) + js * axes @ axes.T
    flight = _magnetic_flight(scenario, q0, omega0, anomaly, dipole, hub)

    wheels = reactionWheelStateEffector.ReactionWheelStateEffector()
    factory.addToSpacecraft("wheels", wheels, flight.craft)
    command = messaging.ArrayMotorTorqueMsgPayload()
    command.motorTorque = [float(u) for u in wheel_torque]
    message = messaging.ArrayMotorTorqueMsg().write(command)
    wheels.rwMotorCmdInMsg.subscribeTo(message)
    # The gradient's planet: a point at the origin of the hub's states with our μ (the Earth's
    # own position property lies 1 AU away: the module docstring's traps).
    flight.craft.dynManager.createProperty(f"{_GRADIENT_PLANET}.r_PN_N", [[0.0], [0.0], [0.0]])
    flight.craft.dynManager.createProperty(f"{_GRADIENT_PLANET}.mu", [[earth.MU]])
    gradient = GravityGradientEffector.GravityGradientEffector()
    gradient.addPlanetName(_GRADIENT_PLANET)
    flight.craft.addDynamicEffector(gradient)
    flight.keep += [factory, message, gradient]

    # The wheels ahead of the hub, so that the command they read at t_k drives (t_{k-1}, t_k]
    # from the first step on; the rest as in basilisk_spacecraft.
    for model in (flight.ephemeris, wheels, flight.craft, flight.torquers):
        flight.sim.AddModelToTask("task", model)
    flight.sim.AddModelToTask("period", flight.field)
    if sensors:
        period_ns = round(scenario.dt * _NANO)
        flight.sim.CreateNewProcess("sensors").addTask(flight.sim.CreateNewTask("sensing", period_ns))
        for model in _sensors(scenario, flight):
            flight.sim.AddModelToTask("sensing", model)
    return _execute(flight, steps)


def ours(scenario: Scenario, num_envs: int, seconds: float, action: tuple[float, ...] = ACTION) -> float:
    """Wall-clock seconds for ``AttitudeVectorEnv(num_envs, scenario)`` to step
    ``seconds / scenario.dt`` control periods under the constant ``action`` (every env's),
    after a reset and one warm-up step (so that compiling or loading the kernels is not
    counted)."""
    periods = round(seconds / scenario.dt)
    env = AttitudeVectorEnv(num_envs, scenario)
    try:
        env.reset(seed=SEED)
        actions = np.broadcast_to(np.asarray(action, dtype=np.float32), env.action_space.shape).copy()
        env.step(actions)
        start = time.perf_counter()
        for _ in range(periods):
            env.step(actions)
        return time.perf_counter() - start
    finally:
        env.close()


def start_state(scenario: Scenario) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
    """The measured start: a seeded attitude, :data:`RATE`, :data:`ANOMALY`, and the dipole
    (A·m²) of :data:`ACTION` as our env applies it (the float32 action times the limits)."""
    q0 = np.random.default_rng(SEED).normal(size=4)
    q0 /= np.linalg.norm(q0)
    dipole = np.asarray(ACTION, dtype=np.float32).astype(float) * np.asarray(scenario.magnetorquer_max_dipole)
    return q0, np.asarray(RATE, dtype=float), ANOMALY, dipole


def nadir_commands(
    scenario: Scenario, action: tuple[float, ...] = NADIR_ACTION
) -> tuple[np.ndarray, np.ndarray]:
    """The wheels' motor torques (N·m) and the rods' dipole (A·m²) that our env applies for
    ``action`` (the wheels' fractions of the preset's torque limit, then the rods'; float32
    as the env takes it), for :func:`basilisk_nadir_spacecraft`."""
    a = np.asarray(action, dtype=np.float32).astype(float)
    n = wheel_axes(scenario.wheel_layout).shape[1]
    torque = a[:n] * model_constants(scenario.wheel_model).u_max
    return torque, a[n:] * np.asarray(scenario.magnetorquer_max_dipole)


@dataclass(frozen=True)
class Report:
    """What :func:`run` measured (medians over its rounds); ``text`` is the Markdown summary.

    Attributes:
        basilisk_cost: Basilisk's wall-clock seconds per simulated second, one MagDetumble
            spacecraft.
        ours_cost: our env's wall-clock seconds per body per simulated second, MagDetumble.
        ratio: Basilisk's cost over ours (the median of the per-round ratios), MagDetumble.
        nadir_basilisk_cost: as ``basilisk_cost``, the NadirPoint spacecraft with its sensors.
        nadir_ours_cost: as ``ours_cost``, NadirPoint-v0 in full (sensors and MEKF).
        nadir_ratio: Basilisk's NadirPoint cost over ``nadir_ours_cost``, as ``ratio``.
        nadir_truth_cost: as ``ours_cost``, NadirPoint-v0 with the truth observed and the
            sensors off.
        nadir_truth_ratio: Basilisk's NadirPoint cost over ``nadir_truth_cost``.
        machine: the CPU model, as :func:`~rigidrot_gym.tools.bench.throughput.machine`.
        text: the Markdown summary, as written to ``spacecraft.md``.
    """

    basilisk_cost: float
    ours_cost: float
    ratio: float
    nadir_basilisk_cost: float
    nadir_ours_cost: float
    nadir_ratio: float
    nadir_truth_cost: float
    nadir_truth_ratio: float
    machine: str
    text: str


CSV_COLUMNS = (
    "round",
    "spacecraft",
    "engine",
    "bodies",
    "simulated_s",
    "wall_s",
    "s_per_body_per_simulated_s",
)
# The CSV's spacecraft column: MagDetumble-v0, NadirPoint-v0 (ours in full, Basilisk with its
# sensors) and NadirPoint-v0 with the truth observed and the sensors off (ours only).
MAG, NADIR, NADIR_TRUTH = "MagDetumble", "NadirPoint", "NadirPoint-truth"
# NadirPoint-v0's overrides that observe the truth and turn the sensors off
# (benchmarks/spacecraft_shares.py's variant).
TRUTH = {
    "observe": "truth",
    "gyro_model": "none",
    "star_tracker_model": "none",
    "magnetometer_model": "none",
    "sun_sensor_model": "none",
}


# The table's lines: (spacecraft, engine) and what it says.
_LINES = {
    (MAG, "basilisk"): (
        "MagDetumble, Basilisk (bsk): Spacecraft + gravity + planetEphemeris + centred dipole + MtbEffector"
    ),
    (MAG, "rigidrot_gym"): "MagDetumble, rigidrot_gym AttitudeVectorEnv (one thread)",
    (NADIR, "basilisk"): (
        "NadirPoint, Basilisk (bsk): the above + GravityGradientEffector + 4 RW0 in a "
        "reactionWheelStateEffector + imuSensor, magnetometer, starTracker, 6 coarseSunSensor; "
        "without the filter"
    ),
    (NADIR, "rigidrot_gym"): "NadirPoint, rigidrot_gym AttitudeVectorEnv in full (sensors, MEKF; one thread)",
    (NADIR_TRUTH, "rigidrot_gym"): (
        "NadirPoint, rigidrot_gym AttitudeVectorEnv, truth observed, sensors off (one thread)"
    ),
}


def run(out: Path, quick: bool = False) -> Report:
    """Measure Basilisk (one spacecraft, 600 s; quick: 60 s) against our vector env
    (4096 envs over 600 s; quick: 256 over 60 s), the MagDetumble spacecraft and the
    NadirPoint one (ours in full and with the truth observed, the sensors off), alternating
    over 5 rounds (quick: 3), write ``spacecraft.md`` and ``spacecraft.csv`` into ``out``
    and return the report."""
    out.mkdir(parents=True, exist_ok=True)
    scenario, nadir = scenarios.find(ID), scenarios.find(NADIR_ID)
    truth = nadir.with_overrides(**TRUTH)
    seconds, num_envs, rounds = (60.0, 256, 3) if quick else (600.0, 4096, 5)
    q0, omega0, anomaly, dipole = start_state(scenario)
    torque, nadir_dipole = nadir_commands(nadir)
    wheels0 = np.zeros(torque.size)  # our env's wheels at a reset

    def theirs(spacecraft: str, span: float) -> float:
        if spacecraft == MAG:
            return basilisk_spacecraft(scenario, q0, omega0, anomaly, dipole, span)[0]
        return basilisk_nadir_spacecraft(nadir, q0, omega0, anomaly, wheels0, torque, nadir_dipole, span)[0]

    ours_of = {MAG: (scenario, ACTION), NADIR: (nadir, NADIR_ACTION), NADIR_TRUTH: (truth, NADIR_ACTION)}
    # Warm-ups, untimed: Basilisk's libraries and our kernels loaded before the first round.
    for name in (MAG, NADIR):
        theirs(name, scenario.dt)
    for sc, action in ours_of.values():
        ours(sc, 1, sc.dt, action)
    rows = []
    for k in range(rounds):
        for name in (MAG, NADIR):
            wall = theirs(name, seconds)
            rows.append((k, name, "basilisk", 1, seconds, wall, wall / seconds))
        for name, (sc, action) in ours_of.items():
            wall = ours(sc, num_envs, seconds, action)
            rows.append((k, name, "rigidrot_gym", num_envs, seconds, wall, wall / (num_envs * seconds)))
    with open(out / "spacecraft.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_COLUMNS)
        writer.writerows((*row[:5], f"{row[5]:.6g}", f"{row[6]:.6g}") for row in rows)

    def column(name: str, engine: str, index: int = 6) -> list[float]:
        return [r[index] for r in rows if r[1] == name and r[2] == engine]

    def ratio_of(basilisk: str, name: str) -> float:
        """The median of the per-round ratios, Basilisk's ``basilisk`` over our ``name``."""
        pairs = zip(column(basilisk, "basilisk"), column(name, "rigidrot_gym"), strict=True)
        return statistics.median(b / o for b, o in pairs)

    cpu = machine()
    cost = {(name, engine): statistics.median(column(name, engine)) for name, engine in _LINES}
    wall = {(name, engine): statistics.median(column(name, engine, 5)) for name, engine in _LINES}
    ratio, nadir_ratio, truth_ratio = ratio_of(MAG, MAG), ratio_of(NADIR, NADIR), ratio_of(NADIR, NADIR_TRUTH)
    table = markdown_table(
        ("simulator", "bodies", "simulated s", "wall s (median)", "µs per body per simulated s"),
        [
            (
                label,
                1 if engine == "basilisk" else num_envs,
                f"{seconds:g}",
                f"{wall[name, engine]:.4f}",
                f"{1e6 * cost[name, engine]:.3g}",
            )
            for (name, engine), label in _LINES.items()
        ],
    )
    kind = "quick" if quick else "full"
    text = "\n".join(
        [
            f"# The MagDetumble and NadirPoint spacecraft: our vector env against Basilisk ({kind} run)",
            "",
            f"Machine: {cpu}. All measured in this run, alternating over {rounds} rounds; medians.",
            "",
            table,
            "",
            f"MagDetumble: Basilisk costs **{ratio:.3g}×** ours per body per simulated second (median of the "
            f"per-round ratios) on this CPU ({cpu}). NadirPoint: Basilisk with its sensors and without the "
            f"filter costs **{nadir_ratio:.3g}×** our env in full (sensors and MEKF) and "
            f"**{truth_ratio:.3g}×** ours with the truth observed and the sensors off. Stepping only: our "
            "env's construction, reset and compilation, Basilisk's set-up and initialisation are "
            "excluded. Our step also computes each env's observation, reward and episode end; Basilisk "
            "integrates the orbit as well, our env takes it in closed form; both evaluate the field "
            "once per 1 s control period. Basilisk has no batch: its cost per body is that of one "
            "spacecraft at any count. "
            f"MagDetumble's start: action {list(ACTION)} (dipole {dipole.round(4).tolist()} A·m²), "
            f"body rates {list(RATE)} rad/s, mean anomaly {ANOMALY} rad at {scenario.flight.epoch}.",
            "",
            "NadirPoint's Basilisk set-up: the same hub, gravity, turning Earth, field and MtbEffector, "
            "GravityGradientEffector, reactionWheelStateEffector (four RW0 in the pyramid, rwFactory's motor "
            "limits and friction); at the 1 s control period an imuSensor (gyro), a magnetometer, a "
            "starTracker and a CSSConstellation of six coarseSunSensor; without the filter (no estimator: "
            "fswAlgorithms' inertialUKF is not set up), no disturbance torques, no eclipse. Ours in full: "
            "the scenario as it is (its random disturbance torques included), the MEKF on the gyro, star "
            f"tracker, magnetometer and Sun sensors. Start: action {list(NADIR_ACTION)} (wheel torques "
            f"{(1e3 * torque).round(4).tolist()} mN·m, dipole {nadir_dipole.round(4).tolist()} A·m²), "
            "Basilisk's from MagDetumble's attitude, rates and anomaly with the wheels at rest (ours from "
            "each env's reset).",
        ]
    )
    (out / "spacecraft.md").write_text(text + "\n")
    return Report(
        basilisk_cost=cost[MAG, "basilisk"],
        ours_cost=cost[MAG, "rigidrot_gym"],
        ratio=ratio,
        nadir_basilisk_cost=cost[NADIR, "basilisk"],
        nadir_ours_cost=cost[NADIR, "rigidrot_gym"],
        nadir_ratio=nadir_ratio,
        nadir_truth_cost=cost[NADIR_TRUTH, "rigidrot_gym"],
        nadir_truth_ratio=truth_ratio,
        machine=cpu,
        text=text,
    )

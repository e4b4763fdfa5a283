"""Drag and solar radiation pressure on the spacecraft's facets
(rigidrot_gym.physics.environment.facets, .atmosphere, and the env's ``surfaces`` component):
closed forms of a flat plate, the torque side by side with Basilisk's
facetDragDynamicEffector and facetSRPDynamicEffector, the atmosphere against its table's
own continuity and Basilisk's exponentialAtmosphere, and the env's body rates against a
DOP853 solution of Euler's equations under the facets' torque along the exact orbit."""

from __future__ import annotations

import gymnasium as gym
import numba
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.attitude.components import surfaces
from rigidrot_gym.attitude.settings import ScenarioError
from rigidrot_gym.physics.environment import atmosphere, earth, facets, sun
from rigidrot_gym.physics.environment import orbit as kepler
from rigidrot_gym.physics.environment.facets import CUBESAT_6U, Facet

RNG = np.random.default_rng(20261128)


def _plate(**kw) -> Facet:
    return Facet(**{"area": 2.0, "normal": (1.0, 0.0, 0.0), "centre": (0.0, 0.5, 0.0), **kw})


# -- closed forms ---------------------------------------------------------------------------


def test_a_plate_facing_the_flow_feels_half_rho_v_squared_cd_a():
    plate = _plate(drag_coefficient=2.2)
    force, torque = facets.forces([plate], [7500.0, 0.0, 0.0], 1e-12, [0, 0, 1], 0.0)
    expected = 0.5 * 1e-12 * 7500.0**2 * 2.2 * 2.0
    np.testing.assert_allclose(force, [-expected, 0.0, 0.0], rtol=1e-15)
    np.testing.assert_allclose(torque, np.cross(plate.centre, force), rtol=1e-15)
    # the flow on its back, or along it, does not touch it
    assert not np.any(facets.forces([plate], [-7500.0, 0.0, 0.0], 1e-12, [0, 0, 1], 0.0)[0])
    assert not np.any(facets.forces([plate], [0.0, 7500.0, 0.0], 1e-12, [0, 0, 1], 0.0)[0])


@pytest.mark.parametrize("angle_deg", [0.0, 30.0, 60.0, 89.0])
def test_radiation_on_a_black_plate_and_on_a_mirror(angle_deg):
    """Black: F = −P A cos θ ŝ (all momentum absorbed). Mirror: F = −2 P A cos²θ n̂."""
    theta = np.radians(angle_deg)
    s = np.array([np.cos(theta), np.sin(theta), 0.0])
    p = 4.56e-6
    black, _ = facets.forces([_plate()], [0, 0, 0], 0.0, s, p)
    np.testing.assert_allclose(black, -p * 2.0 * np.cos(theta) * s, rtol=1e-14, atol=1e-30)
    mirror, _ = facets.forces([_plate(specular=1.0)], [0, 0, 0], 0.0, s, p)
    np.testing.assert_allclose(mirror, [-2 * p * 2.0 * np.cos(theta) ** 2, 0, 0], rtol=1e-14, atol=1e-30)
    lambert, _ = facets.forces([_plate(diffuse=1.0)], [0, 0, 0], 0.0, s, p)
    expected = -p * 2.0 * np.cos(theta) * (s + np.array([2.0 / 3.0, 0, 0]))
    np.testing.assert_allclose(lambert, expected, rtol=1e-14, atol=1e-30)
    # from behind, nothing
    assert not np.any(facets.forces([_plate()], [0, 0, 0], 0.0, -s, p)[0])


def test_the_pressure_at_one_au_is_the_flux_over_c():
    assert facets.pressure(facets.ASTRONOMICAL_UNIT, 1361.0) == pytest.approx(4.5398e-6, rel=1e-4)
    assert facets.pressure(2 * facets.ASTRONOMICAL_UNIT, 1361.0) == pytest.approx(4.5398e-6 / 4, rel=1e-4)


def test_the_6u_preset_is_the_cubesat_specs_box_with_two_panels():
    areas = [f.area for f in CUBESAT_6U]
    assert len(CUBESAT_6U) == 10
    np.testing.assert_allclose(areas[:6], [0.08282580, 0.08282580, 0.0366, 0.0366, 0.02263, 0.02263])
    np.testing.assert_allclose(areas[6:], [0.08282580] * 4)
    # a closed box in a uniform flow: the drag is that of its projected area
    v = RNG.normal(size=3)
    force, _ = facets.forces(CUBESAT_6U[:6], v, 2.0, [0, 0, 1], 0.0)
    projected = 0.5 * sum(f.area * abs(np.dot(f.normal, v)) for f in CUBESAT_6U[:6]) / np.linalg.norm(v)
    np.testing.assert_allclose(force, -0.5 * 2.0 * 2.2 * projected * np.linalg.norm(v) * v, rtol=1e-14)


# -- against Basilisk ------------------------------------------------------------------------


def _random_facets(rng, count: int) -> list[Facet]:
    out = []
    for _ in range(count):
        specular = rng.uniform(0, 0.8)
        out.append(
            Facet(
                rng.uniform(0.01, 1.0),
                tuple(Rotation.random(random_state=rng).apply([0, 0, 1])),
                tuple(rng.uniform(-1, 1, 3)),
                rng.uniform(1.5, 2.5),
                specular,
                rng.uniform(0, 1 - specular),
            )
        )
    return out


@pytest.mark.engines
@pytest.mark.parametrize("seed", [0, 1])
def test_the_torque_is_basilisks_facet_drag_and_srp(seed):
    """Same facets, attitudes, positions, velocities, winds, densities, Sun and shadow:
    Basilisk's torque and ours agree to rounding (measured: 7.9e-16 of the largest)."""
    pytest.importorskip("Basilisk")
    from Basilisk.architecture import messaging
    from Basilisk.simulation import facetDragDynamicEffector, facetSRPDynamicEffector, spacecraft
    from Basilisk.utilities import RigidBodyKinematics as rbk
    from Basilisk.utilities import SimulationBaseClass, macros

    rng = np.random.default_rng(seed)
    shape = CUBESAT_6U if seed == 0 else _random_facets(rng, 7)
    sim = SimulationBaseClass.SimBaseClass()
    sim.CreateNewProcess("p").addTask(sim.CreateNewTask("t", macros.sec2nano(1.0)))
    hub = spacecraft.Spacecraft()
    drag = facetDragDynamicEffector.FacetDragDynamicEffector()
    srp = facetSRPDynamicEffector.FacetSRPDynamicEffector()
    srp.setNumFacets(len(shape))
    srp.setNumArticulatedFacets(0)
    for f in shape:
        drag.addFacet(f.area, f.drag_coefficient, list(f.normal), list(f.centre))
        srp.addFacet(
            f.area, np.eye(3).tolist(), list(f.normal), [0.0, 0.0, 0.0], list(f.centre), f.diffuse, f.specular
        )
    atmosphere_in, wind_in = messaging.AtmoPropsMsgPayload(), messaging.WindMsgPayload()
    sun_in, shadow_in = messaging.SpicePlanetStateMsgPayload(), messaging.EclipseMsgPayload()
    messages = [
        messaging.AtmoPropsMsg().write(atmosphere_in),
        messaging.WindMsg().write(wind_in),
        messaging.SpicePlanetStateMsg().write(sun_in),
        messaging.EclipseMsg().write(shadow_in),
    ]
    drag.atmoDensInMsg.subscribeTo(messages[0])
    drag.windVelInMsg.subscribeTo(messages[1])
    srp.sunInMsg.subscribeTo(messages[2])
    srp.sunEclipseInMsg.subscribeTo(messages[3])
    hub.addDynamicEffector(drag)
    hub.addDynamicEffector(srp)
    for model in (hub, drag, srp):
        sim.AddModelToTask("t", model)
    sim.InitializeSimulation()
    states = hub.dynManager
    sigma = states.getStateObject(hub.hub.nameOfHubSigma)
    position = states.getStateObject(hub.hub.nameOfHubPosition)
    velocity = states.getStateObject(hub.hub.nameOfHubVelocity)

    worst, largest = 0.0, 0.0
    for _ in range(200):
        r = rng.normal(size=3) * 7e6 / np.sqrt(3)
        v = rng.normal(size=3) * 7.5e3 / np.sqrt(3)
        wind = earth.ROTATION_RATE * np.array([-r[1], r[0], 0.0])
        sun_at = rng.normal(size=3) * 1.5e11
        mrp = rng.uniform(-1, 1, 3) * 0.5
        density, shadow = rng.uniform(1e-13, 1e-11), rng.uniform(0.0, 1.0)
        atmosphere_in.neutralDensity, wind_in.v_air_N = density, wind.tolist()
        sun_in.PositionVector, shadow_in.illuminationFactor = sun_at.tolist(), shadow
        for message, payload in zip(messages, (atmosphere_in, wind_in, sun_in, shadow_in), strict=True):
            message.write(payload)
        sigma.setState(mrp.reshape(3, 1).tolist())
        position.setState(r.reshape(3, 1).tolist())
        velocity.setState(v.reshape(3, 1).tolist())
        drag.ReadInputs()
        drag.computeForceTorque(0.0, 0.0)
        srp.computeForceTorque(0.0, 0.0)
        theirs = np.ravel(drag.torqueExternalPntB_B) + np.ravel(srp.torqueExternalPntB_B)

        to_body = np.array(rbk.MRP2C(mrp.tolist()))
        to_sun = to_body @ (sun_at - r)
        distance = np.linalg.norm(to_sun)
        _, ours = facets.forces(
            shape,
            to_body @ (v - wind),
            density,
            to_sun / distance,
            shadow * facets.pressure(distance, 1368.0),  # facetSRPDynamicEffector's flux
        )
        worst = max(worst, np.abs(ours - theirs).max())
        largest = max(largest, np.abs(theirs).max())
    assert largest > 1e-9  # the torques are not nothing
    assert worst < 4e-15 * largest, worst / largest


def test_the_table_is_continuous_to_its_printed_digits():
    """Each band's exponential, carried to the next band's base altitude, lands within 9 %
    of that band's base density (Vallado's fit is piecewise: measured ≤ 8.2 %, at 150 km),
    which catches a mistyped entry (a digit off moves it by far more)."""
    bases = np.array(atmosphere.BASE_ALTITUDE)
    carried = np.array(atmosphere.BASE_DENSITY[:-1]) * np.exp(
        -(bases[1:] - bases[:-1]) / np.array(atmosphere.SCALE_HEIGHT[:-1])
    )
    mismatch = carried / np.array(atmosphere.BASE_DENSITY[1:]) - 1.0
    assert np.all(np.abs(mismatch) < 0.09), mismatch
    np.testing.assert_array_equal(atmosphere.densities(bases), atmosphere.BASE_DENSITY)
    # compiled, the same to an ulp (numba's exp is LLVM's, numpy's its own)
    compiled = numba.njit(
        atmosphere.density.py_func if hasattr(atmosphere.density, "py_func") else atmosphere.density
    )
    h = RNG.uniform(0, 1.2e6, 50)
    np.testing.assert_allclose([compiled(x) for x in h], atmosphere.densities(h), rtol=4e-16, atol=0)


@pytest.mark.engines
def test_the_density_is_basilisks_exponential_atmosphere_within_a_band():
    pytest.importorskip("Basilisk")
    from Basilisk.architecture import messaging
    from Basilisk.simulation import exponentialAtmosphere
    from Basilisk.utilities import SimulationBaseClass, macros

    band = atmosphere.BASE_ALTITUDE.index(500e3)
    h0, rho0, scale = (
        column[band]
        for column in (atmosphere.BASE_ALTITUDE, atmosphere.BASE_DENSITY, atmosphere.SCALE_HEIGHT)
    )
    sim = SimulationBaseClass.SimBaseClass()
    sim.CreateNewProcess("p").addTask(sim.CreateNewTask("t", macros.sec2nano(1.0)))
    model = exponentialAtmosphere.ExponentialAtmosphere()
    model.planetRadius, model.scaleHeight = earth.RADIUS, scale
    model.baseDensity = rho0 * np.exp(h0 / scale)
    state = messaging.SCStatesMsgPayload()
    message = messaging.SCStatesMsg()
    model.addSpacecraftToModel(message)
    sim.AddModelToTask("t", model)
    recorder = model.envOutMsgs[0].recorder()
    sim.AddModelToTask("t", recorder)
    heights = np.linspace(500e3, 599e3, 12)
    direction = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    ours, theirs = atmosphere.densities(heights), []
    sim.InitializeSimulation()
    for k, h in enumerate(heights):
        state.r_BN_N = ((earth.RADIUS + h) * direction).tolist()
        message.write(state, macros.sec2nano(k + 1))
        sim.ConfigureStopTime(macros.sec2nano(k + 1))
        sim.ExecuteSimulation()
        theirs.append(recorder.neutralDensity[-1])
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)


# -- the torque term ----------------------------------------------------------------------


def _parameters(rng) -> tuple:
    own = np.zeros(facets.SIZE)
    own[facets.AIR : facets.AIR + 6] = rng.normal(size=6) * (7e3, 7e3, 7e3, 8.0, 8.0, 8.0)
    own[facets.DENSITY], own[facets.DENSITY_RATE], own[facets.PRESSURE] = 2e-12, -3e-15, 4e-6
    s = rng.normal(size=3)
    own[facets.SUN : facets.SUN + 3] = s / np.linalg.norm(s)
    for k, f in enumerate(_random_facets(rng, 8)):
        at = facets.FACETS + facets.FACET_SIZE * k
        own[at : at + facets.FACET_SIZE] = (
            *f.normal,
            *f.centre,
            f.area,
            f.drag_coefficient,
            f.specular,
            f.diffuse,
        )
    return tuple(own)


def test_the_term_is_the_forces_at_the_stage_attitude_and_time():
    """add(τ, t, q, ω, own) = τ + the torque of :func:`forces` with the air's velocity
    v₀ + v̇ t and the Sun turned into the frame of q; compiled, the same to rounding."""
    rng = np.random.default_rng(3)
    own = _parameters(rng)
    q = Rotation.random(random_state=rng).as_quat(scalar_first=True) * 1.001  # a stage q, off unit length
    t, tau0 = 0.37, (1e-9, -2e-9, 3e-9)
    got = np.array(facets.add(tau0, t, tuple(q), (0.0, 0.0, 0.0), own))
    to_body = Rotation.from_quat(q / np.linalg.norm(q), scalar_first=True).inv()
    o = np.array(own)
    shape = [
        Facet(o[at + 6], o[at : at + 3], o[at + 3 : at + 6], o[at + 7], o[at + 8], o[at + 9])
        for at in facets.FACETS + facets.FACET_SIZE * np.arange(8)
    ]
    _, torque = facets.forces(
        shape,
        to_body.apply(o[0:3] + t * o[3:6]),
        o[facets.DENSITY] + t * o[facets.DENSITY_RATE],
        to_body.apply(o[facets.SUN : facets.SUN + 3]),
        o[facets.PRESSURE],
    )
    np.testing.assert_allclose(got, np.array(tau0) + torque, rtol=1e-13, atol=1e-25)
    compiled = numba.njit(lambda tau, t, q, w, p: facets.add(tau, t, q, w, p))
    np.testing.assert_allclose(compiled(tau0, t, tuple(q), (0.0, 0.0, 0.0), own), got, rtol=1e-14, atol=1e-25)


# -- in the env -----------------------------------------------------------------------------

LOW_ORBIT = dict(orbit=True, orbit_semi_major_axis=earth.RADIUS + 380e3, orbit_eccentricity=0.01)
CENTRE_OF_MASS = (0.01, -0.02, 0.03)


def test_the_env_turns_as_euler_does_under_the_facets_torque():
    """Reorient-v0 with a 6U's facets on a low, slightly eccentric orbit, a non-diagonal
    inertia and the centre of mass off the box's centre, no action: the body rates after
    60 s against DOP853 (rtol 1e-12) of J ω̇ = τ − ω × J ω, q̇ = ½ q ⊗ ω, with τ the facets'
    torque along the exact two-body orbit, the exact Sun and shadow, the density of the
    altitude: within 1e-7 of the change the torque made (measured 1.8e-8: the env moves the
    air's velocity and the density linearly over each 0.2 s period and holds the Sun; with
    the density held, 1.0e-4, the climb of this eccentric orbit over half a period)."""
    turn = Rotation.from_euler("xyz", [20, -35, 50], degrees=True).as_matrix()
    inertia = turn @ np.diag([0.08, 0.1, 0.05]) @ turn.T
    env = gym.make(
        "RigidRot/Reorient-v0",
        inertia=inertia,
        surfaces=True,
        surface_centre_of_mass=CENTRE_OF_MASS,
        **LOW_ORBIT,
    ).unwrapped
    env.reset(seed=5, options={"rate": [0.0, 0.0, 0.0]})
    q0, omega0 = env.attitude.copy(), env.body_rates.copy()
    anomaly = float(env.batch._equipment.anomaly[0])
    steps = 300
    for _ in range(steps):
        env.step(np.zeros(3, dtype=np.float32))
    seconds = steps * env.scenario.dt

    scenario = env.scenario
    angles = np.radians([scenario.orbit_inclination_deg, scenario.orbit_raan_deg, scenario.orbit_argp_deg])
    el = kepler.elements(scenario.orbit_semi_major_axis, scenario.orbit_eccentricity, *angles, anomaly)
    shape = [
        Facet(
            f.area, f.normal, np.subtract(f.centre, CENTRE_OF_MASS), f.drag_coefficient, f.specular, f.diffuse
        )
        for f in CUBESAT_6U
    ]

    def torque(t, q):
        r, v = kepler.position_velocity(el, t)
        s = sun.sun_position(t, scenario.orbit_epoch)
        to_body = Rotation.from_quat(q / np.linalg.norm(q), scalar_first=True).inv()
        air = v - earth.ROTATION_RATE * np.array([-r[1], r[0], 0.0])
        to_sun = s - r
        pressure = sun.shadow_factors(r, s) * facets.pressure(np.linalg.norm(to_sun), facets.SOLAR_FLUX)
        density = atmosphere.densities(np.linalg.norm(r) - earth.RADIUS)
        _, tau = facets.forces(
            shape, to_body.apply(air), density, to_body.apply(to_sun / np.linalg.norm(to_sun)), pressure
        )
        return tau

    def rhs(t, y):
        q, w = y[:4], y[4:]
        dq = 0.5 * np.array(
            [-q[1:] @ w, q[0] * w[0] + q[2] * w[2] - q[3] * w[1], q[0] * w[1] + q[3] * w[0] - q[1] * w[2],
             q[0] * w[2] + q[1] * w[1] - q[2] * w[0]]
        )  # fmt: skip
        return np.concatenate([dq, np.linalg.solve(inertia, torque(t, q) - np.cross(w, inertia @ w))])

    solution = solve_ivp(
        rhs, (0, seconds), np.concatenate([q0, omega0]), method="DOP853", rtol=1e-12, atol=1e-15
    )
    exact = solution.y[4:, -1]
    change = np.linalg.norm(exact - omega0)
    assert change > 1e-6, change  # the torque turned it
    assert np.linalg.norm(env.body_rates - exact) < 1e-7 * change, (
        np.linalg.norm(env.body_rates - exact) / change
    )


def test_off_by_default_and_bad_facets_are_named():
    from rigidrot_gym.attitude.scenario import find

    scenario = find("RigidRot/NadirPoint-v0")
    assert not scenario.surfaces
    with pytest.raises(ScenarioError, match=r"surfaces\.enabled needs orbit\.enabled"):
        find("RigidRot/Reorient-v0").with_overrides(surfaces=True)
    with pytest.raises(ScenarioError, match="surface_facets"):
        scenario.with_overrides(surface_facets="7U")
    bad = [{"area": 1.0, "normal": [0, 0, 0], "centre": [0, 0, 0]}]
    with pytest.raises(ScenarioError, match=r"surface_facets\[0\].*normal must be a non-zero vector"):
        scenario.with_overrides(surface_facets=bad)
    with pytest.raises(ScenarioError, match="at most 10 facets"):
        scenario.with_overrides(surface_facets=[{"area": 1.0, "normal": [1, 0, 0], "centre": [0, 0, 0]}] * 11)
    own = scenario.with_overrides(surface_facets=[{"area": 1.0, "normal": [0, 0, 2], "centre": [0, 0, 0.1]}])
    assert surfaces.facets_of(own.exterior)[0].normal == (0.0, 0.0, 1.0)
    with pytest.raises(ValueError, match="specular \\+ diffuse must be ≤ 1"):
        Facet(1.0, (1, 0, 0), (0, 0, 0), 2.2, 0.7, 0.5)
    with pytest.raises(ValueError, match="altitude must be ≥ 0"):
        atmosphere.densities([-1.0])


@pytest.mark.engines
def test_basilisk_turns_the_same_6u_under_drag_and_radiation():
    """60 s of a 6U at 520 km from the env's start, no action: Basilisk's hub (RK4 at the
    env's 0.1 s, point-mass Earth) with both facet effectors, fed the env's density, the
    air's turning with the Earth, the Sun and the shadow at each task step. The body rates
    agree to 4.2e-10 rad/s, 2.7e-6 of the change the torques made (measured); with
    Basilisk's step and messages at 0.025 s, 7.1e-7: the residual is Basilisk's holding the
    wind and the Sun over its step, first order in it."""
    pytest.importorskip("Basilisk")
    from Basilisk.architecture import messaging
    from Basilisk.simulation import (
        facetDragDynamicEffector,
        facetSRPDynamicEffector,
        spacecraft,
        svIntegrators,
    )
    from Basilisk.utilities import RigidBodyKinematics as rbk
    from Basilisk.utilities import SimulationBaseClass, macros, simIncludeGravBody

    from rigidrot_gym.attitude.components.orbit import elements_of

    inertia = np.diag([0.08, 0.10, 0.05])
    settings = dict(orbit=True, orbit_semi_major_axis=earth.RADIUS + 520e3, solar_flux=1368.0)
    env = gym.make(
        "RigidRot/Reorient-v0",
        dt=0.1,
        inertia=inertia,
        surfaces=True,
        surface_centre_of_mass=CENTRE_OF_MASS,
        **settings,
    ).unwrapped
    env.reset(seed=2, options={"rate": [0.0, 0.0, 0.0]})
    q0, omega0 = env.attitude.copy(), env.body_rates.copy()
    el = elements_of(env.scenario.flight)._replace(mean_anomaly=float(env.batch._equipment.anomaly[0]))
    r0, v0 = kepler.position_velocity(el, 0.0)

    sim = SimulationBaseClass.SimBaseClass()
    sim.CreateNewProcess("p").addTask(sim.CreateNewTask("t", macros.sec2nano(0.1)))
    craft = spacecraft.Spacecraft()
    craft.hub.IHubPntBc_B = inertia.tolist()
    craft.hub.sigma_BNInit = np.reshape(rbk.EP2MRP(q0), (3, 1)).tolist()
    craft.hub.omega_BN_BInit = np.reshape(omega0, (3, 1)).tolist()
    craft.hub.r_CN_NInit, craft.hub.v_CN_NInit = r0.reshape(3, 1).tolist(), v0.reshape(3, 1).tolist()
    integrator = svIntegrators.svIntegratorRK4(craft)  # kept: the hub holds only a pointer
    craft.setIntegrator(integrator)
    gravity = simIncludeGravBody.gravBodyFactory()
    planet = gravity.createEarth()
    planet.isCentralBody, planet.mu = True, earth.MU
    gravity.addBodiesTo(craft)
    drag = facetDragDynamicEffector.FacetDragDynamicEffector()
    srp = facetSRPDynamicEffector.FacetSRPDynamicEffector()
    srp.setNumFacets(len(CUBESAT_6U))
    srp.setNumArticulatedFacets(0)
    for f in CUBESAT_6U:
        arm = np.subtract(f.centre, CENTRE_OF_MASS).tolist()
        drag.addFacet(f.area, f.drag_coefficient, list(f.normal), arm)
        srp.addFacet(f.area, np.eye(3).tolist(), list(f.normal), [0.0, 0.0, 0.0], arm, f.diffuse, f.specular)
    payloads = (
        messaging.AtmoPropsMsgPayload(),
        messaging.WindMsgPayload(),
        messaging.SpicePlanetStateMsgPayload(),
        messaging.EclipseMsgPayload(),
    )
    messages = (
        messaging.AtmoPropsMsg(),
        messaging.WindMsg(),
        messaging.SpicePlanetStateMsg(),
        messaging.EclipseMsg(),
    )

    def write(t: float) -> None:  # what the effectors read over the task step from t
        r, _ = kepler.position_velocity(el, t)
        s = sun.sun_position(t, env.scenario.orbit_epoch)
        payloads[0].neutralDensity = float(atmosphere.densities(np.linalg.norm(r) - earth.RADIUS))
        payloads[1].v_air_N = (earth.ROTATION_RATE * np.array([-r[1], r[0], 0.0])).tolist()
        payloads[2].PositionVector = s.tolist()
        payloads[3].illuminationFactor = float(sun.shadow_factors(r, s))
        for message, payload in zip(messages, payloads, strict=True):
            message.write(payload, macros.sec2nano(t))

    write(0.0)
    drag.atmoDensInMsg.subscribeTo(messages[0])
    drag.windVelInMsg.subscribeTo(messages[1])
    srp.sunInMsg.subscribeTo(messages[2])
    srp.sunEclipseInMsg.subscribeTo(messages[3])
    craft.addDynamicEffector(drag)
    craft.addDynamicEffector(srp)
    # the effectors first: at each tick they read the messages of the step's start
    sim.AddModelToTask("t", drag, 20)
    sim.AddModelToTask("t", srp, 20)
    sim.AddModelToTask("t", craft, 10)
    sim.InitializeSimulation()
    rates = craft.dynManager.getStateObject(craft.hub.nameOfHubOmega)
    ours, theirs = [], []
    for k in range(1, 601):
        env.step(np.zeros(3, dtype=np.float32))
        sim.ConfigureStopTime(macros.sec2nano(0.1 * k))
        sim.ExecuteSimulation()
        write(0.1 * k)
        ours.append(env.body_rates.copy())
        theirs.append(np.ravel(rates.getState()))
    ours, theirs = np.array(ours), np.array(theirs)
    change = np.abs(theirs - omega0).max()
    assert change > 1e-4, change
    assert np.abs(ours - theirs).max() < 1e-5 * change, np.abs(ours - theirs).max() / change

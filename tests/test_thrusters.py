"""Thrusters (rigidrot_gym.physics.actuators.thrusters): closed forms of the set's force, torque
and propellant, the torque term integrated by the library, the compiled path against numpy,
the argument checks, and Basilisk's thrForceMapping, thrFiringSchmitt, thrFiringRemainder and
thrusterDynamicEffector run side by side on the same requests."""

from __future__ import annotations

import itertools
import math

import numba
import numpy as np
import pytest

from rigidrot_gym.physics.actuators import thrusters as thr
from rigidrot_gym.physics.actuators.thrusters import (
    ThrusterSet,
    eight_thrusters,
    map_forces,
    remainder_on_time,
    remainder_on_times,
    schmitt_on_time,
    schmitt_on_times,
    term,
    term_parameters,
)
from rigidrot_gym.physics.rotation import torques
from rigidrot_gym.physics.rotation.propagate import propagate

HALF = (0.5, 0.4, 0.3)  # m, a box's half-sizes
SET = eight_thrusters(HALF)

_rng = np.random.default_rng(4)
_directions = _rng.normal(size=(10, 3))
SCATTERED = ThrusterSet(
    _rng.uniform(-0.5, 0.5, (10, 3)),
    _directions / np.linalg.norm(_directions, axis=1, keepdims=True),
    _rng.uniform(0.5, 2.0, 10),
    0.02,
    220.0,
)

# Basilisk's 8-thruster RCS set of test_thrForceMapping.py.
BSK_POSITIONS = [
    [-0.86360, -0.82550, 1.79070],
    [-0.82550, -0.86360, 1.79070],
    [0.82550, 0.86360, 1.79070],
    [0.86360, 0.82550, 1.79070],
    [-0.86360, -0.82550, -1.79070],
    [-0.82550, -0.86360, -1.79070],
    [0.82550, 0.86360, -1.79070],
    [0.86360, 0.82550, -1.79070],
]
BSK_DIRECTIONS = [[1, 0, 0], [0, 1, 0], [0, -1, 0], [-1, 0, 0]] * 2


# -- closed forms --------------------------------------------------------------------------


def test_one_thruster_torque_force_and_propellant():
    r, d = np.array([0.3, -0.2, 0.7]), np.array([0.0, 0.6, 0.8])
    one = ThrusterSet([r], [d], 2.0, 0.01, 220.0)
    f = np.array([1.5])
    np.testing.assert_allclose(one.torque(f), 1.5 * np.cross(r, d), rtol=1e-15)
    np.testing.assert_allclose(one.force(f), 1.5 * d, rtol=1e-15)
    assert one.propellant([0.25]) == pytest.approx(2.0 * 0.25 / (220.0 * 9.80665), rel=1e-15)


def test_eight_thrusters_reproduce_basilisks_test_layout():
    bsk = eight_thrusters((0.8636, 0.8636, 1.7907), inset=0.0381)
    np.testing.assert_allclose(bsk.positions, BSK_POSITIONS, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(bsk.directions, BSK_DIRECTIONS)
    assert (bsk.max_thrust == 0.9).all() and (bsk.isp == 227.5).all() and (bsk.min_on_time == 0.02).all()


def test_eight_thrusters_couples_and_reach():
    a, b, c = HALF
    m = min(a, b)
    arms = SET.torque_arms
    # All eight firing: no force, no torque (Basilisk's substractMin assumes it).
    np.testing.assert_allclose(SET.force(np.ones(8)), 0.0, atol=1e-15)
    np.testing.assert_allclose(SET.torque(np.ones(8)), 0.0, atol=1e-15)
    # Opposite thrusters along one axis, one at each corner: a pure couple.
    for i, j in [(0, 3), (0, 7), (4, 3), (4, 7), (1, 2), (1, 6), (5, 2), (5, 6)]:
        f = np.zeros(8)
        f[[i, j]] = 0.9
        np.testing.assert_allclose(SET.force(f), 0.0, atol=1e-15)
        np.testing.assert_allclose(SET.torque(f), 0.9 * (arms[i] + arms[j]), rtol=1e-15)
    np.testing.assert_allclose(arms[0], [0.0, c, m], rtol=1e-15)
    np.testing.assert_allclose(arms[1], [-c, 0.0, -m], rtol=1e-15)
    # Each signed axis by non-negative forces (Basilisk's mapping), exactly.
    for axis in np.concatenate([np.eye(3), -np.eye(3)]):
        f = map_forces(0.1 * axis, SET)
        assert f.min() == 0.0
        np.testing.assert_allclose(SET.torque(f), 0.1 * axis, rtol=0, atol=1e-15)


# -- the torque term -----------------------------------------------------------------------


def _own(values):
    return tuple(float(v) for v in values)


def test_term_fires_each_thruster_until_its_on_time():
    on = np.array([0.1, 0.0, 0.35, 0.2, 0.0, 0.5, 0.05, 0.3])
    own = _own(term_parameters(SET, on))
    add = term(8).add
    full = SET.max_thrust[:, None] * SET.torque_arms
    for t in (0.0, 0.05, 0.1, 0.15, 0.3, 0.49, 0.5, 0.7):
        tau = add((1.0, 2.0, 3.0), t, (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0), own)
        expected = np.array([1.0, 2.0, 3.0]) + full[t < on].sum(axis=0)
        np.testing.assert_allclose(np.array(tau, dtype=float), expected, rtol=1e-15, atol=1e-15)
    assert term(8) is term(8) and term(8).size == 32 and term(3).size == 12


_ADD_2 = term(2).add  # a global: numba calls a registered function by name, not as an argument


@numba.njit
def _compiled_add(times, q, omega, rows):
    out = np.empty((times.size, rows.shape[0], 3))
    for n in range(times.size):
        for i in range(rows.shape[0]):
            own = (
                rows[i, 0],
                rows[i, 1],
                rows[i, 2],
                rows[i, 3],
                rows[i, 4],
                rows[i, 5],
                rows[i, 6],
                rows[i, 7],
            )
            x, y, z = _ADD_2((0.1, -0.2, 0.3), times[n], q, omega, own)
            out[n, i] = (x, y, z)
    return out


def test_term_compiled_equals_numpy():
    rng = np.random.default_rng(5)
    count, bodies = 2, 50
    rows = np.concatenate([rng.normal(0, 0.5, (bodies, 3)), rng.uniform(0, 1, (bodies, 1))] * count, axis=1)
    times = np.linspace(0.0, 1.0, 41)
    add = term(count).add
    compiled = _compiled_add(times, (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0), rows)
    for n, t in enumerate(times):
        numpy = add((0.1, -0.2, 0.3), t, None, None, tuple(rows.T))
        assert compiled[n].tobytes() == np.stack(numpy, axis=-1).tobytes()
    # Within the model the env compiles: torques.model_of places it after the model's own rows.
    model = torques.model_of(False, False, False, ((term(count), torques.SIZE),))
    params = np.zeros((torques.SIZE + 4 * count, bodies))
    params[torques.SIZE :] = rows.T
    read = torques.reader(torques.SIZE + 4 * count)

    @numba.njit
    def run(params, t):
        out = np.empty((params.shape[1], 3))
        for i in range(params.shape[1]):
            x, y, z = model(t, (1.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0), read(params, i))
            out[i] = (x, y, z)
        return out

    zero = np.zeros(bodies)
    numpy = np.stack(add((zero, zero, zero), 0.4, None, None, tuple(rows.T)), axis=-1)
    assert run(params, 0.4).tobytes() == (numpy + 0.0).tobytes()


def test_sphere_fired_by_one_thruster():
    """A sphere (I = 0.8 kg·m²) spinning at ω₀, one thruster of SET fired for 0.37 s of a 1 s
    period: integrated by the library with the term, split at the switching instant, the rate
    changes by τ t_on / I. semi_implicit samples the torque at each step's start, so each
    piece sees the torque of its side of the switch (Runge–Kutta's last stage, at the piece's
    end, would see the thruster off)."""
    inertia, t_on, period = 0.8, 0.37, 1.0
    on = np.zeros(8)
    on[2] = t_on
    own = term_parameters(SET, on)
    add = term(8).add

    def torque(t, q, omega):
        zero = np.zeros(q.shape[:-1])
        tau = add((zero, zero, zero), t, None, None, tuple(np.broadcast_to(v, zero.shape) for v in own))
        return np.stack(tau, axis=-1)

    omega0 = np.array([0.01, -0.02, 0.005])
    q, w, t0 = np.array([1.0, 0.0, 0.0, 0.0]), omega0, 0.0
    for end in (t_on, period):
        traj = propagate(q, w, [inertia] * 3, end - t0, 1, "semi_implicit", torque, t0=t0, substeps=7)
        q, w, t0 = traj.q[-1], traj.omega[-1], end
    expected = omega0 + SET.max_thrust[2] * SET.torque_arms[2] * t_on / inertia
    print(f"\nsphere: |Δω| relative error {np.max(np.abs(w - expected)) / np.max(np.abs(expected)):.1e}")
    np.testing.assert_allclose(w, expected, rtol=1e-12, atol=0)


# -- pulse modulation: closed cases -----------------------------------------------------------


def test_schmitt_rules():
    f_max, dt, t_min = 1.0, 0.5, 0.05
    args = (f_max, dt, t_min, 0.75, 0.25, 0)
    assert schmitt_on_time(0.2, False, *args) == (0.1, True)  # above t_min: as requested
    assert schmitt_on_time(1.0, False, *args) == (0.55, True)  # a whole period: 1.1 Δt
    assert schmitt_on_time(-1.0, True, *args) == (0.0, False)  # negative: zero, below level_off
    assert schmitt_on_time(0.08, False, *args) == (0.05, True)  # level 0.8 ≥ level_on
    assert schmitt_on_time(0.05, True, *args) == (0.05, True)  # level 0.5, was on: t_min
    assert schmitt_on_time(0.05, False, *args) == (0.0, False)  # level 0.5, was off: none
    assert schmitt_on_time(0.02, True, *args) == (0.0, False)  # level 0.2 ≤ level_off
    # Off-pulsing: the request is a reduction from F_max.
    assert schmitt_on_time(-0.6, False, f_max, dt, t_min, 0.75, 0.25, 1) == (0.2, True)


def test_remainder_carries_short_requests():
    f_max, dt, t_min = 1.0, 0.5, 0.05
    on, rem = remainder_on_time(0.04, 0.0, f_max, dt, t_min, 0)  # 0.02 s: carried, 0.4 pulses
    assert on == 0.0 and rem == pytest.approx(0.4, rel=1e-15)
    on, rem = remainder_on_time(0.04, rem, f_max, dt, t_min, 0)  # 0.02 + 0.02 s: still short
    assert on == 0.0 and rem == pytest.approx(0.8, rel=1e-15)
    on, rem = remainder_on_time(0.04, rem, f_max, dt, t_min, 0)  # 0.06 s: fires it all
    assert on == pytest.approx(0.06, rel=1e-15) and rem == 0.0
    assert remainder_on_time(3.0, 0.0, f_max, dt, t_min, 0) == (pytest.approx(0.55, rel=1e-15), 0.0)
    # No minimum on-time: everything fires as requested.
    assert remainder_on_time(0.01, 0.0, f_max, dt, 0.0, 0) == (0.005, 0.0)


@numba.njit
def _compiled_modulation(forces, f_max, dt, t_min):
    schmitt, remainder = np.empty_like(forces), np.empty_like(forces)
    for k in range(forces.shape[1]):
        last, rem = False, 0.0
        for n in range(forces.shape[0]):
            schmitt[n, k], last = schmitt_on_time(forces[n, k], last, f_max[k], dt, t_min[k], 0.75, 0.25, 0)
            remainder[n, k], rem = remainder_on_time(forces[n, k], rem, f_max[k], dt, t_min[k], 0)
    return schmitt, remainder


def test_modulation_compiled_equals_numpy():
    forces = np.random.default_rng(2).uniform(-0.2, 1.2, (200, 8)) * SET.max_thrust
    schmitt, remainder = _compiled_modulation(forces, SET.max_thrust, 0.5, SET.min_on_time)
    np.testing.assert_array_equal(schmitt, schmitt_on_times(forces, SET, 0.5, 0.75, 0.25))
    np.testing.assert_array_equal(remainder, remainder_on_times(forces, SET, 0.5))


# -- arguments -----------------------------------------------------------------------------

GOOD = dict(
    positions=[[0.1, 0.2, 0.3], [-0.1, 0.0, 0.2]],
    directions=[[1.0, 0.0, 0.0], [0.0, 0.0, -1.0]],
    max_thrust=[1.0, 2.0],
    min_on_time=0.02,
    isp=200.0,
)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("positions", [[0.1, 0.2]]),
        ("positions", [[math.nan, 0.0, 0.0], [0.0, 0.0, 0.0]]),
        ("positions", np.zeros((37, 3))),
        ("positions", [0.1, 0.2, 0.3]),
        ("directions", [[1.0, 0.0, 0.0]]),
        ("directions", [[1.0, 0.1, 0.0], [0.0, 0.0, 1.0]]),
        ("directions", [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
        ("directions", [[math.nan, 0.0, 0.0], [0.0, 0.0, 1.0]]),
        ("max_thrust", [1.0, -2.0]),
        ("max_thrust", 0.0),
        ("max_thrust", [1.0, 2.0, 3.0]),
        ("max_thrust", math.nan),
        ("min_on_time", -0.01),
        ("min_on_time", math.inf),
        ("isp", 0.0),
        ("isp", "200"),
    ],
)
def test_each_field_is_checked(field, value):
    with pytest.raises(ValueError, match=field):
        ThrusterSet(**{**GOOD, field: value})


def test_directions_close_to_unit_are_normalised_and_fields_read_only():
    s = ThrusterSet(**{**GOOD, "directions": [[1.0 + 1e-9, 0.0, 0.0], [0.0, 0.0, -1.0]]})
    assert s.directions[0, 0] == 1.0 and s.max_thrust.tolist() == [1.0, 2.0] and s.isp.shape == (2,)
    with pytest.raises(ValueError):
        s.positions[0, 0] = 1.0


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: map_forces([1.0, 0.0], SET), "torque"),
        (lambda: map_forces([math.nan, 0.0, 0.0], SET), "torque"),
        (lambda: map_forces([1.0, 0.0, 0.0], SET, thr_force_sign=0), "thr_force_sign"),
        (lambda: map_forces([1.0, 0.0, 0.0], SET, control_axes=[[0.0, 0.0, 0.0]]), "control_axes"),
        (lambda: map_forces([1.0, 0.0, 0.0], SET, center_of_mass=[0.0, 0.0]), "center_of_mass"),
        (lambda: map_forces([1.0, 0.0, 0.0], SET, use_2nd_loop=1), "use_2nd_loop"),
        (lambda: map_forces([1.0, 0.0, 0.0], SET, epsilon=-1.0), "epsilon"),
        (lambda: schmitt_on_times(np.zeros((3, 7)), SET, 0.5, 0.75, 0.25), "forces"),
        (lambda: remainder_on_times(np.zeros((3, 8)), SET, 0.0), "period"),
        (lambda: remainder_on_times(np.zeros((3, 8)), SET, 0.5, 2), "base_thrust_state"),
        (lambda: SET.torque(np.zeros(7)), "forces"),
        (lambda: SET.propellant(np.full(8, math.nan)), "on_times"),
        (lambda: term_parameters(SET, np.zeros(3)), "on_times"),
        (lambda: term(0), "count"),
        (lambda: term(37), "count"),
        (lambda: eight_thrusters((0.5, -0.4, 0.3)), "half_sizes"),
        (lambda: eight_thrusters((0.5, 0.4)), "half_sizes"),
        (lambda: eight_thrusters(HALF, inset=0.4), "inset"),
        (lambda: thr.ThrusterModel(-1.0, 0.0, 200.0), "max_thrust"),
    ],
)
def test_function_arguments_are_checked(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# -- side by side with Basilisk ------------------------------------------------------------


def _sim(period_ns: int):
    from Basilisk.utilities import SimulationBaseClass

    sim = SimulationBaseClass.SimBaseClass()
    sim.CreateNewProcess("proc").addTask(sim.CreateNewTask("task", period_ns))
    return sim


def _config_message(thrusters: ThrusterSet):
    """Basilisk's THRArrayConfigMsg of the set, as simIncludeThruster's getConfigMessage writes it."""
    from Basilisk.architecture import messaging

    payload = messaging.THRArrayConfigMsgPayload()
    for i in range(thrusters.count):
        one = messaging.THRConfigMsgPayload()
        one.maxThrust = float(thrusters.max_thrust[i])
        one.rThrust_B = thrusters.positions[i].tolist()
        one.tHatThrust_B = thrusters.directions[i].tolist()
        messaging.ThrustConfigArray_setitem(payload.thrusters, i, one)
    payload.numThrusters = thrusters.count
    return messaging.THRArrayConfigMsg().write(payload)


def basilisk_mapping(thrusters: ThrusterSet, requests: np.ndarray, com, **settings) -> np.ndarray:
    """Basilisk's thrForceMapping run once per request (one call per tick of 1 s)."""
    from Basilisk.architecture import messaging
    from Basilisk.fswAlgorithms import thrForceMapping

    sim = _sim(10**9)
    module = thrForceMapping.thrForceMapping()
    module.controlAxes_B = np.eye(3).ravel().tolist()  # Basilisk's default: none
    for name, value in settings.items():
        setattr(module, name, value)
    vehicle = messaging.VehicleConfigMsgPayload()
    vehicle.CoM_B = list(com)
    vehicle_msg = messaging.VehicleConfigMsg().write(vehicle)
    torque = messaging.CmdTorqueBodyMsgPayload()
    torque_msg = messaging.CmdTorqueBodyMsg().write(torque)
    config_msg = _config_message(thrusters)
    module.cmdTorqueInMsg.subscribeTo(torque_msg)
    module.thrConfigInMsg.subscribeTo(config_msg)
    module.vehConfigInMsg.subscribeTo(vehicle_msg)
    sim.AddModelToTask("task", module)
    recorder = module.thrForceCmdOutMsg.recorder()
    sim.AddModelToTask("task", recorder)
    sim.InitializeSimulation()
    for n, request in enumerate(requests):
        torque.torqueRequestBody = request.tolist()
        torque_msg.write(torque, n * 10**9)
        sim.ConfigureStopTime(n * 10**9)
        sim.ExecuteSimulation()
    return np.asarray(recorder.thrForce)[:, : thrusters.count]


MAPPINGS = {
    # name: (thrusters, centre of mass, Basilisk's settings)
    "8 thrusters, +1": (SET, (0.0, 0.0, 0.0), {"thrForceSign": 1}),
    "8 thrusters, +1, CoM offset, 2nd loop, angle 10°": (
        SET,
        (0.03, 0.001, 0.02),
        {"thrForceSign": 1, "use2ndLoop": 1, "angErrThresh": math.radians(10.0), "epsilon": 0.0005},
    ),
    "8 thrusters, +1, control axes x and z": (
        SET,
        (0.0, 0.0, 0.0),
        {"thrForceSign": 1, "controlAxes_B": [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]},
    ),
    # The eight's torques come in equal pairs, so the thrusters that off-pulsing keeps rarely
    # span three axes; a set of thrusters at random gives the 2nd loop something to map.
    "10 thrusters at random, -1 (off-pulsing)": (SCATTERED, (0.01, -0.02, 0.0), {"thrForceSign": -1}),
}


def _our_settings(settings: dict) -> dict:
    axes = np.reshape(settings.get("controlAxes_B", np.eye(3).ravel()), (3, 3))
    return {
        "control_axes": axes[np.linalg.norm(axes, axis=1) > 0],
        "thr_force_sign": settings["thrForceSign"],
        "ang_err_thresh": settings.get("angErrThresh", 0.0),
        "epsilon": settings.get("epsilon", 0.0),
        "use_2nd_loop": bool(settings.get("use2ndLoop", 0)),
    }


@pytest.mark.engines
@pytest.mark.parametrize("case", list(MAPPINGS))
def test_force_mapping_against_basilisk(case):
    """Random torque requests (seeded), some beyond the set's reach (scaled by the angle rule
    where it applies): our forces against Basilisk's, to round-off."""
    pytest.importorskip("Basilisk.fswAlgorithms.thrForceMapping")
    thrusters, com, settings = MAPPINGS[case]
    rng = np.random.default_rng(11)
    requests = rng.normal(0.0, 0.3, (60, 3)) * np.where(rng.random((60, 1)) < 0.2, 10.0, 1.0)
    bsk = basilisk_mapping(thrusters, requests, com, **settings)
    ours = np.array(
        [map_forces(r, thrusters, center_of_mass=com, **_our_settings(settings)) for r in requests]
    )
    # Per request, relative to its largest force; a request can map to no force at all (where
    # the 2nd loop keeps too few thrusters for [C D][C D]ᵀ to pass the determinant test:
    # Basilisk's zeros, and ours).
    scale = np.max(np.abs(bsk), axis=1, keepdims=True)
    err = np.max(np.abs(ours - bsk) / np.maximum(scale, np.finfo(float).tiny))
    none = np.count_nonzero(scale == 0.0)
    ratio = np.max(np.abs(ours) / thrusters.max_thrust, axis=1)
    scaled = np.count_nonzero(np.abs(ratio - 1.0) < 1e-12)
    print(
        f"\n{case}: max |ΔF|/max|F| {err:.1e} over {len(requests)} requests ({none} map to no force, "
        f"{scaled} scaled to F_max, {np.count_nonzero(ratio > 1.0 + 1e-12)} beyond F_max)"
    )
    assert err < 1e-12 and none < len(requests) // 2
    if settings["thrForceSign"] > 0 and "controlAxes_B" not in settings:
        assert np.min(ours) >= 0.0


PERIOD_NS = 500_000_000  # the control period, ns
PERIOD = PERIOD_NS * 1e-9  # s, as Basilisk's diffNanoToSec makes it


def basilisk_modulation(kind: str, thrusters: ThrusterSet, forces: np.ndarray, **settings) -> np.ndarray:
    """Basilisk's thrFiringSchmitt or thrFiringRemainder called at t = 0, Δt, 2Δt, …, each
    force request written with the time of its call; the on-times of every call."""
    from Basilisk.architecture import messaging
    from Basilisk.fswAlgorithms import thrFiringRemainder, thrFiringSchmitt

    sim = _sim(PERIOD_NS)
    module = {
        "schmitt": thrFiringSchmitt.thrFiringSchmitt,
        "remainder": thrFiringRemainder.thrFiringRemainder,
    }[kind]()
    for name, value in settings.items():
        setattr(module, name, value)
    request = messaging.THRArrayCmdForceMsgPayload()
    request_msg = messaging.THRArrayCmdForceMsg().write(request)
    config_msg = _config_message(thrusters)
    module.thrConfInMsg.subscribeTo(config_msg)
    module.thrForceInMsg.subscribeTo(request_msg)
    sim.AddModelToTask("task", module)
    recorder = module.onTimeOutMsg.recorder()
    sim.AddModelToTask("task", recorder)
    sim.InitializeSimulation()
    for n, f in enumerate(forces):
        request.thrForce = f.tolist()
        request_msg.write(request, n * PERIOD_NS)
        sim.ConfigureStopTime(n * PERIOD_NS)
        sim.ExecuteSimulation()
    return np.asarray(recorder.OnTimeRequest)[:, : thrusters.count]


def _requests(seed: int, periods: int, base_thrust_state: int) -> np.ndarray:
    """Force requests that visit every rule: below, about and above the minimum on-time (20 ms
    of a 0.5 s period: 4 % of F_max), up to beyond a whole period, negative ones; with
    off-pulsing the same as reductions from F_max."""
    rng = np.random.default_rng(seed)
    small = rng.uniform(-0.01, 0.07, (periods, SET.count))
    large = rng.uniform(-0.2, 1.3, (periods, SET.count))
    f = np.where(rng.random((periods, SET.count)) < 0.6, small, large) * SET.max_thrust
    return f - SET.max_thrust if base_thrust_state else f


@pytest.mark.engines
@pytest.mark.parametrize("base_thrust_state", [0, 1])
@pytest.mark.parametrize("kind", ["schmitt", "remainder"])
def test_modulation_against_basilisk(kind, base_thrust_state):
    """80 periods of random requests. Basilisk's module, first called at t = 0, takes its calls
    at 0 and Δt for first calls (the notes' trap: its previous call time, zero at the first,
    stays zero) and outputs baseThrustState × 2 s there; from its third call on it modulates
    the requests written at that call, from a fresh state, as ours does from the third."""
    pytest.importorskip("Basilisk.fswAlgorithms.thrFiringSchmitt")
    forces = _requests(7, 80, base_thrust_state)
    t_min = float(SET.min_on_time[0])
    if kind == "schmitt":
        levels = {"level_on": 0.75, "level_off": 0.25}
        bsk = basilisk_modulation(
            kind, SET, forces, thrMinFireTime=t_min, baseThrustState=base_thrust_state, **levels
        )
        ours = schmitt_on_times(forces[2:], SET, PERIOD, base_thrust_state=base_thrust_state, **levels)
    else:
        bsk = basilisk_modulation(kind, SET, forces, thrMinFireTime=t_min, baseThrustState=base_thrust_state)
        ours = remainder_on_times(forces[2:], SET, PERIOD, base_thrust_state=base_thrust_state)
    np.testing.assert_array_equal(bsk[:2], 2.0 * base_thrust_state)
    err = np.max(np.abs(ours - bsk[2:]))
    requested = np.maximum(forces[2:] + base_thrust_state * SET.max_thrust, 0.0) / SET.max_thrust * PERIOD
    kinds = {
        "none": int(np.count_nonzero(ours == 0.0)),
        "1.1 Δt": int(np.count_nonzero(ours == 1.1 * PERIOD)),
        # The Schmitt trigger's minimum pulses; the remainder's firings of carried requests.
        "short fired": int(np.count_nonzero((requested < t_min) & (ours > 0.0))),
    }
    print(f"\n{kind}, base {base_thrust_state}: max |Δt_on| {err:.1e} s over {ours.size} on-times; {kinds}")
    assert err <= 1e-15 and min(kinds.values()) > 10


STEP_NS = 50_000_000  # Basilisk's integration step, ns: 0.05 s, ten to a control period
SPHERE = 2.0  # kg·m², the hub's inertia about every axis


def basilisk_firings(on_times: np.ndarray, tank: bool = False):
    """The hub's body rates at the start of each control period (and after the last) under
    Basilisk's thrusterDynamicEffector with SET's thrusters (thrusterFactory's
    ``MOOG_Monarc_1``, no minimum on-time: the factory's default) on a sphere of inertia
    SPHERE, centre of mass at the body origin, no gravity, RK4 at STEP_NS; each period's
    on-times written at its start with its time, the hub ahead of the effector in the task
    (the other order lets each command act one step early, the notes' trap). With ``tank``,
    a FuelTank (constant volume, 1 kg, at the origin) feeds the thrusters, and the propellant
    mass it holds at the periods' starts is returned too."""
    from Basilisk.architecture import messaging
    from Basilisk.simulation import fuelTank, spacecraft, thrusterDynamicEffector
    from Basilisk.utilities import simIncludeThruster

    sim = _sim(STEP_NS)
    sc = spacecraft.Spacecraft()
    sc.hub.mHub = 50.0
    sc.hub.IHubPntBc_B = (SPHERE * np.eye(3)).tolist()
    effector = thrusterDynamicEffector.ThrusterDynamicEffector()
    factory = simIncludeThruster.thrusterFactory()
    for r, d in zip(SET.positions, SET.directions, strict=True):
        factory.create("MOOG_Monarc_1", r.tolist(), d.tolist())
    factory.addToSpacecraft("thrusters", effector, sc)
    models = [sc, effector]
    if tank:
        fuel = fuelTank.FuelTank()
        model = fuelTank.FuelTankModelConstantVolume()
        model.propMassInit = 1.0
        model.r_TcT_TInit = [[0.0], [0.0], [0.0]]
        model.radiusTankInit = 0.1
        fuel.setTankModel(model)
        fuel.setR_TB_B([0.0, 0.0, 0.0])
        fuel.setNameOfMassState("propellant")
        fuel.addThrusterSet(effector)
        sc.addStateEffector(fuel)
        models.append(fuel)
    command = messaging.THRArrayOnTimeCmdMsgPayload()
    message = messaging.THRArrayOnTimeCmdMsg()
    effector.cmdsInMsg.subscribeTo(message)
    for m in models:
        sim.AddModelToTask("task", m)
    states = sc.scStateOutMsg.recorder()
    sim.AddModelToTask("task", states)
    if tank:
        masses = fuel.fuelTankOutMsg.recorder()
        sim.AddModelToTask("task", masses)
    sim.InitializeSimulation()
    ticks = 10
    for n, on in enumerate(on_times):
        command.OnTimeRequest = on.tolist()
        message.write(command, n * ticks * STEP_NS)
        sim.ConfigureStopTime(((n + 1) * ticks - 1) * STEP_NS)  # up to the next period's start
        sim.ExecuteSimulation()
    sim.ConfigureStopTime(len(on_times) * ticks * STEP_NS)
    sim.ExecuteSimulation()
    omega = np.asarray(states.omega_BN_B)[::ticks]
    return (omega, np.asarray(masses.fuelMass)[::ticks]) if tank else omega


def ours_firings(on_times: np.ndarray, period: float) -> np.ndarray:
    """The body rates at the periods' starts by the library: each period split at its on-times,
    the pieces integrated by semi_implicit (torque at each step's start) with the term."""
    add = term(SET.count).add

    def torque(t, q, omega):
        zero = np.zeros(q.shape[:-1])
        tau = add((zero, zero, zero), t, None, None, own)
        return np.stack(tau, axis=-1)

    q, w, out = np.array([1.0, 0.0, 0.0, 0.0]), np.zeros(3), [np.zeros(3)]
    for on in on_times:
        own = _own(term_parameters(SET, on))
        edges = np.unique(np.concatenate([[0.0], np.clip(on, 0.0, period), [period]]))
        for a, b in itertools.pairwise(edges):
            # Each period's clock from zero, as the term's on-times count: an absolute start
            # n Δt + a, less n Δt, can come out an ulp short of a and switch a piece late.
            traj = propagate(q, w, [SPHERE] * 3, b - a, 1, "semi_implicit", torque, t0=a)
            q, w = traj.q[-1], traj.omega[-1]
        out.append(w)
    return np.array(out)


@pytest.mark.engines
def test_firings_against_basilisks_thruster_effector():
    """12 periods of 0.5 s, the eight thrusters' on-times whole numbers of 0.05 s steps: 0, a
    whole period, 1.1 periods (what the modulators send for a saturated request) and, between,
    k steps less 1 ps. Basilisk switches a thruster at its RK4 stage times, on while
    t ≤ t_start + t_on + dt·1e-9 (dt the time since its previous evaluation): a firing that
    ends exactly on a tick inside the period is still on at the next step's first stage, an
    extra h/6 depending on how t_start + t_on rounds (test_basilisks_extra_sixth). 1 ps less
    keeps the last stage (within the tolerance) and drops the next one: Basilisk then delivers
    whole steps, as the sixths-of-a-step trap does not apply to firings ending on a tick, and
    our split integration delivers the on-times."""
    pytest.importorskip("Basilisk.simulation.thrusterDynamicEffector")
    period, h = 0.5, STEP_NS * 1e-9
    steps = np.random.default_rng(3).integers(0, 12, (12, SET.count))
    steps[-1] = 0  # all off at the end: the fuel tank's lag (below) settles within the run
    on_times = np.where((steps > 0) & (steps < 10), steps * h - 1e-12, steps * h)
    bsk = basilisk_firings(on_times)
    ours = ours_firings(on_times, period)
    err = np.max(np.abs(bsk - ours)) / np.max(np.abs(ours))
    print(
        f"\nrates after each period: max |Δω| / max |ω| {err:.1e} "
        f"(|ω| up to {np.max(np.abs(ours)):.3f} rad/s)"
    )
    assert err < 1e-10

    # The tank integrates the mass flow of the thrust state its previous stage left: a firing
    # that starts with a period burns a sixth of a step's propellant less in it, one still on
    # at a period's end a sixth more in the next. Over the run they cancel.
    _, fuel = basilisk_firings(on_times, tank=True)
    burnt = SET.propellant(np.minimum(on_times, period))
    sixth = SET.max_thrust[0] * h / 6.0 / (SET.isp[0] * thr.G0)
    shift = (-np.diff(fuel) - burnt) / sixth
    err_total = abs(fuel[0] - fuel[-1] - burnt.sum()) / burnt.sum()
    print(
        f"propellant: total relative difference {err_total:.1e} ({burnt.sum():.3e} kg); per period "
        f"shifted by {np.round(shift).astype(int).tolist()} sixths of a step's"
    )
    assert err_total < 1e-10
    np.testing.assert_allclose(shift, np.round(shift), rtol=0, atol=1e-6)


@pytest.mark.engines
def test_basilisks_extra_sixth():
    """The trap the side-by-side test steps around: one thruster fired for 3 × 0.05 s (which
    rounds above 0.15) in a period of ten steps. Basilisk's rates take 3 + 1/6 steps of its
    torque (the next step's first RK4 stage sees it on), its fuel tank 3 + 1/3 steps of
    propellant (the mass flow read one stage late); 1 ps less gives 3 steps of both."""
    pytest.importorskip("Basilisk.simulation.thrusterDynamicEffector")
    h, full = STEP_NS * 1e-9, SET.max_thrust[0] * SET.torque_arms[0]
    delivered = {}
    for label, t_on in (("3 × h", 3 * h), ("3 × h − 1 ps", 3 * h - 1e-12)):
        on = np.zeros((2, SET.count))
        on[0, 0] = t_on
        omega = basilisk_firings(on)  # the tank's inertia would change the rates
        _, fuel = basilisk_firings(on, tank=True)
        rates = np.linalg.norm(omega[1]) * SPHERE / np.linalg.norm(full) / h
        burnt = (fuel[0] - fuel[1]) / SET.propellant(np.eye(SET.count)[0] * h)
        delivered[label] = (rates, burnt)
    print(f"\nsteps delivered (rates, propellant): {delivered}")
    np.testing.assert_allclose(delivered["3 × h"], (3 + 1 / 6, 3 + 1 / 3), rtol=1e-9)
    np.testing.assert_allclose(delivered["3 × h − 1 ps"], (3.0, 3.0), rtol=1e-9)

"""A thruster stuck off or on (rigidrot_gym.attitude.components.faults, applied in
rigidrot_gym.attitude.components.thrusters): on a sphere the body rates change by the closed
form Σ τ_k n_k h / J with the failing thruster's whole sub-steps replaced from the fault
period on, the propellant by F t/(Isp g₀) of what fired; torque requests keep the library's
modulation for the others; the drawn index uniform among the eight and repeating with the
seed; bad values refused naming the field. Then rigidrot_gym.control.thruster_faults: the
residual test's model against DOP853, the stuck pair flagged within a few periods and never in
healthy episodes, the reallocated forces against the closed form of the set's torque, and a
stuck-on thruster that only the reallocation recovers."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from scipy import stats
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.attitude.components import thrusters
from rigidrot_gym.attitude.scenario import find
from rigidrot_gym.attitude.settings import ScenarioError
from rigidrot_gym.attitude.vector_env import AttitudeVectorEnv
from rigidrot_gym.control import QuaternionFeedback
from rigidrot_gym.control.thruster_faults import OFF, ON, ThrusterFaultDetector, ThrusterReallocating, twins
from rigidrot_gym.physics.actuators import thrusters as model

ID = "RigidRot/Reorient-v0"
DT, SUBSTEPS = 0.2, 20
H = DT / SUBSTEPS  # the on-times' resolution, s
J = 0.1  # the sphere's moment, kg·m²
T_F = 0.5  # s: the first period at or after it starts at 3 Δt = 0.6 s
FIRST_FAULTY = 3
THRUSTERS = {"thruster_layout": "eight", "dt": DT, "substeps": SUBSTEPS}


def _env(**overrides):
    return gym.make(ID, **THRUSTERS, **overrides).unwrapped


def _set(env) -> model.ThrusterSet:
    return thrusters.thruster_set(env.scenario.propulsion)


@pytest.mark.parametrize("kind", ["off", "on"])
def test_a_stuck_thruster_on_a_sphere_turns_it_by_the_closed_form_of_what_fired(kind):
    """Constant on-times (whole sub-steps n_k of h = 10 ms), thruster 3 stuck from t_f = 0.5 s:
    after each period ω = ω₀ + Σ_periods Σ_k τ_k n_k h / J (J = j I: no gyroscopic torque; a
    constant torque per sub-step, which RK4 integrates exactly), with n_3 = 0 (off) or 20
    (on, the whole period) from period 3 on, before it as commanded; the propellant
    Σ F n_k h/(Isp g₀) of what fired, and ``thruster_on_times`` what fired."""
    env = _env(
        inertia=np.eye(3) * J,
        thruster_command="on_times",
        thruster_model="MONARC-1",
        thruster_fault=kind,
        thruster_fault_index=3,
        fault_time=T_F,
    )
    _, info = env.reset(seed=0, options={"rate": [0.0, 0.0, 0.0]})
    assert info["fault_time"] == T_F and info["fault_thruster"] == 3 and "fault_wheel" not in info
    s = _set(env)
    full = s.max_thrust[:, None] * s.torque_arms  # (8, 3) N·m, body frame
    commanded = np.array([5, 12, 0, 7, 3, 9, 20, 4])  # whole sub-steps (≥ the 20 ms minimum or none)
    action = (commanded * H / DT).astype(np.float32)
    w, burnt = env.body_rates.copy(), 0.0
    for period in range(8):
        fired = commanded.astype(float)
        if period >= FIRST_FAULTY:
            fired[3] = SUBSTEPS if kind == "on" else 0
        _, _, _, _, info = env.step(action)
        w = w + (full * fired[:, None] * H).sum(axis=0) / J
        burnt += (s.max_thrust * fired * H).sum() / (s.isp * model.G0)
        np.testing.assert_allclose(info["thruster_on_times"], fired * H, rtol=0, atol=1e-15)
        np.testing.assert_allclose(env.body_rates, w, rtol=1e-13, atol=1e-16)
        assert info["propellant"] == pytest.approx(burnt, rel=1e-13)
        assert info["fault_happened"] == ((period + 1) * DT >= T_F)
    if kind == "on":  # a stuck-on thruster burns F Δt/(Isp g₀) a period
        per_period = s.max_thrust[3] * DT / (s.isp * model.G0)
        nominal = (s.max_thrust * commanded * H).sum() / (s.isp * model.G0)
        extra = per_period - s.max_thrust[3] * commanded[3] * H / (s.isp * model.G0)
        assert info["propellant"] == pytest.approx(8 * nominal + 5 * extra, rel=1e-13)


@pytest.mark.parametrize("kind", ["off", "on"])
def test_torque_requests_keep_the_librarys_modulation_and_the_stuck_thruster_does_what_it_does(kind):
    """Torque requests through the mapping and the remainder modulation: every thruster's
    on-times are the library's (map_forces, remainder_on_times: the flight software's, whose
    memory does not know of the fault) cut and rounded to whole sub-steps, but thruster 5's
    from period 3 on: none (off), the whole period (on)."""
    env = _env(thruster_fault=kind, thruster_fault_index=5, fault_time=T_F)
    env.reset(seed=1)
    s = _set(env)
    rng = np.random.default_rng(11)
    actions = rng.uniform(-1, 1, (20, 3)) * rng.choice([0.05, 0.3, 1.0], (20, 1))
    forces = np.array(
        [model.map_forces(r, s) for r in actions * thrusters.max_torque(env.scenario.propulsion)]
    )
    expected = np.floor(np.minimum(model.remainder_on_times(forces, s, DT), DT) / H + 0.5) * H
    expected[FIRST_FAULTY:, 5] = DT if kind == "on" else 0.0
    got = []
    for a in actions:
        _, _, _, _, info = env.step(a.astype(np.float32))
        got.append(info["thruster_on_times"].copy())
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)


def test_the_drawn_thruster_and_time_are_uniform_and_repeat_with_the_seed():
    n = 800
    env = AttitudeVectorEnv(n, ID, **THRUSTERS, thruster_fault="off", fault_window=[5.0, 25.0])
    _, info = env.reset(seed=7)
    times, index = info["fault_time"], info["fault_thruster"]
    assert times.min() >= 5.0 and times.max() < 25.0
    assert stats.kstest((times - 5.0) / 20.0, "uniform").pvalue > 1e-3
    assert index.min() >= 0 and index.max() <= 7
    counts = np.bincount(index, minlength=8)
    assert counts.size == 8 and stats.chisquare(counts).pvalue > 1e-3
    _, again = env.reset(seed=7)
    np.testing.assert_array_equal(again["fault_time"], times)
    np.testing.assert_array_equal(again["fault_thruster"], index)
    env.close()


def test_the_column_shows_the_stuck_thruster_when_asked():
    env = _env(thruster_fault="on", thruster_fault_index=6, fault_time=T_F, faults_hidden=False)
    assert env.observation_space.high[-1] == 8.0
    obs, _ = env.reset(seed=0)
    assert obs[-1] == 0.0
    for k in range(1, 6):
        obs, *_ = env.step(np.zeros(3, dtype=np.float32))
        assert obs[-1] == (7.0 if k * DT >= T_F else 0.0)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"thruster_fault": "off"}, r"faults.thruster = 'off' needs thrusters.layout"),
        ({**THRUSTERS, "thruster_fault": "open"}, r"thruster_fault: expected one of \['none', 'off', 'on'\]"),
        ({**THRUSTERS, "thruster_fault": "on", "thruster_fault_index": 8}, r"thruster_fault_index: expected"),
        (
            {**THRUSTERS, "thruster_fault": "on", "thruster_fault_index": -2},
            r"thruster_fault_index: expected",
        ),
    ],
)
def test_bad_values_are_refused_naming_the_field(overrides, message):
    with pytest.raises(ScenarioError, match=message):
        gym.make(ID, **overrides)


# ----------------------------------------------------------------------- detection and reallocation

SLEW = "RigidRot/ThrusterSlew-v0"


def _slew(kind: str, **overrides):
    fault = {} if kind == "none" else {"thruster_fault": kind}
    return gym.make(SLEW, thruster_command="on_times", **fault, **overrides)


def _fly(env, controller, seed: int):
    """One episode: the last info and the actions sent (steps, 8)."""
    obs, info = env.reset(seed=seed)
    controller.reset(1)
    actions, done = [], False
    while not done:
        action = controller.predict(obs)[0]
        obs, _, terminated, truncated, info = env.step(action)
        actions.append(action)
        done = terminated or truncated
    return info, np.array(actions)


def _controller(env, detect: bool) -> ThrusterReallocating:
    scenario = env.unwrapped.scenario
    return ThrusterReallocating.for_scenario(
        QuaternionFeedback.for_scenario(scenario, 0.5), scenario, detect=detect
    )


def test_every_thruster_of_the_layout_has_a_twin_the_residual_cannot_tell_apart():
    s = thrusters.thruster_set(find(SLEW).propulsion)
    groups = [g.tolist() for g in twins(s)]
    assert groups == [[0, 7], [1, 6], [2, 5], [3, 4]]
    for a, b in groups:  # the same torque r × d: parallel and equal
        np.testing.assert_allclose(s.torque_arms[a], s.torque_arms[b], rtol=0, atol=1e-15)


@pytest.mark.parametrize("kind", [OFF, ON])
def test_the_reallocated_forces_give_the_request_whichever_twin_failed(kind):
    """For each pair flagged, random requests: the forces as the thrusters fire them (the
    failed twin none, or F_max stuck on) give Σ F_k (r_k × d_k) = τ_req (closed form of the
    set's arms), each force in [0, F_max]."""
    s = thrusters.thruster_set(find(SLEW).propulsion)
    controller = ThrusterReallocating(None, s, DT, thrusters.max_torque(find(SLEW).propulsion))
    rng = np.random.default_rng(3)
    for pair in twins(s):
        flagged = np.isin(np.arange(8), pair)
        for request in rng.uniform(-3e-3, 3e-3, (5, 3)):
            for failed in pair:
                forces = controller.forces(request, flagged, kind)
                assert np.all(forces >= 0.0) and np.all(forces <= s.max_thrust * (1 + 1e-12))
                forces[failed] = 0.0 if kind == OFF else s.max_thrust[failed]
                np.testing.assert_allclose(forces @ s.torque_arms, request, rtol=0, atol=1e-15)


def test_the_prediction_follows_dop853_over_the_substeps():
    """The test's model: an asymmetric body under random whole sub-steps, RK4 a step per
    sub-step against DOP853 (rtol 1e-12) taking each sub-step's torque on its own: within
    1e-12 of the change, far below the float32 rounding the threshold allows."""
    s = thrusters.thruster_set(find(SLEW).propulsion)
    turn = Rotation.from_euler("xyz", [10, 25, -40], degrees=True).as_matrix()
    inertia = turn @ np.diag([0.08, 0.1, 0.05]) @ turn.T
    detector = ThrusterFaultDetector(s, inertia, DT, SUBSTEPS, 1.0)
    torques = s.max_thrust[:, None] * s.torque_arms
    rng = np.random.default_rng(5)
    w0 = np.array([0.05, -0.1, 0.08])
    whole = rng.integers(0, SUBSTEPS + 1, 8).astype(float)
    w = w0.copy()
    for m in range(SUBSTEPS):
        tau = torques[whole > m].sum(axis=0)
        w = solve_ivp(
            lambda t, x, tau=tau: np.linalg.solve(inertia, tau - np.cross(x, inertia @ x)),
            (0, H),
            w,
            method="DOP853",
            rtol=1e-12,
            atol=1e-15,
        ).y[:, -1]
    got = detector.predict(w0, whole)
    assert np.linalg.norm(got - w) < 1e-12 * np.linalg.norm(w - w0)


@pytest.mark.parametrize("kind", ["off", "on"])
def test_the_residual_test_flags_the_stuck_pair_as_soon_as_two_periods_show_it(kind):
    """Thruster drawn, stuck at a time drawn in [1, 10] s (the fault acts from period p_f, the
    first at or after it): the test flags the failed thruster's pair and the kind once two
    periods have shown it (``confirm``), never before: stuck on, after periods p_f and p_f + 1;
    stuck off, after the second period from p_f in which the controller fired it (a thruster
    stuck off that is not commanded shows nothing: where it is fired in one period at most
    after the fault, nothing is flagged)."""
    env = _slew(kind, fault_window=[1.0, 10.0])
    controller = _controller(env, detect=True)
    for seed in (10000, 10001, 10002, 10017):
        info, actions = _fly(env, controller, seed)
        d, k = controller.detector, int(info["fault_thruster"])
        first = int(np.ceil(info["fault_time"] / DT - 1e-9))  # p_f
        fired = [n for n in range(first, len(actions)) if d.whole_substeps(actions[n])[0, k] > 0]
        shown = first + 1 if kind == "on" else (fired[1] if len(fired) > 1 else None)
        if shown is None:
            assert not d.flagged.any(), seed
            continue
        pair = next(g.tolist() for g in twins(d.set) if k in g)
        assert np.flatnonzero(d.flagged[0]).tolist() == pair, seed
        assert d.kind[0] == (OFF if kind == "off" else ON)
        assert d.flagged_at[0] == shown + 1, (seed, d.flagged_at[0], shown)


def test_the_residual_test_flags_nothing_in_healthy_episodes():
    env = _slew("none")
    controller = _controller(env, detect=True)
    for seed in (10000, 10001, 10002, 10003):
        info, _ = _fly(env, controller, seed)
        assert info["is_success"] and not controller.detector.flagged.any(), seed


def test_reallocation_recovers_a_stuck_on_thruster_that_the_plain_mapping_cannot():
    """Stuck on at a drawn time: the plain mapping (all eight, what the torque command does)
    never settles (the stuck thruster's torque against a PD law: a steady error far beyond
    0.5°); the mapping after detection cancels it and slews."""
    env = _slew("on", fault_window=[1.0, 10.0])
    for seed in (10000, 10001):
        plain, _ = _fly(env, _controller(env, detect=False), seed)
        reallocated, _ = _fly(env, _controller(env, detect=True), seed)
        assert not plain["is_success"] and reallocated["is_success"], seed


def test_the_reallocation_refuses_what_it_cannot_command():
    law = QuaternionFeedback.for_scenario(find(SLEW), 0.5)
    with pytest.raises(ValueError, match="on-times"):
        ThrusterReallocating.for_scenario(law, find(SLEW))  # torque commands
    with pytest.raises(ValueError, match="scenario must have thrusters"):
        ThrusterFaultDetector.for_scenario(find(ID))
    with pytest.raises(ValueError, match="confirm must be an integer ≥ 1, got 0"):
        ThrusterFaultDetector.for_scenario(find(SLEW), confirm=0)


def test_rows_of_a_vector_env_are_tested_each_on_its_own():
    """Four bodies, thruster drawn per body, stuck on at 3 s (period 15): each row's pair
    flagged after period 16, as in one env; a row starting a new episode (``episode_start``)
    is forgotten, the others kept."""
    env = AttitudeVectorEnv(4, SLEW, thruster_command="on_times", thruster_fault="on", fault_time=3.0)
    scenario = env.scenario
    controller = ThrusterReallocating.for_scenario(QuaternionFeedback.for_scenario(scenario, 0.5), scenario)
    obs, info = env.reset(seed=3)
    start = np.ones(4, dtype=bool)
    for _ in range(20):
        obs, _, _, _, info = env.step(controller.predict(obs, episode_start=start)[0])
        start = np.zeros(4, dtype=bool)
    controller.predict(obs)
    d = controller.detector
    for i, k in enumerate(info["fault_thruster"]):
        pair = next(g.tolist() for g in twins(d.set) if k in g)
        assert np.flatnonzero(d.flagged[i]).tolist() == pair and d.kind[i] == ON and d.flagged_at[i] == 17
    controller.predict(obs, episode_start=np.array([False, True, False, False]))
    assert not d.flagged[1].any() and d.kind[1] == 0 and d.flagged[[0, 2, 3]].any(axis=1).all()
    env.close()

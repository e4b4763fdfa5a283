"""Reaction-wheel motor and friction (rigidrot_gym.physics.actuators.reaction_wheels): closed forms of the
friction, the command rules on a grid, the compiled path against numpy, the argument checks,
and wheel-speed histories side by side with Basilisk's reactionWheelStateEffector against a
DOP853 solution of J_s Ω̇ = u + τ_f built from our functions."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from rigidrot_gym.physics.actuators import reaction_wheels as rw
from rigidrot_gym.physics.actuators.reaction_wheels import (
    BCT_RWP015,
    HONEYWELL_HR16,
    NANOAVIONICS_RW0,
    WheelModel,
    friction_torque,
    motor_torque,
    stribeck_engaged,
)

# A wheel with every friction term on (HR16's inertia and Coulomb friction, the rest chosen).
STRIBECK = WheelModel(
    js=HONEYWELL_HR16.js,
    u_max=0.2,
    u_min=1e-5,
    omega_max=6000 * rw.RPM,
    coulomb=5e-4,
    static=1.5e-3,
    beta_static=0.5,
    viscous=2e-5,
)


def friction(model: WheelModel, omega, stribeck=False):
    m = model
    return friction_torque(
        omega, stribeck, m.coulomb, m.static, m.beta_static, m.viscous, m.omega_limit_cycle
    )


# -- closed forms --------------------------------------------------------------------------


@pytest.mark.parametrize("stribeck", [False, True])
def test_friction_is_odd_and_resists_the_motion(stribeck):
    omega = np.concatenate([np.geomspace(1e-7, 700.0, 2001), [0.0]])
    tau = friction(STRIBECK, omega, stribeck)
    np.testing.assert_array_equal(friction(STRIBECK, -omega, stribeck), -tau)
    assert np.all(tau[:-1] < 0.0) and tau[-1] == 0.0


def test_stribeck_term_peaks_at_beta_with_the_static_excess():
    """Basilisk's Stribeck term √(2e)(τ_st − τ_c) e^(−x²) x, x = Ω/(√2 β_st), peaks at x = 1/√2:
    at Ω = β_st, with magnitude τ_st − τ_c. Alone (τ_c = c_v = 0) the friction peaks at τ_st."""
    alone = WheelModel(
        js=0.1, u_max=1.0, u_min=0.0, omega_max=100.0, coulomb=0.0, static=2e-3, beta_static=0.3
    )
    omega = np.linspace(0.0, 3.0, 300_001)  # steps of 1e-5 rad/s
    tau = -friction(alone, omega, True)
    k = int(np.argmax(tau))
    assert abs(omega[k] - 0.3) <= 1e-5
    assert abs(tau[k] - 2e-3) < 1e-14
    assert abs(-friction(alone, 0.3, True) - 2e-3) < 1e-18
    # With Coulomb and viscous friction, at Ω = β_st: (τ_st − τ_c) + τ_c tanh(10) + c_v β_st.
    m = STRIBECK
    expected = (m.static - m.coulomb) + m.coulomb * math.tanh(10.0) + m.viscous * m.beta_static
    assert abs(-friction(m, m.beta_static, True) - expected) < 1e-18


def test_stribeck_tends_to_coulomb_and_viscous_far_from_rest():
    omega = np.array([20.0, 50.0, 300.0]) * STRIBECK.beta_static
    coulomb_law = -STRIBECK.coulomb - STRIBECK.viscous * omega
    np.testing.assert_allclose(friction(STRIBECK, omega, True), coulomb_law, rtol=0, atol=1e-18)
    np.testing.assert_array_equal(friction(STRIBECK, omega, False), coulomb_law)


@pytest.mark.parametrize("stribeck", [False, True])
def test_below_the_limit_cycle_speed_the_friction_is_a_line_through_zero(stribeck):
    lc = STRIBECK.omega_limit_cycle
    at_lc = friction(STRIBECK, lc, stribeck)
    omega = np.linspace(-lc, lc, 41)[1:-1]
    np.testing.assert_allclose(friction(STRIBECK, omega, stribeck), at_lc / lc * omega, rtol=1e-15, atol=0)
    # Continuous at ω_lc: the line meets the law there.
    assert abs(friction(STRIBECK, lc * (1 - 1e-12), stribeck) - at_lc) < 1e-15


def test_stribeck_needs_a_positive_beta():
    off = WheelModel(
        js=0.1, u_max=1.0, u_min=0.0, omega_max=100.0, coulomb=1e-3, static=0.0, beta_static=-1.0
    )
    omega = np.linspace(-1.0, 1.0, 11)
    np.testing.assert_array_equal(friction(off, omega, True), friction(off, omega, False))


def test_motor_torque_rules_on_a_grid():
    m = HONEYWELL_HR16
    u_cmd = np.concatenate([np.linspace(-0.5, 0.5, 401), [1e-5, -1e-5, 0.99e-5, -0.99e-5, 0.2, -0.2]])
    omega = np.array([-700.0, -m.omega_max, -m.omega_max * (1 - 1e-15), -10.0, 0.0, 10.0, m.omega_max, 700.0])
    U, W = np.meshgrid(u_cmd, omega)
    u = motor_torque(U, W, m.u_max, m.u_min, m.omega_max)
    clipped = np.clip(U, -m.u_max, m.u_max)
    assert np.all(np.abs(u) <= m.u_max)
    # Saturation, then the deadband on the saturated command (1e-5 itself passes: strict <).
    fast = np.abs(W) >= m.omega_max
    free = ~fast
    np.testing.assert_array_equal(u[free], np.where(np.abs(clipped) < m.u_min, 0.0, clipped)[free])
    # At or beyond Ω_max the motor may slow the wheel, not speed it up.
    slowing = fast & (W * clipped < 0) & (np.abs(clipped) >= m.u_min)
    np.testing.assert_array_equal(u[slowing], clipped[slowing])
    assert np.all(u[fast & (W * clipped >= 0)] == 0.0)
    assert motor_torque(0.3, 0.0, m.u_max, m.u_min, m.omega_max) == 0.2
    assert motor_torque(-0.3, m.omega_max, m.u_max, m.u_min, m.omega_max) == -0.2
    assert motor_torque(0.3, m.omega_max, m.u_max, m.u_min, m.omega_max) == 0.0
    assert motor_torque(0.1, m.omega_max * (1 - 1e-15), m.u_max, m.u_min, m.omega_max) == 0.1


def test_no_limits_with_infinite_u_max_and_omega_max():
    assert motor_torque(1e3, 1e6, math.inf, 0.0, math.inf) == 1e3


def test_stribeck_switch():
    lc, beta = 1e-4, 0.5
    on = stribeck_engaged(False, 0.5e-5, 0.0, beta, lc)  # within 0.1 ω_lc of rest
    assert on and not stribeck_engaged(False, 2e-5, 0.0, beta, lc)
    assert not stribeck_engaged(False, 0.0, 0.0, -1.0, lc)  # off without β > 0
    assert stribeck_engaged(True, 3.0, 2.9, beta, lc)  # speeding up: stays
    assert stribeck_engaged(True, -3.0, -2.9, beta, lc)
    assert stribeck_engaged(True, 3.0, 3.0, beta, lc)  # no change: stays
    assert not stribeck_engaged(True, 3.0, 3.1, beta, lc)  # slowing: broken free
    assert not stribeck_engaged(True, -3.0, -3.1, beta, lc)
    assert not stribeck_engaged(False, 3.0, 2.9, beta, lc)  # once off, off away from rest


# -- compiled path -------------------------------------------------------------------------


@numba.njit
def _compiled(u_cmd, omega, before, flag, m):
    u_max, u_min, omega_max, coulomb, static, beta, viscous, lc = m
    u = np.empty(u_cmd.size)
    f = np.empty(u_cmd.size)
    s = np.empty(u_cmd.size, dtype=np.bool_)
    for i in range(u_cmd.size):
        u[i] = motor_torque(u_cmd[i], omega[i], u_max, u_min, omega_max)
        s[i] = stribeck_engaged(flag[i], omega[i], before[i], beta, lc)
        f[i] = friction_torque(omega[i], s[i], coulomb, static, beta, viscous, lc)
    return u, f, s


@pytest.mark.parametrize("model", [STRIBECK, HONEYWELL_HR16])
def test_compiled_equals_numpy_bit_for_bit(model):
    rng = np.random.default_rng(3)
    n = 20_000
    omega = np.concatenate(
        [
            rng.uniform(-800.0, 800.0, n // 2),
            rng.normal(0.0, 3e-4, n // 2 - 4),
            [0.0, -0.0, 1e-4, model.omega_max],
        ]
    )
    u_cmd = rng.uniform(-0.3, 0.3, n) * np.where(rng.random(n) < 0.2, 1e-4, 1.0)
    before = omega - rng.normal(0.0, 1e-3, n)
    flag = rng.random(n) < 0.5
    m = model
    fields = (
        m.u_max,
        m.u_min,
        m.omega_max,
        m.coulomb,
        m.static,
        m.beta_static,
        m.viscous,
        m.omega_limit_cycle,
    )
    u_jit, f_jit, s_jit = _compiled(u_cmd, omega, before, flag, fields)
    u_np = motor_torque(u_cmd, omega, m.u_max, m.u_min, m.omega_max)
    s_np = stribeck_engaged(flag, omega, before, m.beta_static, m.omega_limit_cycle)
    f_np = friction_torque(omega, s_np, m.coulomb, m.static, m.beta_static, m.viscous, m.omega_limit_cycle)
    np.testing.assert_array_equal(s_jit, s_np)
    assert u_jit.tobytes() == np.asarray(u_np, dtype=float).tobytes()
    # Bit for bit where only +, −, ×, /, sign and comparisons enter: the Coulomb law and the line
    # below ω_lc. The Stribeck law calls exp and tanh: compiled, the C library's; numpy takes its
    # own SIMD routines on CPUs with AVX-512, a few ulp from the C library's.
    exact = ~s_np | (np.abs(omega) < m.omega_limit_cycle)
    assert f_jit[exact].tobytes() == f_np[exact].tobytes()
    ulps = np.abs(f_jit - f_np) / np.spacing(np.abs(f_np))
    differ = np.count_nonzero(ulps)
    print(
        f"\n{np.count_nonzero(exact)} bitwise; Stribeck law: {differ} differ, by at most {ulps.max():.0f} ulp"
    )
    assert ulps.max() <= 4.0
    assert s_np.any() == model.stribeck and (~s_np).any()


# -- arguments and presets -----------------------------------------------------------------

GOOD = dict(
    js=0.1, u_max=0.2, u_min=1e-5, omega_max=600.0, coulomb=5e-4, static=1e-3, beta_static=0.5, viscous=1e-5
)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("js", 0.0),
        ("js", -1.0),
        ("js", math.inf),
        ("js", "0.1"),
        ("u_max", 0.0),
        ("u_max", math.nan),
        ("u_max", True),
        ("u_min", -1e-6),
        ("u_min", 0.3),
        ("omega_max", -1.0),
        ("omega_max", None),
        ("coulomb", -1e-4),
        ("coulomb", math.nan),
        ("static", 1e-4),
        ("static", -1.0),
        ("beta_static", 0.0),
        ("beta_static", math.inf),
        ("viscous", -1e-6),
        ("omega_limit_cycle", 0.0),
    ],
)
def test_each_field_is_checked(field, value):
    with pytest.raises(ValueError, match=field):
        WheelModel(**{**GOOD, field: value})


def test_good_fields_become_floats_and_limits_may_be_infinite():
    m = WheelModel(**{**GOOD, "js": 1, "u_max": math.inf, "omega_max": math.inf})
    assert type(m.js) is float and m.u_max == math.inf and m.stribeck
    assert not WheelModel(
        **{**GOOD, "static": 0.0, "beta_static": -1.0}
    ).stribeck  # τ_st < τ_c: fine when off


def test_presets_are_valid_wheels():
    for preset in (HONEYWELL_HR16, BCT_RWP015, NANOAVIONICS_RW0, *map(rw.honeywell_hr16, (100.0, 75.0))):
        assert WheelModel(**vars(preset)) == preset
        assert not preset.stribeck
    assert HONEYWELL_HR16.max_momentum == pytest.approx(50.0, rel=1e-15)
    assert BCT_RWP015.max_momentum == pytest.approx(0.015, rel=1e-15)
    assert NANOAVIONICS_RW0.max_momentum == pytest.approx(0.020, rel=1e-15)
    with pytest.raises(ValueError, match="max_momentum"):
        rw.honeywell_hr16(60.0)


# -- side by side with Basilisk ------------------------------------------------------------

DT = 0.01  # s, Basilisk's step (RK4)
HUB = 1000.0  # kg·m², the hub's inertia about every axis (including the wheel's J_s)


def _factory_wheel(preset: str, **kwargs):
    simIncludeRW = pytest.importorskip("Basilisk.utilities.simIncludeRW")
    factory = simIncludeRW.rwFactory()
    wheel = factory.create(preset, [0.0, 0.0, 1.0], useRWfriction=True, useMinTorque=True, **kwargs)
    return factory, wheel


@pytest.mark.engines
@pytest.mark.parametrize(
    ("preset", "model", "kwargs"),
    [
        ("Honeywell_HR16", HONEYWELL_HR16, {"maxMomentum": 50.0}),
        ("Honeywell_HR16", rw.honeywell_hr16(100.0), {"maxMomentum": 100.0}),
        ("BCT_RWP015", BCT_RWP015, {}),
        ("NanoAvionics_RW0", NANOAVIONICS_RW0, {}),
    ],
)
def test_presets_match_basilisks_factory(preset, model, kwargs):
    _, wheel = _factory_wheel(preset, **kwargs)
    got = (wheel.Js, wheel.u_max, wheel.u_min, wheel.Omega_max, wheel.fCoulomb, wheel.fStatic)
    assert got == (model.js, model.u_max, model.u_min, model.omega_max, model.coulomb, model.static)
    assert (wheel.betaStatic, wheel.cViscous, wheel.omegaLimitCycle) == (
        model.beta_static,
        model.viscous,
        model.omega_limit_cycle,
    )


def basilisk_run(preset, segments, omega0_rpm, create=None):
    """Wheel speed (rad/s) at Basilisk's ticks 0, DT, …, one wheel along body z on a hub of
    inertia HUB·1 (RK4, step DT), and the total angular momentum (our reading of the states
    and Basilisk's own). ``segments``: (duration, command) pairs; each command is written
    before its segment runs, so that with the effector ahead of the hub in the task it drives
    exactly the steps of that segment."""
    from Basilisk.architecture import messaging
    from Basilisk.simulation import reactionWheelStateEffector, spacecraft, svIntegrators
    from Basilisk.utilities import RigidBodyKinematics as rbk
    from Basilisk.utilities import SimulationBaseClass, macros

    factory, wheel = _factory_wheel(preset, Omega=float(omega0_rpm), **(create or {}))
    sim = SimulationBaseClass.SimBaseClass()
    sim.CreateNewProcess("proc").addTask(sim.CreateNewTask("task", macros.sec2nano(DT)))
    sc = spacecraft.Spacecraft()
    sc.hub.mHub = 100.0
    sc.hub.IHubPntBc_B = (HUB * np.eye(3)).tolist()
    effector = reactionWheelStateEffector.ReactionWheelStateEffector()
    factory.addToSpacecraft("wheels", effector, sc)
    integrator = svIntegrators.svIntegratorRK4(sc)
    sc.setIntegrator(integrator)
    command = messaging.ArrayMotorTorqueMsgPayload()
    command.motorTorque = [0.0]
    message = messaging.ArrayMotorTorqueMsg().write(command)
    effector.rwMotorCmdInMsg.subscribeTo(message)
    sim.AddModelToTask("task", effector)  # ahead of the hub: see the notes' timing trap
    sim.AddModelToTask("task", sc)
    speeds, states = effector.rwSpeedOutMsg.recorder(), sc.scStateOutMsg.recorder()
    momentum = sc.logger("totRotAngMomPntC_N")
    for recorder in (speeds, states, momentum):
        sim.AddModelToTask("task", recorder)
    sim.InitializeSimulation()
    ticks = 0
    for duration, u in segments:
        command.motorTorque = [u]
        message.write(command)
        ticks += round(duration / DT)
        sim.ConfigureStopTime(ticks * macros.sec2nano(DT))
        sim.ExecuteSimulation()
    omega = speeds.wheelSpeeds[:, 0].copy()
    hub = states.omega_BN_B
    h_body = HUB * hub + np.outer(omega, [0.0, 0.0, wheel.Js])
    h_ours = np.array([rbk.MRP2C(s).T @ h for s, h in zip(states.sigma_BN, h_body, strict=True)])
    assert omega.size == ticks + 1
    return omega, hub, h_ours, np.asarray(momentum.totRotAngMomPntC_N), wheel


def reference(model, omega0, segments, stribeck=False, per_step=False):
    """Our model's wheel speed at the ticks: DOP853 (rtol 1e-13) of J_eff Ω̇ = u + τ_f(Ω),
    J_eff = J_s (1 − J_s/I) (one wheel on a principal axis: I ω + J_s Ω is constant). u is the
    motor torque of each segment's command, evaluated (as Basilisk does) at the speed at the
    start of each step when ``per_step``, else once per segment (no speed limit in reach)."""
    j_eff = model.js * (1.0 - model.js / HUB)

    def rhs(t, y, u):
        return [(u + friction(model, y[0], stribeck)) / j_eff]

    out, y = [np.array([omega0])], omega0
    for duration, u_cmd in segments:
        n = round(duration / DT)
        pieces = [(DT, 1)] * n if per_step else [(DT, n)]
        for h, k in pieces:
            u = motor_torque(u_cmd, y, model.u_max, model.u_min, model.omega_max)
            grid = h * np.arange(1, k + 1)
            sol = solve_ivp(
                rhs, (0.0, grid[-1]), [y], "DOP853", grid, args=(float(u),), rtol=1e-13, atol=1e-15
            )
            assert sol.success
            out.append(sol.y[0])
            y = sol.y[0, -1]
    return np.concatenate(out)


def basilisk_rk4(model, omega0, segments, latch=False):
    """Basilisk's own scheme with our functions: RK4 at step DT of J_eff Ω̇ = u + τ_f, u from
    :func:`motor_torque` at each tick (Ω at the step's start, held over the step), and, with
    ``latch``, the friction law switched by :func:`stribeck_engaged` at every stage, as
    Basilisk's updateContributions does. Returns the speeds at the ticks and the switch's state
    at each step's last stage."""
    m = model
    j_eff = m.js * (1.0 - m.js / HUB)
    y, engaged, out, flags = float(omega0), False, [float(omega0)], []
    for duration, u_cmd in segments:
        for _ in range(round(duration / DT)):
            u, before = float(motor_torque(u_cmd, y, m.u_max, m.u_min, m.omega_max)), y
            slopes = []
            for c in (0.0, 0.5, 0.5, 1.0):
                w = y + c * DT * (slopes[-1] if slopes else 0.0)
                if latch:
                    engaged = bool(stribeck_engaged(engaged, w, before, m.beta_static, m.omega_limit_cycle))
                slopes.append((u + float(friction(m, w, engaged))) / j_eff)
            k1, k2, k3, k4 = slopes
            y = y + DT / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            out.append(y)
            flags.append(engaged)
    return np.array(out), np.array(flags)


def _momentum_drift(h, wheel, omega):
    """The total angular momentum's largest change, relative to the wheel's largest momentum."""
    return np.max(np.linalg.norm(h - h[0], axis=1)) / (wheel.Js * np.max(np.abs(omega)))


@pytest.mark.engines
def test_spin_down_against_basilisk():
    """No command; HR16 (50 N·m·s) with its Coulomb friction 5e-4 N·m and a viscous 1e-3 N·m·s
    (chosen: the preset has none), from 50 rpm to rest at t ≈ 194 s and on to 220 s."""
    viscous = 1e-3
    model = WheelModel(**{**vars(HONEYWELL_HR16), "viscous": viscous})
    segments = [(220.0, 0.0)]
    create = {"maxMomentum": 50.0, "cViscous": viscous}
    omega, hub, h_ours, h_bsk, wheel = basilisk_run("Honeywell_HR16", segments, 50.0, create)
    ours = reference(model, 50.0 * rw.RPM, segments)
    mirror, _ = basilisk_rk4(model, 50.0 * rw.RPM, segments)
    # RK4's truncation error is largest where the wheel enters the band |Ω| < ω_lc: there the
    # friction's slope jumps from c_v to (τ_c + c_v ω_lc)/ω_lc, a kink that RK4 steps over.
    band = np.argmax(np.abs(ours) < model.omega_limit_cycle)
    err, err_before, err_rk4 = (
        np.max(np.abs(d)) for d in (omega - ours, (omega - ours)[:band], omega - mirror)
    )
    drift = _momentum_drift(h_ours, wheel, omega), _momentum_drift(h_bsk, wheel, omega)
    print(
        f"\nspin-down: vs DOP853 max |ΔΩ| {err:.2e} rad/s ({err_before:.2e} before the band's entry at "
        f"t = {band * DT:.2f} s), vs RK4 of our functions {err_rk4:.2e}; momentum drift: ours "
        f"{drift[0]:.1e}, Basilisk's {drift[1]:.1e}; hub |ω| ≤ {np.abs(hub).max():.1e}"
    )
    assert omega[-1] == pytest.approx(0.0, abs=1e-12) and omega[round(180 / DT)] > 0.05
    assert err_before < 1e-11 and err < 1e-6 and err_rk4 < 1e-14
    assert max(drift) < 1e-10


@pytest.mark.engines
def test_commanded_torques_against_basilisk():
    """HR16 (50 N·m·s, preset friction) from 500 rpm: commands 0.05, 0.3 (saturates at 0.2),
    5e-6 (below u_min: none), −0.1, −0.25 (saturates) and 0 N·m, 2 s each."""
    segments = [(2.0, 0.05), (2.0, 0.3), (2.0, 5e-6), (2.0, -0.1), (2.0, -0.25), (2.0, 0.0)]
    omega, _, h_ours, h_bsk, wheel = basilisk_run("Honeywell_HR16", segments, 500.0, {"maxMomentum": 50.0})
    ours = reference(HONEYWELL_HR16, 500.0 * rw.RPM, segments)
    mirror, _ = basilisk_rk4(HONEYWELL_HR16, 500.0 * rw.RPM, segments)
    err, err_rk4 = np.max(np.abs(omega - ours)), np.max(np.abs(omega - mirror))
    drift = _momentum_drift(h_ours, wheel, omega), _momentum_drift(h_bsk, wheel, omega)
    print(
        f"\ncommands: vs DOP853 max |ΔΩ| {err:.2e} rad/s, vs RK4 of our functions {err_rk4:.2e}; momentum "
        f"drift ours {drift[0]:.1e}, Basilisk's {drift[1]:.1e}"
    )
    # The saturated and dead-banded commands: the speed changes by (u − τ_c) Δt / J_eff.
    j_eff = HONEYWELL_HR16.js * (1 - HONEYWELL_HR16.js / HUB)
    steps = [omega[round(k / DT)] - omega[round((k - 2) / DT)] for k in (4.0, 6.0, 10.0)]
    expected = [(u - 5e-4) * 2.0 / j_eff for u in (0.2, 0.0, -0.2)]
    np.testing.assert_allclose(steps, expected, rtol=1e-10)
    assert err < 1e-11 and err_rk4 < 1e-12
    assert max(drift) < 1e-10


@pytest.mark.engines
def test_speed_limit_against_basilisk():
    """HR16 from 0.3 rad/s below Ω_max: +0.1 N·m drives it to Ω_max, where the motor stops at
    every tick that finds |Ω| ≥ Ω_max (the wheel overshoots within a step, then chatters about
    Ω_max); −0.1 N·m then acts at the limit (one way only), +0.1 N·m brings it back up."""
    m = HONEYWELL_HR16
    rpm0 = 6000.0 - 0.3 / rw.RPM
    segments = [(1.0, 0.1), (0.5, -0.1), (0.5, 0.1)]
    omega, _, _, _, _ = basilisk_run("Honeywell_HR16", segments, rpm0, {"maxMomentum": 50.0})
    ours = reference(m, rpm0 * rw.RPM, segments, per_step=True)
    mirror, _ = basilisk_rk4(m, rpm0 * rw.RPM, segments)
    err, err_rk4 = np.max(np.abs(omega - ours)), np.max(np.abs(omega - mirror))
    over = np.max(omega) - m.omega_max
    cut = np.count_nonzero(omega[: round(1.0 / DT)] >= m.omega_max)
    print(
        f"\nspeed limit: vs DOP853 max |ΔΩ| {err:.2e} rad/s, vs RK4 {err_rk4:.2e}; {cut} ticks cut off in "
        f"the first second, largest overshoot {over:.2e} rad/s (u_max DT/J_s = {m.u_max * DT / m.js:.2e})"
    )
    assert cut > 30 and 0.0 < over < 0.1 * DT / m.js
    assert omega[round(1.5 / DT)] < m.omega_max - 0.5 * 0.1 * 0.5 / m.js  # −0.1 N·m acted
    assert err < 1e-10 and err_rk4 < 1e-12


STRIBECK_CREATE = {"maxMomentum": 50.0, "fStatic": 1.5e-3, "betaStatic": 0.1, "cViscous": 2e-5}
STRIBECK_HR16 = WheelModel(**{**vars(HONEYWELL_HR16), "static": 1.5e-3, "beta_static": 0.1, "viscous": 2e-5})


@pytest.mark.engines
def test_stribeck_spin_up_from_rest_against_basilisk():
    """HR16 with Stribeck friction on (τ_st 1.5e-3 N·m, β_st 0.1 rad/s, c_v 2e-5 N·m·s, chosen),
    from rest: the law engages at the first stage (|Ω| < 0.1 ω_lc) and holds while the wheel
    speeds up under 3e-3 N·m for 20 s; once the command stops and the wheel slows, Coulomb's."""
    segments = [(20.0, 3e-3), (10.0, 0.0)]
    omega, _, h_ours, h_bsk, wheel = basilisk_run("Honeywell_HR16", segments, 0.0, STRIBECK_CREATE)
    up = round(20.0 / DT) + 1
    ours_up = reference(STRIBECK_HR16, 0.0, segments[:1], stribeck=True)
    ours_down = reference(STRIBECK_HR16, ours_up[-1], segments[1:])[1:]
    ours = np.concatenate([ours_up, ours_down])
    coulomb_only = reference(STRIBECK_HR16, 0.0, segments)
    mirror, flags = basilisk_rk4(STRIBECK_HR16, 0.0, segments, latch=True)
    err, err_rk4 = np.max(np.abs(omega - ours)), np.max(np.abs(omega - mirror))
    drift = _momentum_drift(h_ours, wheel, omega), _momentum_drift(h_bsk, wheel, omega)
    print(
        f"\nStribeck spin-up: vs DOP853 max |ΔΩ| {err:.2e} rad/s, vs RK4 with the switch {err_rk4:.2e}; "
        f"the Coulomb law alone would be {np.max(np.abs(omega - coulomb_only)):.2e} off; switch on for "
        f"{np.count_nonzero(flags)} steps; momentum drift {drift[0]:.1e}, {drift[1]:.1e}"
    )
    assert flags[: up - 1].all() and not flags[up:].any()
    assert np.max(np.abs(omega - coulomb_only)) > 1e-3
    assert err < 1e-9 and err_rk4 < 1e-12
    assert max(drift) < 1e-10


@pytest.mark.engines
def test_stribeck_through_zero_against_basilisk():
    """The same wheel from +0.5 rad/s under −3e-3 N·m for 30 s, through zero near t = 16 s.
    The Stribeck law engages only if an RK4 stage lands within 0.1 ω_lc = 1e-5 rad/s of zero;
    with steps of ΔΩ ≈ 4e-4 rad/s that is up to chance: here none does, and the wheel crosses
    under the Coulomb law. Our switch, run at Basilisk's stages, tells the same."""
    segments = [(30.0, -3e-3)]
    omega, _, _, _, _ = basilisk_run("Honeywell_HR16", segments, 0.5 / rw.RPM, STRIBECK_CREATE)
    mirror, flags = basilisk_rk4(STRIBECK_HR16, 0.5, segments, latch=True)
    ours = reference(STRIBECK_HR16, 0.5, segments)
    cross = np.argmax(omega < 0.0)
    band = np.argmax(np.abs(ours) < STRIBECK_HR16.omega_limit_cycle)
    err_rk4 = np.max(np.abs(omega - mirror))
    err_before, err = np.max(np.abs(omega - ours)[:band]), np.max(np.abs(omega - ours))
    print(
        f"\nthrough zero (t = {cross * DT:.2f} s): switch on for {np.count_nonzero(flags)} steps; vs RK4 "
        f"with the switch {err_rk4:.2e}; vs DOP853 (Coulomb) {err_before:.2e} before |Ω| < ω_lc, {err:.2e} "
        f"after (RK4 stepping over the band and the sign change of τ_c within a step)"
    )
    assert not flags.any() and 1000 < cross < 2000
    assert err_rk4 < 1e-12 and err_before < 1e-11 and err < 1e-3

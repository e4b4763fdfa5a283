"""Real reaction wheels in the env (``wheel_model`` = a Basilisk preset): control periods side by side
with Basilisk's ``reactionWheelStateEffector`` (RW0 on a 6U body through saturation, deadband, the
speed limit and a spin-down; HR16 on a large body spun up and left to friction), the world-frame
angular momentum with random commands (friction is internal), and the scenario's checks and
observation columns.

Basilisk runs with its task step equal to the env's control period and the env at ``substeps=1``,
so both hold the motor torque over the same interval; the command message is written before each
period (the effector ahead of the hub: a command read at tick t_k drives the step (t_{k-1}, t_k]).
Basilisk's hub inertia includes the wheels' spin inertia (J + Σ J_s ĝ ĝᵀ); the env's ``inertia``
excludes it. The env's wheel state is the absolute spin momentum h_w, Basilisk's the speed relative
to the body: Ω = h_w / J_s − ĝ·ω. The preset constants in the Basilisk tests are read from the
wheels Basilisk's ``rwFactory`` builds.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy import stats

from rigidrot_gym import AttitudeEnv
from rigidrot_gym.attitude.batch import AttitudeBatch
from rigidrot_gym.attitude.scenario import find

# Basilisk's rwFactory names (and options) of the env's presets.
FACTORY = {
    "RW0": ("NanoAvionics_RW0", {}),
    "HR16": ("Honeywell_HR16", {"maxMomentum": 50.0}),
    "RWP015": ("BCT_RWP015", {}),
}
# The presets' momentum at top speed, J_s Ω_max, N·m·s: the data sheets' figures that
# simIncludeRW.py quotes (HR16: the 50 N·m·s variant).
DATASHEET_MOMENTUM = {"HR16": 50.0, "RWP015": 0.015, "RW0": 0.020}
RW0_MAX_TORQUE = 3.2e-3  # N·m, the data sheet's (simIncludeRW.py)
SMALL = [0.08, 0.10, 0.05]  # kg·m², a 6U body's principal moments
LARGE = [100.0, 120.0, 80.0]  # kg·m²
Q0 = np.array([0.9, 0.2, -0.3, 0.25]) / np.linalg.norm([0.9, 0.2, -0.3, 0.25])


def axes(layout: str) -> np.ndarray:
    """(3, n) spin axes: orthogonal along the body axes; pyramid at arccos(1/√3) from body z,
    90° apart in azimuth."""
    if layout == "orthogonal":
        return np.eye(3)
    s, c = np.sqrt(2.0 / 3.0), np.sqrt(1.0 / 3.0)
    return np.array([[s, 0.0, -s, 0.0], [0.0, s, 0.0, -s], [c, c, c, c]])


def rotation(q) -> np.ndarray:
    """Body-to-world matrix of a scalar-first unit quaternion."""
    w, x, y, z = q
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def make_env(preset, layout, moments, dt, substeps=1, steps=2000, **overrides):
    """Reorient-v0 with the wheels; no success ending (a rate tolerance no body reaches)."""
    return AttitudeEnv(
        "RigidRot/Reorient-v0",
        wheel_layout=layout,
        wheel_model=preset,
        inertia=list(moments),
        dt=dt,
        substeps=substeps,
        integrator="rk4",
        max_episode_steps=steps,
        max_rate=10.0,
        rate_tolerance=1e-12,
        **overrides,
    )


# -- side by side with Basilisk --------------------------------------------------------------


class BasiliskWheels:
    """A hub with three orthogonal wheels of a preset (friction and deadband on), RK4 at step
    ``dt``, stepped one control period at a time with the command written before each."""

    def __init__(self, preset, inertia, dt, omega0, q0, speeds0):
        from Basilisk.architecture import messaging
        from Basilisk.simulation import reactionWheelStateEffector, spacecraft, svIntegrators
        from Basilisk.utilities import RigidBodyKinematics as rbk
        from Basilisk.utilities import SimulationBaseClass, macros, simIncludeRW

        name, options = FACTORY[preset]
        factory = simIncludeRW.rwFactory()
        self.wheels = [
            factory.create(
                name,
                list(g),
                Omega=float(speed / macros.RPM),
                useRWfriction=True,
                useMinTorque=True,
                **options,
            )
            for g, speed in zip(np.eye(3), speeds0, strict=True)
        ]
        js = self.wheels[0].Js
        self.sim = SimulationBaseClass.SimBaseClass()
        self.step_ns = macros.sec2nano(dt)
        self.sim.CreateNewProcess("proc").addTask(self.sim.CreateNewTask("task", self.step_ns))
        self.sc = spacecraft.Spacecraft()
        self.sc.hub.mHub = 10.0
        self.sc.hub.IHubPntBc_B = (np.asarray(inertia) + js * np.eye(3)).tolist()  # includes J_s
        self.sc.hub.omega_BN_BInit = [[float(w)] for w in omega0]
        self.sc.hub.sigma_BNInit = [[float(s)] for s in rbk.EP2MRP(q0)]
        self.effector = reactionWheelStateEffector.ReactionWheelStateEffector()
        factory.addToSpacecraft("wheels", self.effector, self.sc)
        self.integrator = svIntegrators.svIntegratorRK4(self.sc)
        self.sc.setIntegrator(self.integrator)
        self.command = messaging.ArrayMotorTorqueMsgPayload()
        self.command.motorTorque = [0.0, 0.0, 0.0]
        self.message = messaging.ArrayMotorTorqueMsg().write(self.command)
        self.effector.rwMotorCmdInMsg.subscribeTo(self.message)
        self.sim.AddModelToTask("task", self.effector)  # ahead of the hub
        self.sim.AddModelToTask("task", self.sc)
        self.sim.InitializeSimulation()
        self.ticks = 0
        self.rbk = rbk

    def step(self, torques):
        """One period under the motor torques ``torques`` (N·m); returns the wheel speeds
        relative to the body, the body rates and the body-to-world matrix at its end."""
        self.command.motorTorque = [float(u) for u in torques]
        self.message.write(self.command)
        self.ticks += 1
        self.sim.ConfigureStopTime(self.ticks * self.step_ns)
        self.sim.ExecuteSimulation()
        state = self.sc.scStateOutMsg.read()
        speeds = np.array(self.effector.rwSpeedOutMsg.read().wheelSpeeds[:3])
        return speeds, np.array(state.omega_BN_B), self.rbk.MRP2C(state.sigma_BN).T


def side_by_side(preset, moments, dt, omega0, actions):
    """Both models from the body rates ``omega0`` and attitude Q0 with the env's wheels at rest
    (h_w = 0: Ω = −ĝ·ω), under ``actions`` (fractions of u_max; the env clips them to ±1,
    Basilisk gets a·u_max and saturates it). Returns the wheel constants and, per period
    boundary (the start included), both models' wheel speeds Ω, body rates, wheel momenta and
    attitudes."""
    env = make_env(preset, "orthogonal", moments, dt, steps=len(actions) + 10)
    env.reset(seed=0, options={"rate": list(omega0), "attitude": list(Q0)})
    inertia = env.inertia
    omega0 = np.asarray(omega0, dtype=float)
    bsk = BasiliskWheels(preset, inertia, dt, omega0, Q0, -omega0)
    wheel = bsk.wheels[0]
    js = wheel.Js
    rows = {key: [] for key in ("W_env", "W_bsk", "w_env", "w_bsk", "h_env", "h_bsk", "R_env", "R_bsk")}

    def record(W_b, w_b, R_b):
        w_e, h_e = env.body_rates, env.wheel_momentum
        for key, value in (
            ("W_env", h_e / js - w_e),
            ("W_bsk", W_b),
            ("w_env", w_e),
            ("w_bsk", w_b),
            ("h_env", h_e),
            ("h_bsk", js * (W_b + w_b)),
            ("R_env", rotation(env.attitude)),
            ("R_bsk", R_b),
        ):
            rows[key].append(np.array(value, dtype=float))

    record(-omega0, omega0, rotation(Q0))
    for a in actions:
        _, _, terminated, truncated, _ = env.step(np.asarray(a, dtype=float))
        assert not (terminated or truncated)
        record(*bsk.step(np.asarray(a) * wheel.u_max))
    out = {key: np.array(value) for key, value in rows.items()}
    out["J"] = inertia
    return wheel, out


def motor_on(speed, a, wheel):
    """Whether Basilisk's motor rule (ConfigureRWRequests) applies a torque for the command
    a·u_max at the wheel speed ``speed``: saturation, deadband, no driving beyond Omega_max."""
    u = np.clip(a * wheel.u_max, -wheel.u_max, wheel.u_max)
    limited = (np.abs(speed) >= wheel.Omega_max) & (speed * u >= 0.0)
    return (np.abs(u) >= wheel.u_min) & ~limited


def segments(*parts):
    return np.array([a for n, a in parts for _ in range(n)], dtype=float)


@pytest.mark.engines
def test_rw0_side_by_side_with_basilisk():
    """RW0 (J_s 2.94e-5 kg·m², u_max 3.2e-3, u_min 4.92e-5, τ_c 5e-5 N·m, Ω_max 680.7 rad/s) on
    the 6U body, orthogonal wheels, dt 0.1 s, from the tumble (0.03, −0.02, 0.04) rad/s: 190
    periods of commands, then 200 of none. Commands (x, y, z): 20 × (1.5, −1.2, 0.5) (x, y
    beyond u_max: the env clips, Basilisk saturates); 20 × (1, 0.999, 0.01) (y reverses through
    zero; z's 3.2e-5 N·m is inside the deadband); 20 × (1, −0.0149, 0.0155) (y dead, z's
    4.96e-5 N·m just passes); 60 × (1, −0.5, −0.7) and 70 × (1, 0.36, 0.6) (x reaches Ω_max
    at period 63 and stays commanded: the motor must stop; y and z reverse through zero);
    then spin-down (y reaches zero at period ~350).

    Per period and wheel, the change of Ω in the two models is compared. Measured:
    - periods where neither model's wheel can reach Ω = 0 and the motor rule decides alike
      ("clean"): the changes agree to 1.1e-6 rad/s (out of steps up to 10.9 rad/s; the rest
      is the body coupling ĝ·ω̇ of slightly different states), to 9.7e-6 in the periods
      beside a speed-limit mismatch (below);
    - periods where a wheel can reach zero (2, 44, 6 of them for x, y, z; bound of the
      difference 2 τ_c dt / J_s = 0.34 rad/s): up to 0.284 rad/s. The env holds the friction
      of the period's start (capped at J_s|Ω|/dt, which stops a wheel relative to the body
      within the period); Basilisk re-evaluates it at each RK4 stage. A wheel driven through
      zero keeps the start's friction sign for the whole period in the env: at period 0 the
      env's x wheel (Ω = −0.03) gets +8.8e-6 N·m (+τ_c, capped), Basilisk's stages give
      (1 − 2 − 2 − 1)/6 τ_c = −3.3e-5 N·m: 0.1435 rad/s, an offset that then stays. Coming to
      rest, Basilisk's RK4 cannot resolve RW0's stop time (J_s|Ω|/τ_c = 0.06 s at 0.1 rad/s):
      below τ_c dt / (2 J_s) = 0.085 rad/s its four stages' Coulomb terms cancel
      (+1 − 2 + 2 − 1) and the wheel stalls (y ends at −0.064 rad/s, its absolute momentum
      frozen) where the env's stops with the body (y ends at −7e-4 rad/s);
    - the speed limit: with the 0.1435 rad/s offset, at the starts of periods 98 and 162 the
      env's x wheel is just above Ω_max (its motor stops) and Basilisk's just below (its motor
      gives u_max dt / J_eff = 10.895 rad/s); in periods 99 and 163 the other way round, after
      which they agree again (4 mismatched periods). Both models overshoot Ω_max by at most
      10.64 (env) and 10.66 rad/s (Basilisk; u_max dt / J_s = 10.89) and lose
      τ_c dt / J_s = 0.17 rad/s in every period that starts at or beyond it (124 of the 190
      commanded ones, in both).
    Overall: max |ΔΩ| 0.154 rad/s outside the mismatched periods (10.75 in them); body rates
    max 1.4e-4 rad/s apart outside them (4.0e-3 in them: u_max dt / J_x). The world-frame
    angular momentum drifts by 1.2e-8 (env) and 1.1e-8 (Basilisk) of itself, both RK4's
    truncation at dt 0.1 s with body rates up to 0.25 rad/s, and the two stay 1.7e-9 apart.
    """
    pytest.importorskip("Basilisk")
    omega0 = [0.03, -0.02, 0.04]
    actions = segments(
        (20, (1.5, -1.2, 0.5)),
        (20, (1.0, 0.999, 0.01)),
        (20, (1.0, -0.0149, 0.0155)),
        (60, (1.0, -0.5, -0.7)),
        (70, (1.0, 0.36, 0.6)),
        (200, (0.0, 0.0, 0.0)),
    )
    dt = 0.1
    wheel, run = side_by_side("RW0", SMALL, dt, omega0, actions)
    js, tc, u_max = wheel.Js, wheel.fCoulomb, wheel.u_max
    W_env, W_bsk = run["W_env"], run["W_bsk"]
    d_env, d_bsk = np.diff(W_env, axis=0), np.diff(W_bsk, axis=0)
    gap = np.abs(d_env - d_bsk)

    # Which periods each wheel can reach zero in (either model), and where the rule differs.
    applied = np.clip(actions, -1.0, 1.0) * u_max
    reach = 1.05 * (np.abs(applied) + tc) * dt / js + 0.01
    near = np.minimum(np.abs(W_env[:-1]), np.abs(W_bsk[:-1])) <= reach
    mismatch = motor_on(W_env[:-1], actions, wheel) != motor_on(W_bsk[:-1], actions, wheel)
    beside = mismatch.any(axis=1)[:, None] & ~mismatch
    clean = ~near & ~mismatch & ~beside
    far = ~mismatch.any(axis=1)
    d_W, d_w = np.abs(W_env - W_bsk)[1:], np.abs(run["w_env"] - run["w_bsk"])[1:]
    print(
        f"\nRW0: clean periods {np.count_nonzero(clean)}, changes agree to {gap[clean].max():.2e} rad/s "
        f"({gap[beside].max():.2e} beside a mismatch); near zero {np.count_nonzero(near, axis=0)}: "
        f"{gap[near].max():.3f} (bound {2 * tc * dt / js:.3f}); speed-limit mismatches "
        f"{np.count_nonzero(mismatch)}: {gap[mismatch].max():.3f}; max |ΔΩ| {d_W[far].max():.3f} "
        f"({d_W.max():.2f} with them), max |Δω| {d_w[far].max():.2e} ({d_w.max():.2e})"
    )
    assert gap[clean].max() < 3e-6
    assert gap[beside].max() < 3e-5
    assert gap[near].max() <= 1.01 * 2 * tc * dt / js
    assert np.all(gap[mismatch] <= 1.001 * u_max * dt / js)  # J_eff = J_s (1 − 3.7e-4)
    assert np.count_nonzero(mismatch) <= 6 and np.count_nonzero(clean) > 900

    # The rules took effect in both: saturation (1.5 u_max gives u_max), the deadband, the
    # speed limit (a wheel at or beyond Omega_max under a driving command only slows down).
    for d in (d_env, d_bsk):
        assert np.all(np.abs(d[1:20, :2]) < (u_max + tc) * dt / js * 1.001)
        assert np.all(np.abs(d[20:40, 2] + tc * dt / js) < 2e-3)  # z: 0.01 u_max < u_min
        u_z = 0.0155 * u_max
        assert np.all(np.abs(d[40:60, 2] - (u_z - tc) * dt / js) < 2e-3)  # z: 0.0155 u_max ≥ u_min
    for W, d in ((W_env, d_env), (W_bsk, d_bsk)):
        at_limit = W[:190, 0] >= wheel.Omega_max
        print(
            f"at or beyond Omega_max: {np.count_nonzero(at_limit)} periods, overshoot "
            f"{W[:, 0].max() - wheel.Omega_max:.3f}; y at the end {W[-1, 1]:.2e}, "
            f"first |y| < 0.2 in spin-down at {190 + np.argmax(np.abs(W[190:, 1]) < 0.2)}"
        )
        assert np.count_nonzero(at_limit) > 50
        assert np.all(np.abs(d[:190][at_limit, 0] + tc * dt / js) < 2e-3)
        assert 0.0 < W[:, 0].max() - wheel.Omega_max <= u_max * dt / js
    # Coming to rest without a command: the env's y wheel stops with the body; Basilisk's
    # stalls inside the band where its RK4 stages' friction cancels.
    assert np.all(np.abs(W_env[-20:, 1]) < 2e-3)
    assert np.all(np.abs(W_bsk[-20:, 1]) < tc * dt / (2 * js))

    # Overall differences (the offsets the near-zero periods leave; the mismatched periods).
    assert d_W[far].max() < 0.25 and d_w[far].max() < 3e-4
    assert d_w.max() < 1.2 * u_max * dt / min(SMALL)
    # Each model keeps its world-frame angular momentum, and they are the same.
    J = run["J"]
    H_env = np.einsum("kij,kj->ki", run["R_env"], run["w_env"] @ J + run["h_env"])
    H_bsk = np.einsum("kij,kj->ki", run["R_bsk"], run["w_bsk"] @ J + run["h_bsk"])
    scale = np.linalg.norm(H_env[0])
    print(
        f"world-frame momentum: env drifts {np.abs(H_env - H_env[0]).max() / scale:.1e}, Basilisk "
        f"{np.abs(H_bsk - H_bsk[0]).max() / scale:.1e}, apart {np.abs(H_env - H_bsk).max() / scale:.1e}"
    )
    assert np.abs(H_env - H_env[0]).max() < 5e-8 * scale
    assert np.abs(H_bsk - H_bsk[0]).max() < 5e-8 * scale
    assert np.abs(H_env - H_bsk).max() < 1e-8 * scale


@pytest.mark.engines
def test_hr16_spin_down_side_by_side_with_basilisk():
    """HR16 (50 N·m·s: J_s 0.0796 kg·m², u_max 0.2, τ_c 5e-4 N·m) on the large body
    (100, 120, 80) kg·m² at rest, dt 0.5 s: 4 periods of (0.5, −0.25, 0.1) u_max, then 900
    without command. The total momentum is zero, so no gyroscopic term acts: each wheel and
    its body axis exchange momentum alone, and J_eff Ω̇ = u + τ_f with
    J_eff = J_s J_i / (J_i + J_s) (J_i the body's moment without the wheel): Coulomb friction
    decelerates the wheel at τ_c / J_eff = 6.29e-3 rad/s² (τ_c / J_s within 1e-3).

    Measured: in both models every period away from the first and from rest changes Ω by
    (u − τ_c sgn Ω) dt / J_eff (spin-up) and −τ_c sgn Ω dt / J_eff = 3.144e-3 rad/s
    (spin-down) to 6e-16 rad/s. The first period differs: at Ω = 0 the env holds the friction
    of the period's start, zero; Basilisk's first RK4 stage has none, its other three −τ_c:
    the env ends 5/6 τ_c dt / J_eff = 2.620e-3 rad/s faster, and that offset stays (to
    2.4e-14) until the wheels stop (x at periods 801 and 800, y 401/400, z 161/160: the env
    one period later). At rest the env's wheel stays stopped with the body (|Ω| ≤ 1.3e-18
    rad/s) where Basilisk's stalls at 5.24e-4 rad/s, inside τ_c dt / (2 J_s) = 1.57e-3 where
    its RK4 stages' Coulomb terms cancel. Body rates: −h_w / J_i in the env to 4e-15 (H = 0);
    up to 2.6e-6 rad/s from Basilisk's (the first period's friction impulse 5/6 τ_c dt over
    J_i; bound τ_c dt / J_i = 3.1e-6).
    """
    pytest.importorskip("Basilisk")
    dt, command = 0.5, np.array([0.5, -0.25, 0.1])
    spin_up = 4
    actions = segments((spin_up, tuple(command)), (900, (0.0, 0.0, 0.0)))
    wheel, run = side_by_side("HR16", LARGE, dt, np.zeros(3), actions)
    js, tc, u = wheel.Js, wheel.fCoulomb, command * wheel.u_max
    body = np.array(LARGE)
    j_eff = js * body / (body + js)
    W_env, W_bsk = run["W_env"], run["W_bsk"]
    d_env, d_bsk = np.diff(W_env, axis=0), np.diff(W_bsk, axis=0)

    # The first period: friction zero (env) against 5/6 of τ_c (Basilisk's RK4 stages).
    np.testing.assert_allclose(d_env[0], u * dt / j_eff, rtol=0, atol=1e-14)
    np.testing.assert_allclose(d_bsk[0], (u - 5 / 6 * tc * np.sign(u)) * dt / j_eff, rtol=0, atol=1e-14)
    offset = 5 / 6 * tc * dt / j_eff * np.sign(u)
    # Spin-up and spin-down, in both, away from rest: the closed form.
    moving = np.minimum(np.abs(W_env[:-1]), np.abs(W_bsk[:-1])) > 1.5 * tc * dt / js
    expected = (np.where(np.arange(len(actions))[:, None] < spin_up, u, 0.0) - tc * np.sign(W_env[:-1])) * dt
    expected /= j_eff
    moving[0] = False
    for d in (d_env, d_bsk):
        err = np.abs(d - expected)[moving]
        assert err.max() < 1e-13
    stop_env = [1 + np.argmax(np.abs(W_env[1:, i]) < tc * dt / js) for i in range(3)]
    stop_bsk = [1 + np.argmax(np.abs(W_bsk[1:, i]) < tc * dt / js) for i in range(3)]
    before = min(stop_env + stop_bsk) - 1
    drift = np.abs(W_env[1:before] - W_bsk[1:before] - offset).max()
    resid_env = max(np.abs(W_env[s + 1 :, i]).max() for i, s in enumerate(stop_env))
    resid_bsk = max(np.abs(W_bsk[s + 1 :, i]).max() for i, s in enumerate(stop_bsk))
    d_w = np.abs(run["w_env"] - run["w_bsk"]).max(axis=0)
    print(
        f"\nHR16: closed form to {max(np.abs(d - expected)[moving].max() for d in (d_env, d_bsk)):.1e} "
        f"rad/s; offset {offset} ± {drift:.1e}; stops env {stop_env}, Basilisk {stop_bsk}; at rest env "
        f"{resid_env:.1e}, Basilisk {resid_bsk:.2e} rad/s; |Δω| {d_w}"
    )
    assert drift < 1e-12
    assert all(0 <= e - b <= 1 for e, b in zip(stop_env, stop_bsk, strict=True))
    assert stop_env[0] > 750 and len(actions) - stop_env[0] > 90  # x stops, then stays at rest
    assert resid_env < 1e-12 and 0.0 < resid_bsk < tc * dt / (2 * js)
    # Body rates: the wheel's momentum taken from the body axis (H = 0), and the first period's
    # friction impulse between the two models.
    np.testing.assert_allclose(run["w_env"] * body, -run["h_env"], rtol=0, atol=1e-14)
    assert np.all(d_w <= tc * dt / body)


# -- conservation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("preset", "layout", "moments"),
    [("RW0", "pyramid", SMALL), ("RWP015", "orthogonal", SMALL), ("HR16", "pyramid", LARGE)],
)
def test_world_angular_momentum_is_conserved(preset, layout, moments):
    """Random commands (uniform in ±1.2 u_max, clipped) for 400 periods of 0.1 s, then 200
    without command, from the tumble (0.03, −0.02, 0.04) rad/s: the motor torques and the
    bearing friction act between the wheels and the body only, so R(q)(J ω + A h_w) keeps its
    start value while A h_w changes by up to 1.9 (RW0), 2.2 (RWP015) and 0.11 (HR16) times it.

    Measured drift (largest |H − H_0| / |H_0|): RK4 at substeps 1: 5.7e-10, 5.2e-10, 6.4e-13;
    at substeps 8: 1.4e-13, 1.3e-13, 8.0e-15, a ratio of ~4100 = 8⁴ on the small bodies:
    RK4's own truncation error, not a leak (friction lost from the wheels but not given to the
    body would drift by τ_c t / |H_0| ≈ 1 on the 6U body within the run).
    """
    n = axes(layout).shape[1]
    drift = {}
    for substeps in (1, 8):
        env = make_env(preset, layout, moments, 0.1, substeps=substeps)
        env.reset(seed=7, options={"rate": [0.03, -0.02, 0.04], "attitude": list(Q0)})
        J, A = env.inertia, axes(layout)

        def momentum(env=env, J=J, A=A):
            return rotation(env.attitude) @ (J @ env.body_rates + A @ env.wheel_momentum)

        H0 = momentum()
        rng = np.random.default_rng(11)
        errors, wheels = [], []
        for k in range(600):
            a = rng.uniform(-1.2, 1.2, n) if k < 400 else np.zeros(n)
            _, _, terminated, truncated, _ = env.step(a)
            assert not (terminated or truncated)
            errors.append(np.linalg.norm(momentum() - H0))
            wheels.append(np.linalg.norm(A @ env.wheel_momentum))
        drift[substeps] = max(errors) / np.linalg.norm(H0)
        exchanged = max(wheels) / np.linalg.norm(H0)
    print(
        f"\n{preset} {layout}: drift {drift[1]:.1e} (substeps 1), {drift[8]:.1e} (8); "
        f"A h_w up to {exchanged:.2f} |H0|"
    )
    assert exchanged > 0.05
    assert drift[8] < 1e-12
    assert drift[1] < 3e-9
    if drift[1] > 1e-11:  # above round-off: fourth order
        assert drift[1] / drift[8] > 1000


# -- scenario checks and observation -----------------------------------------------------------


def test_preset_needs_a_layout_and_sets_the_limits():
    with pytest.raises(ValueError, match=re.escape("wheels.model needs wheels.layout")):
        AttitudeEnv("RigidRot/Reorient-v0", wheel_model="RW0")
    for override in ({"wheel_max_torque": 0.02}, {"wheel_max_momentum": 0.04}):
        with pytest.raises(ValueError, match=re.escape("leave wheels.max_torque and max_momentum out")):
            AttitudeEnv("RigidRot/Reorient-v0", wheel_layout="orthogonal", wheel_model="RW0", **override)


@pytest.mark.parametrize("preset", ["HR16", "RWP015", "RW0"])
@pytest.mark.parametrize("layout", ["orthogonal", "pyramid"])
def test_action_space_and_wheel_columns(preset, layout):
    """One action per wheel; the observation's columns after the first seven are
    h_w / (J_s Omega_max), J_s Omega_max the data sheet's momentum."""
    n = axes(layout).shape[1]
    env = make_env(preset, layout, LARGE if preset == "HR16" else SMALL, 0.1)
    assert env.action_space.shape == (n,)
    obs, _ = env.reset(seed=1)
    np.testing.assert_array_equal(obs[7:], np.zeros(n, dtype=np.float32))
    rng = np.random.default_rng(2)
    for _ in range(20):
        obs, *_ = env.step(rng.uniform(-1.0, 1.0, n))
        assert obs.shape == (7 + n,)
        expected = env.wheel_momentum / DATASHEET_MOMENTUM[preset]
        np.testing.assert_allclose(obs[7:], expected, rtol=2e-7, atol=1e-9)


def test_wheel_columns_are_clipped_beyond_the_top_speed():
    """RW0 wheels x and y driven at ±u_max for 80 periods of 0.1 s reach Omega_max near
    period 63; the motor rule lets them pass it by up to u_max dt / J_s (10.9 rad/s, 1.6 %
    of the top speed): there the columns read exactly ±1."""
    env = make_env("RW0", "orthogonal", SMALL, 0.1)
    env.reset(seed=1, options={"rate": [0.0, 0.0, 0.0]})
    limit = DATASHEET_MOMENTUM["RW0"]
    beyond = [0, 0]
    for _ in range(80):
        obs, *_ = env.step(np.array([1.0, -1.0, 0.2]))
        h = env.wheel_momentum
        np.testing.assert_allclose(obs[7:], np.clip(h / limit, -1.0, 1.0), rtol=2e-7, atol=1e-9)
        for k, sign in ((0, 1.0), (1, -1.0)):
            if sign * h[k] > limit:
                beyond[k] += 1
                assert obs[7 + k] == sign
    assert min(beyond) > 0
    assert np.abs(env.wheel_momentum[:2]).max() < limit * 1.02


def test_randomised_torque_limits_are_the_motors_limits():
    """NadirPoint-v0's pyramid of RW0 wheels with ``randomize_torque`` r: a full command
    from rest spins each wheel at its episode's limit, uniform within u_max (1 ± r) as the
    setting says (the motor rule used to cut the limits drawn above u_max: half of them).
    Friction from rest over one period is at most J_s |Ω| / dt, below 1e-4 u_max here."""
    r, n = 0.2, 500
    batch = AttitudeBatch(find("RigidRot/NadirPoint-v0").with_overrides(randomize_torque=r), n)
    batch.rngs = [np.random.default_rng([30, i]) for i in range(n)]
    rng = np.random.default_rng(31)
    limits = []
    for _ in range(2):  # two episodes of each body
        batch.reset()
        signs = rng.choice([-1.0, 1.0], (n, 4))
        batch.step(np.hstack([signs, np.zeros((n, 3))]).astype(np.float32))  # the rods off
        torque = batch._equipment.wheel_momentum / batch.scenario.dt
        limits.append(torque * signs / RW0_MAX_TORQUE)
    limits = np.ravel(limits)
    assert limits.min() > 1.0 - r - 1e-3 and limits.max() < 1.0 + r + 1e-3
    assert limits.max() > 1.0 + 0.99 * r  # the whole range
    assert stats.kstest(limits, stats.uniform(1.0 - r, 2.0 * r).cdf).pvalue > 0.01

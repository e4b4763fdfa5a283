"""Classical attitude controllers against independent references: the published example
of Wie, Weiss & Arapostathis (1989) against the eigen-axis scalar model solved by DOP853,
small-angle responses against the linear closed form, scipy's Riccati gains against the
closed-form LQR gains, the sliding-mode regulator against its sliding-surface closed
form, rate damping against exp(−kd t), hand-computed torques and actions, the real env,
and bad input."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import rigidrot_gym  # noqa: F401  (registers the env ids)
from rigidrot_gym.control import (
    LQR,
    PD,
    Controller,
    QuaternionFeedback,
    RateDamping,
    SlidingMode,
    diagonal_gains,
)
from rigidrot_gym.control.lqr import linearisation
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.propagate import propagate

# Wie, Weiss & Arapostathis (1989), as in the shared notes: the true inertia, the
# controller's diagonal estimate, the start (vector-first in the paper) and the gains.
J_TRUE = np.array([[1200.0, 100.0, -200.0], [100.0, 2200.0, 300.0], [-200.0, 300.0, 3100.0]])
J_EST = np.diag([1200.0, 2200.0, 3100.0])
Q0_WIE = quat.normalize(quat.from_scalar_last([0.57, 0.57, 0.57, 0.159]))
OMEGA0_WIE = np.full(3, 0.01)
K_WIE, C_WIE = 0.05, np.diag([379.2, 695.2, 979.6])
WN_WIE = np.sqrt(K_WIE / 2.0)  # 0.158 rad/s
NO_LIMIT = np.full(3, 1e9)  # N·m: nothing saturates in the continuous-control runs
MAX_RATE = 10.0  # rad/s: only predict() reads it
DT = 0.05  # s


def closed_loop(controller: Controller, inertia, q0, omega0, duration: float, dt: float = DT):
    """rk4 run of the body under ``controller.torque`` evaluated at every stage (continuous
    control), target at the identity: δq = q_target⁻¹ ⊗ q = q, with the sign of w ≥ 0."""
    target = quat.identity()

    def torque(t, q, omega):
        error = quat.multiply(quat.conjugate(target), q).reshape(-1, 4)
        error = np.where(error[:, :1] < 0.0, -error, error)
        w = np.reshape(omega, (-1, 3))
        return controller.torque(error, w, np.zeros_like(w)).reshape(np.shape(omega))

    return propagate(q0, omega0, inertia, dt, round(duration / dt), "rk4", torque)


def pointing(traj) -> np.ndarray:
    """Rotation angle (rad) from the target (the identity) along a trajectory."""
    return quat.angle_between(quat.identity(), traj.q)


def settling_time(t: np.ndarray, angle: np.ndarray, fraction: float = 0.02) -> float:
    """First time after which ``angle`` stays ≤ ``fraction`` of its initial value (inf if
    the last sample is still above)."""
    last_above = np.nonzero(angle > fraction * angle[0])[0][-1]
    return float(t[last_above + 1]) if last_above + 1 < t.size else np.inf


def eigenaxis_angle(k: float, c: float, theta0: float, rate0: float, t: np.ndarray) -> np.ndarray:
    """|θ(t)| of the eigen-axis model θ̈ + c θ̇ + k sin(θ/2) = 0 (DOP853).

    With K = kJ, C = cJ and exact gyroscopic cancellation, ω̇ = −k q_v − c ω; on a fixed
    axis e, q_v = sin(θ/2) e and ω = θ̇ e, so θ̈ = −k sin(θ/2) − c θ̇ (no factor 2: the
    half angle is inside the sine). Linearised: θ̈ + c θ̇ + (k/2) θ = 0, ωn = √(k/2).
    """
    sol = solve_ivp(
        lambda _, y: [y[1], -c * y[1] - k * np.sin(0.5 * y[0])],
        (0.0, t[-1]),
        [theta0, rate0],
        method="DOP853",
        rtol=1e-11,
        atol=1e-13,
        dense_output=True,
    )
    return np.abs(sol.sol(t)[0])


def critically_damped_angle(theta0: float, wn: float, t: np.ndarray) -> np.ndarray:
    """Linear closed form, ζ = 1, from rest: θ(t) = θ0 (1 + ωn t) exp(−ωn t)."""
    return theta0 * (1.0 + wn * t) * np.exp(-wn * t)


def start_of(traj) -> tuple[float, float]:
    """Initial rotation angle and its rate along the initial eigen-axis."""
    q0, omega0 = traj.q[0], traj.omega[0]
    axis = q0[1:] / np.linalg.norm(q0[1:])
    return 2.0 * np.arctan2(np.linalg.norm(q0[1:]), q0[0]), float(omega0 @ axis)


# ----------------------------------------------------------------------- quaternion feedback / PD


def test_wie_example_gains():
    # The notes write K = 0.05·J. We read J as the estimate Ĵ: the controller only knows Ĵ,
    # C = diag(379.2, 695.2, 979.6) is 0.316 Ĵ (not 0.316 J, which has off-diagonal terms),
    # and K = 0.05 Ĵ = diag(60, 110, 155) is the paper's eigen-axis case (its Case 4).
    controller = QuaternionFeedback(J_EST, K_WIE, C_WIE, NO_LIMIT, MAX_RATE)
    np.testing.assert_array_equal(controller.stiffness, np.diag([60.0, 110.0, 155.0]))
    np.testing.assert_allclose(controller.damping, 0.316 * J_EST, rtol=1e-15)
    assert 0.316 / (2.0 * WN_WIE) == pytest.approx(1.0, abs=1e-3)  # ζ = 1


def test_wie_example_settles_like_the_eigenaxis_model():
    controller = QuaternionFeedback(J_EST, K_WIE, C_WIE, NO_LIMIT, MAX_RATE)
    traj = closed_loop(controller, J_TRUE, Q0_WIE, OMEGA0_WIE, duration=100.0)
    angle = pointing(traj)
    measured = settling_time(traj.t, angle)
    assert measured < 100.0  # below 2 % of the initial 161.7° and staying there
    assert angle[-1] < 0.02 * angle[0]

    # The reference: the eigen-axis model from the same start. ω0 = 0.01 (1, 1, 1) is
    # along the initial axis (1, 1, 1)/√3, so the start is eigen-axis; what is not is
    # Ĵ ≠ J. Then ω̇ ≈ −M (k q_v + c ω) with M = J⁻¹Ĵ (the gyroscopic residual is
    # quadratic in |ω| ≤ 0.03 rad/s). M is similar to the SPD J^-½ Ĵ J^-½, so along any
    # direction the gains are scaled by some λ in [λmin(M), λmax(M)]: the tolerance is
    # the spread of the model's settling times with k, c → λk, λc over that interval.
    theta0, rate0 = start_of(traj)
    t = np.arange(0.0, 150.0, 0.01)
    reference = settling_time(t, eigenaxis_angle(K_WIE, 0.316, theta0, rate0, t))
    lam = np.linalg.eigvals(np.linalg.solve(J_TRUE, J_EST)).real
    spread = [
        settling_time(t, eigenaxis_angle(s * K_WIE, s * 0.316, theta0, rate0, t))
        for s in np.linspace(lam.min(), lam.max(), 7)
    ]
    print(
        f"Wie example: settling (2 %) {measured:.2f} s; eigen-axis model {reference:.2f} s "
        f"(λ(J⁻¹Ĵ) ∈ [{lam.min():.3f}, {lam.max():.3f}] → [{min(spread):.2f}, {max(spread):.2f}] s)"
    )
    assert min(spread) <= measured <= max(spread)
    assert min(spread) <= reference <= max(spread)


def test_eigenaxis_model_is_exact_when_the_estimate_is_the_true_inertia():
    # Checks the reference itself (the k sin(θ/2) factor): with Ĵ = J, K = kJ, C = cJ
    # and an eigen-axis start the 3-D closed loop is the scalar model exactly.
    controller = QuaternionFeedback(J_TRUE, K_WIE, 0.316, NO_LIMIT, MAX_RATE)
    traj = closed_loop(controller, J_TRUE, Q0_WIE, OMEGA0_WIE, duration=100.0)
    theta0, rate0 = start_of(traj)
    np.testing.assert_allclose(
        pointing(traj), eigenaxis_angle(K_WIE, 0.316, theta0, rate0, traj.t), rtol=0, atol=1e-8
    )


@pytest.mark.parametrize("cls", [QuaternionFeedback, PD])
def test_small_angle_response_is_the_critically_damped_closed_form(cls):
    # θ0 = 1°, at rest, Ĵ = J, ωn = √(k/2) = 0.158 rad/s, ζ = 1. The linear model is off
    # by the sine's cubic term, θ0²/24 ≈ 1.3e-5 relative (measured 4e-6). ωn ∂θ/∂ωn =
    # −θ0 (ωn t)² exp(−ωn t) peaks at 4e⁻² θ0 ≈ 0.54 θ0, so a tolerance of 1e-4 θ0 pins ωn
    # = 0.158 rad/s to 2e-4 relative.
    controller = cls.critically_damped(J_TRUE, WN_WIE, NO_LIMIT, MAX_RATE)
    theta0 = np.radians(1.0)
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    traj = closed_loop(controller, J_TRUE, quat.from_rotvec(theta0 * axis), np.zeros(3), duration=60.0)
    np.testing.assert_allclose(
        pointing(traj), critically_damped_angle(theta0, WN_WIE, traj.t), rtol=0, atol=1e-4 * theta0
    )


def test_pd_gains_from_natural_frequency_and_damping_ratio():
    inertia = np.array([1.0, 2.0, 3.0])
    pd = PD.critically_damped(inertia, 0.5, NO_LIMIT, MAX_RATE, damping_ratio=0.7)
    assert isinstance(pd, PD)
    assert pd.kp == pytest.approx(0.5, rel=1e-15)  # 2 · 0.5²
    assert pd.kd == pytest.approx(0.7, rel=1e-15)  # 2 · 0.7 · 0.5
    np.testing.assert_allclose(pd.stiffness, np.diag([0.5, 1.0, 1.5]), rtol=1e-15)
    np.testing.assert_allclose(pd.damping, np.diag([0.7, 1.4, 2.1]), rtol=1e-15)


def test_pd_torque_by_hand():
    # Ĵ = diag(1, 2, 3), kp = 2, kd = 3, δq_v = (0.1, 0, 0), ω = (0, 0.1, 0.2):
    # −Kp δq_v = (−0.2, 0, 0), −Kd ω = (0, −0.6, −1.8), ω × Ĵω = (0.1·0.6 − 0.2·0.2, 0, 0).
    pd = PD([1.0, 2.0, 3.0], 2.0, 3.0, NO_LIMIT, MAX_RATE)
    error = np.array([[np.sqrt(0.99), 0.1, 0.0, 0.0]])
    u = pd.torque(error, np.array([[0.0, 0.1, 0.2]]), np.zeros((1, 3)))
    np.testing.assert_allclose(u, [[-0.18, -0.6, -1.8]], rtol=1e-14)


# ----------------------------------------------------------------------- LQR


def notes_gains(moments, a: float, b: float, r: float) -> tuple[np.ndarray, np.ndarray]:
    """The notes' closed form, written out here: u_i = −√(a/r) q_i − √(b/r + J_i√(a/r)) ω_i."""
    moments = np.asarray(moments, dtype=np.float64)
    return np.full(3, np.sqrt(a / r)), np.sqrt(b / r + moments * np.sqrt(a / r))


@pytest.mark.parametrize(
    ("moments", "weights"),
    [
        ([1200.0, 2200.0, 3100.0], (1600.0, 1e4, 1.0)),
        ([0.08, 0.10, 0.05], (1.0, 3.0, 1e3)),
        ([2.0, 3.0, 4.0], (0.5, 0.0, 2.0)),
    ],
)
def test_riccati_gains_equal_the_closed_form(moments, weights):
    lqr = LQR(moments, *weights, NO_LIMIT, MAX_RATE)
    k_q, k_w = notes_gains(moments, *weights)
    expected = np.hstack([np.diag(k_q), np.diag(k_w)])
    np.testing.assert_allclose(lqr.gain, expected, rtol=1e-9, atol=1e-9 * np.max(np.abs(expected)))
    for got, want in zip(diagonal_gains(moments, *weights), (k_q, k_w), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-15)


def test_riccati_gains_for_a_tensor_are_the_closed_form_in_principal_axes():
    # Q and R are isotropic, so for Ĵ = V diag(J_i) Vᵀ the gains are V diag(k_i) Vᵀ.
    weights = (1600.0, 1e4, 1.0)
    moments, axes = np.linalg.eigh(J_TRUE)
    k_q, k_w = notes_gains(moments, *weights)
    lqr = LQR(J_TRUE, *weights, NO_LIMIT, MAX_RATE)
    np.testing.assert_allclose(lqr.gain[:, :3], axes @ np.diag(k_q) @ axes.T, rtol=0, atol=1e-9 * k_q[0])
    np.testing.assert_allclose(lqr.gain[:, 3:], axes @ np.diag(k_w) @ axes.T, rtol=0, atol=1e-9 * k_w.max())


@pytest.mark.parametrize("inertia", [J_EST, J_TRUE])
def test_linearised_lqr_closed_loop_is_stable(inertia):
    weights = (1600.0, 1e4, 1.0)
    lqr = LQR(inertia, *weights, NO_LIMIT, MAX_RATE)
    a, b = linearisation(lqr.inertia)
    poles = np.linalg.eigvals(a - b @ lqr.gain)
    assert np.all(poles.real < 0.0)
    # Per principal axis the characteristic polynomial is s² + (k_ω/J) s + k_q/(2J).
    moments = np.linalg.eigvalsh(inertia)
    k_q, k_w = notes_gains(moments, *weights)
    expected = np.concatenate(
        [np.roots([1.0, kw / j, kq / (2.0 * j)]) for j, kq, kw in zip(moments, k_q, k_w, strict=True)]
    )
    np.testing.assert_allclose(np.sort_complex(poles), np.sort_complex(expected), rtol=1e-7)


def test_lqr_converges_from_30_degrees_on_the_true_body():
    # Gains designed on the diagonal estimate, flown on the true tensor (linearised per
    # axis ωn ≈ 0.08–0.13 rad/s, ζ ≈ 0.74–0.78), with rates on top of the 30° error.
    lqr = LQR(J_EST, 1600.0, 1e4, 1.0, NO_LIMIT, MAX_RATE)
    axis = np.array([1.0, 2.0, -1.0]) / np.sqrt(6.0)
    traj = closed_loop(lqr, J_TRUE, quat.from_rotvec(np.radians(30.0) * axis), OMEGA0_WIE, duration=150.0)
    angle, rate = pointing(traj), np.linalg.norm(traj.omega[-1])
    print(f"LQR from 30°: {np.degrees(angle[-1]):.2e}° after 150 s, |ω| = {rate:.1e} rad/s")
    assert angle[-1] < 1e-3 * angle[0]
    assert np.all(angle[traj.t >= 100.0] < 0.01 * angle[0])
    assert rate < 1e-4


# ----------------------------------------------------------------------- sliding mode


def test_sliding_mode_published_gains():
    sm = SlidingMode.published(J_TRUE, NO_LIMIT, MAX_RATE)
    assert (sm.slope, sm.boundary_layer) == (0.05, 0.001)
    np.testing.assert_array_equal(sm.reaching_gain, 0.005 * np.eye(3))


def test_sliding_mode_reaches_the_surface_then_follows_its_closed_form():
    sm = SlidingMode.published(J_TRUE, NO_LIMIT, MAX_RATE)
    k, eps, g = 0.05, 0.001, 0.005
    dt = 0.2  # the boundary layer's rate G/ε = 5/s: rk4 is stable and accurate for dt·5 = 1
    axis = np.array([1.0, -2.0, 0.5]) / np.linalg.norm([1.0, -2.0, 0.5])
    traj = closed_loop(
        sm, J_TRUE, quat.from_rotvec(np.radians(60.0) * axis), np.full(3, 0.02), duration=300.0, dt=dt
    )
    angle = pointing(traj)
    q = np.where(traj.q[:, :1] < 0.0, -traj.q, traj.q)
    s = np.max(np.abs(traj.omega + k * q[:, 1:]), axis=1)

    # Reaching: ṡ = −G sat(s/ε) (Ĵ = J), so |s_i| falls at G until it is ε, then as
    # exp(−(G/ε) t): below 1e-6 by |s(0)|∞/G + ln(ε/1e-6)/(G/ε), and it stays there.
    bound = s[0] / g + np.log(eps / 1e-6) / (g / eps)
    arrive = int(np.argmax(s < 1e-6))
    assert traj.t[arrive] <= bound
    assert np.all(s[arrive:] < 1e-6)

    # Sliding: ω = −k δq_v ⇒ θ̇ = −k sin(θ/2) ⇒ tan(θ/4) = tan(θ_s/4) exp(−k (t − t_s)/2).
    t_s, theta_s = traj.t[arrive], angle[arrive]
    predicted = 4.0 * np.arctan(np.tan(theta_s / 4.0) * np.exp(-0.5 * k * (traj.t[arrive:] - t_s)))
    np.testing.assert_allclose(angle[arrive:], predicted, rtol=1e-5)
    # Near the target |δq_v| = sin(θ/2) decays as exp(−k t/2) (q0 > 1 − 4e-5 below 1°).
    near = angle < np.radians(1.0)
    slope = np.polyfit(traj.t[near], np.log(np.sin(0.5 * angle[near])), 1)[0]
    assert slope == pytest.approx(-0.5 * k, rel=1e-3)

    # Below 0.1° at the time the two phases predict.
    expected = t_s + (2.0 / k) * np.log(np.tan(theta_s / 4.0) / np.tan(np.radians(0.1) / 4.0))
    reached = traj.t[np.argmax(angle < np.radians(0.1))]
    print(
        f"sliding mode from 60°: |s| < 1e-6 at {t_s:.1f} s (bound {bound:.1f} s), "
        f"θ < 0.1° at {reached:.1f} s (closed form {expected:.1f} s)"
    )
    assert abs(reached - expected) <= dt
    assert np.all(angle[traj.t >= reached] < np.radians(0.1))


# ----------------------------------------------------------------------- rate damping


def test_rate_damping_decays_exponentially_about_a_principal_axis():
    kd = 0.1
    controller = RateDamping(J_TRUE, kd, NO_LIMIT, MAX_RATE)
    _, axes = np.linalg.eigh(J_TRUE)
    omega0 = 0.3 * axes[:, 1]  # the intermediate axis: unstable if the damping were off
    traj = closed_loop(controller, J_TRUE, quat.identity(), omega0, duration=40.0, dt=0.1)
    expected = omega0 * np.exp(-kd * traj.t)[:, None]
    np.testing.assert_allclose(traj.omega, expected, rtol=0, atol=1e-9 * np.linalg.norm(omega0))


def test_rate_damping_matrix_gain_drains_energy_at_least_at_the_lyapunov_rate():
    # Ė = ωᵀu = −ωᵀKdω ≤ −λmin(Kd)|ω|² ≤ −(2 λmin(Kd)/λmax(J)) E, whatever the coupling:
    # E(t) ≤ E0 exp(−2 λmin(Kd) t / λmax(J)).
    kd = np.diag([100.0, 300.0, 200.0])
    controller = RateDamping(J_EST, kd, NO_LIMIT, MAX_RATE)
    traj = closed_loop(controller, J_TRUE, Q0_WIE, [0.1, -0.2, 0.05], duration=30.0, dt=0.1)
    energy = traj.kinetic_energy
    assert np.all(np.diff(energy) < 0.0)
    bound = energy[0] * np.exp(-2.0 * 100.0 / np.linalg.eigvalsh(J_TRUE).max() * traj.t)
    assert np.all(energy <= bound * (1.0 + 1e-9))


# ----------------------------------------------------------------------- predict()


def test_predict_single_observation_saturates_by_hand():
    # Ĵ = diag(1, 2, 3), Kd = 2Ĵ, ω = (0.1, −0.5, 0.05)·2 rad/s ⇒ u = (−0.4, 4, −0.6) N·m;
    # over the 1 N·m limits: (−0.4, 1 (clipped from 4), −0.6).
    controller = RateDamping([1.0, 2.0, 3.0], 2.0, np.ones(3), max_rate=2.0)
    obs = np.array([1.0, 0.0, 0.0, 0.0, 0.1, -0.5, 0.05], dtype=np.float32)
    state = object()
    action, out_state = controller.predict(obs, state=state)
    assert action.shape == (3,) and action.dtype == np.float32
    np.testing.assert_allclose(action, [-0.4, 1.0, -0.6], rtol=1e-6)
    assert out_state is state


def make_all(inertia=(0.08, 0.10, 0.05), max_torque=(0.01, 0.01, 0.01), max_rate=1.5) -> list[Controller]:
    limits = {"actuators": max_torque, "max_rate": max_rate}
    return [
        QuaternionFeedback(inertia, 0.5, 1.0, **limits),
        PD(inertia, 0.5, 1.0, **limits),
        LQR(inertia, 1.0, 3.0, 1e3, **limits),
        SlidingMode(inertia, 0.5, 0.01, 0.05, **limits),
        RateDamping(inertia, 1.0, **limits),
    ]


@pytest.mark.parametrize("controller", make_all(), ids=lambda c: type(c).__name__)
def test_predict_batched_matches_single(controller):
    rng = np.random.default_rng(7)
    q = quat.canonical(quat.random(rng, (16,)))
    obs = np.hstack([q, rng.uniform(-1.0, 1.0, (16, 3))]).astype(np.float32)
    actions, state = controller.predict(obs, state=("h", 1))
    assert actions.shape == (16, 3) and actions.dtype == np.float32
    assert np.all(np.abs(actions) <= 1.0)
    assert np.any(np.abs(actions) == 1.0)  # these rates saturate somewhere
    assert state == ("h", 1)
    single = np.array([controller.predict(row)[0] for row in obs])
    np.testing.assert_array_equal(actions, single)


# ----------------------------------------------------------------------- the real env

SEEDS = range(5)
ENV_CASES = {
    "QuaternionFeedback(ωn=0.5)": ("RigidRot/Reorient-v0", lambda s: QuaternionFeedback.for_scenario(s, 0.5)),
    "PD(ωn=0.5, ζ=1)": ("RigidRot/Reorient-v0", lambda s: PD.for_scenario(s, 0.5)),
    "LQR(a=1, b=3, r=1e3)": ("RigidRot/Reorient-v0", lambda s: LQR.for_scenario(s, 1.0, 3.0, 1e3)),
    "SlidingMode(k=0.5, ε=0.01, G=0.05)": (
        "RigidRot/Reorient-v0",
        lambda s: SlidingMode.for_scenario(s, 0.5, 0.01, 0.05),
    ),
    # No attitude feedback: it cannot point, so it flies the detumble task.
    "RateDamping(kd=1)": ("RigidRot/Detumble-v0", lambda s: RateDamping.for_scenario(s, 1.0)),
}


@pytest.mark.parametrize("case", ENV_CASES)
def test_controller_succeeds_in_the_env(case):
    env_id, make = ENV_CASES[case]
    env = gym.make(env_id)
    controller = make(env.unwrapped.scenario)
    wins = 0
    for seed in SEEDS:
        obs, _ = env.reset(seed=seed)
        terminated = truncated = False
        while not (terminated or truncated):
            action, _ = controller.predict(obs)
            obs, _, terminated, truncated, info = env.step(action)
        wins += terminated and info["is_success"]
    print(f"{env_id} {case}: {wins}/{len(SEEDS)} successes")
    assert wins == len(SEEDS)


# ----------------------------------------------------------------------- bad input

LIMITS = {"actuators": NO_LIMIT, "max_rate": MAX_RATE}


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: PD(J_EST, np.nan, 1.0, **LIMITS), "kp"),
        (lambda: PD(J_EST, 1.0, -1.0, **LIMITS), "kd"),
        (lambda: PD.critically_damped(J_EST, 0.0, **LIMITS), "natural_frequency"),
        (lambda: PD.critically_damped(J_EST, 0.1, damping_ratio=np.inf, **LIMITS), "damping_ratio"),
        (lambda: QuaternionFeedback(J_EST, np.ones((2, 2)), 1.0, **LIMITS), "stiffness"),
        (lambda: QuaternionFeedback(J_EST, 1.0, np.full((3, 3), np.nan), **LIMITS), "damping"),
        (lambda: LQR(J_EST, 0.0, 1.0, 1.0, **LIMITS), "attitude_weight"),
        (lambda: LQR(J_EST, 1.0, -1.0, 1.0, **LIMITS), "rate_weight"),
        (lambda: LQR(J_EST, 1.0, 1.0, np.inf, **LIMITS), "control_weight"),
        (lambda: diagonal_gains([1.0, -2.0, 3.0], 1.0, 1.0, 1.0), "moments"),
        (lambda: SlidingMode(J_EST, -0.05, 0.001, 0.005, **LIMITS), "slope"),
        (lambda: SlidingMode(J_EST, 0.05, 0.0, 0.005, **LIMITS), "boundary_layer"),
        (lambda: SlidingMode(J_EST, 0.05, 0.001, [0.005, 0.005, 0.005], **LIMITS), "reaching_gain"),
        (lambda: SlidingMode(J_EST, 0.05, 0.001, "big", **LIMITS), "reaching_gain"),
        (lambda: RateDamping(J_EST, np.inf, **LIMITS), "damping"),
        (lambda: RateDamping([1.0, 2.0], 1.0, **LIMITS), "inertia"),
        (lambda: RateDamping(J_EST, 1.0, actuators=[1.0, 0.0, 1.0], max_rate=1.0), "max_torque"),
    ],
)
def test_bad_input_raises_naming_the_argument(build, name):
    with pytest.raises(ValueError, match=name):
        build()

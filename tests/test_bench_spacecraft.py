"""The spacecraft benchmark: Basilisk flies the same MagDetumble and NadirPoint spacecraft as
our env, and the quick run writes its files."""

from __future__ import annotations

import csv
import math

import gymnasium as gym
import numpy as np
import pytest

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.attitude.scenario import find
from rigidrot_gym.tools.bench import spacecraft

ID = "RigidRot/MagDetumble-v0"
ACTION = np.array([0.7, -1.0, 0.4], dtype=np.float32)
RATE = [0.05, -0.03, 0.04]  # rad/s
SECONDS = 120.0
NADIR_ID = "RigidRot/NadirPoint-v0"
NADIR_ACTION = np.array(spacecraft.NADIR_ACTION, dtype=np.float32)  # 4 wheels, then 3 rods
NADIR_RATE = [0.01, -0.02, 0.005]  # rad/s
# NadirPoint's disturbance torques (random) have no Basilisk counterpart: off on our side.
CALM = {"disturbance_constant": 0.0, "disturbance_random_walk": 0.0}


def _angle(q1: np.ndarray, q2: np.ndarray) -> float:
    """The rotation angle (rad) between two attitudes, either sign of either."""
    w = q1[0] * q2[0] + q1[1:] @ q2[1:]
    v = q1[0] * q2[1:] - q2[0] * q1[1:] - np.cross(q1[1:], q2[1:])
    return 2.0 * math.atan2(float(np.linalg.norm(v)), abs(float(w)))


def _both(seed: int, action: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Our single env and Basilisk from the same start (the env's drawn attitude and mean
    anomaly, :data:`RATE`) under the constant ``action`` for :data:`SECONDS`: our final
    body rates, Basilisk's, and the angle between the final attitudes."""
    env = gym.make(ID).unwrapped
    env.reset(seed=seed, options={"rate": RATE})
    anomaly = float(env.batch._equipment.anomaly[0])
    q0, omega0 = env.attitude.copy(), env.body_rates.copy()
    for _ in range(round(SECONDS / env.scenario.dt)):
        env.step(action)
    scenario = find(ID)
    dipole = action.astype(float) * np.asarray(scenario.magnetorquer_max_dipole)
    _, q, omega = spacecraft.basilisk_spacecraft(scenario, q0, omega0, anomaly, dipole, SECONDS)
    return env.body_rates.copy(), omega, _angle(env.attitude, q)


@pytest.mark.engines
@pytest.mark.parametrize("seed", [0, 4])
def test_basilisk_flies_the_same_spacecraft(seed):
    """120 s from the same start, measured (seeds 0, 1, 3, 4):

    * dipole 0.2·(0.7, −1, 0.4) A·m²: the final body rates differ by 0.8–4.1e-11 rad/s, while
      the torque changed them by 4.9–8.9e-3 rad/s against the zero-dipole run: ≤ 7.2e-9 of
      the change; attitudes 3.7–5.0e-9 rad apart (MRPs against quaternions);
    * zero dipole: 2.3e-17 rad/s (Euler's equations under RK4 at the same 0.5 s steps in
      both; the attitude 4–5e-9 rad).

    Both hold the field of the 1 s control period's start over its two sub-steps (Basilisk's
    field module runs in a task at the period), so what is compared is the field itself (the
    orbit, the turning Earth, the coefficients) and the rods' torque. With the field module
    at every 0.5 s sub-step instead, the rates differed by 0.6–4.6e-6 rad/s, 0.9–9.5e-4 of
    the change: the field turns at about twice the orbital rate, 2.2e-3 rad/s, and was
    0.25 s younger on average. Tolerances: a few times the worst measured figure."""
    pytest.importorskip("Basilisk")
    ours, theirs, angle = _both(seed, ACTION)
    ours_free, theirs_free, angle_free = _both(seed, np.zeros(3, dtype=np.float32))
    change = np.linalg.norm(ours - ours_free)
    difference = np.linalg.norm(ours - theirs)
    assert change > 4e-3, change  # the torque matters
    assert difference < 2e-10, difference
    assert difference < 3e-8 * change, difference / change
    assert angle < 2e-8, angle
    assert np.linalg.norm(ours_free - theirs_free) < 1e-12
    assert angle_free < 2e-8, angle_free


def test_basilisk_refuses_what_it_would_not_reproduce():
    scenario = find(ID)
    start = spacecraft.start_state(scenario)
    with pytest.raises(ValueError, match="multiple of the sub-step"):
        spacecraft.basilisk_spacecraft(scenario, *start, 0.7)
    with pytest.raises(ValueError, match="J2"):
        spacecraft.basilisk_spacecraft(scenario.with_overrides(orbit_j2=True), *start, 1.0)
    with pytest.raises(ValueError, match="must be on"):
        spacecraft.basilisk_spacecraft(find("RigidRot/Reorient-v0"), *start, 1.0)


def _ours_nadir(seed: int, action: np.ndarray, rate: list[float]):
    """Our single NadirPoint env (the disturbances off) from its drawn attitude and mean
    anomaly, body rates ``rate`` and the wheels of a reset, under the constant ``action``
    for :data:`SECONDS`: the env at the end and its start (q, ω, anomaly, wheel momenta)."""
    env = gym.make(NADIR_ID, **CALM).unwrapped
    env.reset(seed=seed, options={"rate": rate})
    start = (env.attitude.copy(), env.body_rates.copy(), float(env.batch.equipment.anomaly[0]))
    start = (*start, env.wheel_momentum.copy())
    for _ in range(round(SECONDS / env.scenario.dt)):
        _, _, terminated, truncated, _ = env.step(action)
        assert not (terminated or truncated)
    return env, start


def _both_nadir(seed: int, rate: list[float]) -> tuple[np.ndarray, np.ndarray, float]:
    """Our NadirPoint env and Basilisk's (no sensors) from the same start under
    :data:`NADIR_ACTION` for :data:`SECONDS`: our final body rates, Basilisk's, and the angle
    between the final attitudes."""
    env, (q0, omega0, anomaly, wheels0) = _ours_nadir(seed, NADIR_ACTION, rate)
    scenario = find(NADIR_ID).with_overrides(**CALM)
    torque, dipole = spacecraft.nadir_commands(scenario, tuple(NADIR_ACTION))
    _, q, omega = spacecraft.basilisk_nadir_spacecraft(
        scenario, q0, omega0, anomaly, wheels0, torque, dipole, SECONDS, sensors=False
    )
    return env.body_rates.copy(), omega, _angle(env.attitude, q)


@pytest.mark.engines
@pytest.mark.parametrize("seed", [0, 4])
def test_basilisk_flies_the_same_nadir_spacecraft(seed):
    """120 s from the same start (the wheels at rest, h_w = 0, as a reset leaves them: Ω =
    −ĝ·ω), the disturbances off, measured (seeds 0, 1, 3, 4):

    * wheels (0.05, −0.04, 0.05, −0.05) × 3.2 mN·m and rods 0.2·(0.7, −1, 0.4) A·m², body rates
      (0.01, −0.02, 0.005) rad/s: the final body rates differ by 1.2–1.8e-4 rad/s, while the
      actuators changed them by 0.054–0.063 rad/s against our zero-command run: 1.9–3.4e-3
      of the change; attitudes 5.1–5.7e-3 rad apart.
    * the same from rest (ω = 0): 0.9–2.6e-12 rad/s, ≤ 5.7e-11 of the change (0.046–0.052
      rad/s), attitudes ≤ 5.9e-10 rad apart: the gravity gradient (its planet as the module
      docstring sets it), the wheels' motor and friction, the field held over the control
      period and their coupling with the hub are Basilisk's to rounding.

    The residual with body rates is the first RK4 stage's wheel friction: wheels 0 and 1 start
    turning against their command (Ω₀ = −ĝ·ω₀ of the other sign) and reverse within ~2 ms. Our
    env holds the friction of the period's start capped at J_s|Ω₀|/dt (~3e-7 N·m, the wheels'
    module docstring); Basilisk's first stage of its first step takes the Coulomb friction at
    Ω₀, τ_c along the command, its other three τ_c against it: those two wheels' impulse
    differs from the other two's by τ_c h/3 = 8.3e-6 N·m·s (h = 0.5 s), outside the pyramid's
    null space (1, −1, 1, −1) where the common part cancels; J⁻¹ of it is 6.8e-5 rad/s, and
    after 10 s the rates differ by 6.1e-5 (measured, wheels alone); over the remaining 110 s,
    as the body spins up and the wheels' momentum grows, it grows to the figures above (not
    decomposed further). (From rest every wheel has the same first step, so it cancels.)
    Without a command the two differ by 7.4e-6 rad/s after 1 s and 5.8e-5 after 120 s: our
    friction stops the wheels relative to the body within the first period, while Basilisk's
    keep their start speed −ĝ·ω₀ (wheel 0: −0.0111 to −0.0105 rad/s over 5.5 s), its four RK4
    stages of a Coulomb friction that would stop RW0 within milliseconds alternating in sign
    (+, −, +, −, weights 1, 2, 2, 1) and cancelling (the stall of
    ``tests/test_wheel_presets.py``'s HR16 spin-down); the zero-command run is ours alone.
    Tolerances: a few times the worst measured figure."""
    pytest.importorskip("Basilisk")
    ours, theirs, angle = _both_nadir(seed, NADIR_RATE)
    env_free, _ = _ours_nadir(seed, np.zeros(7, dtype=np.float32), NADIR_RATE)
    change = np.linalg.norm(ours - env_free.body_rates)
    difference = np.linalg.norm(ours - theirs)
    assert change > 0.04, change  # the wheels and rods matter
    assert difference < 5e-4, difference
    assert difference < 1e-2 * change, difference / change
    assert angle < 2e-2, angle

    # From rest: Basilisk's to rounding.
    ours, theirs, angle = _both_nadir(seed, [0.0, 0.0, 0.0])
    env_free, _ = _ours_nadir(seed, np.zeros(7, dtype=np.float32), [0.0, 0.0, 0.0])
    change = np.linalg.norm(ours - env_free.body_rates)
    assert np.linalg.norm(ours - theirs) < 1e-11
    assert np.linalg.norm(ours - theirs) < 3e-10 * change
    assert angle < 2e-9, angle


def test_basilisk_nadir_refuses_what_it_would_not_reproduce():
    scenario = find(NADIR_ID)
    q0, omega0, anomaly, _ = spacecraft.start_state(scenario)
    torque, dipole = spacecraft.nadir_commands(scenario)
    wheels = np.zeros(4)
    with pytest.raises(ValueError, match="wheels and the gravity gradient must be on"):
        spacecraft.basilisk_nadir_spacecraft(find(ID), q0, omega0, anomaly, wheels, torque, dipole, 1.0)
    with pytest.raises(ValueError, match="ideal wheels"):
        spacecraft.basilisk_nadir_spacecraft(
            scenario.with_overrides(wheel_model="ideal"), q0, omega0, anomaly, wheels, torque, dipole, 1.0
        )
    with pytest.raises(ValueError, match=r"wheel_torque must hold one entry per wheel \(4 numbers\), got"):
        spacecraft.basilisk_nadir_spacecraft(scenario, q0, omega0, anomaly, wheels, torque[:3], dipole, 1.0)
    with pytest.raises(ValueError, match=r"wheel_momentum must hold one entry per wheel \(4 numbers\), got"):
        spacecraft.basilisk_nadir_spacecraft(scenario, q0, omega0, anomaly, np.zeros(3), torque, dipole, 1.0)
    with pytest.raises(ValueError, match="multiple of the sub-step"):
        spacecraft.basilisk_nadir_spacecraft(scenario, q0, omega0, anomaly, wheels, torque, dipole, 0.7)


@pytest.mark.engines
def test_quick_run_writes_both_files(tmp_path):
    """Files, positive finite ratios and the CPU model; never a timing."""
    pytest.importorskip("Basilisk")
    report = spacecraft.run(tmp_path, quick=True)
    assert (tmp_path / "spacecraft.md").read_text().strip() == report.text
    with open(tmp_path / "spacecraft.csv") as f:
        rows = list(csv.DictReader(f))
    assert {(r["spacecraft"], r["engine"]) for r in rows} == {
        ("MagDetumble", "basilisk"),
        ("MagDetumble", "rigidrot_gym"),
        ("NadirPoint", "basilisk"),
        ("NadirPoint", "rigidrot_gym"),
        ("NadirPoint-truth", "rigidrot_gym"),
    }
    assert all(float(r["s_per_body_per_simulated_s"]) > 0.0 for r in rows)
    for ratio in (report.ratio, report.nadir_ratio, report.nadir_truth_ratio):
        assert math.isfinite(ratio) and ratio > 0.0
        assert f"{ratio:.3g}×" in report.text
    assert report.machine and report.machine in report.text
    assert "without the filter" in report.text

"""The spacecraft benchmark: Basilisk flies the same MagDetumble spacecraft as our env, and
the quick run writes its files."""

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


def _angle(q1: np.ndarray, q2: np.ndarray) -> float:
    """The rotation angle (rad) between two attitudes, either sign of either."""
    w = q1[0] * q2[0] + q1[1:] @ q2[1:]
    v = q1[0] * q2[1:] - q2[0] * q1[1:] - np.cross(q1[1:], q2[1:])
    return 2.0 * math.atan2(float(np.linalg.norm(v)), abs(float(w)))


def _both(seed: int, action: np.ndarray, **overrides) -> tuple[np.ndarray, np.ndarray, float]:
    """Our single env and Basilisk from the same start (the env's drawn attitude and mean
    anomaly, :data:`RATE`) under the constant ``action`` for :data:`SECONDS`: our final
    body rates, Basilisk's, and the angle between the final attitudes."""
    env = gym.make(ID, **overrides).unwrapped
    env.reset(seed=seed, options={"rate": RATE})
    anomaly = float(env.batch._equipment.anomaly[0])
    q0, omega0 = env.attitude.copy(), env.body_rates.copy()
    for _ in range(round(SECONDS / env.scenario.dt)):
        env.step(action)
    scenario = find(ID).with_overrides(**overrides)
    dipole = action.astype(float) * np.asarray(scenario.magnetorquer_max_dipole)
    _, q, omega = spacecraft.basilisk_spacecraft(scenario, q0, omega0, anomaly, dipole, SECONDS)
    return env.body_rates.copy(), omega, _angle(env.attitude, q)


@pytest.mark.engines
@pytest.mark.parametrize("seed", [0, 4])
def test_basilisk_flies_the_same_spacecraft(seed):
    """120 s from the same start, measured (seeds 0, 1, 3, 4):

    * dipole 0.2·(0.7, −1, 0.4) A·m²: the final body rates differ by 0.6–4.6e-6 rad/s, while
      the torque changed them by 4.9–8.9e-3 rad/s against the zero-dipole run: 0.9–9.5e-4 of
      the change; attitudes 3–7e-5 rad apart;
    * zero dipole: 5.7e-17 rad/s (Euler's equations under RK4 at the same 0.5 s steps in
      both; the attitude, MRPs against quaternions, 4–5e-9 rad).

    The residual with torque is the field's hold: ours is the field of the 1 s period's
    start (0.5 s old on average), Basilisk's that of the 0.5 s task step's start (0.25 s
    old); along this orbit the field turns at about twice the orbital rate, 2.2e-3 rad/s,
    so the torques differ by ~0.25 s × 2.2e-3 rad/s ≈ 5e-4 of themselves, the size of
    the measured ratio. Our env with a 0.5 s control period (one sub-step) holds the field
    as Basilisk does: the rates then agree to 0.8–4.1e-11 rad/s (≤ 7.2e-9 of the change),
    which also checks Basilisk's field (orbit, turning Earth, coefficients) against ours.
    Tolerances: a few times the worst measured figure."""
    pytest.importorskip("Basilisk")
    ours, theirs, angle = _both(seed, ACTION)
    ours_free, theirs_free, angle_free = _both(seed, np.zeros(3, dtype=np.float32))
    change = np.linalg.norm(ours - ours_free)
    difference = np.linalg.norm(ours - theirs)
    assert change > 4e-3, change  # the torque matters
    assert difference < 1.5e-5, difference
    assert difference < 3e-3 * change, difference / change
    assert angle < 2e-4, angle
    assert np.linalg.norm(ours_free - theirs_free) < 1e-12
    assert angle_free < 2e-8, angle_free

    # Held over the same 0.5 s, the field is Basilisk's to rounding: the residual above is the hold.
    same_hold, theirs_same, _ = _both(seed, ACTION, dt=0.5, substeps=1)
    assert np.linalg.norm(same_hold - theirs_same) < 2e-10
    assert np.linalg.norm(same_hold - theirs_same) < 3e-8 * change


def test_basilisk_refuses_what_it_would_not_reproduce():
    scenario = find(ID)
    start = spacecraft.start_state(scenario)
    with pytest.raises(ValueError, match="multiple of the sub-step"):
        spacecraft.basilisk_spacecraft(scenario, *start, 0.7)
    with pytest.raises(ValueError, match="J2"):
        spacecraft.basilisk_spacecraft(scenario.with_overrides(orbit_j2=True), *start, 1.0)
    with pytest.raises(ValueError, match="must be on"):
        spacecraft.basilisk_spacecraft(find("RigidRot/Reorient-v0"), *start, 1.0)


@pytest.mark.engines
def test_quick_run_writes_both_files(tmp_path):
    """Files, a positive finite ratio and the CPU model; never a timing."""
    pytest.importorskip("Basilisk")
    report = spacecraft.run(tmp_path, quick=True)
    assert (tmp_path / "spacecraft.md").read_text().strip() == report.text
    with open(tmp_path / "spacecraft.csv") as f:
        rows = list(csv.DictReader(f))
    assert {r["engine"] for r in rows} == {"basilisk", "rigidrot_gym"}
    assert all(float(r["s_per_body_per_simulated_s"]) > 0.0 for r in rows)
    assert math.isfinite(report.ratio) and report.ratio > 0.0
    assert report.machine and report.machine in report.text
    assert f"{report.ratio:.3g}×" in report.text

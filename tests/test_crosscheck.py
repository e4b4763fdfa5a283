"""``rigidrot crosscheck``: the flip period from K, the interpolation of the work-precision
curves, a quick run of engines beside our methods, the CLI's output folder, and the
side-by-side animation."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from rigidrot_gym.physics.rotation.exact import torque_free
from rigidrot_gym.tools import crosscheck as cc
from rigidrot_gym.tools.cli import build_parser, main

pytest.importorskip("mujoco")
pytest.importorskip("Basilisk")

pytestmark = pytest.mark.engines


def test_exact_flip_period_matches_the_reversals_of_the_exact_solution():
    """2K(k)/λ from scipy's K against the sign changes of ω2 in our Jacobi-elliptic
    solution, on both sides of the separatrix (M² > 2EI2 and M² < 2EI2)."""
    inertia = np.array([1.0, 2.0, 3.0])
    for omega0 in ([0.01, 2.0, 0.01], [0.3, 2.0, 0.0], [0.0, 2.0, 0.3]):
        t = np.linspace(0.0, 60.0, 30_001)
        _, w = torque_free([1, 0, 0, 0], omega0, inertia, t)
        intervals = np.diff(cc.flip_times(t, w, axis=1))
        assert intervals.size >= 2
        np.testing.assert_allclose(intervals, cc.exact_flip_period(inertia, omega0), rtol=1e-6)
        # the same body as a tensor in a turned frame, the rates turned with it
        r = Rotation.from_rotvec([0.3, -0.5, 0.8])
        tensor = r.as_matrix() @ np.diag(inertia) @ r.as_matrix().T
        turned = cc.exact_flip_period(tensor, r.apply(omega0))
        assert turned == pytest.approx(cc.exact_flip_period(inertia, omega0), rel=1e-12)


def _point(method, dt, error, us):
    return cc.Point("p", method, "", dt, 1, error, error, 0.0, 0.0, math.nan, us)


def test_cost_and_error_interpolate_in_log_log_and_mark_bounds():
    # A first-order method: error = dt, 1 µs per step, so cost = 1/dt µs per second.
    points = [_point("a", dt, dt, 1.0) for dt in (0.1, 0.05, 0.025, 0.0125)]
    # A fourth-order one: error = dt⁴, 2 µs per step.
    points += [_point("b", dt, dt**4, 2.0) for dt in (0.1, 0.05, 0.025, 0.0125)]
    assert cc.measured_order(points, "p", "a") == pytest.approx(1.0)
    cost, mark = cc.cost_at_error(points, "p", "a", 0.03)  # between dt = 0.05 and 0.025
    assert mark == "" and cost == pytest.approx(1 / 0.03)
    cost, mark = cc.cost_at_error(points, "p", "a", 1e-3)  # beyond the sweep: order 1
    assert mark == "~" and cost == pytest.approx(80.0 * 0.0125 / 1e-3)
    cost, mark = cc.cost_at_error(points, "p", "b", 1e-3)  # reached at the coarsest step
    assert mark == "≤" and cost == pytest.approx(20.0)
    error, mark = cc.error_at_cost(points, "p", "a", 1 / 0.03)
    assert mark == "" and error == pytest.approx(0.03)
    assert cc.error_at_cost(points, "p", "b", 1e6) == (pytest.approx(0.0125**4), "≤")
    assert cc.error_at_cost(points, "p", "b", 1.0) == (pytest.approx(math.nan, nan_ok=True), "")
    # b reaches 0.03 at its coarsest step (cost ≤ 20): a costs at least 33.3 / 20 times more.
    assert cc.cheaper_by(points, "p", "a", ["b"], 0.03) == f">{(1 / 0.03) / 20:.3g}"


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("crosscheck")
    methods = ["pybullet", "mujoco_implicitfast", "mujoco_euler", "basilisk_rk4", "rk4"]
    results = cc.compare(methods, quick=True)
    return out, results, cc.write(out, results)


def test_quick_run_reports_every_engine_beside_our_methods(quick):
    out, results, text = quick
    for name in (
        "crosscheck.md",
        "crosscheck.csv",
        "drift.csv",
        "work_precision.png",
        "drift.png",
        "damping.png",
    ):
        assert (out / name).stat().st_size > 0, name
    for method in results.methods:
        assert f"| {method}" in text
    by = {(p.problem, p.method, p.dt): p for p in results.points}
    # First order: four times the rate, a quarter of the error; rk4 far more accurate.
    ratio = (
        by["tumbler", "pybullet", 1 / 80].attitude_error / by["tumbler", "pybullet", 1 / 320].attitude_error
    )
    assert 3.5 < ratio < 4.5
    assert by["tumbler", "rk4", 1 / 320].attitude_error < 1e-9
    assert by["tumbler", "basilisk_rk4", 1 / 320].attitude_error < 1e-9
    # MuJoCo's Euler is PyBullet's multibody step (see test_engines).
    assert by["torque", "mujoco_euler", 1 / 80].attitude_error == pytest.approx(
        by["torque", "pybullet", 1 / 80].attitude_error, rel=1e-9
    )
    # implicitfast loses energy torque-free, Euler gains it; the damping goes as (h|ω|)².
    drift = {r.method: r for r in results.drifts}
    assert drift["mujoco_implicitfast"].energy_drift < 0 < drift["mujoco_euler"].energy_drift
    assert cc.damping_slope(results.damping, "mujoco_implicitfast") == pytest.approx(2.0, abs=0.02)


def test_cli_writes_to_outputs_by_default_and_prints_the_folder(monkeypatch, tmp_path, capsys):
    assert build_parser().parse_args(["crosscheck"]).out == Path("outputs/crosscheck")
    monkeypatch.chdir(tmp_path)
    assert main(["crosscheck", "--quick", "--methods", "mujoco_rk4", "rk4"]) == 0
    assert "outputs/crosscheck/" in capsys.readouterr().out
    assert (tmp_path / "outputs" / "crosscheck" / "crosscheck.md").exists()


def test_animation_is_a_small_gif_of_four_labelled_tiles(tmp_path):
    from PIL import Image

    from rigidrot_gym.tools.animation import ANIMATED, side_by_side

    path = side_by_side(tmp_path / "tumbler.gif", quick=True)
    image = Image.open(path)
    assert image.format == "GIF" and image.n_frames == 13  # 3 s at 4 frames per second, both ends
    assert image.size[0] == len(ANIMATED) * 96
    assert path.stat().st_size < 2_000_000

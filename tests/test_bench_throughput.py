"""The throughput benchmark runs end to end (quick mode) and the numba cache is used."""

from __future__ import annotations

import csv
import math
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rigidrot_gym.tools.bench import phases, throughput
from rigidrot_gym.tools.cli import main


@pytest.mark.slow
def test_quick_throughput_benchmark(tmp_path, capsys):
    assert main(["bench", "throughput", "--quick", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    with open(tmp_path / "throughput.csv") as f:
        rows = list(csv.DictReader(f))
    series = {r["series"] for r in rows}
    assert series == {
        "RigidRot/Reorient-v0 native vector env",
        "RigidRot/Reorient-v0 SyncVectorEnv",
        "CartPole-v1 native vector env",
    }
    native = {int(r["num_envs"]) for r in rows if r["series"].endswith("native vector env")}
    assert native == set(throughput.COUNTS[:5])
    assert all(float(r["env_steps_per_s"]) > 0 for r in rows)
    assert "Pendulum-v1" in text and "CartPole-v1" in text
    assert f"({throughput.REALISTIC_ID} vs Pendulum-v1)" in text
    assert (tmp_path / "throughput.png").stat().st_size > 0
    # a second process loads every kernel the first one compiled from the cache
    assert "attitude.pipeline.control_period" in text and "again instead of loading" not in text
    # the report names the machine it was measured on: its ratios are that machine's
    assert f"Machine: {platform_model()} " in text
    # and the run's row in history.csv holds the ratios of its table
    with open(tmp_path / "history.csv") as f:
        (history,) = list(csv.DictReader(f))
    table = (tmp_path / "throughput.md").read_text()
    assert history["run"] == "quick" and history["machine"] in table
    single = _row(table, "(RigidRot/Reorient-v0 vs Pendulum-v1)")
    assert f"{history['single_reorient_vs_pendulum']} |" in single
    assert f"{history['vector_wheelreorient_vs_cartpole']} |" in _row(
        table, f"({throughput.REALISTIC_ID} vs CartPole-v1)"
    )


def _row(table: str, label: str) -> str:
    return next(line for line in table.splitlines() if label in line)


def test_history_rows_are_appended_under_one_header(tmp_path):
    path = tmp_path / "history.csv"
    row = dict.fromkeys(throughput.HISTORY_COLUMNS)
    throughput.append_history(path, {**row, "date": "2026-11-26", "single_reorient_vs_pendulum": 1.704})
    throughput.append_history(path, {**row, "date": "2026-11-27", "run": "quick"})
    lines = path.read_text().splitlines()
    assert lines[0] == ",".join(throughput.HISTORY_COLUMNS)
    assert lines[1].startswith("2026-11-26,,,,1.70,") and lines[2] == "2026-11-27,,,quick" + "," * 6


def test_a_run_names_the_checkout_commit_it_measured():
    root = Path(throughput.__file__).resolve().parents[3]
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True)
    if head.returncode != 0:
        pytest.skip("not a git checkout")
    assert throughput.commit().startswith(head.stdout.strip()[:7])


def test_a_recompiled_kernel_is_named():
    assert throughput._recompiled_text({}) == ""
    text = throughput._recompiled_text({"rigidrot_gym.attitude.pipeline.control_period": 9.0})
    assert "attitude.pipeline.control_period again" in text


def platform_model() -> str:
    """The CPU model as lscpu would print it: /proc/cpuinfo's first "model name"."""
    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        return platform.processor() or platform.machine()
    return next(
        line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines() if "model name" in line
    )


def test_the_machine_names_the_cpu_numba_compiles_for():
    # NUMBA_CPU_NAME=generic (numba's setting for caches that other CPUs can load): the
    # report must not name the host's CPU as the one the kernels were compiled for.
    code = "from rigidrot_gym.tools.bench.throughput import machine; print(machine())"
    for cpu in ("generic", "skylake-avx512"):
        env = {**os.environ, "NUMBA_CPU_NAME": cpu}
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        assert f"(numba compiles for {cpu})," in done.stdout


def test_the_peak_loop_does_the_multiply_adds_it_counts():
    # One pass: eight chains x + k (k = 0 … 7), each through 16 steps v ← a v + b, summed,
    # less 28: 8 aⁿ x + 28 aⁿ + 8 b (1 − aⁿ)/(1 − a) − 28 with n = 16 (a geometric series).
    x, a, b, n = np.array([0.5, 2.0]), 0.75, 0.125, 16
    expected = 8 * a**n * x + 28 * a**n + 8 * b * (1 - a**n) / (1 - a) - 28
    phases._multiply_add(x, a, b, 1)
    np.testing.assert_allclose(x, expected, rtol=1e-13)
    assert phases._FLOPS_PER_ELEMENT == 2 * 8 * n


@pytest.mark.parametrize(("ns", "says"), [(20.0, "2.0× that"), (5.0, "that loop did not bound the step")])
def test_a_step_faster_than_the_peak_loop_is_not_reported_as_beyond_the_limit(ns, says):
    # 255 operations at 25.5 GFLOP/s: 10 ns is the limit
    peak = phases.RK4_FLOPS / 10e-9
    text = "\n".join(throughput._phase_text("X-v0", 4, "rk4", {"integration (per sub-step)": ns}, peak))
    assert says in text, text
    assert "10.0 ns for those operations" in text
    assert math.isclose(peak, 25.5e9)


def test_the_readme_and_the_performance_page_quote_the_committed_run():
    root = Path(__file__).resolve().parents[1]
    committed = (root / "benchmarks/results/throughput/throughput.md").read_text()

    def ratio(label: str) -> str:
        return _row(committed, label).rstrip(" |").rsplit("|", 1)[-1].strip()

    single = ratio("(RigidRot/Reorient-v0 vs Pendulum-v1)")
    vector = ratio("4096 envs, env-steps/s (RigidRot/Reorient-v0 vs CartPole-v1)")
    threads = ratio("2 threads (`num_threads=2`), env-steps/s (RigidRot/Reorient-v0 vs CartPole-v1 on one)")
    readme = (root / "README.md").read_text()
    assert _row(readme, "`RigidRot/Reorient-v0` against `Pendulum-v1`").endswith(f"| {single} |")
    assert _row(readme, "4096 envs: `RigidRot/Reorient-v0` against").endswith(f"| {vector} |")
    assert _row(readme, "the same on 2 threads, against").endswith(f"| {threads} |")
    page = (root / "docs/performance.md").read_text()
    assert _row(page, "`RigidRot/Reorient-v0` vs `Pendulum-v1`").endswith(f"| {single} |")
    assert _row(page, "4096 envs, `RigidRot/Reorient-v0` vs").endswith(f"| {vector} |")
    assert _row(page, "the same on 2 threads").endswith(f"| {threads} |")

"""The throughput benchmark runs end to end (quick mode) and the numba cache is used."""

from __future__ import annotations

import csv

from rigidrot_gym.tools.bench import throughput
from rigidrot_gym.tools.cli import main


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


def test_a_second_process_loads_every_kernel_from_the_cache():
    times = throughput.compile_times()
    assert times.kernels and not times.recompiled, times

"""One campaign of the control benchmark in this process against the same on a Ray cluster.

``rigidrot bench ray`` plans a campaign (by default 4 controllers × 2 scenarios × 5 cases
× 1000 seeds: 40 000 episodes), then, for each block size asked for, alternates runs in
this process (:func:`rigidrot_gym.tools.bench.campaign.run`, tasks one after the other)
with runs on the cluster (the same call with ``use_ray=True``) and reports the median wall
times, their ratio, and two per-task overheads:

* round trip: the mean wall time of a Ray task that does nothing, submitted and awaited
  one at a time (scheduling, dispatch, result);
* effective: (slots × T_cluster − T_local) / tasks, the CPU time the cluster spends per
  task beyond the work itself, idle slots at the end of the run included (slots = the
  cluster's CPUs over the CPUs per task).

Without ``--address`` it starts a local cluster of two nodes of one CPU each
(``ray.cluster_utils.Cluster``) and removes it afterwards. Before timing, both sides run a
small campaign once, so the numba kernels are loaded in every process. Every cluster run
is checked to give the local tables bit for bit.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from rigidrot_gym.attitude.scenario import find
from rigidrot_gym.tools.bench import campaign, control, policies
from rigidrot_gym.tools.report import markdown_table, write_results

POLICIES = ("quaternion_feedback", "pd", "lqr", "sliding_mode")
INTEGRATORS = ("semi_implicit", "rk4", "nielsen_krenk")
INERTIA = control.INERTIA_SCALES


def _plan(makers: dict, seeds: range, block: int) -> list[control.Task]:
    """Each scenario's own integrator at every inertia scale, the other integrators at ×1:
    the 5 cases (of 9 in the cross product) the committed timings measured."""
    tasks = []
    for scenario in map(find, control.DEFAULT_SCENARIOS):
        others = [i for i in INTEGRATORS if i != scenario.integrator]
        tasks += control.plan(makers, [scenario], [scenario.integrator], seeds, INERTIA, block)
        tasks += control.plan(makers, [scenario], others, seeds, [1.0], block)
    return tasks


@dataclass(frozen=True)
class Row:
    """The timings of one block size."""

    block_size: int
    tasks: int
    episodes: int
    slots: float
    local_s: float
    cluster_s: float
    speedup: float
    round_trip_ms: float
    effective_overhead_ms: float
    identical: bool


@contextmanager
def two_node_cluster(cpus_per_node: int = 1) -> Iterator[str]:
    """A head and a worker node on this machine, bound to 127.0.0.1 (started here, removed
    after); its address."""
    ray = campaign.import_ray(local=True)
    from ray.cluster_utils import Cluster

    local = {"node_ip_address": campaign.LOCAL_ADDRESS, "num_cpus": cpus_per_node}
    cluster = Cluster(initialize_head=True, head_node_args={**local, "include_dashboard": False})
    try:
        cluster.add_node(**local)
        cluster.wait_for_nodes()
        yield cluster.address
    finally:
        if ray.is_initialized():
            ray.shutdown()
        cluster.shutdown()


@contextmanager
def _given(address: str) -> Iterator[str]:
    """An existing cluster: nothing to start or remove; the driver disconnects after."""
    import ray

    try:
        yield address
    finally:
        if ray.is_initialized():
            ray.shutdown()


def _noop() -> None:
    return None


def round_trip_ms(count: int = 200) -> float:
    """Mean wall time of a Ray task that does nothing, one at a time (after a warm-up)."""
    import ray

    task = ray.remote(_noop).options(num_cpus=1)
    ray.get([task.remote() for _ in range(8)])
    start = time.perf_counter()
    for _ in range(count):
        ray.get(task.remote())
    return (time.perf_counter() - start) / count * 1e3


def _same(a: list[control.Summary], b: list[control.Summary]) -> bool:
    return [repr(vars(s)) for s in a] == [repr(vars(s)) for s in b]


def run(
    out_dir: Path,
    address: str | None = None,
    seeds: int = 1000,
    block_sizes: Sequence[int] = (1000, 250),
    repeats: int = 3,
    progress: bool = True,
) -> str:
    """Measure, write ``ray.md`` and ``ray.csv`` into ``out_dir``, return the table."""
    ray = campaign.import_ray(local=address is None)

    makers = policies.resolve(list(POLICIES))
    warmup = _plan(makers, range(4), 4)
    shards = out_dir / "shards"
    rows = []
    with two_node_cluster() if address is None else _given(address) as cluster_address:
        ray.init(address=cluster_address, logging_level="WARNING", log_to_driver=False)
        slots_total = ray.cluster_resources().get("CPU", 0.0)
        campaign.run(warmup, makers, shards / "warmup", progress=False)
        campaign.run(warmup, makers, shards / "warmup", use_ray=True, progress=False)
        trip = round_trip_ms()
        for block in block_sizes:
            tasks = _plan(makers, range(seeds), block)
            local, cluster, identical = [], [], True
            for _ in range(repeats):
                start = time.perf_counter()
                here = campaign.run(tasks, makers, shards / "local", progress=progress)
                local.append(time.perf_counter() - start)
                start = time.perf_counter()
                there = campaign.run(tasks, makers, shards / "cluster", use_ray=True, progress=progress)
                cluster.append(time.perf_counter() - start)
                identical &= _same(control.gather(tasks, here)[0], control.gather(tasks, there)[0])
            t_local, t_cluster = statistics.median(local), statistics.median(cluster)
            rows.append(
                Row(
                    block_size=block,
                    tasks=len(tasks),
                    episodes=sum(len(t.seeds) for t in tasks),
                    slots=slots_total,
                    local_s=t_local,
                    cluster_s=t_cluster,
                    speedup=t_local / t_cluster,
                    round_trip_ms=trip,
                    effective_overhead_ms=(slots_total * t_cluster - t_local) / len(tasks) * 1e3,
                    identical=identical,
                )
            )
    table = markdown_table(
        (
            "seeds per task",
            "tasks",
            "episodes",
            "cluster CPUs",
            "one process (s)",
            "cluster (s)",
            "speed-up",
            "no-op task round trip (ms)",
            "effective overhead per task (ms)",
            "tables identical",
        ),
        [
            (
                r.block_size,
                r.tasks,
                r.episodes,
                f"{r.slots:g}",
                f"{r.local_s:.2f}",
                f"{r.cluster_s:.2f}",
                f"{r.speedup:.2f}",
                f"{r.round_trip_ms:.2f}",
                f"{r.effective_overhead_ms:.0f}",
                "yes" if r.identical else "NO",
            )
            for r in rows
        ],
    )
    write_results(out_dir, "ray", table, rows)
    return table

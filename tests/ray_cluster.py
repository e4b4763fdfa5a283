"""A real two-node Ray cluster on 127.0.0.1 for the tests, and the worker processes it runs.

Both nodes are started by this process (``ray.cluster_utils.Cluster``, each with its CPU
count set explicitly) and removed afterwards; nothing else on the machine is touched.
``conftest.py`` keeps Ray on the loopback address (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def two_node_cluster(head_cpus: int = 1, worker_cpus: int = 2) -> Iterator[object]:
    """A head node and a worker node on 127.0.0.1, this process connected as the driver."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    node = {"node_ip_address": "127.0.0.1", "object_store_memory": 100 * 1024**2}
    cluster = Cluster(
        initialize_head=True,
        head_node_args={**node, "num_cpus": head_cpus, "include_dashboard": False},
        shutdown_at_exit=True,
    )
    try:
        cluster.add_node(**node, num_cpus=worker_cpus)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, logging_level="WARNING", log_to_driver=False)
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


def _parent(pid: int) -> int:
    # /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces, so split after ")".
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def descendants_named(prefix: str) -> list[int]:
    """Pids of this process's descendants whose command line starts with ``prefix`` (Ray
    names a worker process ``ray::<function>`` while it runs a task)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if not (entry / "cmdline").read_bytes().startswith(prefix.encode()):
                continue
            pid = int(entry.name)
            while pid > 1 and pid != os.getpid():
                pid = _parent(pid)
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue  # the process ended while we looked
        if pid == os.getpid():
            found.append(int(entry.name))
    return found

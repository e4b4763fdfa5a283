"""Fixtures shared by several test modules."""

from __future__ import annotations

import os

import pytest

# Ray resolves 127.0.0.1 to the machine's outward address unless told that clusters are
# local only; read when ray is first imported, so set before any test imports it.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


@pytest.fixture(scope="session")
def ray_cluster():
    """One two-node Ray cluster on 127.0.0.1 for the session (started on first use: about
    20 s), this process connected to it as the driver; removed at the end."""
    from ray_cluster import two_node_cluster

    with two_node_cluster(head_cpus=1, worker_cpus=2) as cluster:
        yield cluster

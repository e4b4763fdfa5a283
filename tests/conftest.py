"""Shared pytest configuration: the hypothesis profiles of the property tests, and the
Ray cluster of the distributed tests.

Hypothesis: "ci" (the default) runs 25 examples per property, derandomised (the same
examples on every run) and without an example database (nothing written to the
checkout), so CI is quick and repeatable. "long" runs many random examples, minutes, on
demand:

    HYPOTHESIS_PROFILE=long python -m pytest tests/test_properties.py tests/test_env_properties.py
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

# Ray resolves 127.0.0.1 to the machine's outward address unless told that clusters are
# local only; read when ray is first imported, so set before any test imports it.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

_SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile(
    "ci", max_examples=25, deadline=None, derandomize=True, database=None, suppress_health_check=_SLOW_IS_FINE
)
settings.register_profile("long", max_examples=2000, deadline=None, suppress_health_check=_SLOW_IS_FINE)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def ray_cluster():
    """One two-node Ray cluster on 127.0.0.1 for the session (started on first use: about
    20 s), this process connected to it as the driver; removed at the end."""
    from ray_cluster import two_node_cluster

    with two_node_cluster(head_cpus=1, worker_cpus=2) as cluster:
        yield cluster

"""Shared pytest configuration: the markers and ``--fast``, the durations file, the
hypothesis profiles of the property tests, and the Ray cluster of the distributed tests.

Markers (declared in pyproject.toml): ``slow`` (a test of several seconds or more),
``engines`` (PyBullet, MuJoCo or Basilisk run as methods), ``ray`` (a Ray cluster; given
to every test that uses the ``ray_cluster`` fixture), ``docs`` (the site's build),
``readme`` (the README's commands), ``training`` (an agent trained). ``--fast`` leaves
all of them out, the inner loop of a change to the core (``python3 dev.py test --fast``);
``-m`` selects as usual (``-m engines``). Every run writes each test's seconds (set-up,
call and tear-down) to ``outputs/test-durations.csv``, slowest first.

What the tests write to the system temp folder in this process (pytest's ``tmp_path``
included) goes into one folder of the run, removed at its end, and so do the default log
folders of stable-baselines3 (``SB3-*``) in the subprocesses too (``SB3_LOGDIR``); other
subprocesses keep the system's temp folder (Ray's socket paths must stay short).

Hypothesis: "ci" (the default) runs 25 examples per property, derandomised (the same
examples on every run) and without an example database (nothing written to the
checkout), so CI is quick and repeatable. "long" runs many random examples, minutes, on
demand:

    HYPOTHESIS_PROFILE=long python -m pytest tests/test_properties.py tests/test_env_properties.py
"""

from __future__ import annotations

import csv
import os
import shutil
import tempfile
from collections import defaultdict
from pathlib import Path

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

# What --fast leaves out.
NOT_FAST = ("slow", "engines", "ray", "docs", "readme", "training")
# The run's temp folder, for the pytest-xdist workers the controller starts.
_TEMP = "RIGIDROT_TEST_TEMP"
DURATIONS = Path(__file__).resolve().parents[1] / "outputs" / "test-durations.csv"
_seconds: dict[str, float] = defaultdict(float)


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        # A pytest-xdist worker: the controller made the run's folder before starting it.
        tempfile.tempdir = os.environ[_TEMP]
        return
    config._rigidrot_temp = tempfile.mkdtemp(prefix="rigidrot-tests-")
    # As the system's temp folder (mkdtemp makes it 0700): tests that run a child as another
    # user (test_jit_cache drops root's privileges) reach their folders inside it.
    os.chmod(config._rigidrot_temp, 0o1777)
    tempfile.tempdir = config._rigidrot_temp
    os.environ[_TEMP] = config._rigidrot_temp
    os.environ["SB3_LOGDIR"] = os.path.join(config._rigidrot_temp, "sb3")


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = getattr(config, "_rigidrot_temp", None)
    if folder is not None:
        tempfile.tempdir = None
        os.environ.pop(_TEMP, None)
        os.environ.pop("SB3_LOGDIR", None)
        shutil.rmtree(folder, ignore_errors=True)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast",
        action="store_true",
        help=f"leave out the tests marked {', '.join(NOT_FAST)} (the inner loop: a few minutes)",
    )


def _shares_a_fixture(item: pytest.Item) -> bool:
    """The test uses a fixture built once for its module (or class)."""
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    return any(d and d[-1].scope in ("module", "class", "package") for d in defs)


def pytest_itemcollected(item: pytest.Item) -> None:
    # Under pytest-xdist's --dist loadgroup (what dev.py asks for) a group runs in one worker:
    # all the Ray tests, so that one cluster serves them, and the tests of a module that
    # share a module-scoped fixture, so that it is built once; every other test goes to
    # whichever worker is free. Marked as each test is collected: xdist reads the groups
    # when the collection is modified.
    if "ray_cluster" in getattr(item, "fixturenames", ()):
        item.add_marker(pytest.mark.ray)
        item.add_marker(pytest.mark.xdist_group("ray"))
    elif _shares_a_fixture(item):
        item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--fast"):
        return
    left_out = [item for item in items if any(item.get_closest_marker(m) for m in NOT_FAST)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if not any(item.get_closest_marker(m) for m in NOT_FAST)]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _seconds[report.nodeid] += report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not _seconds or hasattr(session.config, "workerinput"):
        return
    DURATIONS.parent.mkdir(exist_ok=True)
    with DURATIONS.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["test", "seconds"])
        for nodeid, seconds in sorted(_seconds.items(), key=lambda kv: -kv[1]):
            writer.writerow([nodeid, f"{seconds:.3f}"])


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    if not _seconds:
        return
    by_module: dict[str, float] = defaultdict(float)
    for nodeid, seconds in _seconds.items():
        by_module[nodeid.split("::")[0]] += seconds
    terminalreporter.write_sep("=", "seconds by test module")
    for module, seconds in sorted(by_module.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"{seconds:8.1f}  {module}")
    total = sum(by_module.values())
    terminalreporter.write_line(f"{total:8.1f}  in all; every test's: {DURATIONS}")


@pytest.fixture(scope="session")
def ray_cluster():
    """One two-node Ray cluster on 127.0.0.1 for the session (started on first use: about
    20 s), this process connected to it as the driver; removed at the end."""
    from ray_cluster import two_node_cluster

    with two_node_cluster(head_cpus=1, worker_cpus=2) as cluster:
        yield cluster

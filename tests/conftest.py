"""Shared pytest configuration: the markers and ``--fast``, the durations file, the
hypothesis profiles of the property tests, and the Ray cluster of the distributed tests.

Markers (declared in pyproject.toml): ``slow`` (a test of several seconds or more),
``engines`` (PyBullet, MuJoCo or Basilisk run as methods), ``ray`` (a Ray cluster; given
to every test that uses the ``ray_cluster`` fixture), ``docs`` (the site's build),
``readme`` (the README's commands), ``training`` (an agent trained). ``--fast`` leaves
all of them out, the inner loop of a change to the core (``python3 dev.py test --fast``);
``-m`` selects as usual (``-m engines``). Every run writes each test's seconds (set-up,
call and tear-down) to ``outputs/test-durations.csv``, slowest first.

The summary counts the package's numba kernels the run's processes compiled (not loaded
from the cache) and names any compiled by more than one of them (numba_compat's compile
lock leaves none).

A run leaves nothing behind. It has a temp folder of its own, ``rigidrot-tests-*``,
removed at its end: ``tempfile.tempdir`` in this process, and ``TMPDIR`` and ``RAY_TMPDIR``
for the pytest-xdist workers and every subprocess, so that pytest's ``tmp_path``, the
default log folders of stable-baselines3 (``SB3-*``) and Ray's session folders all go
there. A run started by hand (not by a test) then fails if it added anything to the checkout
besides the tools' caches and the durations file, or one of those programs' folders to the
system temp folder, and says what.

Hypothesis: "ci" (the default) runs 25 examples per property, derandomised (the same
examples on every run) and without an example database (nothing written to the
checkout), so CI is quick and repeatable. "long" runs many random examples, minutes, on
demand:

    HYPOTHESIS_PROFILE=long python -m pytest tests/test_properties.py tests/test_env_properties.py
"""

from __future__ import annotations

import csv
import hashlib
import os
import shutil
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from numba.core import event

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
ROOT = Path(__file__).resolve().parents[1]
DURATIONS = ROOT / "outputs" / "test-durations.csv"
_seconds: dict[str, float] = defaultdict(float)

# What a run may add to the checkout: the tools' caches (folders of these names, anywhere)
# and the durations file.
_CACHES = {".pytest_cache", ".hypothesis", "__pycache__", ".ruff_cache"}
_MAY_ADD = {DURATIONS.relative_to(ROOT).as_posix(), DURATIONS.parent.relative_to(ROOT).as_posix()}
# Not compared: git's own folder, and the virtual environment (tests install elsewhere).
_UNCOMPARED = {".git", ".venv"}
# Ray keeps its sockets in its session folder, up to 70 bytes below $RAY_TMPDIR, and a Unix
# socket's path may not exceed 103 bytes (macOS; 107 on Linux): the run's folder, Ray's
# temp folder too, must be this short.
_RAY_ROOM = 33
_PREFIX = "rigidrot-tests-"
# What the tests' programs would leave in the system temp folder (stable-baselines3's log
# folders, Ray's sessions, pytest's and our own folders). Only these count: on a shared
# machine other programs write there too.
_OURS = ("SB3-", "ray", "pytest-of-", "rigidrot")
_ENVIRONMENT = ("TMPDIR", "RAY_TMPDIR")


def _checkout() -> set[str]:
    """Every file and folder of the checkout, relative to it, the caches' contents and
    :data:`_UNCOMPARED` left out."""
    found = set()
    for folder, dirs, files in os.walk(ROOT):
        here = Path(folder).relative_to(ROOT)
        dirs[:] = [d for d in dirs if d not in _CACHES and not (here == Path() and d in _UNCOMPARED)]
        found.update((here / name).as_posix() for name in dirs + files)
    return found


@dataclass
class _Run:
    """The run's temp folder and what it stands in for; in a run started by hand, the system
    temp folder's entries and the checkout's paths at the start, to compare at the end."""

    folder: str
    replaced: dict[str, str | None]  # _ENVIRONMENT's values before
    replaced_tempdir: str | None
    system: str
    before: tuple[set[str], set[str]] | None

    @classmethod
    def start(cls, check: bool) -> _Run:
        system = tempfile.gettempdir()
        parent = system
        if len(os.path.join(system, _PREFIX + "x" * 8)) > _RAY_ROOM and os.path.isdir("/tmp"):
            parent = "/tmp"  # macOS's temp folder (/var/folders/...) is too long for Ray
        before = (set(os.listdir(system)), _checkout()) if check else None
        replaced = {name: os.environ.get(name) for name in _ENVIRONMENT}
        run = cls(tempfile.mkdtemp(prefix=_PREFIX, dir=parent), replaced, tempfile.tempdir, system, before)
        # As the system's temp folder (mkdtemp makes it 0700): tests that run a child as
        # another user (test_jit_cache drops root's privileges) reach their folders inside it.
        os.chmod(run.folder, 0o1777)
        os.environ.update(dict.fromkeys(_ENVIRONMENT, run.folder))
        tempfile.tempdir = run.folder
        return run

    def finish(self) -> list[str]:
        """Put back what the run's folder stood in for and remove it; what the run added to
        the system temp folder (its own folder, if it could not be removed) and the checkout."""
        for name, value in self.replaced.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        tempfile.tempdir = self.replaced_tempdir
        shutil.rmtree(self.folder, ignore_errors=True)
        if self.before is None:
            return []
        system_before, checkout_before = self.before
        added = sorted(
            name for name in set(os.listdir(self.system)) - system_before if name.startswith(_OURS)
        )
        return [os.path.join(self.system, name) for name in added] + sorted(
            _checkout() - checkout_before - _MAY_ADD
        )


_RUN = pytest.StashKey[_Run]()
_LEFT = pytest.StashKey[list[str]]()
_COMPILED = pytest.StashKey[tuple[int, int, list[str]]]()
# Where each process of the run lists the package's kernels it compiled (not those it
# loaded from numba's cache), one file per process in the run's folder: the run reports
# how many, and any compiled by more than one process (numba_compat's lock leaves none).
_COMPILES = "compiled-kernels"


class _CompileRecorder(event.Listener):
    """A listener to numba's compile events: each cached kernel of the package this
    process compiles, by numba's key of its cache entry (the lock's), into its file."""

    def __init__(self) -> None:
        self.depth = 0  # the functions a kernel calls compile inside its event

    def on_start(self, ev) -> None:
        self.depth += 1
        dispatcher = ev.data["dispatcher"]
        module = getattr(dispatcher.py_func, "__module__", "") or ""
        index_key = getattr(getattr(dispatcher, "_cache", None), "_index_key", None)
        if self.depth > 1 or not module.startswith("rigidrot_gym") or index_key is None:
            return
        key = repr(index_key(ev.data["args"], dispatcher.targetctx.codegen())).encode()
        folder = Path(tempfile.gettempdir()) / _COMPILES
        folder.mkdir(exist_ok=True)
        with (folder / f"{os.getpid()}.txt").open("a") as f:
            f.write(f"{hashlib.sha256(key).hexdigest()[:16]} {dispatcher.py_func.__qualname__}\n")

    def on_end(self, ev) -> None:
        self.depth -= 1


def _compiled(folder: str) -> tuple[int, int, list[str]]:
    """The kernels the run's processes compiled: how many, in how many processes, and those
    compiled by more than one."""
    by_key: dict[str, set[str]] = defaultdict(set)
    names: dict[str, str] = {}
    files = list((Path(folder) / _COMPILES).glob("*.txt"))
    for path in files:
        for line in path.read_text().splitlines():
            key, name = line.split(" ", 1)
            by_key[key].add(path.stem)
            names[key] = name
    return len(by_key), len(files), sorted(names[k] for k, pids in by_key.items() if len(pids) > 1)


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        # A pytest-xdist worker: its environment holds the run's folder.
        tempfile.tempdir = os.environ["TMPDIR"]
    event.register("numba:compile", _CompileRecorder())


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    # Before pytest-xdist starts its workers (its own hook runs last), which inherit TMPDIR.
    if not hasattr(session.config, "workerinput"):
        # A run started by a test (test_markers collects in one) sees what the test's own run
        # writes meanwhile: the outer run checks.
        session.config.stash[_RUN] = _Run.start(check="PYTEST_CURRENT_TEST" not in os.environ)


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


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    # Last: after pytest-xdist's workers have ended, so that nothing writes any more.
    if hasattr(session.config, "workerinput"):
        return
    if _seconds:
        DURATIONS.parent.mkdir(exist_ok=True)
        with DURATIONS.open("w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(["test", "seconds"])
            for nodeid, seconds in sorted(_seconds.items(), key=lambda kv: -kv[1]):
                writer.writerow([nodeid, f"{seconds:.3f}"])
    run = session.config.stash.get(_RUN, None)
    if run is not None:
        session.config.stash[_COMPILED] = _compiled(run.folder)
    left = run.finish() if run is not None else []
    if left:
        session.config.stash[_LEFT] = left
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    if _seconds:
        by_module: dict[str, float] = defaultdict(float)
        for nodeid, seconds in _seconds.items():
            by_module[nodeid.split("::")[0]] += seconds
        terminalreporter.write_sep("=", "seconds by test module")
        for module, seconds in sorted(by_module.items(), key=lambda kv: -kv[1]):
            terminalreporter.write_line(f"{seconds:8.1f}  {module}")
        total = sum(by_module.values())
        terminalreporter.write_line(f"{total:8.1f}  in all; every test's: {DURATIONS}")
    compiled = config.stash.get(_COMPILED, None)
    if compiled is not None and compiled[0]:
        kernels, processes, twice = compiled
        terminalreporter.write_line(
            f"numba kernels of the package compiled in this run: {kernels}, in {processes} processes; "
            f"compiled by more than one process: {len(twice)}" + (f" ({', '.join(twice)})" if twice else "")
        )
    left = config.stash.get(_LEFT, [])
    if left:
        # The run fails for them (pytest's last line counts only tests).
        terminalreporter.write_sep("=", "added by this run (or meanwhile, on a shared machine)", red=True)
        for path in left:
            terminalreporter.write_line(path)


@pytest.fixture(scope="session")
def ray_cluster():
    """One two-node Ray cluster on 127.0.0.1 for the session (started on first use: about
    20 s), this process connected to it as the driver; removed at the end."""
    from ray_cluster import two_node_cluster

    with two_node_cluster(head_cpus=1, worker_cpus=2) as cluster:
        yield cluster


# Where rl_zoo3 puts its TimeLimit (rl_zoo3.gym_patches, run when rl_zoo3 is imported): in
# its version a step that terminates on the limit is not truncated, against Gymnasium's rule.
_TIME_LIMIT_HOMES = ("gymnasium.wrappers", "gymnasium.wrappers.common", "gymnasium.envs.registration")
_ABSENT = object()


@pytest.fixture(autouse=True)
def _gymnasium_s_own_time_limit():
    """A test that trains through the zoo in its worker's process (``training/train.py``'s
    ``main``) imports rl_zoo3, which replaces Gymnasium's ``TimeLimit`` for the rest of the
    process; each test gets back the ``TimeLimit`` it started with, so that what a later
    test in the same worker sees does not depend on which tests ran there before it."""
    import importlib

    homes = [importlib.import_module(name) for name in _TIME_LIMIT_HOMES]
    saved = [getattr(home, "TimeLimit", _ABSENT) for home in homes]
    yield
    for home, value in zip(homes, saved, strict=True):
        if value is _ABSENT:
            if hasattr(home, "TimeLimit"):
                delattr(home, "TimeLimit")
        else:
            home.TimeLimit = value

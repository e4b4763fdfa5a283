"""The package works where numba's disk cache cannot: no writable cache location (a
read-only install run by a user without a writable home), and damaged cache files
(issue 12, item 14). Each case runs for real in a fresh interpreter on a copy of the
package; run as root, the child drops to user ``nobody`` so that read-only means read-only.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numba
import numba.core.caching
import pytest
from compilations import COUNT_COMPILATIONS

from rigidrot_gym.physics.plumbing import numba_compat

ROOT = Path(__file__).resolve().parents[1]
NOBODY = 65534

# A kernel decorated like the package's own, added to the copy: it compiles in a fraction
# of a second, so the cache's life cycle can be followed over several processes.
PROBE = """
from numba import njit


@njit(cache=True)
def twice(x):
    return 2.0 * x
"""

# Prints what the parent checks: the probe's result, its cache hits and misses, the
# CacheWarnings raised, and optionally the last attitude of a real integrator kernel.
CHILD = """
import json, sys, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import rigidrot_gym
    from rigidrot_gym.physics import propagate
    from rigidrot_gym.physics._cache_probe import twice
    value = twice(1.5)
    q = None
    if "--real" in sys.argv:
        q = propagate([1, 0, 0, 0], [0, 0, 2.0], [1, 2, 3], 0.25, 4, method="euler").q[-1].tolist()
stats = twice.stats
print(json.dumps({
    "value": value, "q": q,
    "hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values()),
    "warnings": [str(w.message) for w in caught if w.category.__name__ == "CacheWarning"],
}))
"""


@pytest.fixture(autouse=True)
def reachable_interpreter():
    """Run as root, the child is ``nobody``: it must be able to reach this interpreter and
    its packages. A checkout in a private folder (``mktemp -d`` makes it 0700) is opened
    for traversal only (o+x, no reading of its listing) while the test runs."""
    opened = []
    if os.geteuid() == 0:
        for folder in {*Path(sys.executable).parents, *Path(_numpy_file()).parents}:
            mode = folder.stat().st_mode
            if not mode & stat.S_IXOTH:
                folder.chmod(mode | stat.S_IXOTH)
                opened.append((folder, mode))
    yield
    for folder, mode in opened:
        folder.chmod(mode)


def _numpy_file() -> str:
    """Where the installed numpy lives (the child imports it from the same place)."""
    import numpy

    return numpy.__file__


@pytest.fixture
def workspace():
    """A world-readable scratch folder holding a copy of the package with the probe."""
    folder = Path(tempfile.mkdtemp(prefix="rigidrot-cache-"))
    folder.chmod(0o755)
    install = folder / "install"
    shutil.copytree(
        ROOT / "rigidrot_gym", install / "rigidrot_gym", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(ROOT / "envs", install / "envs")
    (install / "rigidrot_gym" / "physics" / "_cache_probe.py").write_text(PROBE)
    yield folder
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir() and not path.is_symlink():
            path.chmod(0o755)
    shutil.rmtree(folder)


def _read_only(path: Path) -> None:
    for p in [path, *path.rglob("*")]:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _drop_privileges() -> None:
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def _child(folder: Path, *, cache_dir: Path | None, home: Path, real: bool = False) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "XDG_"))}
    env |= {"PYTHONPATH": str(folder / "install"), "HOME": str(home), "PYTHONDONTWRITEBYTECODE": "1"}
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *(["--real"] if real else [])],
        env=env,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=_drop_privileges if os.geteuid() == 0 else None,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.slow
def test_no_writable_cache_location_compiles_in_memory_with_one_warning(workspace):
    home = workspace / "home"
    home.mkdir()
    read_only_cache = workspace / "cache"
    read_only_cache.mkdir()
    _read_only(workspace / "install")
    _read_only(home)
    _read_only(read_only_cache)

    # Neither NUMBA_CACHE_DIR, the package's __pycache__ nor ~/.cache is writable: numba
    # alone raises "cannot cache function ...: no locator available" at import.
    for cache_dir, real in ((None, False), (read_only_cache, True)):
        out = _child(workspace, cache_dir=cache_dir, home=home, real=real)
        assert out["value"] == 3.0
        assert out["hits"] == 0 and out["misses"] == 1
        assert len(out["warnings"]) == 1 and "compiled in memory" in out["warnings"][0]
        if real:
            # Forward Euler about a principal axis turns by 2·atan(hω/2) per step; four
            # steps of h = 0.25 s at ω = 2 rad/s: half-angle 4·atan(0.25) about z.
            half = 4.0 * math.atan(0.25)
            assert out["q"] == pytest.approx([math.cos(half), 0.0, 0.0, math.sin(half)], abs=1e-15)
    assert not list((workspace / "install").rglob("__pycache__"))
    assert not list(read_only_cache.iterdir())


@pytest.mark.parametrize(
    ("suffix", "garbage", "error"),
    [
        # A protocol-0 LONG opcode with a bad literal: ValueError("invalid literal for int() ...").
        (".nbi", b"L12abc\n.", "invalid literal"),
        (".nbc", b"\x80\x05not a pickle", "UnpicklingError"),
    ],
)
@pytest.mark.slow
def test_a_damaged_cache_file_is_recompiled_and_rewritten(workspace, suffix, garbage, error):
    cache = workspace / "cache"
    cache.mkdir(mode=0o777)
    cache.chmod(0o777)
    home = workspace / "home"
    home.mkdir()

    def run() -> dict:
        return _child(workspace, cache_dir=cache, home=home)

    first = run()
    assert (first["hits"], first["misses"], first["warnings"]) == (0, 1, [])

    (damaged,) = [p for p in cache.rglob(f"_cache_probe.twice-*{suffix}")]
    damaged.write_bytes(garbage)
    out = run()
    assert out["value"] == 3.0 and (out["hits"], out["misses"]) == (0, 1)
    assert len(out["warnings"]) == 1 and error in out["warnings"][0]
    repaired = run()  # loads what the recompilation wrote
    assert (repaired["hits"], repaired["misses"], repaired["warnings"]) == (1, 0, [])


@pytest.mark.parametrize("keyed", [False, True])
def test_two_processes_saving_at_once_never_point_a_kernel_at_anothers_code(tmp_path, keyed):
    # Two processes share a cache folder (test or Ray workers). The second read the index
    # before the first saved, so numba's naming gives both the same data file; the first's
    # index lands last and the second's data: the first kernel's key then loads the second's
    # code. The package names each entry's file by its key (numba_compat._keyed_files).
    plain = numba.core.caching.IndexDataCacheFile
    files = numba_compat._keyed_files(plain) if keyed else plain
    first, second = files(str(tmp_path), "kernel", "stamp"), files(str(tmp_path), "kernel", "stamp")
    stale = second._load_index()
    second._load_index = lambda: dict(stale)
    second._save_index = lambda overloads: None  # overwritten by the first's, written after it
    first.save("key of the first", ("code of the first",))
    second.save("key of the second", ("code of the second",))
    loaded = first.load("key of the first")
    assert loaded == (("code of the first",) if keyed else ("code of the second",))


@pytest.mark.skipif(sys.platform == "win32", reason="the index lock is fcntl's")
def test_two_processes_saving_two_kernels_at_once_keep_both_entries(tmp_path):
    # Two workers save two kernels of one function (two signatures, two closures) at once:
    # the second saves its entry between the first's reading and writing the index. Without
    # the index's lock the first writes the index it read, and the second's entry is lost
    # (its kernel compiles again in the next process that needs it).
    files = numba_compat._keyed_files(numba.core.caching.IndexDataCacheFile)
    first, second = files(str(tmp_path), "kernel", "stamp"), files(str(tmp_path), "kernel", "stamp")
    saver = threading.Thread(target=second.save, args=("key of the second", ("code of the second",)))
    read = first._load_index

    def read_then_let_the_second_save():
        overloads = read()
        if not saver.is_alive() and saver.ident is None:
            saver.start()
            saver.join(0.5)  # the second finishes meanwhile, unless the index is locked
        return overloads

    first._load_index = read_then_let_the_second_save
    first.save("key of the first", ("code of the first",))
    saver.join()
    fresh = files(str(tmp_path), "kernel", "stamp")
    assert fresh.load("key of the first") == ("code of the first",)
    assert fresh.load("key of the second") == ("code of the second",)


# Waits for the parent's word, then runs a real integrator kernel; prints the qualified
# names of the kernels it compiled (not those it loaded from the cache) and the result.
RACER = (
    COUNT_COMPILATIONS
    + """
import json, os, sys, time
from rigidrot_gym.physics import propagate
ready, go = sys.argv[1:3]
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.001)
q = propagate([1, 0, 0, 0], [0, 0, 2.0], [1, 2, 3], 0.25, 4, method="rk4").q[-1].tolist()
print(json.dumps({"compiled": compiled, "q": q}))
"""
)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="the compile lock is fcntl's")
def test_two_processes_starting_at_once_compile_each_kernel_once(workspace):
    # pytest-xdist's workers start together and need the same kernels first: one compiles
    # each, the other waits and loads it (numba_compat._CompileLock). Without the lock both
    # compiled every kernel (measured: the same names in both lists).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_", "XDG_"))}
    env |= {
        "PYTHONPATH": str(workspace / "install"),
        "NUMBA_CACHE_DIR": str(workspace / "cache"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    go = workspace / "go"
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", RACER, str(workspace / f"ready{k}"), str(go)],
            env=env,
            cwd=workspace,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(2)
    ]
    try:
        deadline = time.monotonic() + 300
        while not all((workspace / f"ready{k}").exists() for k in range(2)):
            assert time.monotonic() < deadline and all(r.poll() is None for r in racers)
            time.sleep(0.01)
        go.touch()
        outs = [r.communicate(timeout=600) for r in racers]
    finally:
        for r in racers:
            r.kill()
    assert [r.returncode for r in racers] == [0, 0], [err for _, err in outs]
    first, second = (json.loads(out.splitlines()[-1]) for out, _ in outs)
    assert first["compiled"] or second["compiled"]  # the cache was empty: one of them compiled
    assert not set(first["compiled"]) & set(second["compiled"])
    assert first["q"] == second["q"]

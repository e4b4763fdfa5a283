"""The markers and ``--fast`` of ``conftest.py``: what the inner loop leaves out."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Modules whose every test needs what a marker stands for.
WHOLE_MODULES = {
    "engines": ["test_basilisk", "test_mujoco", "test_pybullet", "test_engines", "test_crosscheck"],
    "docs": ["test_docs"],
    "readme": ["test_readme"],
    "training": ["test_training", "test_rllib_ppo", "test_sweep"],
}


# One interpreter collects for every option set: the modules are imported once.
CHILD = """
import contextlib, io, json, sys
import pytest

class Grab:
    def pytest_collection_finish(self, session):
        self.ids = [item.nodeid for item in session.items]

found = {}
for options in json.loads(sys.argv[1]):
    grab = Grab()
    with contextlib.redirect_stdout(io.StringIO()):
        code = pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *options], plugins=[grab])
    assert code == 0, (options, code)
    found[" ".join(options)] = grab.ids
print(json.dumps(found))
"""


def _collected(*option_sets: list[str]) -> dict[str, set[str]]:
    """The test ids each option set selects."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(option_sets)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    return {key: set(ids) for key, ids in json.loads(out.stdout.splitlines()[-1]).items()}


@pytest.mark.slow
def test_fast_leaves_out_every_marked_test_and_keeps_the_rest():
    selected = _collected([], ["--fast"], *(["-m", marker] for marker in ("ray", *WHOLE_MODULES)))
    every, fast, ray = selected[""], selected["--fast"], selected["-m ray"]
    assert fast < every and len(fast) > len(every) // 2
    for module in (m for modules in WHOLE_MODULES.values() for m in modules):
        assert any(t.startswith(f"tests/{module}.py::") for t in every), module
        assert not any(t.startswith(f"tests/{module}.py::") for t in fast), module
    # The tests on the session's Ray cluster are marked by the fixture alone.
    assert any("test_ray_gives_the_local_tables" in t for t in ray)
    assert not ray & fast
    for marker, modules in WHOLE_MODULES.items():
        marked = selected[f"-m {marker}"]
        assert {t.split("::")[0] for t in marked} >= {f"tests/{m}.py" for m in modules}, marker


def test_what_the_tests_write_to_the_temp_folder_goes_into_the_runs_own(tmp_path):
    from stable_baselines3.common.logger import configure

    # stable-baselines3's logger without a folder writes to $SB3_LOGDIR, else makes
    # SB3-<time> in the temp folder
    folder = Path(configure(None, ["csv"]).get_dir())
    own = Path(tempfile.gettempdir())
    assert own.name.startswith("rigidrot-tests-")
    assert folder.is_relative_to(own) and tmp_path.is_relative_to(own)

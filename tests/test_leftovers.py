"""A test run leaves nothing behind (``conftest.py``): a run that adds one of its programs'
folders (here stable-baselines3's ``SB3-*``) to the system temp folder fails and names it; a
run that adds nothing passes, and so does one beside which another program writes there.
Each case is a run started as by hand (not marked as started by a test), with this suite's
``conftest.py`` and a temp folder of its own standing in for the system's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# Each writes where its tmp_path is, so that the case can look for it after the run.
CASES = {
    "tidy": "def test_tidy(tmp_path):\n    open({record!r}, 'w').write(str(tmp_path))\n",
    "litter": "def test_litter(tmp_path):\n    open({record!r}, 'w').write(str(tmp_path))\n"
    "    open({system!r} + '/SB3-litter', 'w').close()\n",
    # another program's file, written meanwhile on a shared machine: not the run's
    "foreign": "def test_foreign(tmp_path):\n    open({record!r}, 'w').write(str(tmp_path))\n"
    "    open({system!r} + '/someone-else.txt', 'w').close()\n",
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_run_fails_for_what_it_adds_to_the_system_temp_folder(tmp_path, case):
    system = tmp_path / "system"
    system.mkdir()
    record = tmp_path / "tmp_path.txt"
    (tmp_path / "test_case.py").write_text(CASES[case].format(system=str(system), record=str(record)))
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    env.update(
        TMPDIR=str(system), PYTHONPATH=os.pathsep.join(filter(None, [str(TESTS), env.get("PYTHONPATH")]))
    )
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q", "test_case.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    own = next(p for p in Path(record.read_text()).parents if p.name.startswith("rigidrot-tests-"))
    assert not own.exists()  # the run's own folder, tmp_path's too, removed
    if case in ("tidy", "foreign"):
        assert out.returncode == 0, out.stdout[-3000:]
        assert "added by this run" not in out.stdout
    else:
        assert out.returncode == 1, out.stdout[-3000:]
        assert "1 passed" in out.stdout
        section = out.stdout.split("added by this run", 1)[1]
        assert str(system / "SB3-litter") in section

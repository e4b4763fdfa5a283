#!/usr/bin/env python3
"""Set up and run the project with nothing but Python: ``python3 dev.py demo`` / ``python3 dev.py test``.

Each command installs what it needs into ``.venv`` on first use (created if missing) and
again whenever pyproject.toml changes, then runs: ``demo`` installs the package with the
engines the demo compares (:data:`INSTALLS` ``["demo"]``) and runs ``rigidrot demo``;
``test`` adds the rest (torch, training, Ray, the docs tools, the test tools) and runs
ruff and pytest. pip's own output shows the progress of an install.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if sys.platform == "win32" else "bin")
# What each command installs, in order. The test set holds the demo's, so after `test`
# the demo installs nothing. torch comes first, pinned to the CPU build the project is
# tested with: left to the [train] extra's range, pip would pick a build that pulls
# several GB of CUDA packages.
INSTALLS = {
    "demo": [["-e", ".[render,mujoco,basilisk]"]],
    "test": [["torch==2.13.0"], ["-e", ".[render,train,export,dev,ray,rllib,mujoco,basilisk,docs]"]],
}
# The installs that hold everything a command needs.
SUFFICES = {"demo": ("demo", "test"), "test": ("test",)}
# What a first install and a run take on a 2-core machine (printed before they start, so
# that a long wait is expected; README, "Install").
EXPECTED = {
    "demo": ("about 1 minute", "about 20 s the first time (it compiles), 3 s after"),
    "test": (
        "about 2 minutes",
        "about 17 minutes of pytest the first time (it compiles), 7 after; --fast 2-8",
    ),
}
COMMANDS = {
    "demo": [[str(BIN / "rigidrot"), "demo", *sys.argv[2:]]],
    "test": [
        [str(BIN / "ruff"), "check", "."],
        [str(BIN / "ruff"), "format", "--check", "."],
        # One worker per CPU (pytest-xdist); tests/conftest.py groups what must share a worker.
        [str(BIN / "python"), "-m", "pytest", "-n", "auto", "--dist", "loadgroup", *sys.argv[2:]],
    ],
}


def _run(cmd: list[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True)


def _stamp(command: str) -> Path:
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    return VENV / f".installed-{command}-{digest}"


def _install(command: str) -> None:
    if any(_stamp(c).exists() for c in SUFFICES[command]):
        return
    print(f"Setting up {VENV} for `{command}` ({EXPECTED[command][0]}, once)", flush=True)
    start = time.perf_counter()
    if not VENV.exists():
        venv.create(VENV, with_pip=True)
        _run([str(BIN / "python"), "-m", "pip", "install", "--upgrade", "pip"])
    for args in INSTALLS[command]:
        _run([str(BIN / "python"), "-m", "pip", "install", *args])
    _stamp(command).touch()
    print(f"Set up {VENV} in {time.perf_counter() - start:.0f} s; `source .venv/bin/activate` to use it")


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        print(f"usage: python3 dev.py {{{'|'.join(COMMANDS)}}} [args...]", file=sys.stderr)
        return 2
    command = sys.argv[1]
    _install(command)
    print(f"Running `{command}`: {EXPECTED[command][1]} on a 2-core machine", flush=True)
    try:
        for cmd in COMMANDS[command]:
            _run(cmd)
    except subprocess.CalledProcessError as err:
        return err.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())

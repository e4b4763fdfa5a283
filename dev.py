#!/usr/bin/env python3
"""Set up and run the project with nothing but Python: ``python3 dev.py demo`` / ``python3 dev.py test``.

Both create ``.venv`` on first use with everything the README uses (the package with the
extras of :data:`INSTALLS`) and reinstall into it whenever pyproject.toml
changes; then ``demo`` runs ``rigidrot demo`` and ``test`` runs ruff and pytest. pip's own
output shows the progress of an install.
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
# What the set-up installs, in order. torch comes first, pinned to the CPU build the
# project is tested with: left to the [train] extra's range, pip would pick a build that
# pulls several GB of CUDA packages.
INSTALLS = [["torch==2.13.0"], ["-e", ".[render,train,dev,ray,rllib,mujoco,basilisk,docs]"]]
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


def _install() -> None:
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    stamp = VENV / f".installed-{digest}"
    if stamp.exists():
        return
    print(f"Setting up {VENV} (once, and again when pyproject.toml changes; a few minutes)", flush=True)
    start = time.perf_counter()
    if not VENV.exists():
        venv.create(VENV, with_pip=True)
        _run([str(BIN / "python"), "-m", "pip", "install", "--upgrade", "pip"])
    for args in INSTALLS:
        _run([str(BIN / "python"), "-m", "pip", "install", *args])
    stamp.touch()
    print(f"Set up {VENV} in {time.perf_counter() - start:.0f} s; `source .venv/bin/activate` to use it")


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        print(f"usage: python3 dev.py {{{'|'.join(COMMANDS)}}} [args...]", file=sys.stderr)
        return 2
    _install()
    try:
        for cmd in COMMANDS[sys.argv[1]]:
            _run(cmd)
    except subprocess.CalledProcessError as err:
        return err.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())

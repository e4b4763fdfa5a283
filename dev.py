#!/usr/bin/env python3
"""Set up and run the project with nothing but Python: ``python3 dev.py demo`` / ``python3 dev.py test``.

Creates ``.venv`` on first use and (re)installs into it whenever pyproject.toml changes.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if sys.platform == "win32" else "bin")
# What each target installs, in order. torch must come first, pinned: any other version
# pulls several GB of CUDA packages.
INSTALLS = {
    "demo": [["-e", ".[render]"]],
    "test": [["torch==2.13.0"], ["-e", ".[dev,train,render,mujoco,basilisk]"]],
}
COMMANDS = {
    "demo": [[str(BIN / "rigidrot"), "demo", *sys.argv[2:]]],
    "test": [
        [str(BIN / "ruff"), "check", "."],
        [str(BIN / "ruff"), "format", "--check", "."],
        [str(BIN / "python"), "-m", "pytest", *sys.argv[2:]],
    ],
}


def _run(cmd: list[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True)


def _install(target: str) -> None:
    if not VENV.exists():
        venv.create(VENV, with_pip=True)
        _run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    stamp = VENV / f".installed-{target}-{digest}"
    if stamp.exists():
        return
    for args in INSTALLS[target]:
        _run([str(BIN / "python"), "-m", "pip", "install", "--quiet", *args])
    stamp.touch()


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        print(f"usage: python3 dev.py {{{'|'.join(COMMANDS)}}} [args...]", file=sys.stderr)
        return 2
    target = sys.argv[1]
    _install(target)
    try:
        for cmd in COMMANDS[target]:
            _run(cmd)
    except subprocess.CalledProcessError as err:
        return err.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())

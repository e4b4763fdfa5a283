"""Installation: what ``import rigidrot_gym`` pulls in, extras that state ranges, and a
non-editable wheel that carries the licence and the scenario files and registers the envs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_import_pulls_in_no_heavy_optional_dependency():
    heavy = "('torch', 'pybullet', 'matplotlib', 'stable_baselines3', 'mujoco', 'Basilisk')"
    code = f"import sys, rigidrot_gym; print(sorted(m for m in {heavy} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_extras_state_ranges_not_pins():
    # a pinned torch would replace a user's own; dev.py installs the tested build first
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert not [req for reqs in extras.values() for req in reqs if "==" in req]
    assert "torch>=2.3" in extras["train"]


def _source_copy(folder: Path) -> Path:
    """The files git tracks, copied into ``folder``: setuptools builds a wheel in the source
    tree (``build/``, ``*.egg-info``), which must not be the checkout."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    for name in tracked.stdout.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, folder / name)
    return folder


@pytest.mark.slow
def test_wheel_ships_the_scenarios_and_registers_the_envs(tmp_path):
    source = _source_copy(tmp_path / "source")
    before = sorted(p.name for p in ROOT.iterdir())
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", str(source), "-w", str(tmp_path)],
        check=True,
        capture_output=True,
    )
    assert sorted(p.name for p in ROOT.iterdir()) == before  # nothing built in the checkout
    (wheel,) = tmp_path.glob("rigidrot_gym-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "License-Expression: MIT" in text and "License-File: LICENSE" in text
    assert metadata.replace("METADATA", "licenses/LICENSE") in names
    shipped = sorted(n for n in names if n.startswith("rigidrot_gym/scenarios/"))
    assert shipped == sorted(f"rigidrot_gym/scenarios/{p.name}" for p in (ROOT / "envs").glob("*.toml"))
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    code = (
        "import gymnasium as gym, rigidrot_gym; "
        f"assert rigidrot_gym.__file__.startswith({str(target)!r}); "
        "env = gym.make('rigidrot_gym:RigidRot/Slew-v0'); print(env.reset(seed=0)[0].shape)"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(7,)"

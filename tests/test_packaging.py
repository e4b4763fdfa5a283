"""Installation: what ``import rigidrot_gym`` pulls in, extras that state ranges, and a
sdist and wheel (``python -m build``) that carry the licence and the scenario files and, installed
in a fresh venv, register the envs."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import tarfile
import venv
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


def _fresh_venv(folder: Path) -> Path:
    """A new virtual environment whose own site-packages is empty, its Python returned.

    The dependencies (numpy, numba, gymnasium, ...) are this interpreter's, put on the path
    after the venv's own site-packages by a ``.pth`` line. A path added that way is not a
    site directory, so the ``.pth`` files in it (this checkout's editable install) are not
    run: ``rigidrot_gym`` can only come from what is installed into the venv."""
    venv.create(folder, with_pip=False)
    python = folder / ("Scripts" if sys.platform == "win32" else "bin") / "python"
    ask = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    own = subprocess.run([python, "-c", ask], capture_output=True, text=True, check=True).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    Path(own, "dependencies.pth").write_text(ours + "\n")
    return python


@pytest.mark.slow
def test_the_sdist_and_wheel_install_and_run_in_a_fresh_venv(tmp_path):
    source = _source_copy(tmp_path / "source")
    before = sorted(p.name for p in ROOT.iterdir())
    dist = tmp_path / "dist"
    # python -m build: the sdist, then the wheel built from the unpacked sdist, so a file
    # the sdist forgets is missing from the wheel too.
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
        check=True,
        capture_output=True,
    )
    assert sorted(p.name for p in ROOT.iterdir()) == before  # nothing built in the checkout
    (sdist,) = dist.glob("rigidrot_gym-*.tar.gz")
    (wheel,) = dist.glob("rigidrot_gym-*.whl")
    sdist_names = {n.split("/", 1)[1] for n in tarfile.open(sdist).getnames() if "/" in n}
    assert {"README.md", "LICENSE", "pyproject.toml", "envs/reorient.toml"} <= sdist_names
    names = zipfile.ZipFile(wheel).namelist()
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "License-Expression: MIT" in text and "License-File: LICENSE" in text
    assert metadata.replace("METADATA", "licenses/LICENSE") in names
    # Every module of the package, in its sub-package (pyproject lists them one by one).
    modules = sorted(p.relative_to(source).as_posix() for p in (source / "rigidrot_gym").rglob("*.py"))
    assert [m for m in modules if m not in names] == []
    shipped = sorted(n for n in names if n.startswith("rigidrot_gym/scenarios/"))
    assert shipped == sorted(f"rigidrot_gym/scenarios/{p.name}" for p in (ROOT / "envs").glob("*.toml"))
    python = _fresh_venv(tmp_path / "venv")
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps", str(wheel)],
        check=True,
        capture_output=True,
    )
    code = (
        "import gymnasium as gym, rigidrot_gym, sys; "
        "assert rigidrot_gym.__file__.startswith(sys.prefix), rigidrot_gym.__file__; "
        "env = gym.make('rigidrot_gym:RigidRot/Slew-v0'); print(env.reset(seed=0)[0].shape)"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "(7,)"
    # the console script of the installed wheel
    script = python.parent / "rigidrot"
    out = subprocess.run([script, "--help"], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0 and "demo" in out.stdout, out.stderr

"""Every command and code block of the README and of the docs' pages runs as written, after
the install.

The blocks are read from README.md and ``docs/**/*.md`` themselves (fenced ``bash`` and
``python`` blocks; an indented block, or a fenced one with a title such as ``python
title="... (excerpt)"``, is shown, not run), so a command added, changed or removed there
is tested as it reads. What the quick start
does (``python3 dev.py ...``, ``source .venv/bin/activate``) this test stands in for:
it runs every command with this interpreter's environment first on ``PATH``. Commands
run in a scratch copy of ``training/``, so one that writes (``--out
benchmarks/results/...``, a training run) changes nothing in the repository. Long ones
run on a short budget: ``--quick`` where the command has it, a few seeds or episodes,
a few hundred training steps; nothing is skipped.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

pytestmark = pytest.mark.readme

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# Where commands are written: the README first, then the pages of the docs.
SOURCES = (README, *sorted((ROOT / "docs").rglob("*.md")))
# The quick start itself: what this test's environment already is.
SETUP = ("python3 dev.py", "source .venv/bin/activate")
# Options whose value sets a command's budget, and the short value used here.
SHORT_VALUES = {"--seeds": "2", "--episodes": "3", "-n": "300"}
# Training commands (by the tokens they start with): a few hundred steps on two small envs.
TRAINING = (("python", "-m", "rl_zoo3.train"), ("python", "training/train.py"), ("rigidrot", "train"))
TRAINING_BUDGET = [
    "-n",
    "256",
    "--eval-freq",
    "-1",
    "--hyperparams",
    "n_envs:2",
    "n_steps:128",
    "batch_size:64",
]
TRAINING_BUDGET += ["n_epochs:1"]


def blocks(language: str, sources: tuple[Path, ...] = SOURCES) -> list[str]:
    """The fenced ``language`` blocks of ``sources``, in order."""
    pattern = rf"^```{language}\n(.*?)^```"
    return [block for path in sources for block in re.findall(pattern, path.read_text(), flags=re.M | re.S)]


def commands() -> list[str]:
    """The shell commands of the README and the docs (continuation lines joined), the set-up
    excluded."""
    found = []
    for block in blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip() and not line.startswith(SETUP):
                found.append(line.strip())
    return found


@cache
def has_quick(program: tuple[str, ...]) -> bool:
    """Whether ``program --help`` offers ``--quick``."""
    out = subprocess.run([*program, "--help"], capture_output=True, text=True, env=_env(), cwd=ROOT)
    return "--quick" in out.stdout


def budgeted(command: str) -> list[str]:
    """The command's arguments with the short budget applied (comments dropped)."""
    args = shlex.split(command, comments=True)
    args = [SHORT_VALUES.get(prev, arg) for prev, arg in zip(["", *args[:-1]], args, strict=True)]
    if any(tuple(args[: len(start)]) == start for start in TRAINING):
        return [*args, *TRAINING_BUDGET]
    if args[0] == "rigidrot":
        program = tuple(args[: next((i for i, a in enumerate(args) if a.startswith("-")), len(args))])
        if has_quick(program) and "--quick" not in args:
            args.append("--quick")
    return args


def _env() -> dict[str, str]:
    # As after `source .venv/bin/activate`: this environment's python and rigidrot first.
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PATH": path, "PYTHONPATH": pythonpath, "MPLBACKEND": "Agg"}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A scratch folder with a copy of ``training/`` (scripts, hyperparameters, agents) and
    of the docs' examples (``docs/examples/``: the user's package ``my_gnc/``) in it, as a
    user of the docs has them in the current folder."""
    folder = tmp_path_factory.mktemp("readme")
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "training", folder / "training", ignore=ignore)
    shutil.copytree(ROOT / "docs" / "examples", folder, ignore=ignore, dirs_exist_ok=True)
    return folder


def test_the_readme_has_commands_and_code():
    assert len(commands()) >= 8 and len(blocks("python")) >= 2
    assert "python3 dev.py demo" in blocks("bash", (README,))[0]
    assert len(blocks("python", (README,))) >= 2


@pytest.mark.parametrize("command", commands())
def test_readme_command(command, workdir):
    args = budgeted(command)
    out = subprocess.run(args, capture_output=True, text=True, cwd=workdir, env=_env(), timeout=600)
    assert out.returncode == 0, f"{shlex.join(args)}\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_readme_python_block(index, workdir):
    code = blocks("python")[index]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=workdir, env=_env()
    )
    assert out.returncode == 0, f"{code}\n{out.stderr[-3000:]}"


# Folders whose contents are committed results: a command copied from the README must
# never write there (benchmarks/README.md says how they are remade).
COMMITTED = ("benchmarks/results", "training/agents")
# The zoo's -f is where training writes its run (and where rl_zoo3.enjoy only reads one).
LOG_FOLDER_OPTIONS = ("-f", "--log-folder")


def writes_into_committed(command: str) -> list[str]:
    """The committed folders the command's output options name."""
    args = shlex.split(command, comments=True)
    training = any(tuple(args[: len(start)]) == start for start in TRAINING)
    options = ("--out", *(LOG_FOLDER_OPTIONS if training else ()))
    targets = [value for option, value in itertools.pairwise(args) if option in options]
    return [t for t in targets if Path(t).as_posix().lstrip("./").startswith(COMMITTED)]


def test_no_readme_command_writes_into_a_committed_folder():
    assert writes_into_committed("rigidrot bench control --out benchmarks/results/control")
    assert writes_into_committed("python training/train.py -f ./training/agents --seed 0")
    assert not writes_into_committed("rigidrot bench control --out outputs/control")
    offending = {command: writes_into_committed(command) for command in commands()}
    assert not {c: t for c, t in offending.items() if t}


def test_the_budget_is_applied_as_the_readme_command_reads():
    assert budgeted("rigidrot bench accuracy --out x  # comment")[-1] == "--quick"
    assert budgeted("rigidrot bench control --policies lqr --seeds 100")[-1] == "2"
    trained = budgeted("python training/train.py --algo ppo --env RigidRot/Reorient-v0 --seed 0")
    assert trained[:4] == ["python", "training/train.py", "--algo", "ppo"] and trained[-9:] == TRAINING_BUDGET

"""``rigidrot train``: rl-baselines3-zoo's training on the batched env.

This is the zoo's ``python -m rl_zoo3.train``: the same options, the same hyperparameter
files (the package's own, :func:`hyperparameter_folder`, give the default
``--conf-file``), the same run folders (``logs/<algo>/<env>_<n>/``, a new ``n`` for every
run, so no run is ever written over) and the same tools afterwards (``rl_zoo3.enjoy``,
``rl_zoo3.plots``, ``rigidrot evaluate``). One thing differs, what the zoo cannot do: the
zoo steps ``n_envs`` single envs one after the other (``DummyVecEnv``) or in ``n_envs``
processes (``SubprocVecEnv``); here they are one
:class:`~rigidrot_gym.attitude.sb3.AttitudeSB3VecEnv`, every body advanced by one compiled
call (:class:`~rigidrot_gym.tools.zoo.BatchedExperimentManager`).

Importing this module is light; training imports the ``[train]`` extra.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
import textwrap
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from types import ModuleType

from gymnasium.error import DependencyNotInstalled

import rigidrot_gym

TRAIN_EXTRA = 'pip install "rigidrot-gym[train]"'
# How `rigidrot train` is started, as recorded in each run's command.txt.
COMMAND = ("rigidrot", "train")


def import_train_extra(module: str) -> ModuleType:
    """``module`` imported, or DependencyNotInstalled naming the ``[train]`` extra when it
    (or a module it imports) is not installed."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        raise DependencyNotInstalled(f"{err.name or module} is not installed: {TRAIN_EXTRA}") from err


def hyperparameter_folder() -> Path:
    """The package's hyperparameter files, ``<algo>.yml`` (``training/hyperparams/`` in the
    source tree)."""
    try:
        return Path(str(resources.files("rigidrot_gym.hyperparams")))
    except ModuleNotFoundError:
        # A checkout on sys.path whose installation predates the package mapping (or
        # none at all): the folder of the source tree itself.
        return Path(__file__).resolve().parents[2] / "training" / "hyperparams"


def algorithms(folder: Path) -> list[str]:
    """The algorithms (of those a run folder can be loaded with) that have a
    hyperparameter file in ``folder``."""
    from rigidrot_gym.control.agents import ALGORITHMS

    return [algo for algo in ALGORITHMS if (folder / f"{algo}.yml").is_file()]


def describe() -> str:
    """The description of ``rigidrot train`` in its help: the env ids, the algorithms and
    where the hyperparameter files are."""
    folder = hyperparameter_folder()
    files = ", ".join(sorted(p.name for p in folder.glob("*.yml")))

    def wrapped(text: str) -> str:
        return textwrap.fill(text, width=88, subsequent_indent="  ", break_on_hyphens=False)

    return "\n".join(
        [
            "Trains a stable-baselines3 agent with rl-baselines3-zoo (python -m rl_zoo3.train) on the",
            "batched env: every option of rl_zoo3.train is passed on to it (python -m rl_zoo3.train",
            "--help lists them all), and its n_envs envs are one vector env stepped by one compiled call.",
            "Each run goes to a new folder <log folder>/<algo>/<env>_<n>/ (default log folder: logs;",
            "-f sets another), which rigidrot evaluate and python -m rl_zoo3.enjoy read.",
            "",
            wrapped(f"--env, one of: {', '.join(rigidrot_gym.ENV_IDS)}"),
            wrapped(f"--algo (default ppo), one with a hyperparameter file: {', '.join(algorithms(folder))}"),
            wrapped(
                f"--conf-file (default {folder}/<algo>.yml; a name alone, such as ppo_fast, "
                f"is a file there): {files}"
            ),
            "other options: -n steps, --seed, --hyperparams key:value ..., --env-kwargs key:value ...,",
            "  --eval-freq steps (-1: no evaluation), --num-threads, --progress, --device",
            "",
            "example: rigidrot train --algo ppo --env RigidRot/Reorient-v0 --seed 0 --progress",
        ]
    )


def with_default_conf_file(argv: Sequence[str], folder: Path, prog: str) -> list[str]:
    """``argv``, its ``--env`` and ``--algo`` checked, with ``--conf-file
    <folder>/<algo>.yml`` added unless it names one (or asks for help).

    Raises:
        ValueError: for an ``--env`` that is not a built-in id (the batched env runs the
            package's scenarios only), or, without a ``--conf-file``, an ``--algo`` without
            a file in ``folder``.
    """
    # The zoo's spelling of these options (abbreviations included): its own parser reads
    # the rest.
    parser = argparse.ArgumentParser(prog=prog, add_help=False)
    parser.add_argument("-h", "--help", action="store_true")
    parser.add_argument("--algo", default="ppo")
    parser.add_argument("--env")
    parser.add_argument("-conf", "--conf-file")
    chosen = parser.parse_known_args(list(argv))[0]
    if chosen.help:
        return list(argv)
    ids = rigidrot_gym.ENV_IDS
    if chosen.env is None:
        raise ValueError(f"--env is required; expected one of the package's env ids: {', '.join(ids)}")
    if chosen.env not in ids:
        raise ValueError(f"--env {chosen.env!r} is not one of the package's env ids: {', '.join(ids)}")
    if chosen.conf_file is not None:
        return _named_conf_file(list(argv), chosen.conf_file, folder)
    path = folder / f"{chosen.algo}.yml"
    if not path.is_file():
        raise ValueError(
            f"--algo {chosen.algo!r} has no hyperparameter file in {folder}; expected one of "
            f"{', '.join(algorithms(folder))}, or a --conf-file of one's own"
        )
    return [*argv, "--conf-file", _as_typed(path)]


def _named_conf_file(argv: list[str], conf_file: str, folder: Path) -> list[str]:
    """``argv`` with a ``--conf-file`` that names one of ``folder``'s files by its stem
    (``--conf-file ppo_fast``: a pip user has no ``training/hyperparams/``) replaced by
    that file's path; any other value is the zoo's to read."""
    path = folder / f"{conf_file}.yml"
    if Path(conf_file).exists() or "/" in conf_file or not path.is_file():
        return argv
    # the value's own word, or the end of "--conf-file=NAME"
    i = max(i for i, word in enumerate(argv) if word == conf_file or word.endswith(f"={conf_file}"))
    argv[i] = argv[i][: len(argv[i]) - len(conf_file)] + _as_typed(path)
    return argv


def _as_typed(path: Path) -> str:
    """``path`` relative to the working folder when inside it (the recorded command then
    reads as it would be typed), else absolute (an installed package's file)."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def run(argv: Sequence[str], command: Sequence[str] = COMMAND, hyperparams: Path | None = None) -> None:
    """Run ``rl_zoo3.train`` with the options ``argv`` on the batched env.

    Args:
        argv: ``rl_zoo3.train``'s options.
        command: the words that started this training, recorded with the options in the
            run's ``command.txt`` and shown in the zoo's usage line.
        hyperparams: the folder of the default ``--conf-file`` (default: the package's,
            :func:`hyperparameter_folder`).

    Raises:
        ValueError: for a bad ``--env`` or ``--algo`` (:func:`with_default_conf_file`).
        gymnasium.error.DependencyNotInstalled: without the ``[train]`` extra.
    """
    prog = " ".join(command)
    folder = hyperparameter_folder() if hyperparams is None else Path(hyperparams)
    argv = with_default_conf_file(argv, folder, prog)
    zoo_train = import_train_extra("rl_zoo3.train")
    from rigidrot_gym.tools.zoo import BatchedExperimentManager

    # rl_zoo3.train.train() reads sys.argv and builds the zoo's ExperimentManager by name:
    # both are swapped for the duration of the call.
    saved = sys.argv, zoo_train.ExperimentManager
    sys.argv = [prog, *argv]
    zoo_train.ExperimentManager = functools.partial(BatchedExperimentManager, command=[*command, *argv])
    try:
        zoo_train.train()
    finally:
        sys.argv, zoo_train.ExperimentManager = saved

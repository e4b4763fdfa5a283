"""Train a stable-baselines3 agent on a rigidrot_gym env: rl-baselines3-zoo on the batched env.

    python training/train.py --algo ppo --env RigidRot/Reorient-v0 --seed 0 --progress
    python training/train.py --algo ppo --env RigidRot/Reorient-v0 -n 1000000 --hyperparams n_envs:32
    python training/train.py --algo ppo --env RigidRot/Reorient-v0 --env-kwargs "integrator:'semi_implicit'"

``rigidrot train`` (:mod:`rigidrot_gym.tools.train`) from the repository: the same
options (those of ``python -m rl_zoo3.train``, ``--help``), the same run folders
(``logs/<algo>/<env>_<n>/``); the default ``--conf-file`` is
``training/hyperparams/<algo>.yml`` next to this script, and ``command.txt`` records
``python training/train.py ...``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rigidrot_gym.tools import train

HYPERPARAMS = Path(__file__).resolve().parent / "hyperparams"


def main(argv: list[str] | None = None) -> None:
    """Train with ``argv`` (default: the command line)."""
    argv = sys.argv[1:] if argv is None else argv
    train.run(argv, command=("python", os.path.relpath(__file__)), hyperparams=HYPERPARAMS)


if __name__ == "__main__":
    main()

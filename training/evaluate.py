"""Evaluate a trained agent through the control benchmark, against classical controllers.

    python training/evaluate.py training/agents/ppo/RigidRot-Reorient-v0_1 --compare quaternion_feedback
    python training/evaluate.py logs/ppo/RigidRot-Reorient-v0_1 --integrators semi_implicit rk4 --video

``rigidrot evaluate`` (:mod:`rigidrot_gym.tools.evaluate`) from the repository: the same
options, the same tables in ``--out`` (default ``outputs/evaluate/``).
"""

from __future__ import annotations

import argparse

from rigidrot_gym.tools import evaluate


def build_parser() -> argparse.ArgumentParser:
    """The options of ``rigidrot evaluate``."""
    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=type(
            "Formatter", (argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter), {}
        ),
    )
    evaluate.add_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> str:
    """Evaluate; write ``evaluation.md`` and ``evaluation.csv`` into ``--out``; return the table."""
    return evaluate.run(build_parser().parse_args(argv))


if __name__ == "__main__":
    main()

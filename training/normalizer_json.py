"""Write ``<env>/vecnormalize.json`` next to the ``vecnormalize.pkl`` of run folders written
before training wrote it (the committed agents' were written by this command):

    python training/normalizer_json.py training/agents/ppo/*_[0-9]*

It unpickles each ``vecnormalize.pkl``, which runs any code the pickle holds: run it on
one's own run folders only. :func:`rigidrot_gym.control.agents.load` then reads the JSON
file, which runs nothing.
"""

from __future__ import annotations

import argparse
import sys

from rigidrot_gym.control import agents


def main(argv: list[str] | None = None) -> None:
    """Write the JSON file of each run folder in ``argv`` (default: the command line)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run folders (training/agents/ppo/<env>_<n>)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    for run in args.runs:
        path = agents.write_normalizer_json(run)
        print(f"{run}: {'no vecnormalize.pkl' if path is None else f'wrote {path}'}")


if __name__ == "__main__":
    main()

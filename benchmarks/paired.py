"""Paired speed of two source trees of the package, to prove a refactor costs nothing.

    python benchmarks/paired.py BEFORE_TREE AFTER_TREE                  # env-steps/s
    python benchmarks/paired.py BEFORE_TREE AFTER_TREE --first-step     # and a cold compile

Not a test: a refactor's proof, on one machine in one run. Each tree (a checkout's root,
put first on ``PYTHONPATH`` in a fresh interpreter) is measured by its own copy of
``rigidrot bench throughput``'s timers (:mod:`rigidrot_gym.tools.bench.throughput`): the
vector env of 1024 and of 16 envs under random actions with autoresets, and the single
env through ``gym.make``. The two trees' processes alternate, in the order before, after,
then after, before, so that a drift of the machine's speed during the run falls on both;
the figure is the median over repeats of after/before. ``--first-step`` adds the seconds
from import to the first step of a single env with an empty numba cache (both trees share
none). The CPU model heads the table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

_RATES = """
import json, sys
from rigidrot_gym.tools.bench import throughput as t
env_id, seconds, steps = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
print(json.dumps({
    "vector 1024": t._vector_rate(env_id, 1024, "vector", seconds),
    "vector 16": t._vector_rate(env_id, 16, "vector", seconds),
    "single": t._single_rate(env_id, steps),
    "tree": t.__file__,
}))
"""
_FIRST_STEP = """
import json, sys
from rigidrot_gym.tools.bench import throughput as t
print(json.dumps({"first step (s)": t.compile_times(sys.argv[1]).cold[0], "tree": t.__file__}))
"""


def _measure(tree: Path, snippet: str, *args: str) -> dict[str, float]:
    """One fresh interpreter's measures of the package in ``tree``."""
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", snippet, *args], env=environment, cwd=tree, capture_output=True, text=True
    )
    if out.returncode:
        raise RuntimeError(f"measuring {tree} failed:\n{out.stderr}")
    measured = json.loads(out.stdout.strip().splitlines()[-1])
    where = Path(measured.pop("tree")).resolve()
    if tree.resolve() not in where.parents:  # an installed copy won over the tree
        raise RuntimeError(f"measured {where}, not the tree {tree}")
    return measured


def _paired(before: Path, after: Path, repeats: int, snippet: str, *args: str) -> dict[str, tuple]:
    """Per measure: the median ratio after/before and the two median values."""
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    for r in range(repeats):
        order = (("before", before), ("after", after))
        for name, tree in order if r % 2 == 0 else order[::-1]:
            runs[name].append(_measure(tree, snippet, *args))
    table = {}
    for key in runs["before"][0]:
        old = np.array([m[key] for m in runs["before"]])
        new = np.array([m[key] for m in runs["after"]])
        table[key] = (float(np.median(new / old)), float(np.median(old)), float(np.median(new)))
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="root of the tree before the change")
    parser.add_argument("after", type=Path, help="root of the tree after the change")
    parser.add_argument("--ids", nargs="+", default=["RigidRot/Reorient-v0", "RigidRot/NadirPoint-v0"])
    parser.add_argument("--repeats", type=int, default=5, help="pairs of runs per id (default 5)")
    parser.add_argument("--seconds", type=float, default=2.0, help="timed seconds per vector rate")
    parser.add_argument("--steps", type=int, default=20_000, help="timed steps of the single env")
    parser.add_argument("--first-step", action="store_true", help="also time a first step in a cold cache")
    args = parser.parse_args(argv)
    for option in ("before", "after"):
        tree = getattr(args, option)
        if not (tree / "rigidrot_gym" / "__init__.py").is_file():
            parser.error(f"{option} must be a tree holding rigidrot_gym/, got {str(tree)!r}")
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")

    from rigidrot_gym.tools.bench.throughput import machine

    print(f"CPU: {machine()}; before {args.before}, after {args.after}; median of {args.repeats} pairs")
    print("| env id | measure | before | after | after/before |\n|---|---|---|---|---|")
    for env_id in args.ids:
        measured = _paired(
            args.before, args.after, args.repeats, _RATES, env_id, str(args.seconds), str(args.steps)
        )
        if args.first_step:
            measured |= _paired(args.before, args.after, min(args.repeats, 3), _FIRST_STEP, env_id)
        for key, (ratio, old, new) in measured.items():
            print(f"| {env_id} | {key} | {old:,.4g} | {new:,.4g} | {ratio:.3f} |", flush=True)


if __name__ == "__main__":
    main()

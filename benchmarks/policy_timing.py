"""The exported policies' budget: every committed agent exported, its figures in one table.

    python benchmarks/policy_timing.py                                   # into outputs/export/
    python benchmarks/policy_timing.py --out benchmarks/results/export   # the committed table

Not a test, not run in CI (issue 51, part 3). Each agent in ``training/agents/`` is
exported as ``rigidrot export`` does (:func:`rigidrot_gym.tools.export.export`), and its
``policy.json`` budget gives a row: parameters, weight bytes, multiply-adds per action, the
Cortex-M4 object's text, data and bss bytes (``arm-none-eabi-gcc``, where installed), the
time per action measured here (``gcc -O2``, a C harness calling ``rr_policy``; measured
again here with more repeats than the export's own, ``--repeats`` of ``--repeat-s``
seconds, the median) and the Cortex-M4 estimate at 168 MHz
(:func:`rigidrot_gym.tools.export.m4_estimate`: a model, not a measurement) with its share
of a 1 Hz loop and of the env's control period. The CPU's model and the compilers are named
above the table.

Writes ``budget.md`` and ``budget.json`` to ``--out`` (default ``outputs/export/``; the
exported files of each agent go to a temporary folder) and prints the table.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from rigidrot_gym.tools import export

ROOT = Path(__file__).resolve().parents[1]


def rows(repeats: int, repeat_s: float) -> list[dict]:
    """Each committed agent's policy.json, its time here measured ``repeats`` × ``repeat_s``."""
    from rigidrot_gym.control import agents

    found = []
    for run in sorted(p.parent.parent for p in (ROOT / "training" / "agents").glob("*/*/*/args.yml")):
        agent = agents.load(run)
        with tempfile.TemporaryDirectory() as folder:
            info = export.write(agent, folder)
            if info["budget"]["time_per_action_here"] is not None:  # gcc is there
                info["budget"]["time_per_action_here"] = export.time_per_action(
                    Path(folder), export.policy_of(agent), repeats, repeat_s
                )
        print(f"{info['agent']}: done", file=sys.stderr)
        found.append(info)
    return found


def table(infos: list[dict]) -> str:
    """The Markdown table of the budgets, the CPU and compilers named above it."""
    first = infos[0]["budget"]
    here, m4 = first["time_per_action_here"], first["cortex_m4_object"]
    lines = [
        f"Measured here: {here['cpu']}, {here['compiler']}, `{here['flags']}`, median of "
        f"{here['repeats']} repeats."
        if here
        else f"Not measured here: {first['time_per_action_here_unavailable']}.",
        f"Cortex-M4 object: {m4['compiler']}, `{m4['flags']} -c`."
        if m4
        else f"No Cortex-M4 object: {first['cortex_m4_object_unavailable']}.",
        "",
        "| agent | parameters | weight bytes | multiply-adds | M4 text / data / bss (bytes) "
        "| µs per action here | M4 estimate, µs | share of a 1 Hz loop | share of the control period |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for info in infos:
        budget = info["budget"]
        here, m4, estimate = (
            budget["time_per_action_here"],
            budget["cortex_m4_object"],
            budget["cortex_m4_estimate"],
        )
        sizes = f"{m4['text']} / {m4['data']} / {m4['bss']}" if m4 else "—"
        timed = f"{here['us_per_action']:.2f}" if here else "—"
        lines.append(
            f"| {info['agent']} | {budget['parameters']} | {budget['weight_bytes']} | "
            f"{budget['multiply_adds']} | {sizes} | {timed} | {estimate['us_per_action']:.0f} | "
            f"{100 * estimate['share_of_1_hz_loop']:.3f} % | "
            f"{100 * estimate['share_of_control_period']:.2f} % (dt {info['dt']:g} s) |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "outputs" / "export")
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--repeat-s", type=float, default=0.05)
    args = parser.parse_args(argv)
    infos = rows(args.repeats, args.repeat_s)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "budget.json").write_text(
        json.dumps(
            [{"agent": i["agent"], "dt": i["dt"], "budget": i["budget"]} for i in infos],
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )
    text = table(infos)
    (args.out / "budget.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()

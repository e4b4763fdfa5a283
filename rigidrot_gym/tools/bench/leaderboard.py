"""The leaderboard: result files of one suite version, as normalised scores with intervals.

An entry is a result file (:mod:`rigidrot_gym.tools.bench.suite`), never a model: reading
one runs no code of its author's. Each file is checked against the suite version it
states (:func:`~rigidrot_gym.tools.bench.suite.load`), and files of different versions are
refused together.

The score (:data:`~rigidrot_gym.tools.bench.suite.SCORE`): per task, R0 is the zero
action's mean return and R1 the best classical controller's (the controller with the
highest mean return; both over the task's dispersions on its own integrator, from the
result files of the zero action and the controllers, which the leaderboard must hold); an
episode of return R scores (R − R0) / (R1 − R0), so 0 is the zero action and 1 the best
classical baseline. A run (an evaluation seed) scores, on a task, the mean over the task's
dispersions. Per entry and task, the IQM of its runs' scores; across the tasks an entry
entered, the IQM of its (runs × tasks) matrix; both with a 95 % stratified-bootstrap
interval (:mod:`rigidrot_gym.tools.bench.aggregate`). The sim-to-sim scores are the same
on the engine's step, normalised by the same R0 and R1 (those of the accurate
integrator): the drop is the engine's. A task whose best controller does no better than
the zero action (R1 ≤ R0) has no score, and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from rigidrot_gym.tools.bench import aggregate, control
from rigidrot_gym.tools.bench.suite import ZERO, Result, Run
from rigidrot_gym.tools.report import markdown_table, write_results

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn
    from matplotlib.figure import Figure

# Bootstrap resamples per interval: 2000 put the interval's ends within about 0.005 of
# their value at 50 000 on these matrices, at a twenty-fifth of the time.
REPS = 2000
ALL = "all tasks"
ACCURATE, ENGINE = "accurate", "engine"


@dataclass(frozen=True)
class Reference:
    """A task's normalisation: the zero action's mean return ``zero`` and the best
    classical controller ``best`` with its mean return ``best_return``."""

    task: str
    zero: float
    best: str
    best_return: float

    @property
    def usable(self) -> bool:
        """Whether the best controller does better than the zero action."""
        return bool(np.isfinite(self.zero) and np.isfinite(self.best_return) and self.best_return > self.zero)


@dataclass(frozen=True)
class Score:
    """One entry's normalised score on a task (or on :data:`ALL` the tasks it entered),
    on the accurate integrator or the engine: the IQM over runs and its 95 % interval,
    and the success rate over the same episodes."""

    entry: str
    kind: str
    table: str
    task: str
    tasks: int
    iqm: float
    low: float
    high: float
    success_rate: float


@dataclass(frozen=True)
class Board:
    """The leaderboard of one suite version."""

    version: str
    packages: tuple[str, ...]
    definition: dict
    references: dict[str, Reference]
    scores: list[Score]
    summaries: list[control.Summary]
    failures: list[str]
    matrices: dict[tuple[str, str], np.ndarray]  # (entry, table) -> (runs, tasks) scores
    entries: dict[str, str]  # entry -> kind, in order


def _runs(result: Result, integrator_of: dict[str, str], engine: str, table: str) -> dict[str, list[Run]]:
    """The entry's runs of the table, by task."""
    out: dict[str, list[Run]] = {}
    for run in result.runs:
        wanted = integrator_of[run.task] if table == ACCURATE else engine
        if run.integrator == wanted:
            out.setdefault(run.task, []).append(run)
    return out


def references(results: Sequence[Result], integrator_of: dict[str, str]) -> dict[str, Reference]:
    """Each task's :class:`Reference`, from the zero action's and the controllers' files
    (a task without them: NaN and "—")."""
    by_task: dict[str, dict[str, float]] = {}
    zero: dict[str, float] = {}
    for result in results:
        if result.kind not in ("reference", "controller"):
            continue
        for task, runs in _runs(result, integrator_of, "", ACCURATE).items():
            if any(r.failure for r in runs):
                continue
            mean = float(np.mean([e.episode_return for r in runs for e in r.episodes]))
            if result.entry == ZERO:
                zero[task] = mean
            else:
                by_task.setdefault(task, {})[result.entry] = mean
    out = {}
    for task in integrator_of:
        means = by_task.get(task, {})
        best = min(means, key=lambda name: (-means[name], name)) if means else "—"  # a tie: by name
        out[task] = Reference(task, zero.get(task, float("nan")), best, means.get(best, float("nan")))
    return out


def build(results: Sequence[Result], reps: int = REPS) -> Board:
    """The leaderboard of ``results`` (:func:`~rigidrot_gym.tools.bench.suite.load`'s).

    Raises:
        ValueError: for no results, results of more than one suite version (naming each
            entry's), or two results of the same entry.
    """
    if not results:
        raise ValueError("no result files: expected at least the zero action's and the controllers'")
    results = sorted(results, key=lambda r: r.entry)  # the same board whatever order they come in
    versions = {r.version for r in results}
    if len(versions) > 1:
        shown = "; ".join(f"{r.entry}: {r.version}" for r in results)
        raise ValueError(
            f"result files of {len(versions)} suite versions cannot share a leaderboard: {shown}"
        )
    names = [r.entry for r in results]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"entries given more than once: {twice}")
    definition = results[0].definition
    integrator_of = {t["id"]: t["integrator"] for t in definition["tasks"]}
    engine = definition["engine"]
    refs = references(results, integrator_of)
    scores, summaries, failures, matrices = [], [], [], {}
    estimates: dict[tuple[str, str, str], np.ndarray] = {}
    success: dict[tuple[str, str, str], float] = {}
    for result in results:
        for table in (ACCURATE, ENGINE):
            columns = []
            for task, runs in _runs(result, integrator_of, engine, table).items():
                for run in runs:
                    scale = next(
                        d["inertia_scale"]
                        for t in definition["tasks"]
                        if t["id"] == task
                        for d in t["dispersions"]
                        if d["name"] == run.dispersion
                    )
                    label = f"{task} ({run.dispersion})"
                    if run.failure:
                        summary = control.failed(result.entry, label, run.integrator, scale, run.failure)
                        failures.append(summary.line)
                    else:
                        summary = control.summarise(
                            result.entry, label, run.integrator, scale, list(run.episodes)
                        )
                    summaries.append(summary)
                if any(r.failure for r in runs) or not refs[task].usable:
                    continue
                ref = refs[task]
                returns = np.array([[e.episode_return for e in r.episodes] for r in runs])
                per_seed = ((returns - ref.zero) / (ref.best_return - ref.zero)).mean(axis=0)
                estimates[(result.entry, table, task)] = per_seed
                success[(result.entry, table, task)] = float(
                    np.mean([e.success for r in runs for e in r.episodes])
                )
                columns.append(per_seed)
            if columns:
                matrices[(result.entry, table)] = np.stack(columns, axis=1)
    keys = list(estimates)
    intervals = aggregate.iqm_intervals({repr(k): estimates[k] for k in keys}, reps=reps)
    overall = (
        aggregate.iqm_intervals({repr(k): m for k, m in matrices.items()}, reps=reps) if matrices else {}
    )
    kinds = {r.entry: r.kind for r in results}
    for key in keys:
        entry, table, task = key
        scores.append(Score(entry, kinds[entry], table, task, 1, *intervals[repr(key)], success[key]))
    for (entry, table), matrix in matrices.items():
        rates = [success[(entry, table, task)] for (e, t, task) in keys if (e, t) == (entry, table)]
        scores.append(
            Score(
                entry,
                kinds[entry],
                table,
                ALL,
                matrix.shape[1],
                *overall[repr((entry, table))],
                np.mean(rates),
            )
        )
    return Board(
        version=results[0].version,
        packages=tuple(sorted({r.package for r in results})),
        definition=definition,
        references=refs,
        scores=scores,
        summaries=summaries,
        failures=failures,
        matrices=matrices,
        entries=kinds,
    )


def _interval(score: Score | None) -> str:
    if score is None:
        return "—"
    return f"{score.iqm:.3f} [{score.low:.3f}, {score.high:.3f}]"


def _short(task: str) -> str:
    return task.removeprefix("RigidRot/")


def statement(board: Board) -> str:
    """What the suite is, in a paragraph: version, tasks, seeds, dispersions, engine."""
    d = board.definition
    seeds = d["seeds"]
    tasks = "; ".join(
        f"{_short(t['id'])} ({t['integrator']}): {', '.join(x['name'] for x in t['dispersions'])}"
        for t in d["tasks"]
    )
    return (
        f"Suite version `{board.version}` (rigidrot-gym {', '.join(board.packages)}): "
        f"{len(d['tasks'])} tasks, "
        f"one episode per seed and dispersion, held-out seeds {seeds[0]}–{seeds[-1]} ({len(seeds)}); the "
        f"accurate table on each task's own integrator, the sim-to-sim table on `{d['engine']}`. "
        f"Dispersions: {tasks}. Score: {d['score']}. Intervals: 95 % stratified bootstrap (rliable)."
    )


def markdown(board: Board) -> str:
    """The leaderboard as Markdown: the overall table, per-task scores on each
    integrator, the references, and the failed runs."""
    by = {(s.entry, s.table, s.task): s for s in board.scores}
    ran = {s.entry for s in board.scores} | {s.policy for s in board.summaries}
    entries = sorted(
        (e for e in board.entries if e in ran),
        key=lambda e: (-by[(e, ACCURATE, ALL)].iqm if (e, ACCURATE, ALL) in by else np.inf, e),
    )
    engine = board.definition["engine"]
    overall = markdown_table(
        (
            "entry",
            "kind",
            "tasks",
            "score, accurate: IQM [95 % CI]",
            f"score, {engine}: IQM [95 % CI]",
            "success, accurate",
            f"success, {engine}",
        ),
        [
            (
                e,
                board.entries[e],
                by[(e, ACCURATE, ALL)].tasks if (e, ACCURATE, ALL) in by else 0,
                _interval(by.get((e, ACCURATE, ALL))),
                _interval(by.get((e, ENGINE, ALL))),
                f"{by[(e, ACCURATE, ALL)].success_rate:.0%}" if (e, ACCURATE, ALL) in by else "—",
                f"{by[(e, ENGINE, ALL)].success_rate:.0%}" if (e, ENGINE, ALL) in by else "—",
            )
            for e in entries
        ],
        "llrrrrr",
    )
    tasks = list(board.references)
    per_task = {}
    for table in (ACCURATE, ENGINE):
        rows = [(e, *(_interval(by.get((e, table, t))) for t in tasks)) for e in entries]
        rows = [row for row in rows if any(cell != "—" for cell in row[1:])]
        per_task[table] = markdown_table(("entry", *map(_short, tasks)), rows, "l" + "r" * len(tasks))
    refs = markdown_table(
        ("task", "zero action's mean return R0", "best classical controller", "its mean return R1"),
        [
            (
                _short(r.task),
                f"{r.zero:.4g}",
                r.best,
                f"{r.best_return:.4g}" + ("" if r.usable else " (no score)"),
            )
            for r in board.references.values()
        ],
        "lrlr",
    )
    parts = [
        statement(board),
        "## Overall: normalised score across the tasks each entry entered",
        overall,
        "## Per task, on each task's own integrator",
        per_task[ACCURATE],
        f"## Sim-to-sim: per task, on `{engine}` (normalised by the accurate references)",
        per_task[ENGINE],
        "## References (1 and 0 of the score)",
        refs,
    ]
    if board.failures:
        parts += ["## Failed runs", "\n".join(f"- {line}" for line in board.failures)]
    return "\n\n".join(parts)


def figure(board: Board) -> Figure:
    """Left: each entry's overall IQM with its interval, on both integrators. Right:
    performance profiles (accurate) of the entries on two tasks or more."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [s for s in board.scores if s.task == ALL]
    entries = sorted({s.entry for s in rows}, key=lambda e: (next(s.iqm for s in rows if s.entry == e), e))
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, max(4.0, 0.28 * len(entries) + 1.5)))
    for offset, table, colour in ((-0.15, ACCURATE, "tab:blue"), (0.15, ENGINE, "tab:orange")):
        for y, entry in enumerate(entries):
            score = next((s for s in rows if s.entry == entry and s.table == table), None)
            if score is None:
                continue
            left.plot([score.low, score.high], [y + offset] * 2, color=colour, lw=4, alpha=0.45)
            label = (board.definition["engine"] if table == ENGINE else "own integrator") if y == 0 else None
            left.plot([score.iqm], [y + offset], "|", color=colour, ms=12, mew=2, label=label)
    left.set_yticks(range(len(entries)), entries, fontsize=7.5)
    left.axvline(0.0, color="grey", lw=0.8, ls=":")
    left.axvline(1.0, color="grey", lw=0.8, ls="--")
    left.set_xlabel("normalised score (IQM, 95 % CI): 0 zero action, 1 best classical")
    left.legend(fontsize=8, loc="lower right")
    left.grid(True, axis="x", alpha=0.3)
    wide = {e: m for (e, t), m in board.matrices.items() if t == ACCURATE and m.shape[1] >= 2}
    if wide:
        taus = np.linspace(-0.5, 1.5, 81)
        aggregate.plot_profiles(wide, taus, right)
        right.legend(fontsize=7.5, loc="lower left")
    right.set_xlabel(r"normalised score $\tau$ (own integrator)")
    right.set_ylabel(r"fraction of runs × tasks with score $> \tau$")
    fig.tight_layout()
    return fig


def write(out_dir: Path, board: Board) -> str:
    """``leaderboard.md``, ``leaderboard.csv`` (every :class:`Score`), ``metrics.md`` and
    ``metrics.csv`` (the benchmark's measures per entry, task, dispersion and integrator)
    and ``leaderboard.png`` into ``out_dir``; the Markdown of the leaderboard."""
    import matplotlib.pyplot as plt

    text = markdown(board)
    write_results(out_dir, "leaderboard", text, board.scores)
    ran = [s for s in board.summaries if not s.failure]
    metrics = f"{statement(board)}\n\n{control.format_table(ran)}"
    write_results(out_dir, "metrics", metrics, board.summaries)
    fig = figure(board)
    fig.savefig(out_dir / "leaderboard.png", dpi=110)
    plt.close(fig)
    return text

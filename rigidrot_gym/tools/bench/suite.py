"""The standard suite: every task, held-out seeds, each task's dispersions, a version hash.

``rigidrot bench suite`` runs every entry (the zero action, every classical controller,
and the policies asked for: trained agents, a user's ``package.module:Name``) on:

* every task id (``rigidrot_gym.ENV_IDS``, as they are registered),
* the held-out seeds :data:`SEEDS` (10000–10099: ``rigidrot evaluate``'s, none a
  training start: training seeds its envs with the run's seed plus the env's rank, below
  10000, and draws every later start from the env's own generator),
* each task's dispersions (:func:`dispersions_of`): as the task file defines it, the true
  inertia ×0.8 and ×1.2 (the policy keeps the nominal estimate), a randomised body where
  the task randomises none of it (WheelReorient-v0's domain randomisation), and where the
  task has wheels or thrusters and no fault of its own, one failing (a wheel stops, or a
  thruster sticks off, at a time drawn in the episode's first half); a task's own
  randomisation (WheelReorient-v0's body, NadirPointFault-v0's fault) stays as its file
  defines it,
* the task's own integrator (the accurate table) and a game engine's step,
  :data:`ENGINE` (the sim-to-sim table).

The suite's version (:attr:`Suite.version`) is the SHA-256 of its definition
(:meth:`Suite.definition`: each task's scenario digest, each dispersion's settings and
its scenario's digest, the seeds, the engine, the score's rule), not of the package: code
that changes no scenario, seed or dispersion keeps it. Every result file records it, its
definition and the package version; the leaderboard
(:mod:`rigidrot_gym.tools.bench.leaderboard`) refuses to mix versions.

The episodes run through the control benchmark's one implementation
(:func:`rigidrot_gym.tools.bench.control.run_episodes`, via its tasks and
:func:`rigidrot_gym.tools.bench.campaign.run`): here or on Ray, resumable, the same bits.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import rigidrot_gym
from rigidrot_gym.attitude.actuators import Actuators
from rigidrot_gym.attitude.scenario import Scenario, find
from rigidrot_gym.control import CONTROLLERS
from rigidrot_gym.tools.bench import campaign, control
from rigidrot_gym.tools.bench.control import Episode, Task
from rigidrot_gym.tools.bench.policies import AgentMaker, ControllerMaker

SEEDS = tuple(range(10_000, 10_100))
ENGINE = "semi_implicit"
FORMAT = "rigidrot-suite-result/1"
ZERO = "zero action"
SCORE = (
    "per episode (R - R0) / (R1 - R0), R the episode's return, R0 the zero action's mean return "
    "on the task and R1 the best classical controller's (the highest mean), both over the task's "
    "dispersions on its own integrator; a run's score on a task is the mean over its dispersions"
)
# Where a failing actuator's fault time is drawn: the episode's first half.
FAULT_SHARE = 0.5
# The randomised body of a task that does not randomise its own: WheelReorient-v0's
# domain randomisation (moments ±10 %, principal axes turned up to 5°, torque limits ±5 %).
RANDOMISED = (("randomize_inertia", 0.1), ("randomize_inertia_rotation_deg", 5.0), ("randomize_torque", 0.05))


class ZeroAction:
    """The zero action (every command 0 in [-1, 1]): the suite's score 0.

    Args:
        count: commands per body (the env's action size).
    """

    def __init__(self, count: int):
        self.count = count

    @classmethod
    def for_scenario(cls, scenario: Scenario) -> ZeroAction:
        """The zero action of ``scenario``'s actuators."""
        return cls(Actuators.of(scenario).count)

    def predict(self, observation, state: Any = None, episode_start=None, deterministic: bool = True):
        """Zeros of shape ``observation.shape[:-1] + (count,)``; ``state`` as given."""
        shape = np.shape(observation)[:-1] + (self.count,)
        return np.zeros(shape, dtype=np.float32), state


@dataclass(frozen=True)
class Dispersion:
    """One way a task's episodes are run: the true inertia scaled by ``inertia_scale``
    (the policy keeping the nominal estimate) and scenario settings replaced by keyword
    name (``overrides``, sorted pairs)."""

    name: str
    inertia_scale: float = 1.0
    overrides: tuple[tuple[str, Any], ...] = ()

    def apply(self, scenario: Scenario) -> Scenario:
        """``scenario`` with the overrides (its inertia scaled later, by the run)."""
        return scenario.with_overrides(**dict(self.overrides)) if self.overrides else scenario


def dispersions_of(scenario: Scenario) -> tuple[Dispersion, ...]:
    """The task's dispersions: as defined, the true inertia ×0.8 and ×1.2, a randomised
    body (:data:`RANDOMISED`, redrawn per episode) where the task randomises none of it,
    and a failing actuator where the task has wheels or thrusters and no fault of its own
    (the failing one drawn per episode, at a time drawn uniformly in the episode's first
    half)."""
    out = [Dispersion("nominal"), Dispersion("inertia ×0.8", 0.8), Dispersion("inertia ×1.2", 1.2)]
    if not any(getattr(scenario, name) for name, _ in RANDOMISED):
        out.append(Dispersion("randomised body", 1.0, RANDOMISED))
    window = (0.0, FAULT_SHARE * scenario.dt * scenario.max_episode_steps)
    if scenario.wheel_fault == "none" and scenario.thruster_fault == "none":
        if scenario.wheels:
            out.append(Dispersion("a wheel stops", 1.0, (("fault_window", window), ("wheel_fault", "stop"))))
        elif scenario.thruster_layout != "none":
            out.append(
                Dispersion("a thruster stuck off", 1.0, (("fault_window", window), ("thruster_fault", "off")))
            )
    return tuple(out)


@dataclass(frozen=True)
class Suite:
    """Tasks × their dispersions × seeds, on each task's integrator and on ``engine``."""

    scenarios: tuple[Scenario, ...]
    seeds: tuple[int, ...] = SEEDS
    engine: str = ENGINE

    @functools.cached_property
    def dispersions(self) -> dict[str, tuple[Dispersion, ...]]:
        """Each task's dispersions, by task id."""
        return {s.id: dispersions_of(s) for s in self.scenarios}

    def definition(self) -> dict[str, Any]:
        """Everything that decides the suite's numbers, as JSON-ready data."""
        return {
            "format": FORMAT,
            "engine": self.engine,
            "seeds": list(self.seeds),
            "score": SCORE,
            "tasks": [
                {
                    "id": s.id,
                    "integrator": s.integrator,
                    "digest": s.digest(),
                    "dispersions": [
                        {
                            "name": d.name,
                            "inertia_scale": d.inertia_scale,
                            "overrides": [
                                [k, list(v) if isinstance(v, tuple) else v] for k, v in d.overrides
                            ],
                            "digest": d.apply(s).digest(),
                        }
                        for d in self.dispersions[s.id]
                    ],
                }
                for s in self.scenarios
            ],
        }

    @functools.cached_property
    def version(self) -> str:
        """The first 16 hex digits of the SHA-256 of :meth:`definition`."""
        return definition_hash(self.definition())

    def runs(self) -> list[tuple[str, str, str]]:
        """(task id, dispersion, integrator) of every run, in the suite's order: per task,
        per dispersion, the task's own integrator then the engine."""
        return [
            (s.id, d.name, integrator)
            for s in self.scenarios
            for d in self.dispersions[s.id]
            for integrator in (s.integrator, self.engine)
        ]


def definition_hash(definition: dict[str, Any]) -> str:
    """The suite version of a definition: SHA-256 (16 hex digits) of its canonical JSON."""
    text = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def standard(tasks: Sequence[str] | None = None, seeds: int | None = None) -> Suite:
    """The standard suite (every registered task, :data:`SEEDS`), or a part of it: the
    ``tasks`` named (ids or file stems) and the first ``seeds`` seeds; a part has a
    version of its own.

    Raises:
        ValueError: for ``seeds`` not in [1, len(SEEDS)], no task or a repeated one, an
            unknown task (as :func:`~rigidrot_gym.attitude.scenario.find` says it).
    """
    if seeds is not None and (
        isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= len(SEEDS)
    ):
        raise ValueError(f"seeds: expected a whole number in [1, {len(SEEDS)}], got {seeds!r}")
    scenarios = tuple(find(name) for name in (rigidrot_gym.ENV_IDS if tasks is None else tasks))
    ids = [s.id for s in scenarios]
    if not ids or len(set(ids)) != len(ids):
        raise ValueError(f"tasks: expected distinct task ids, at least one, got {list(tasks or [])!r}")
    return Suite(scenarios, SEEDS[: seeds or len(SEEDS)])


# ------------------------------------------------------------------ an entry's results


@dataclass(frozen=True)
class Run:
    """One entry's episodes on one (task, dispersion, integrator), in seed order; or, for
    a run whose policy failed, none and the reason."""

    task: str
    dispersion: str
    integrator: str
    episodes: tuple[Episode, ...]
    failure: str = ""


@dataclass(frozen=True)
class Result:
    """One entry's result file: who ran (``entry``, ``kind``: "reference", "controller",
    "agent" or "user", ``source``: what identifies the policy), on which suite (its
    ``version`` and ``definition``), with which package, and its runs. Only the tasks
    the entry applies to have runs."""

    entry: str
    kind: str
    source: str
    version: str
    definition: dict[str, Any]
    package: str
    runs: tuple[Run, ...]

    def to_json(self) -> str:
        """The file's text: JSON, floats written exactly (``repr``), NaN as null."""
        data = {
            "format": FORMAT,
            "suite": self.version,
            "package": self.package,
            "entry": self.entry,
            "kind": self.kind,
            "source": self.source,
            "definition": self.definition,
            "runs": [
                {
                    "task": r.task,
                    "dispersion": r.dispersion,
                    "integrator": r.integrator,
                    "failure": r.failure,
                    "episodes": {
                        name: [_number(getattr(e, name)) for e in r.episodes]
                        for name in campaign.EPISODE_FIELDS
                    },
                }
                for r in self.runs
            ],
        }
        # One line for the header's each field, the definition and each run: a file people
        # read and diff line by line, at a third of the size of one indented throughout.
        lines = [f" {json.dumps(k)}: {_compact(v)}" for k, v in data.items() if k != "runs"]
        runs = ",\n".join(f"  {_compact(run)}" for run in data["runs"])
        return "{\n" + ",\n".join(lines) + f',\n "runs": [\n{runs}\n ]\n}}\n'

    def save(self, folder: Path) -> Path:
        """Write the file into ``folder`` (created if missing) as ``<entry>.json``; its path."""
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{slug(self.entry)}.json"
        path.write_text(self.to_json())
        return path


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _number(value: Any) -> Any:
    if isinstance(value, bool | np.bool_):
        return bool(value)
    value = float(value)
    return None if math.isnan(value) else value


def slug(name: str) -> str:
    """A file name for an entry's name."""
    return re.sub(r"[^A-Za-z0-9.-]+", "_", name).strip("_") or "entry"


def load(path: Path) -> Result:
    """A result file, checked: its definition hashes to its version, and its runs are
    the definition's (tasks, dispersions, integrators) with one episode per seed, each
    task it entered whole (every dispersion on both integrators, once).

    Raises:
        ValueError: naming the file and what is wrong.
    """
    try:
        data = json.loads(Path(path).read_text())
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, expected {FORMAT!r}")
        definition, version = data["definition"], data["suite"]
        runs = tuple(
            Run(
                r["task"],
                r["dispersion"],
                r["integrator"],
                tuple(
                    Episode(
                        **{
                            name: (bool(v) if name == "success" else float("nan") if v is None else float(v))
                            for name, v in zip(campaign.EPISODE_FIELDS, values, strict=True)
                        }
                    )
                    for values in zip(*(r["episodes"][name] for name in campaign.EPISODE_FIELDS), strict=True)
                ),
                r["failure"],
            )
            for r in data["runs"]
        )
        result = Result(
            data["entry"], data["kind"], data["source"], version, definition, data["package"], runs
        )
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path}: not a suite result file ({type(err).__name__}: {err})") from None
    if definition_hash(definition) != version:
        raise ValueError(
            f"{path}: its suite definition hashes to {definition_hash(definition)}, not to the "
            f"version {version} it states: the file was edited"
        )
    expected = {
        (t["id"], d["name"], integrator)
        for t in definition["tasks"]
        for d in t["dispersions"]
        for integrator in (t["integrator"], definition["engine"])
    }
    seeds = len(definition["seeds"])
    for run in runs:
        if (run.task, run.dispersion, run.integrator) not in expected:
            raise ValueError(
                f"{path}: a run of {run.task} ({run.dispersion}, {run.integrator}) that suite {version} "
                "does not have"
            )
        if not run.failure and len(run.episodes) != seeds:
            raise ValueError(
                f"{path}: {run.task} ({run.dispersion}, {run.integrator}) has {len(run.episodes)} episodes, "
                f"suite {version} {seeds}"
            )
    # A task entered is entered whole: every dispersion on both integrators, none twice (a
    # score over some of them would be another suite's).
    done = [(run.task, run.dispersion, run.integrator) for run in runs]
    for task in dict.fromkeys(run.task for run in runs):
        wanted = sorted(key for key in expected if key[0] == task)
        have = sorted(key for key in done if key[0] == task)
        if have != wanted:
            missing = [f"{d} ({i})" for _, d, i in wanted if (task, d, i) not in have]
            raise ValueError(
                f"{path}: {task} has {len(have)} runs; suite {version} asks for each of its dispersions on "
                f"both integrators once ({len(wanted)})" + (f", missing {missing}" if missing else "")
            )
    return result


# ------------------------------------------------------------------ running the suite


def makers_for(policies: Sequence[str] = ()) -> dict[str, Any]:
    """The entries: the zero action and every classical controller (the references), then
    ``policies`` (:func:`~rigidrot_gym.tools.bench.policies.resolve`'s names: controllers,
    agent folders, ``package.module:Name``), by display name.

    Raises:
        ValueError: as :func:`~rigidrot_gym.tools.bench.policies.resolve`.
    """
    from rigidrot_gym.tools.bench.policies import resolve

    makers: dict[str, Any] = {ZERO: ZeroAction}
    makers |= {name: ControllerMaker(name) for name in CONTROLLERS}
    makers |= {name: maker for name, maker in resolve(list(policies)).items() if name not in makers}
    return makers


def kind_of(name: str, maker: Any) -> str:
    """ "reference", "controller", "agent" or "user"."""
    if name == ZERO:
        return "reference"
    if isinstance(maker, ControllerMaker):
        return "controller"
    if isinstance(maker, AgentMaker):
        return "agent"
    return "user"


def plan(
    suite: Suite, makers: dict[str, Any], block_size: int = control.BLOCK_SIZE
) -> dict[tuple, list[Task]]:
    """The campaign's tasks of every run (:meth:`Suite.runs`), by (task id, dispersion,
    integrator): each entry that applies to the task
    (:func:`~rigidrot_gym.tools.bench.control.plan`).

    Raises:
        ValueError, PolicyError: as :func:`~rigidrot_gym.tools.bench.control.plan`.
    """
    scenarios = {s.id: s for s in suite.scenarios}
    tasks = {}
    for task, name, integrator in suite.runs():
        dispersion = next(d for d in suite.dispersions[task] if d.name == name)
        tasks[(task, name, integrator)] = control.plan(
            makers,
            [dispersion.apply(scenarios[task])],
            [integrator],
            suite.seeds,
            (dispersion.inertia_scale,),
            block_size,
        )
    return tasks


def results(
    suite: Suite, makers: dict[str, Any], tasks: dict[tuple, list[Task]], blocks: dict[str, control.Block]
) -> list[Result]:
    """Each entry's :class:`Result`, from the finished ``blocks`` (by task key) of ``tasks``
    (:func:`plan`), in the order of ``makers``."""
    runs: dict[str, list[Run]] = {name: [] for name in makers}
    for (task, dispersion, integrator), planned in tasks.items():
        for name in makers:
            mine = [t for t in planned if t.policy == name]
            if not mine:
                continue
            done = [blocks[t.key] for t in mine]
            failure = next((b.failure for b in done if b.failure is not None), "")
            episodes = () if failure else tuple(e for b in done for e in b.episodes)
            runs[name].append(Run(task, dispersion, integrator, episodes, failure))
    definition = suite.definition()
    return [
        Result(
            name,
            kind_of(name, maker),
            getattr(maker, "fingerprint", name),
            suite.version,
            definition,
            rigidrot_gym.__version__,
            tuple(runs[name]),
        )
        for name, maker in makers.items()
    ]


def run(
    suite: Suite,
    makers: dict[str, Any],
    shard_dir: Path,
    *,
    resume: bool = False,
    use_ray: bool = False,
    address: str | None = None,
    cpus_per_task: float = 1.0,
    progress: bool = True,
) -> list[Result]:
    """Run the suite for every entry of ``makers`` (:func:`makers_for`); each entry's
    result. The blocks are stored in ``shard_dir`` as they finish and, with ``resume``,
    taken from there (:func:`~rigidrot_gym.tools.bench.campaign.run`: here, or on Ray with
    ``use_ray``, the same bits).

    Raises:
        ValueError, PolicyError: as :func:`plan` and
            :func:`~rigidrot_gym.tools.bench.campaign.run`.
    """
    tasks = plan(suite, makers)
    every = [t for planned in tasks.values() for t in planned]
    blocks = campaign.run(
        every,
        makers,
        shard_dir,
        resume=resume,
        use_ray=use_ray,
        address=address,
        cpus_per_task=cpus_per_task,
        progress=progress,
    )
    return results(suite, makers, tasks, blocks)

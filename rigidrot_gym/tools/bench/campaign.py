"""Running the tasks of a control-benchmark campaign, here or on a Ray cluster.

Each finished block is stored as it arrives, one shard per task in ``shard_dir``:
``<task key>.csv`` (one row per episode: the seed and the fields of
:class:`~rigidrot_gym.tools.bench.control.Episode`; floats written with ``repr``, so they
read back bit for bit) and, for a block with a trace, ``<task key>.npz``. The CSV is written
last, under a temporary name then renamed (atomic on POSIX): a shard that exists is
complete. With ``resume=True`` the tasks whose shard exists are not run again.

On Ray (the ``[ray]`` extra) every task is a Ray task of one CPU by default; a task whose
worker dies is run again (up to :data:`MAX_RETRIES` times) by Ray. Policy makers go to the
object store once (``ray.put``) and each task receives its policy's reference, so a
trained agent's files are sent to a node once and loaded once per worker process
(:mod:`rigidrot_gym.tools.bench.policies`). Results are gathered by task key, so the order
in which tasks finish changes nothing.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from rigidrot_gym.tools.bench.control import Block, Episode, Task, run_task

# Ray runs a task again when its worker process dies (system failure), up to this many times.
MAX_RETRIES = 3
EPISODE_FIELDS = tuple(f.name for f in fields(Episode))


def save_block(folder: Path, block: Block) -> None:
    """Write ``block`` as its shard in ``folder`` (created if missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    key = block.task.key
    if block.trace is not None:
        with open(folder / f"{key}.npz.tmp", "wb") as f:
            np.savez(f, **block.trace)
        os.replace(folder / f"{key}.npz.tmp", folder / f"{key}.npz")
    with open(folder / f"{key}.csv.tmp", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(("seed", *EPISODE_FIELDS))
        for seed, episode in zip(block.task.seeds, block.episodes, strict=True):
            writer.writerow((seed, *(repr(getattr(episode, name)) for name in EPISODE_FIELDS)))
    os.replace(folder / f"{key}.csv.tmp", folder / f"{key}.csv")


def load_block(folder: Path, task: Task) -> Block | None:
    """The stored block of ``task``, or None if it has no complete shard.

    Raises:
        ValueError: if the shard's seeds are not the task's (a file edited or mixed up).
    """
    path = folder / f"{task.key}.csv"
    if not path.exists() or (task.trace and not (folder / f"{task.key}.npz").exists()):
        return None
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    seeds = tuple(int(row["seed"]) for row in rows)
    if seeds != task.seeds:
        raise ValueError(f"shard {path} holds seeds {seeds[:3]}..., its task {task.seeds[:3]}...")
    episodes = tuple(
        Episode(
            success=row["success"] == "True",
            **{name: float(row[name]) for name in EPISODE_FIELDS if name != "success"},
        )
        for row in rows
    )
    trace = None
    if task.trace:
        with np.load(folder / f"{task.key}.npz") as data:
            trace = {name: data[name] for name in data.files}
    return Block(task, episodes, trace)


def _progress_bar(total: int, initial: int, enabled: bool):
    """A tqdm bar over tasks, or None (disabled, or tqdm not installed)."""
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, initial=initial, unit="task", desc="control campaign")


def import_ray():
    """The ``ray`` module, or DependencyNotInstalled naming the extra."""
    try:
        import ray
    except ImportError as err:
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(
            'Ray is not installed: pip install "rigidrot-gym[ray]" (or "ray[default,tune]")'
        ) from err
    return ray


def _run_on_ray(
    pending: Sequence[Task],
    makers: dict[str, Callable],
    finished: Callable[[Block], None],
    address: str | None,
    cpus_per_task: float,
) -> None:
    """Submit every pending task to Ray; hand each block to ``finished`` as it arrives."""
    ray = import_ray()
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, logging_level="WARNING", log_to_driver=False)
    running = {}
    try:
        remote = ray.remote(run_task).options(num_cpus=cpus_per_task, max_retries=MAX_RETRIES)
        refs = {name: ray.put(makers[name]) for name in {t.policy for t in pending}}
        running = {remote.remote(task, refs[task.policy]): task for task in pending}
        while running:
            done, _ = ray.wait(list(running), num_returns=1)
            for ref in done:
                running.pop(ref)
                finished(ray.get(ref))
    finally:
        for ref in running:  # a task failed or we were interrupted: stop what is left
            ray.cancel(ref)
        if started:
            ray.shutdown()


def run(
    tasks: Sequence[Task],
    makers: dict[str, Callable[[Any], Any]],
    shard_dir: Path,
    *,
    resume: bool = False,
    use_ray: bool = False,
    address: str | None = None,
    cpus_per_task: float = 1.0,
    progress: bool = True,
) -> dict[str, Block]:
    """Every task's block, by task key, each stored in ``shard_dir`` as it finishes.

    Args:
        tasks: from :func:`rigidrot_gym.tools.bench.control.plan`.
        makers: the policy makers the tasks name (``task.policy``).
        shard_dir: where the shards go.
        resume: take the blocks already stored in ``shard_dir`` instead of running them.
        use_ray: run the tasks as Ray tasks; else here, one after the other.
        address: the Ray cluster to connect to (``ray.init(address=...)``: ``"auto"``, an
            ``ip:port``, or ``ray://host:10001`` for Ray Client); None starts a local Ray
            instance. Ignored when Ray is already initialised in this process.
        cpus_per_task: CPUs Ray reserves per task (positive).
        progress: draw a progress bar over the tasks (needs tqdm).

    Raises:
        ValueError: for a task whose policy has no maker, or ``cpus_per_task`` <= 0.
    """
    unknown = sorted({t.policy for t in tasks} - set(makers))
    if unknown:
        raise ValueError(f"tasks name policies without a maker: {unknown}")
    if not (isinstance(cpus_per_task, int | float) and math.isfinite(cpus_per_task) and cpus_per_task > 0):
        raise ValueError(f"cpus_per_task must be a positive number, got {cpus_per_task!r}")
    blocks = {}
    if resume:
        for task in tasks:
            block = load_block(shard_dir, task)
            if block is not None:
                blocks[task.key] = block
    pending = [t for t in tasks if t.key not in blocks]
    bar = _progress_bar(len(tasks), len(blocks), progress)

    def finished(block: Block) -> None:
        save_block(shard_dir, block)
        blocks[block.task.key] = block
        if bar is not None:
            bar.update(1)

    try:
        if use_ray:
            _run_on_ray(pending, makers, finished, address, cpus_per_task)
        else:
            for task in pending:
                finished(run_task(task, makers[task.policy]))
    finally:
        if bar is not None:
            bar.close()
    return blocks

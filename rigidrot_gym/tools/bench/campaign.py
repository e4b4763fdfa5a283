"""Running the tasks of a control-benchmark campaign, here or on a Ray cluster.

Each finished block is stored as it arrives, one shard per task in ``shard_dir``:
``<task key>.csv`` (one row per episode: the seed and the fields of
:class:`~rigidrot_gym.tools.bench.control.Episode`; floats written with ``repr``, so they
read back bit for bit), for a block with a trace ``<task key>.npz``, and last
``<task key>.json``, the shard's manifest: its seeds, its row count and the SHA-256 of
each file. Every file is written under a temporary name then renamed (atomic on POSIX),
the manifest last: a shard with a manifest is complete. The key
(:attr:`~rigidrot_gym.tools.bench.control.Task.key`) holds the digest of everything that
decides the block's numbers, so an edited scenario, another policy, integrator,
package version or edit of the package's code never finds an old shard.

A failed block (a policy that failed in its task: :attr:`~rigidrot_gym.tools.bench.control.Block.failure`)
is handed back but not stored: a resumed campaign runs its task again.

With ``resume=True`` the tasks whose shard is complete and verified (the manifest read,
each file's digest, the rows and the seeds the task's) are not run again; a shard that
fails the check is run again, with a :class:`DamagedShardWarning` naming its file and
what is wrong, never a traceback.

On Ray (the ``[ray]`` extra) every task is a Ray task of one CPU by default; a task whose
worker dies is run again (up to :data:`MAX_RETRIES` times) by Ray. Policy makers go to the
object store once (``ray.put``) and each task receives its policy's reference, so a
trained agent's files are sent to a node once and loaded once per worker process
(:mod:`rigidrot_gym.tools.bench.policies`). Results are gathered by task key, so the order
in which tasks finish changes nothing.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np

from rigidrot_gym.tools.bench.control import Block, Episode, Task, run_task

# Ray runs a task again when its worker process dies (system failure), up to this many times.
MAX_RETRIES = 3
EPISODE_FIELDS = tuple(f.name for f in fields(Episode))


class DamagedShardWarning(UserWarning):
    """A stored shard failed its check on resume; its task runs again."""


class DamagedShard(ValueError):
    """A stored shard that fails its check: the message names the file and the fault."""


def _write(path: Path, data: bytes) -> str:
    """``data`` into ``path`` atomically (a temporary file, then a rename); its SHA-256."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)
    return hashlib.sha256(data).hexdigest()


def save_block(folder: Path, block: Block) -> None:
    """Write ``block`` as its shard in ``folder`` (created if missing): the CSV, the trace
    if any, then the manifest that makes it complete."""
    folder.mkdir(parents=True, exist_ok=True)
    key = block.task.key
    files = {}
    if block.trace is not None:
        buffer = io.BytesIO()
        np.savez(buffer, **block.trace)
        files[f"{key}.npz"] = _write(folder / f"{key}.npz", buffer.getvalue())
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(("seed", *EPISODE_FIELDS))
    for seed, episode in zip(block.task.seeds, block.episodes, strict=True):
        writer.writerow((seed, *(repr(getattr(episode, name)) for name in EPISODE_FIELDS)))
    files[f"{key}.csv"] = _write(folder / f"{key}.csv", text.getvalue().encode())
    manifest = {"key": key, "seeds": list(block.task.seeds), "rows": len(block.episodes), "sha256": files}
    _write(folder / f"{key}.json", json.dumps(manifest, indent=1).encode())


def load_block(folder: Path, task: Task) -> Block | None:
    """The stored block of ``task``, or None if it has no complete shard (no manifest).

    Raises:
        DamagedShard: naming the file and the fault, for a shard whose manifest does not
            read, whose files are missing or differ from their digests, or whose rows or
            seeds are not the task's.
    """
    manifest_path = folder / f"{task.key}.json"
    if not manifest_path.exists():
        return None
    try:
        manifest = json.loads(manifest_path.read_text())
        digests, seeds, rows = manifest["sha256"], tuple(manifest["seeds"]), manifest["rows"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise DamagedShard(
            f"{manifest_path}: the manifest does not read ({type(err).__name__}: {err})"
        ) from None
    if manifest.get("key") != task.key or seeds != task.seeds or rows != len(task.seeds):
        raise DamagedShard(
            f"{manifest_path}: the manifest is of another task (key {manifest.get('key')!r}, {rows} rows, "
            f"seeds {_span(seeds)}; the task's: key {task.key!r}, {len(task.seeds)} rows, "
            f"seeds {_span(task.seeds)})"
        )
    wanted = [f"{task.key}.csv"] + ([f"{task.key}.npz"] if task.trace else [])
    data = {}
    for name in wanted:
        path = folder / name
        if name not in digests or not path.exists():
            raise DamagedShard(f"{path}: missing, though the manifest {manifest_path.name} lists its shard")
        data[name] = path.read_bytes()
        if hashlib.sha256(data[name]).hexdigest() != digests[name]:
            raise DamagedShard(f"{path}: its content differs from the digest in {manifest_path.name}")
    try:
        episodes = _episodes(data[wanted[0]].decode(), task.seeds)
        trace = None
        if task.trace:
            with np.load(io.BytesIO(data[wanted[1]])) as arrays:
                trace = {name: arrays[name] for name in arrays.files}
    except Exception as err:  # a file that matches its digest but does not parse: written wrong
        raise DamagedShard(f"{folder / wanted[0]}: does not read ({type(err).__name__}: {err})") from None
    return Block(task, episodes, trace)


def _span(seeds: Sequence[int]) -> str:
    """Seeds as the reader can tell them apart: count, first and last."""
    return f"{len(seeds)} from {seeds[0]} to {seeds[-1]}" if seeds else "none"


def _episodes(text: str, seeds: tuple[int, ...]) -> tuple[Episode, ...]:
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    stored = tuple(int(row["seed"]) for row in rows)
    if stored != seeds:
        raise ValueError(f"rows of seeds {_span(stored)}, the task's {_span(seeds)}")
    return tuple(
        Episode(
            success=row["success"] == "True",
            **{name: float(row[name]) for name in EPISODE_FIELDS if name != "success"},
        )
        for row in rows
    )


def _stored(folder: Path, task: Task) -> Block | None:
    """:func:`load_block`, with a damaged shard reported as a warning and run again (None)."""
    try:
        return load_block(folder, task)
    except DamagedShard as err:
        warnings.warn(f"damaged shard, its task runs again: {err}", DamagedShardWarning, stacklevel=3)
        return None


def _progress_bar(total: int, initial: int, enabled: bool):
    """A tqdm bar over tasks, or None (disabled, or tqdm not installed)."""
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, initial=initial, unit="task", desc="control campaign")


# Where a local Ray instance listens: this machine only. Left to itself, Ray binds its
# nodes to the machine's outward address (the source address of a route to the
# Internet), which on a machine where that address does not answer meant ten minutes of
# connection timeouts instead of a run. Ray reads this documented switch (meant for
# clusters on Windows and macOS) once, when it is first imported.
LOCAL_ADDRESS = "127.0.0.1"
_LOCAL_ONLY = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def import_ray(local: bool = False):
    """The ``ray`` module, or DependencyNotInstalled naming the extra. With ``local``,
    Ray (if not imported yet) keeps its nodes on :data:`LOCAL_ADDRESS`."""
    if local and "ray" not in sys.modules:
        os.environ.setdefault(_LOCAL_ONLY, "0")
    try:
        import ray
    except ImportError as err:
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(
            'Ray is not installed: pip install "rigidrot-gym[ray]" (or "ray[default,tune]")'
        ) from err
    return ray


def connect(address: str | None) -> None:
    """``ray.init``: join the cluster at ``address``, or with None start a new local
    instance (never one already running) on :data:`LOCAL_ADDRESS`, without a dashboard
    (if this process imported Ray before, with Ray's own default, on Ray's choice).

    Raises:
        RuntimeError: naming the address, if Ray cannot start or join it.
    """
    ray = import_ray(local=address is None)
    options = {"logging_level": "WARNING", "log_to_driver": False}
    if address is None:
        options |= {"include_dashboard": False}
    try:
        ray.init(address=address or "local", **options)
    except Exception as err:
        where = f"the Ray cluster at {address}" if address else f"a local Ray instance on {LOCAL_ADDRESS}"
        raise RuntimeError(f"could not start or join {where}: {type(err).__name__}: {err}") from err


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
        connect(address)
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
    """Every task's block, by task key, each stored in ``shard_dir`` as it finishes (a
    failed block is returned, not stored).

    Args:
        tasks: from :func:`rigidrot_gym.tools.bench.control.plan`.
        makers: the policy makers the tasks name (``task.policy``).
        shard_dir: where the shards go.
        resume: take the blocks already stored in ``shard_dir`` instead of running them.
        use_ray: run the tasks as Ray tasks; else here, one after the other.
        address: the Ray cluster to connect to (``ray.init(address=...)``: ``"auto"``, an
            ``ip:port``, or ``ray://host:10001`` for Ray Client); None starts a local Ray
            instance on 127.0.0.1 (:func:`connect`). Ignored when Ray is already
            initialised in this process.
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
            block = _stored(shard_dir, task)
            if block is not None:
                blocks[task.key] = block
    pending = [t for t in tasks if t.key not in blocks]
    bar = _progress_bar(len(tasks), len(blocks), progress)

    def finished(block: Block) -> None:
        if block.failure is None:
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

"""``rigidrot compile``: the numerical kernels of environment ids, compiled ahead of use.

Numba compiles a kernel the first time a process needs it and keeps it in its on-disk
cache, which is tied to the CPU model and to the package's source, so no cache is shipped.
This command makes that first use happen ahead of time (a Dockerfile, a CI step, a
cluster's set-up): for each id and integrator, it resets and steps the single env and a
native vector env once, which compiles (or loads) every kernel they use. The ids run in
processes of their own, as many at once as ``workers``.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from rigidrot_gym.tools.report import markdown_table


@dataclass(frozen=True)
class Warmed:
    """One id and integrator, and the seconds its first reset and step took here."""

    env_id: str
    integrator: str
    single: float
    vector: float


def warm(env_id: str, integrator: str | None = None) -> Warmed:
    """Reset and step ``env_id``'s single env and a 2-env native vector env once (with
    ``integrator``, or the scenario's own), compiling or loading their kernels."""
    import gymnasium as gym
    import numpy as np

    import rigidrot_gym  # noqa: F401  (registers the ids)

    options = {} if integrator is None else {"integrator": integrator}
    seconds = []
    for make in (lambda: gym.make(env_id, **options), lambda: gym.make_vec(env_id, num_envs=2, **options)):
        start = time.perf_counter()
        env = make()
        env.reset(seed=0)
        env.step(np.zeros(env.action_space.shape, dtype=env.action_space.dtype))
        env.close()
        seconds.append(time.perf_counter() - start)
    return Warmed(env_id, integrator or env.unwrapped.scenario.integrator, *seconds)


def run(env_ids: list[str] | None, integrators: list[str] | None, workers: int | None = None) -> str:
    """Compile the kernels of ``env_ids`` (default: every registered id) for each of
    ``integrators`` (default: each scenario's own) on ``workers`` processes (default:
    one per core); the table of seconds each took.

    Raises:
        ValueError: for an unknown id or integrator, or a bad ``workers``.
    """
    import gymnasium as gym

    from rigidrot_gym.attitude.registration import register_scenarios
    from rigidrot_gym.physics.rotation import integrators as methods

    known = register_scenarios()
    for env_id in env_ids or ():
        if env_id not in gym.registry:
            raise ValueError(f"env id {env_id!r} is not registered; the package's ids: {', '.join(known)}")
    for name in integrators or ():
        if name not in methods.names():
            raise ValueError(f"integrator {name!r} is unknown; the integrators: {', '.join(methods.names())}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive integer or None, got {workers!r}")
    cases = [(env_id, name) for env_id in env_ids or known for name in integrators or [None]]
    workers = min(workers or os.cpu_count() or 1, len(cases))
    start = time.perf_counter()
    # spawn: fork would copy this process's LLVM and threads into the workers
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        done = list(pool.map(warm, *zip(*cases, strict=True)))
    rows = [[w.env_id, w.integrator, f"{w.single:.1f}", f"{w.vector:.1f}"] for w in done]
    table = markdown_table(["id", "integrator", "single env, s", "vector env, s"], rows)
    return (
        f"{table}\n\n{len(done)} cases in {time.perf_counter() - start:.1f} s on {workers} processes; "
        "later processes on this machine load these kernels from the cache"
    )

"""Throughput of the environments, as ratios against Gymnasium peers measured in the same run.

* single env through ``gym.make`` (default wrappers), default scenario and integrator,
  against ``Pendulum-v1`` through ``gym.make``;
* the native vector env with 4096 envs against ``CartPole-v1``'s native vector env;
* both again for ``RigidRot/WheelReorient-v0``, every realism option switched on (the
  cost of wheels, noise, delay, disturbances and randomisation);
* the spacecraft's full stack, ``RigidRot/NadirPoint-v0`` (real wheels, magnetorquers,
  orbit, field, gravity gradient, four sensors and the MEKF), against the plain
  ``RigidRot/Reorient-v0``: the native vector env's cost per env-step, paired (full runs
  only);
* env-steps/s against the number of envs (1 … 65536) for the native vector env, for
  ``gymnasium.vector.SyncVectorEnv`` over single envs (the generic alternative), and
  for CartPole's vector env;
* where a vector step's time goes (:mod:`rigidrot_gym.tools.bench.phases`): ns per env-step
  by phase, and the RK4 integration against its operation count and this core's measured
  multiply-add peak;
* numba: the first make → reset → step in a fresh process with an empty cache (compiling,
  with the seconds spent on each kernel), and the same loading the kernels from the cache
  in a second process;
* rendering (``[render]`` extra): ms per 320×240 frame, and the single env's steps/s
  created with ``render_mode="rgb_array"`` but not drawing, against no render mode.

Each run also appends its headline ratios to ``history.csv`` in its output folder (one row
per run: date, the package's git commit, machine, full or quick), so that the committed
folder keeps the history of the committed runs and a working folder that of its own.

The machines are shared and noisy: peer and candidate alternate in short runs and the
median of the per-pair ratios is reported.
"""

from __future__ import annotations

import csv
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym
import llvmlite.binding as llvm
import numba
import numpy as np

import rigidrot_gym  # registers the ids; its version and location name a run
from rigidrot_gym.attitude import scenario
from rigidrot_gym.tools.bench.phases import RK4_DIVISIONS_AND_ROOTS, RK4_FLOPS, arithmetic_peak, phase_costs
from rigidrot_gym.tools.report import markdown_table

DEFAULT_ID = "RigidRot/Reorient-v0"
REALISTIC_ID = "RigidRot/WheelReorient-v0"
FULL_STACK_ID = "RigidRot/NadirPoint-v0"
COUNTS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536)
SYNC_MAX = 1024  # SyncVectorEnv steps its envs one by one in Python: stop the curve here
WARM_ACTIONS = 16  # batches of random actions, drawn before timing and cycled
WARM_STEPS = 500  # longer than an episode of these envs under random actions


def machine() -> str:
    """The CPU's model name (``/proc/cpuinfo``, else the platform's), the CPU that numba
    compiles for (``NUMBA_CPU_NAME``'s, else the host's), and the cores this process may use."""
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [
            line.split(":", 1)[1].strip()
            for line in cpuinfo.read_text().splitlines()
            if line.startswith("model name")
        ]
        model = names[0] if names else model
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    target = numba.config.CPU_NAME or llvm.get_host_cpu_name()
    return f"{model} (numba compiles for {target}), {cores} cores"


def render_cost(env_id: str = DEFAULT_ID, frames: int = 50) -> float:
    """Median milliseconds per 320×240 ``rgb_array`` frame of a stepping env."""
    env = gym.make(env_id, render_mode="rgb_array", render_options={"width": 320, "height": 240})
    env.reset(seed=0)
    env.render()
    times = []
    for _ in range(frames):
        env.step(env.action_space.sample())
        start = time.perf_counter()
        env.render()
        times.append(time.perf_counter() - start)
    env.close()
    return 1e3 * float(np.median(times))


def _idle_render_rate(env_id: str, steps: int) -> float:
    """Steps/s of a single env made with ``render_mode="rgb_array"`` that never draws."""
    env = gym.make(env_id, render_mode="rgb_array")
    env.reset(seed=0)
    action = np.zeros(3, dtype=np.float32)
    start = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


@dataclass(frozen=True)
class Report:
    """What :func:`run` measured; ``text`` is the markdown summary."""

    single_ratio: float
    vector_ratio: float
    text: str


# history.csv: a run's headline ratios (None where the run did not measure one).
HISTORY_COLUMNS = (
    "date",
    "commit",
    "machine",
    "run",
    "single_reorient_vs_pendulum",
    "vector_reorient_vs_cartpole",
    "vector_reorient_2_threads_vs_cartpole",
    "single_wheelreorient_vs_pendulum",
    "vector_wheelreorient_vs_cartpole",
    "first_step_s",
)


def commit() -> str:
    """The package's git commit (``git describe --always --dirty``) when it runs from a
    checkout, else its version."""
    root = Path(rigidrot_gym.__file__).resolve().parents[1]
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty"], cwd=root, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        out = None
    if out is not None and out.returncode == 0 and (root / ".git").exists():
        return out.stdout.strip()
    return f"version {rigidrot_gym.__version__}"


def append_history(path: Path, row: dict[str, Any]) -> None:
    """Append ``row`` (keys :data:`HISTORY_COLUMNS`; floats written to 2 decimals, None as
    empty) to the CSV file ``path``, writing its header first if it is new."""
    new = not path.exists()
    with open(path, "a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=HISTORY_COLUMNS)
        if new:
            writer.writeheader()
        cells = {k: f"{v:.2f}" if isinstance(v, float) else ("" if v is None else v) for k, v in row.items()}
        writer.writerow(cells)


def _single_rate(env_id: str, steps: int) -> float:
    """Steps/s of one env through ``gym.make`` with a fixed small action."""
    env = gym.make(env_id)
    env.reset(seed=0)
    action = (0.1 * env.action_space.sample()).astype(env.action_space.dtype)
    for _ in range(50):
        env.step(action)
    start = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            env.reset()
    rate = steps / (time.perf_counter() - start)
    env.close()
    return rate


def _vector_env(env_id: str, n: int, mode: str, **kwargs):
    if mode == "sync":
        return gym.vector.SyncVectorEnv([lambda: gym.make(env_id) for _ in range(n)])
    return gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point", **kwargs)


def _vector_rate(env_id: str, n: int, mode: str, seconds: float, **kwargs) -> float:
    """Env-steps/s of ``n`` envs (made with ``kwargs``) under uniformly random actions for
    about ``seconds`` of stepping, autoresets included, in the steady state of training:
    after a warm-up of ``WARM_STEPS`` steps (at most ``seconds``), by which episodes end
    at different steps, as a learning agent's do, not all at once."""
    env = _vector_env(env_id, n, mode, **kwargs)
    env.reset(seed=0)
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(WARM_ACTIONS)]

    def steps_per_second(most: int | None) -> float:
        steps, start = 0, time.perf_counter()
        while True:
            env.step(actions[steps % WARM_ACTIONS])
            steps += 1
            elapsed = time.perf_counter() - start
            if steps == most or (steps >= 5 and elapsed >= seconds):
                return steps / elapsed

    steps_per_second(WARM_STEPS)
    rate = n * steps_per_second(None)
    env.close()
    return rate


def _ratio_row(label: str, measured: tuple[float, float, float]) -> tuple[str, str, str, str]:
    """A table row: ``label``, our rate, the peer's, and the ratio of :func:`_paired_ratio`."""
    ratio, ours, theirs = measured
    return label, f"{ours:,.0f}", f"{theirs:,.0f}", f"{ratio:.2f}"


def _paired_ratio(candidate, peer, repeats: int) -> tuple[float, float, float]:
    """Median over alternating runs of candidate/peer rates; also the median rates."""
    ours, theirs = [], []
    for _ in range(repeats):
        ours.append(candidate())
        theirs.append(peer())
    ratios = np.array(ours) / np.array(theirs)
    return float(np.median(ratios)), float(np.median(ours)), float(np.median(theirs))


_COMPILE_SNIPPET = """
import json, time
start = time.perf_counter()
from numba.core import event
kernels, open_ = {{}}, []
class Timer(event.Listener):
    def on_start(self, ev):
        open_.append(time.perf_counter())
    def on_end(self, ev):
        began = open_.pop()
        if not open_:  # a kernel a run calls (the functions it calls compile inside it)
            name = ev.data["dispatcher"].py_func.__module__ + "." + ev.data["dispatcher"].py_func.__name__
            kernels[name] = kernels.get(name, 0.0) + time.perf_counter() - began
event.register("numba:compile", Timer())
import gymnasium as gym, numpy as np
import rigidrot_gym
imported = time.perf_counter()
single = gym.make("{env_id}")
single.reset(seed=0)
single.step(np.zeros(single.action_space.shape, dtype=np.float32))
first = time.perf_counter()
env = gym.make_vec("{env_id}", num_envs=64)
env.reset(seed=0)
env.step(np.zeros((64, *single.action_space.shape), dtype=np.float32))
print(json.dumps([imported - start, first - imported, time.perf_counter() - first, kernels]))
"""


@dataclass(frozen=True)
class CompileTimes:
    """Seconds from import to the first step of a single env, then to the first step of a
    vector env of 64 (its reset draws in a compiled call), with an empty numba cache
    (``cold``) and with the cache the cold run wrote (``cached``); ``kernels``: seconds
    compiling each kernel in the cold run; ``recompiled``: the same in the cached run
    (empty when every kernel loads from the cache)."""

    cold: tuple[float, float]
    cached: tuple[float, float]
    kernels: dict[str, float]
    recompiled: dict[str, float]


def _recompiled_text(recompiled: dict[str, float]) -> str:
    """What the cached run compiled again (nothing, when the cache works)."""
    if not recompiled:
        return ""
    names = ", ".join(name.removeprefix("rigidrot_gym.") for name in sorted(recompiled))
    return f", though it compiled {names} again instead of loading them"


def compile_times(env_id: str = DEFAULT_ID) -> CompileTimes:
    """:class:`CompileTimes` of ``env_id``: a fresh process with an empty numba cache, then a
    second process with the cache that the first one wrote."""
    import json

    code = _COMPILE_SNIPPET.format(env_id=env_id)
    with tempfile.TemporaryDirectory() as cache:
        environment = {**os.environ, "NUMBA_CACHE_DIR": cache}
        runs = []
        for _ in range(2):
            out = subprocess.run(
                [sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=True
            )
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return CompileTimes(
        cold=tuple(runs[0][1:3]), cached=tuple(runs[1][1:3]), kernels=runs[0][3], recompiled=runs[1][3]
    )


def _plot(curve: dict[str, dict[int, float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, points in curve.items():
        n = sorted(points)
        ax.loglog(n, [points[k] for k in n], marker="o", label=label)
    ax.set_xlabel("number of envs")
    ax.set_ylabel("env-steps per second")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _phase_text(env_id: str, n: int, integrator: str, phases: dict[str, float], peak: float) -> list[str]:
    if not phases:
        return []
    text = [
        f"Where a vector step of {n} envs of {env_id} goes, ns per env-step (best of 31 runs; one thread):",
        "",
        markdown_table(("phase", "ns per env-step"), [(k, f"{v:.1f}") for k, v in phases.items()], "lr"),
        "",
    ]
    if integrator == "rk4":
        measured, limit = phases["integration (per sub-step)"], RK4_FLOPS / peak * 1e9
        distance = (
            f"the measured step is {measured / limit:.1f}× that."
            if measured >= limit
            # Not a step beyond the limit: the loop fell short of this core's peak in this run.
            else f"the measured step is as fast or faster ({measured / limit:.2f}×): that loop did not "
            "bound the step in this run, so it does not tell the distance to this core's limit."
        )
        text += [
            f"An RK4 step of one body is {RK4_FLOPS} additions and multiplications and "
            f"{RK4_DIVISIONS_AND_ROOTS} divisions or square roots; it costs {measured:.1f} ns here "
            f"({RK4_FLOPS / measured:.1f} GFLOP/s). This core's multiply-add peak (a tight loop compiled "
            f"the same way, best of 9 runs) is {peak / 1e9:.1f} GFLOP/s: {limit:.1f} ns for those "
            f"operations; {distance}",
            "",
        ]
    return text


def run(out_dir: Path, quick: bool = False, env_id: str = DEFAULT_ID) -> Report:
    """Measure everything, write ``throughput.md``, ``throughput.csv`` and
    ``throughput.png`` into ``out_dir``, and return the report."""
    out_dir.mkdir(parents=True, exist_ok=True)
    measured = commit()  # before this run writes anything (a results folder in the checkout)
    single_steps, repeats, seconds = (2000, 3, 0.05) if quick else (20000, 7, 0.5)
    counts = COUNTS[:5] if quick else COUNTS

    n_vec = 256 if quick else 4096
    rows = []
    headline = {}
    for candidate in dict.fromkeys((env_id, REALISTIC_ID)):
        single = _paired_ratio(
            lambda c=candidate: _single_rate(c, single_steps),
            lambda: _single_rate("Pendulum-v1", single_steps),
            repeats,
        )
        vector = _paired_ratio(
            lambda c=candidate: _vector_rate(c, n_vec, "native", seconds),
            lambda: _vector_rate("CartPole-v1", n_vec, "native", seconds),
            repeats,
        )
        headline[candidate] = single[0], vector[0]
        rows += [
            _ratio_row(f"single env via `gym.make`, steps/s ({candidate} vs Pendulum-v1)", single),
            _ratio_row(f"native vector env, {n_vec} envs, env-steps/s ({candidate} vs CartPole-v1)", vector),
        ]
    if not quick:  # its kernel alone compiles for half a minute
        full_stack = _paired_ratio(
            lambda: 1.0 / _vector_rate(FULL_STACK_ID, n_vec, "native", seconds),
            lambda: 1.0 / _vector_rate(DEFAULT_ID, n_vec, "native", seconds),
            repeats,
        )
        rows.append(
            (
                f"native vector env, {n_vec} envs, ns per env-step ({FULL_STACK_ID} vs {DEFAULT_ID})",
                f"{full_stack[1] * 1e9:,.0f}",
                f"{full_stack[2] * 1e9:,.0f}",
                f"{full_stack[0]:.2f}",
            )
        )
    threads = min(2, numba.config.NUMBA_NUM_THREADS)
    threaded = None
    if threads > 1:
        vector = _paired_ratio(
            lambda: _vector_rate(env_id, n_vec, "native", seconds, num_threads=threads),
            lambda: _vector_rate("CartPole-v1", n_vec, "native", seconds),
            repeats,
        )
        label = f"native vector env, {n_vec} envs, {threads} threads (`num_threads={threads}`), env-steps/s"
        threaded = vector[0]
        rows.append(_ratio_row(f"{label} ({env_id} vs CartPole-v1 on one)", vector))
    curve: dict[str, dict[int, float]] = {
        f"{env_id} native vector env": {},
        f"{env_id} SyncVectorEnv": {},
        "CartPole-v1 native vector env": {},
    }
    for n in counts:
        curve[f"{env_id} native vector env"][n] = _vector_rate(env_id, n, "native", seconds)
        curve["CartPole-v1 native vector env"][n] = _vector_rate("CartPole-v1", n, "native", seconds)
        if n <= SYNC_MAX:
            curve[f"{env_id} SyncVectorEnv"][n] = _vector_rate(env_id, n, "sync", seconds)
    compiled = compile_times(env_id)
    method = scenario.find(env_id)
    phases = phase_costs(env_id, n_vec) if not method.realistic else {}
    peak = arithmetic_peak()
    kernel_rows = [
        (name.removeprefix("rigidrot_gym."), f"{seconds:.2f}")
        for name, seconds in sorted(compiled.kernels.items(), key=lambda kv: -kv[1])
    ]
    frame_ms = render_cost(env_id, frames=10 if quick else 50)
    idle = _paired_ratio(
        lambda: _idle_render_rate(env_id, single_steps), lambda: _single_rate(env_id, single_steps), repeats
    )

    with open(out_dir / "throughput.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["series", "num_envs", "env_steps_per_s"])
        for label, points in curve.items():
            for n, rate in sorted(points.items()):
                writer.writerow([label, n, f"{rate:.6g}"])
    _plot(curve, out_dir / "throughput.png")

    curve_rows = [
        (n, *(f"{curve[label][n]:,.0f}" if n in curve[label] else "—" for label in curve)) for n in counts
    ]
    text = "\n".join(
        [
            f"Throughput ({'quick' if quick else 'full'} run); rates are medians of {repeats} runs.",
            "",
            f"Machine: {machine()}. Ratios move with the machine as well as its load: the peers "
            "and these envs do not gain alike from a given CPU.",
            "",
            markdown_table(("measurement", "ours", "peer", "ratio (median of paired runs)"), rows),
            "",
            "Env-steps per second against the number of envs:",
            "",
            markdown_table(("num_envs", *curve), curve_rows, "r" * (len(curve) + 1)),
            "",
            *_phase_text(env_id, n_vec, method.integrator, phases, peak),
            f"numba, first use in a fresh process (compiling): make → reset → step of a single env "
            f"{compiled.cold[0]:.1f} s, then a vector env of 64 {compiled.cold[1]:.1f} s; a second process "
            f"loading them from the cache {compiled.cached[0]:.2f} s and {compiled.cached[1]:.2f} s"
            f"{_recompiled_text(compiled.recompiled)}. Compile time by kernel (cold run):",
            "",
            markdown_table(("kernel", "s"), kernel_rows, "lr"),
            "",
            f"Rendering: {frame_ms:.1f} ms per 320×240 frame (PyBullet TinyRenderer); a single env made "
            f'with render_mode="rgb_array" that does not draw steps at {idle[0]:.2f}× the rate of one '
            "without a render mode (median of paired runs).",
        ]
    )
    (out_dir / "throughput.md").write_text(text + "\n")
    realistic = headline.get(REALISTIC_ID, (None, None))
    history = {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "commit": measured,
        "machine": machine(),
        "run": "quick" if quick else "full",
        "single_reorient_vs_pendulum": headline[env_id][0],
        "vector_reorient_vs_cartpole": headline[env_id][1],
        "vector_reorient_2_threads_vs_cartpole": threaded,
        "single_wheelreorient_vs_pendulum": realistic[0],
        "vector_wheelreorient_vs_cartpole": realistic[1],
        "first_step_s": compiled.cold[0],
    }
    append_history(out_dir / "history.csv", history)
    text += (
        f"\n\nWrote throughput.md, throughput.csv, throughput.png and a row of history.csv into {out_dir}/"
    )
    return Report(single_ratio=headline[env_id][0], vector_ratio=headline[env_id][1], text=text)

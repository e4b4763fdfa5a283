"""Throughput of the environments, as ratios against Gymnasium peers measured in the same run.

* single env through ``gym.make`` (default wrappers), default scenario and integrator,
  against ``Pendulum-v1`` through ``gym.make``;
* the native vector env with 4096 envs against ``CartPole-v1``'s native vector env;
* both again for ``RigidRot/WheelReorient-v0``, every realism option switched on (the
  cost of wheels, noise, delay, disturbances and randomisation);
* env-steps/s against the number of envs (1 … 65536) for the native vector env, for
  ``gymnasium.vector.SyncVectorEnv`` over single envs (the generic alternative), and
  for CartPole's vector env;
* numba: the first-use compile time in a fresh process with an empty cache, and the
  time to load the same kernels from the cache in a second process;
* rendering (``[render]`` extra): ms per 320×240 frame, and the single env's steps/s
  created with ``render_mode="rgb_array"`` but not drawing, against no render mode.

The machines are shared and noisy: peer and candidate alternate in short runs and the
median of the per-pair ratios is reported.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import numpy as np

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.tools.report import markdown_table

DEFAULT_ID = "RigidRot/Reorient-v0"
REALISTIC_ID = "RigidRot/WheelReorient-v0"
COUNTS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536)
SYNC_MAX = 1024  # SyncVectorEnv steps its envs one by one in Python: stop the curve here


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


def _vector_env(env_id: str, n: int, mode: str):
    if mode == "sync":
        return gym.vector.SyncVectorEnv([lambda: gym.make(env_id) for _ in range(n)])
    return gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")


def _vector_rate(env_id: str, n: int, mode: str, seconds: float) -> float:
    """Env-steps/s of ``n`` envs for about ``seconds`` of stepping (after a warm-up)."""
    env = _vector_env(env_id, n, mode)
    env.reset(seed=0)
    space = env.single_action_space
    if isinstance(space, gym.spaces.Discrete):
        actions = np.ones(n, dtype=np.int64)
    else:
        actions = np.zeros((n, *space.shape), dtype=space.dtype)
    for _ in range(3):
        env.step(actions)
    steps, start = 0, time.perf_counter()
    while True:
        env.step(actions)
        steps += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and steps >= 5:
            break
    env.close()
    return n * steps / elapsed


def _paired_ratio(candidate, peer, repeats: int) -> tuple[float, float, float]:
    """Median over alternating runs of candidate/peer rates; also the median rates."""
    ours, theirs = [], []
    for _ in range(repeats):
        ours.append(candidate())
        theirs.append(peer())
    ratios = np.array(ours) / np.array(theirs)
    return float(np.median(ratios)), float(np.median(ours)), float(np.median(theirs))


_COMPILE_SNIPPET = """
import time
start = time.perf_counter()
import gymnasium as gym, numpy as np
import rigidrot_gym
imported = time.perf_counter()
env = gym.make_vec("{env_id}", num_envs=4)
env.reset(seed=0)
env.step(np.zeros((4, 3), dtype=np.float32))
single = gym.make("{env_id}")
single.reset(seed=0)
single.step(np.zeros(3, dtype=np.float32))
print(imported - start, time.perf_counter() - imported)
"""


def compile_times(env_id: str = DEFAULT_ID) -> tuple[float, float]:
    """Seconds from import to the first step of a vector and a single env, in a fresh
    process with an empty numba cache (compiling), then in a second process with the
    cache that the first one wrote (loading)."""
    code = _COMPILE_SNIPPET.format(env_id=env_id)
    with tempfile.TemporaryDirectory() as cache:
        environment = {**os.environ, "NUMBA_CACHE_DIR": cache}
        times = []
        for _ in range(2):
            out = subprocess.run(
                [sys.executable, "-c", code], env=environment, capture_output=True, text=True, check=True
            )
            times.append(float(out.stdout.split()[1]))
    return times[0], times[1]


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


def run(out_dir: Path, quick: bool = False, env_id: str = DEFAULT_ID) -> Report:
    """Measure everything, write ``throughput.md``, ``throughput.csv`` and
    ``throughput.png`` into ``out_dir``, and return the report."""
    out_dir.mkdir(parents=True, exist_ok=True)
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
            (
                f"single env via `gym.make`, steps/s ({candidate} vs Pendulum-v1)",
                f"{single[1]:,.0f}",
                f"{single[2]:,.0f}",
                f"{single[0]:.2f}",
            ),
            (
                f"native vector env, {n_vec} envs, env-steps/s ({candidate} vs CartPole-v1)",
                f"{vector[1]:,.0f}",
                f"{vector[2]:,.0f}",
                f"{vector[0]:.2f}",
            ),
        ]
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
    compile_s, load_s = compile_times(env_id)
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
            markdown_table(("measurement", "ours", "peer", "ratio (median of paired runs)"), rows),
            "",
            "Env-steps per second against the number of envs:",
            "",
            markdown_table(("num_envs", *curve), curve_rows, "r" * (len(curve) + 1)),
            "",
            f"numba: first use in a fresh process (compiling the kernels) {compile_s:.1f} s; "
            f"a second process loading them from the cache {load_s:.2f} s.",
            "",
            f"Rendering: {frame_ms:.1f} ms per 320×240 frame (PyBullet TinyRenderer); a single env made "
            f'with render_mode="rgb_array" that does not draw steps at {idle[0]:.2f}× the rate of one '
            "without a render mode (median of paired runs).",
        ]
    )
    (out_dir / "throughput.md").write_text(text + "\n")
    text += f"\n\nWrote throughput.md, throughput.csv, throughput.png into {out_dir}/"
    return Report(single_ratio=headline[env_id][0], vector_ratio=headline[env_id][1], text=text)

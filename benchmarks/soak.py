"""Soak test of the environments: millions of random steps, counting what must never happen.

    python benchmarks/soak.py                     # 10⁷ env steps (about 10 minutes on 2 cores)
    python benchmarks/soak.py --steps 200000      # a quick look

Not run in CI. Every registered id × every registered integrator that accepts a torque
(``integrators.names()``, so engines registered later join automatically), each as
registered and with every realism option on, steps a native vector env with random
actions (uniform in ±1.5, with 1 % of the entries at ±1e6 to exercise the clipping),
through many episodes and their autoresets; each configuration also runs a single env
through ``gym.make`` and, per id, a rendering env draws a randomised body every frame.

Counted, and reported per configuration:

* non-finite values in observations, rewards and ``info`` (must be 0);
* observations outside the observation space and rewards outside ``reward_range``
  (must be 0);
* steps that raised (a ``ValueError`` for a step too large for the motion, or a
  ``ConvergenceError``; the env is then reset and the run goes on);

and for the whole run: resident memory (RSS) at the start, after the warm-up (numba
kernels loaded) and at the end, PyBullet clients and file descriptors open at the start
and at the end (after every env is closed; the ``pybullet`` integrator keeps one client
per process until exit, by design, and is then closed explicitly).

Step shares: each configuration is calibrated on a few steps, then gets an equal share
of ``--steps``, cut for slow ones so that none runs over ``--cap`` seconds; what is cut
goes to the others. The shares are in the report.

Writes ``soak.json`` and ``soak.md`` to ``--out`` (default ``outputs/soak/``) and prints
that folder.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import gymnasium as gym
import numpy as np

import rigidrot_gym
from rigidrot_gym.attitude.task import reward_bounds
from rigidrot_gym.attitude.vector_env import AttitudeVectorEnv
from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.physics.rotation.integrators import ConvergenceError

# Every realism option at once (the second variant of every configuration).
EVERY_REALISM_OPTION = {
    "wheel_layout": "pyramid",
    "wheel_terminate_on_saturation": True,
    "actuator_noise": 0.05,
    "actuation_delay": True,
    "disturbance_constant": 2e-4,
    "disturbance_random_walk": 2e-4,
    "disturbance_correlation_time": 60.0,
    "gravity_gradient": True,
    "attitude_noise_deg": 0.05,
    "rate_noise": 2e-4,
    "rate_bias": 2e-4,
    "randomize_inertia": 0.1,
    "randomize_inertia_rotation_deg": 5.0,
    "randomize_torque": 0.1,
    "randomize_start": 0.1,
}
VARIANTS = {"as registered": {}, "every realism option": EVERY_REALISM_OPTION}
SLOW_ENGINES = {"pybullet"}  # a Python loop over the bodies: fewer envs per batch
SINGLE_ENV_STEPS = 2000  # per configuration, through gym.make (wrappers, checker)
RENDER_FRAMES = 100  # per id


@dataclass
class Outcome:
    """What one configuration did."""

    env_id: str
    integrator: str
    variant: str
    num_envs: int
    env_steps: int = 0
    single_env_steps: int = 0
    seconds: float = 0.0
    ns_per_env_step: float = 0.0
    nonfinite: int = 0
    outside_space: int = 0
    reward_outside_range: int = 0
    raised: int = 0
    first_error: str = ""
    episodes_ended: int = 0
    calibration_ns: float = 0.0


@dataclass
class Report:
    """The whole run."""

    python: str = platform.python_version()
    machine: str = platform.machine()
    cpus: int = os.cpu_count() or 0
    requested_steps: int = 0
    configurations: list[Outcome] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    rss_mb: dict[str, float] = field(default_factory=dict)
    pybullet_clients: dict[str, int] = field(default_factory=dict)
    open_files: dict[str, int] = field(default_factory=dict)
    render_frames: int = 0
    render_nonfinite: int = 0
    seconds: float = 0.0


def rss_mb() -> float:
    """Resident set size now, MB (Linux /proc; elsewhere the peak from getrusage)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def open_files() -> int:
    """File descriptors this process holds (-1 where /proc is not available)."""
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return -1


def pybullet_clients() -> int:
    """Connected PyBullet clients of this process (0 if PyBullet was never imported)."""
    if "pybullet" not in sys.modules:
        return 0
    p = sys.modules["pybullet"]
    return sum(bool(p.getConnectionInfo(i)["isConnected"]) for i in range(64))


def random_actions(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    actions = rng.uniform(-1.5, 1.5, size=shape)
    far = rng.random(shape) < 0.01
    actions[far] = np.sign(actions[far]) * 1e6
    return actions.astype(np.float32)


class Counter:
    """Checks a configuration's outputs against its spaces and counts violations."""

    def __init__(self, outcome: Outcome, space: gym.spaces.Box, reward_range: tuple[float, float]):
        self.outcome, self.low, self.high = outcome, space.low, space.high
        self.reward_low, self.reward_high = reward_range

    def observations(self, obs: np.ndarray, info: dict) -> None:
        o = self.outcome
        finite = np.isfinite(obs)
        o.nonfinite += int(obs.size - np.count_nonzero(finite))
        inside = (obs >= self.low) & (obs <= self.high) & finite
        rows = inside.reshape(inside.shape[0], -1).all(axis=1) if obs.ndim > 1 else inside.all()
        o.outside_space += int(np.size(rows) - np.count_nonzero(rows))
        for key, value in info.items():
            if not key.startswith("_"):
                v = np.asarray(value, dtype=float)
                o.nonfinite += int(v.size - np.count_nonzero(np.isfinite(v)))

    def rewards(self, reward) -> None:
        r = np.asarray(reward, dtype=float)
        self.outcome.nonfinite += int(r.size - np.count_nonzero(np.isfinite(r)))
        inside = (r >= self.reward_low) & (r <= self.reward_high)
        self.outcome.reward_outside_range += int(r.size - np.count_nonzero(inside))

    def error(self, err: Exception) -> None:
        self.outcome.raised += 1
        if not self.outcome.first_error:
            self.outcome.first_error = f"{type(err).__name__}: {err}"[:300]


def make_vector(env_id: str, integrator: str, variant: str) -> AttitudeVectorEnv:
    num_envs = 16 if integrator in SLOW_ENGINES else 256
    return AttitudeVectorEnv(num_envs, env_id, integrator=integrator, **VARIANTS[variant])


def run_vector(env: AttitudeVectorEnv, counter: Counter, steps: int, rng: np.random.Generator) -> None:
    """``steps`` batched steps with random actions, checking every output."""
    obs, info = env.reset(seed=int(rng.integers(2**31)))
    counter.observations(obs, info)
    shape = env.action_space.shape
    for _ in range(steps):
        try:
            obs, reward, terminated, truncated, info = env.step(random_actions(rng, shape))
        except (ValueError, ConvergenceError) as err:
            counter.error(err)
            obs, info = env.reset(seed=int(rng.integers(2**31)))
            counter.observations(obs, info)
            continue
        counter.observations(obs, info)
        counter.rewards(reward)
        counter.outcome.episodes_ended += int(np.count_nonzero(terminated | truncated))


def run_single(
    env_id: str, integrator: str, variant: str, counter: Counter, rng: np.random.Generator
) -> None:
    env = gym.make(env_id, integrator=integrator, **VARIANTS[variant])
    obs, info = env.reset(seed=int(rng.integers(2**31)))
    counter.observations(obs[None], info)
    shape = env.action_space.shape
    for _ in range(SINGLE_ENV_STEPS):
        try:
            obs, reward, terminated, truncated, info = env.step(random_actions(rng, shape))
        except (ValueError, ConvergenceError) as err:
            counter.error(err)
            terminated = True
        else:
            counter.observations(obs[None], info)
            counter.rewards(reward)
        if terminated or truncated:
            obs, info = env.reset()
            counter.observations(obs[None], info)
        counter.outcome.single_env_steps += 1
    env.close()


def calibrate(env: AttitudeVectorEnv, rng: np.random.Generator) -> float:
    """Seconds per env step, after a warm-up that compiles or loads the kernels."""
    env.reset(seed=0)
    shape = env.action_space.shape
    for _ in range(3):
        try:
            env.step(random_actions(rng, shape))
        except (ValueError, ConvergenceError):
            env.reset()
    start, batches = time.perf_counter(), 10
    for _ in range(batches):
        try:
            env.step(random_actions(rng, shape))
        except (ValueError, ConvergenceError):
            env.reset()
    return (time.perf_counter() - start) / (batches * env.num_envs)


def shares(costs: list[float], total: int, cap_seconds: float) -> list[int]:
    """Env steps per configuration: equal shares of ``total``, each cut to at most
    ``cap_seconds`` of its measured cost; what is cut goes to the uncut ones."""
    n = len(costs)
    steps = np.zeros(n)
    capped = np.zeros(n, dtype=bool)
    limit = np.array([cap_seconds / c for c in costs])
    for _ in range(n):
        free = ~capped
        left = total - steps[capped].sum()
        if not free.any() or left <= 0:
            break
        steps[free] = left / free.sum()
        over = free & (steps > limit)
        if not over.any():
            break
        steps[over], capped[over] = limit[over], True
    return [int(s) for s in steps]


def soak_render(report: Report, rng: np.random.Generator) -> None:
    """Per id, a rendering env drawing a randomised body (re-drawn every reset)."""
    for env_id in rigidrot_gym.ENV_IDS:
        env = gym.make(
            env_id,
            render_mode="rgb_array",
            render_options={"width": 64, "height": 48},
            randomize_inertia=0.2,
            max_episode_steps=10,
        )
        env.reset(seed=int(rng.integers(2**31)))
        for _ in range(RENDER_FRAMES):
            _, _, terminated, truncated, _ = env.step(random_actions(rng, env.action_space.shape))
            frame = env.render()
            report.render_frames += 1
            report.render_nonfinite += int(frame.shape != (48, 64, 3))
            if terminated or truncated:
                env.reset()
        env.close()


def to_markdown(report: Report) -> str:
    total = sum(o.env_steps for o in report.configurations)
    single = sum(o.single_env_steps for o in report.configurations)
    bad = sum(o.nonfinite + o.outside_space + o.reward_outside_range for o in report.configurations)
    lines = [
        "# Soak test of the environments",
        "",
        f"{total:,} vector env steps + {single:,} single env steps over "
        f"{len(report.configurations)} configurations in {report.seconds / 60:.1f} min "
        f"(Python {report.python}, {report.cpus} CPUs); {report.render_frames} rendered frames.",
        "",
        f"* non-finite values, observations outside the space, rewards outside the range: **{bad}**",
        f"* steps that raised (and were reset): {sum(o.raised for o in report.configurations)}",
        "* RSS (MB): " + ", ".join(f"{k} {v:.0f}" for k, v in report.rss_mb.items()),
        "* PyBullet clients: " + ", ".join(f"{k} {v}" for k, v in report.pybullet_clients.items()),
        "* open file descriptors: " + ", ".join(f"{k} {v}" for k, v in report.open_files.items()),
    ]
    lines += [f"* skipped: {name} ({why})" for name, why in report.skipped.items()]
    lines += [
        "",
        "| id | integrator | variant | envs | env steps | ns/env-step, checks included | non-finite "
        "| outside | raised |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for o in report.configurations:
        outside = o.outside_space + o.reward_outside_range
        lines.append(
            f"| {o.env_id} | {o.integrator} | {o.variant} | {o.num_envs} | {o.env_steps:,} | "
            f"{o.ns_per_env_step:.0f} | {o.nonfinite} | {outside} | {o.raised} |"
        )
    errors = [o for o in report.configurations if o.first_error]
    if errors:
        lines += ["", "First error of each configuration that raised:", ""]
        lines += [f"* {o.env_id}, {o.integrator}, {o.variant}: {o.first_error}" for o in errors]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=10_000_000, help="vector env steps in total")
    parser.add_argument("--cap", type=float, default=30.0, help="most seconds per configuration")
    parser.add_argument("--out", type=Path, default=Path("outputs/soak"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    report = Report(requested_steps=args.steps)
    report.rss_mb["start"], report.open_files["start"] = rss_mb(), open_files()
    report.pybullet_clients["start"] = pybullet_clients()
    started = time.perf_counter()

    plan = []
    for name in integrators.names():
        if not integrators.get(name).accepts_torque:
            report.skipped[name] = "integrates torque-free motion only: no env can use it"
    methods = [n for n in integrators.names() if n not in report.skipped]
    for env_id in rigidrot_gym.ENV_IDS:
        for name in methods:
            for variant in VARIANTS:
                env = make_vector(env_id, name, variant)
                outcome = Outcome(env_id, name, variant, env.num_envs)
                outcome.calibration_ns = calibrate(env, rng) * 1e9
                plan.append((env, outcome))
                print(
                    f"calibrated {env_id} {name} {variant}: {outcome.calibration_ns:.0f} ns/env-step",
                    flush=True,
                )
    report.rss_mb["after warm-up"] = rss_mb()
    budget = shares([o.calibration_ns * 1e-9 for _, o in plan], args.steps, args.cap)
    for (env, outcome), env_steps in zip(plan, budget, strict=True):
        batches = max(1, -(-env_steps // env.num_envs))  # rounded up: the total is at least --steps
        counter = Counter(outcome, env.single_observation_space, reward_bounds(env.scenario))
        start = time.perf_counter()
        run_vector(env, counter, batches, rng)
        outcome.seconds = time.perf_counter() - start
        outcome.env_steps = batches * env.num_envs
        outcome.ns_per_env_step = outcome.seconds / outcome.env_steps * 1e9
        run_single(outcome.env_id, outcome.integrator, outcome.variant, counter, rng)
        env.close()
        report.configurations.append(outcome)
        print(
            f"{outcome.env_id} {outcome.integrator} {outcome.variant}: {outcome.env_steps:,} steps, "
            f"non-finite {outcome.nonfinite}, "
            f"outside {outcome.outside_space + outcome.reward_outside_range}, "
            f"raised {outcome.raised}",
            flush=True,
        )
    soak_render(report, rng)
    report.pybullet_clients["end, envs closed"] = pybullet_clients()
    if "rigidrot_gym.engines.bullet" in sys.modules:
        sys.modules["rigidrot_gym.engines.bullet"].close()
    report.pybullet_clients["end, integrator's client closed"] = pybullet_clients()
    report.rss_mb["end"], report.open_files["end"] = rss_mb(), open_files()
    report.seconds = time.perf_counter() - started

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "soak.json").write_text(json.dumps(asdict(report), indent=1))
    (args.out / "soak.md").write_text(to_markdown(report))
    print(to_markdown(report))
    print(f"results in {args.out.resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

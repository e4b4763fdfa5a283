"""The control benchmark: policies × scenarios × integrators × seeds, one evaluation path.

A policy is anything with stable-baselines3's ``predict(obs, state, episode_start,
deterministic)``: a classical controller (:mod:`rigidrot_gym.control`) or a trained
agent (:func:`rigidrot_gym.control.agents.load`). Each (policy, scenario, integrator, inertia
case) runs one episode per seed, all seeds together in the native vector env, and
reports per episode:

* success (the env's ``is_success`` when the episode ends),
* settling time: when the body last entered the tolerance (pointing and rate) and
  stayed inside until the end, s (successful episodes),
* final pointing error (deg), control effort ∫|τ| dt (N·m·s), peak body rate (rad/s).

Scenarios: ``Reorient-v0`` (ideal torquers, exact sensors) and ``WheelReorient-v0``
(reaction-wheel pyramid, delay, noise, disturbances, randomised body), where the
controllers allocate their torque over the wheels.

Robustness: the true inertia is scaled by 0.8 and 1.2 while the controllers keep the
nominal estimate. Cross-integrator view: the same policy on the game-engine step
(``semi_implicit``), PyBullet, ``rk4`` and ``nielsen_krenk``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rigidrot_gym.attitude.actuators import Actuators
from rigidrot_gym.attitude.scenario import Scenario, find
from rigidrot_gym.attitude.vector_env import AttitudeVectorEnv
from rigidrot_gym.tools.report import markdown_table, write_results

DEFAULT_SCENARIOS = ("RigidRot/Reorient-v0", "RigidRot/WheelReorient-v0")
DEFAULT_INTEGRATORS = ("semi_implicit", "pybullet", "rk4", "nielsen_krenk")
INERTIA_SCALES = (1.0, 0.8, 1.2)


@dataclass(frozen=True)
class Episode:
    """One episode's measurements."""

    success: bool
    settling_time: float
    final_error_deg: float
    effort: float
    peak_rate: float
    duration: float


@dataclass(frozen=True)
class Summary:
    """Aggregates over the seeds of one (policy, scenario, integrator, inertia) case."""

    policy: str
    scenario: str
    integrator: str
    inertia_scale: float
    episodes: int
    success_rate: float
    settling_time: float
    final_error_deg: float
    effort: float
    peak_rate: float


def run_episodes(
    policy,
    scenario: str | Scenario,
    seeds: Sequence[int],
    integrator: str | None = None,
    inertia_scale: float = 1.0,
) -> tuple[list[Episode], dict[str, np.ndarray]]:
    """One episode per seed of ``policy`` on ``scenario`` (optionally on another integrator
    and with the true inertia scaled); returns the episodes and, for the first seed, the
    time series ``t``, ``pointing_error_deg`` and ``torque`` (N·m)."""
    base = scenario if isinstance(scenario, Scenario) else find(scenario)
    overrides: dict[str, Any] = {"inertia": base.inertia * inertia_scale}
    if integrator is not None:
        overrides["integrator"] = integrator
    env = AttitudeVectorEnv(num_envs=len(seeds), scenario=base, **overrides)
    s = env.scenario
    actuators = Actuators.of(s)
    obs, info = env.reset(seed=list(seeds))
    n = len(seeds)
    running = np.ones(n, dtype=bool)
    inside_since = np.where(info["is_success"], 0.0, np.nan)
    effort, peak = np.zeros(n), info["rate"].copy()
    ended = [None] * n
    trace = {"t": [0.0], "pointing_error_deg": [info["pointing_error_deg"][0]], "torque": [np.zeros(3)]}
    step = 0
    while running.any():
        action, _ = policy.predict(obs, deterministic=True)
        commands = np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0) * actuators.max_torque
        torque = actuators.body_torque(commands)
        obs, _, terminated, truncated, info = env.step(action)
        step += 1
        t = step * s.dt
        live = running.copy()
        effort[live] += np.linalg.norm(torque[live], axis=-1) * s.dt
        peak[live] = np.maximum(peak[live], info["rate"][live])
        inside_since[live & info["is_success"] & np.isnan(inside_since)] = t
        inside_since[live & ~info["is_success"]] = np.nan
        if running[0]:
            trace["t"].append(t)
            trace["pointing_error_deg"].append(info["pointing_error_deg"][0])
            trace["torque"].append(torque[0])
        for i in np.flatnonzero(live & (terminated | truncated)):
            ended[i] = Episode(
                success=bool(info["is_success"][i]),
                settling_time=float(inside_since[i]),
                final_error_deg=float(info["pointing_error_deg"][i]),
                effort=float(effort[i]),
                peak_rate=float(peak[i]),
                duration=t,
            )
            running[i] = False
    env.close()
    return ended, {k: np.array(v) for k, v in trace.items()}


def summarise(policy: str, scenario: str, integrator: str, scale: float, episodes: list[Episode]) -> Summary:
    """Success rate and means (settling time over the successful episodes only)."""
    ok = [e for e in episodes if e.success]
    return Summary(
        policy=policy,
        scenario=scenario,
        integrator=integrator,
        inertia_scale=scale,
        episodes=len(episodes),
        success_rate=len(ok) / len(episodes),
        settling_time=float(np.mean([e.settling_time for e in ok])) if ok else float("nan"),
        final_error_deg=float(np.mean([e.final_error_deg for e in episodes])),
        effort=float(np.mean([e.effort for e in episodes])),
        peak_rate=float(np.mean([e.peak_rate for e in episodes])),
    )


def benchmark(
    policies: dict[str, Callable[[Scenario], Any]],
    scenarios: Sequence[str] = DEFAULT_SCENARIOS,
    integrators: Sequence[str] = DEFAULT_INTEGRATORS,
    seeds: Sequence[int] = tuple(range(20)),
    scales: Sequence[float] = INERTIA_SCALES,
) -> tuple[list[Summary], dict]:
    """Every case: policies built per scenario by ``policies[name](scenario)`` (None skips
    the scenario: a trained agent runs only on its own). The robustness scales run on the
    scenario's own integrator; the integrators at scale 1."""
    summaries, traces = [], {}
    for scenario_id in scenarios:
        scenario = find(scenario_id)
        for name, make in policies.items():
            policy = make(scenario)
            if policy is None:
                continue
            cases = [(scenario.integrator, scale) for scale in scales]
            cases += [(i, 1.0) for i in integrators if i != scenario.integrator]
            for integrator, scale in cases:
                episodes, trace = run_episodes(policy, scenario, seeds, integrator, scale)
                summaries.append(summarise(name, scenario.id, integrator, scale, episodes))
                if integrator == scenario.integrator and scale == 1.0:
                    traces[(name, scenario.id)] = trace
    return summaries, traces


def format_table(summaries: list[Summary]) -> str:
    """Markdown table of the summaries."""
    header = (
        "policy",
        "scenario",
        "integrator",
        "true inertia",
        "episodes",
        "success",
        "settling time (s)",
        "final error (deg)",
        "effort ∫|τ|dt (N·m·s)",
        "peak rate (rad/s)",
    )
    cells = [
        (
            s.policy,
            s.scenario,
            s.integrator,
            f"×{s.inertia_scale:g}",
            s.episodes,
            f"{s.success_rate:.0%}",
            f"{s.settling_time:.1f}",
            f"{s.final_error_deg:.3g}",
            f"{s.effort:.3g}",
            f"{s.peak_rate:.3g}",
        )
        for s in summaries
    ]
    return markdown_table(header, cells, "lllrrrrrrr")


def plot(traces: dict, path: Path) -> None:
    """Pointing error and torque against time, first seed, one line per policy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for (name, scenario), trace in traces.items():
        top.semilogy(trace["t"], np.maximum(trace["pointing_error_deg"], 1e-3), label=f"{name} ({scenario})")
        bottom.plot(trace["t"], np.linalg.norm(trace["torque"], axis=-1), label=name)
    top.set_ylabel("pointing error (deg)")
    bottom.set_ylabel("|τ| (N·m)")
    bottom.set_xlabel("t (s)")
    top.legend(fontsize=7)
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(out_dir: Path, summaries: list[Summary], traces: dict) -> str:
    """``control.md``, ``control.csv`` and ``control.png`` into ``out_dir``; the table."""
    table = format_table(summaries)
    write_results(out_dir, "control", table, summaries)
    plot(traces, out_dir / "control.png")
    return table

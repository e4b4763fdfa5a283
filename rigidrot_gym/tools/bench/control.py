"""The control benchmark: policies × scenarios × integrators × seeds, one evaluation path.

A policy is anything with stable-baselines3's ``predict(obs, state, episode_start,
deterministic)``: a classical controller (:mod:`rigidrot_gym.control`) or a trained
agent (:func:`rigidrot_gym.control.agents.load`). Each (policy, scenario, integrator, inertia
case) runs one episode per seed, all seeds together in the native vector env, and
reports per episode:

* success: the task's own (the env's ``is_success`` on the episode's last step: the
  tolerance held for the scenario's ``success_hold_steps``, which ends the episode; an
  episode that reaches its time limit inside the tolerance but has not held it that long
  has not succeeded),
* settling time: the first time from which the body stays inside the tolerance
  (pointing and rate, ``in_tolerance``) to the episode's end, s; NaN (a "—" in the
  tables) when it never does,
* final pointing error (deg): ``info["pointing_error_deg"]`` after the episode's last step,
* RMS pointing error (deg): √(mean of θ_k²) over the samples ``info["pointing_error_deg"]``
  after each step k = 1 … K of the episode (K its steps, the last included; the reset
  state is not a sample): each sample stands for one control period, so this is
  √((1/T) ∫ θ² dt) over the episode's T = K Δt by the rectangle rule at each period's end,
* control effort ∫|τ| dt (N·m·s: the torque commanded; for thrusters commanded by
  on-times, the period's mean torque of what fired), peak body rate (rad/s; the largest
  ``info["rate"]`` from the reset state to the last step),
* propellant burnt in the episode (kg, ``info["propellant"]``; NaN without thrusters),
* wheel momentum used: the largest max_k |h_k| / h_max,k from the reset state to the last
  step, h_k wheel k's momentum about its axis (``info["wheel_momentum"]``, N·m·s, float64)
  and h_max,k its limit (the scenario's ``wheel_max_momentum``, or its wheel model's
  momentum at top speed): the share of the wheels' capacity the episode took, in [0, 1]
  (1: a wheel reached its limit); NaN without wheels,
* return: the sum of the env's rewards over the episode's steps (the task's own objective;
  the suite's normalised score is made of it).

Scenarios: ``Reorient-v0`` (ideal torquers, exact sensors) and ``WheelReorient-v0``
(reaction-wheel pyramid, delay, noise, disturbances, randomised body), where the
controllers allocate their torque over the wheels.

Robustness: the true inertia is scaled by 0.8 and 1.2 while the controllers keep the
nominal estimate. Cross-integrator view: the same policy on the game-engine step
(``semi_implicit``), PyBullet, ``rk4`` and ``nielsen_krenk``, each at every scale.

A campaign is cut into :class:`Task` s, each a block of consecutive seeds of one case
(:func:`plan`); :func:`run_task` runs one, :func:`gather` turns the finished blocks into
the summaries and traces. The blocks are the same whether they run here
(:func:`benchmark`) or on Ray workers (:mod:`rigidrot_gym.tools.bench.campaign`), and
:func:`gather` orders them by the plan, never by arrival: the tables come out bit for bit
the same.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

import rigidrot_gym
from rigidrot_gym.attitude.actuators import Actuators
from rigidrot_gym.attitude.components import magnetic_field, thrusters
from rigidrot_gym.attitude.scenario import Scenario, find
from rigidrot_gym.attitude.vector_env import AttitudeVectorEnv
from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import source_digest
from rigidrot_gym.tools.bench.policies import PolicyError, policy_for, why_left_out
from rigidrot_gym.tools.report import markdown_table, write_results

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn
    from matplotlib.figure import Figure

DEFAULT_SCENARIOS = ("RigidRot/Reorient-v0", "RigidRot/WheelReorient-v0")
DEFAULT_INTEGRATORS = ("semi_implicit", "pybullet", "rk4", "nielsen_krenk")
INERTIA_SCALES = (1.0, 0.8, 1.2)
# Seeds per task: one vector env of this many bodies runs an ideal-torquer case on rk4 in
# about 0.2 s and a wheel case in about 0.5 s on one core (PyBullet cases take far longer).
BLOCK_SIZE = 1000


@dataclass(frozen=True)
class Episode:
    """One episode's measurements."""

    success: bool
    settling_time: float
    final_error_deg: float
    rms_error_deg: float
    effort: float
    peak_rate: float
    duration: float
    propellant: float = float("nan")
    wheel_momentum_used: float = float("nan")
    episode_return: float = float("nan")


@dataclass(frozen=True)
class Summary:
    """Aggregates over the seeds of one (policy, scenario, integrator, inertia) case.

    ``failure``: why the case failed (a policy that could not be built on a worker, raised
    in ``predict()``, or returned an action of the wrong shape or not finite: the first
    failed block's reason), ``""`` where it ran; a failed case has no episodes and NaN
    measures.
    """

    policy: str
    scenario: str
    integrator: str
    inertia_scale: float
    episodes: int
    success_rate: float
    settling_time: float
    final_error_deg: float
    rms_error_deg: float
    effort: float
    peak_rate: float
    propellant: float = float("nan")
    wheel_momentum_used: float = float("nan")
    failure: str = ""

    @property
    def line(self) -> str:
        """``failed: <policy> on <scenario> (<integrator>, ×<scale>): <reason>`` for a
        failed case (its :attr:`failure`, the reason), ``""`` for the others."""
        if not self.failure:
            return ""
        return (
            f"failed: {self.policy} on {self.scenario} ({self.integrator}, ×{self.inertia_scale:g}): "
            f"{self.failure}"
        )


@dataclass(frozen=True, eq=False)
class Task:
    """A block of consecutive seeds of one (policy, scenario, integrator, inertia) case.

    ``source`` identifies what the policy is (a controller's name, or a digest of a
    trained agent's files); ``spec`` is the scenario itself, resolved once when the
    campaign is planned (a scenario file's content travels with the task, so workers need
    neither the file nor a registered id); ``trace`` asks for the first seed's time series
    (the first block of a policy's nominal case). Two tasks are equal when their
    :attr:`key` s are.
    """

    policy: str
    source: str
    spec: Scenario
    integrator: str
    inertia_scale: float
    seeds: tuple[int, ...]
    trace: bool = False

    @property
    def scenario(self) -> str:
        """The scenario's id, as the tables show it."""
        return self.spec.id

    @functools.cached_property
    def key(self) -> str:
        """A file name unique to everything that decides the block's numbers: the policy
        and its source (a controller's name, an agent's bytes), the scenario's content
        (:meth:`~rigidrot_gym.attitude.scenario.Scenario.digest`, not its id or file
        name), the integrator, the inertia scale, the seeds, the trace, and the code that
        computes them: the package version and the digest of the package's source
        (:func:`~rigidrot_gym.physics.plumbing.jit.source_digest`, which its kernels are
        stamped with), so that an edit between releases (a controller's, an env's) finds no
        old block. A resumed campaign reuses a stored block only under the same key."""
        content = (
            self.policy,
            self.source,
            self.spec.digest(),
            self.integrator,
            repr(float(self.inertia_scale)),
            self.seeds,
            self.trace,
            rigidrot_gym.__version__,
            source_digest().hex(),
        )
        slug = re.sub(r"[^A-Za-z0-9.-]+", "_", f"{self.policy}_{self.scenario}_{self.integrator}")
        digest = hashlib.sha256(repr(content).encode()).hexdigest()[:16]
        return f"{slug}_x{self.inertia_scale:g}_{self.seeds[0]}-{self.seeds[-1]}_{digest}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Task) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)


@dataclass(frozen=True)
class Block:
    """A finished task: its episodes in seed order, and its trace (or None); for a task
    whose policy failed (:class:`~rigidrot_gym.tools.bench.policies.PolicyError`), no
    episodes, no trace, and ``failure``, the reason (None where it ran)."""

    task: Task
    episodes: tuple[Episode, ...]
    trace: dict[str, np.ndarray] | None
    failure: str | None = None


def run_episodes(
    policy,
    scenario: str | Scenario,
    seeds: Sequence[int],
    integrator: str | None = None,
    inertia_scale: float = 1.0,
) -> tuple[list[Episode], dict[str, np.ndarray]]:
    """One episode per seed of ``policy`` on ``scenario`` (optionally on another integrator
    and with the true inertia scaled); returns the episodes and, for the first seed, the
    time series ``t``, ``pointing_error_deg`` and ``torque`` (N·m).

    Raises:
        PolicyError: if ``policy.predict`` raises, does not return ``(action, state)``, or
            returns an action that is not of the env's action shape (bodies × commands)
            or not finite: naming the step (and the body) and what was expected.
    """
    base = scenario if isinstance(scenario, Scenario) else find(scenario)
    overrides: dict[str, Any] = {"inertia": base.inertia * inertia_scale}
    if integrator is not None:
        overrides["integrator"] = integrator
    env = AttitudeVectorEnv(num_envs=len(seeds), scenario=base, **overrides)
    s = env.scenario
    actuators = Actuators.of(s)
    on_times = s.thruster_layout != "none" and s.thruster_command == "on_times"
    fired = thrusters.thruster_set(s.propulsion) if on_times else None
    obs, info = env.reset(seed=list(seeds))
    n = len(seeds)
    running = np.ones(n, dtype=bool)
    inside_since = np.where(info["in_tolerance"], 0.0, np.nan)
    effort, peak, squares, returns = np.zeros(n), info["rate"].copy(), np.zeros(n), np.zeros(n)
    wheels = info["wheel_momentum"].shape[-1] if "wheel_momentum" in info else 0
    h_max = actuators.max_momentum[:wheels]  # the wheels are the first actuators

    def used(info: dict) -> np.ndarray:  # max_k |h_k| / h_max,k per body; NaN without wheels
        if not wheels:
            return np.full(n, np.nan)
        return np.max(np.abs(info["wheel_momentum"]) / h_max, axis=-1)

    momentum = used(info)
    ended = [None] * n
    trace = {"t": [0.0], "pointing_error_deg": [info["pointing_error_deg"][0]], "torque": [np.zeros(3)]}
    step = 0
    while running.any():
        action = _checked_action(policy, obs, step, env.action_space.shape, s.id)
        commands = np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0) * actuators.limits
        if not on_times:
            torque = actuators.body_torque(commands[:, : actuators.torquing])
        if actuators.rods:  # dipoles in the field the period starts in, as the env holds it
            field = obs[:, -magnetic_field.COLUMNS :] * magnetic_field.FIELD_SCALE
            torque = torque + np.cross(commands[:, actuators.torquing :], field)
        obs, reward, terminated, truncated, info = env.step(action)
        if on_times:  # the period's mean torque of what fired: Σ F_k t_k (r × d)_k / Δt
            torque = (info["thruster_on_times"] * fired.max_thrust) @ fired.torque_arms / s.dt
        step += 1
        t = step * s.dt
        live = running.copy()
        effort[live] += np.linalg.norm(torque[live], axis=-1) * s.dt
        peak[live] = np.maximum(peak[live], info["rate"][live])
        squares[live] += info["pointing_error_deg"][live] ** 2
        returns[live] += reward[live]
        momentum[live] = np.maximum(momentum[live], used(info)[live])
        inside_since[live & info["in_tolerance"] & np.isnan(inside_since)] = t
        inside_since[live & ~info["in_tolerance"]] = np.nan
        if running[0]:
            trace["t"].append(t)
            trace["pointing_error_deg"].append(info["pointing_error_deg"][0])
            trace["torque"].append(torque[0])
        for i in np.flatnonzero(live & (terminated | truncated)):
            ended[i] = Episode(
                success=bool(info["is_success"][i]),
                settling_time=float(inside_since[i]),
                final_error_deg=float(info["pointing_error_deg"][i]),
                rms_error_deg=float(np.sqrt(squares[i] / step)),
                effort=float(effort[i]),
                peak_rate=float(peak[i]),
                duration=t,
                propellant=float(info["propellant"][i]) if "propellant" in info else float("nan"),
                wheel_momentum_used=float(momentum[i]),
                episode_return=float(returns[i]),
            )
            running[i] = False
    env.close()
    return ended, {k: np.array(v) for k, v in trace.items()}


def _checked_action(policy, obs: np.ndarray, step: int, shape: tuple[int, ...], scenario: str):
    """``policy.predict(obs, deterministic=True)``'s action, as it returned it, checked.

    Raises:
        PolicyError: see :func:`run_episodes`.
    """
    try:
        returned = policy.predict(obs, deterministic=True)
    except Exception as err:
        raise PolicyError(f"predict raised {type(err).__name__} at step {step}: {err}") from err
    if not (isinstance(returned, tuple) and len(returned) == 2):
        raise PolicyError(
            f"predict returned {type(returned).__name__}; expected a pair (action, state) as "
            "stable-baselines3's predict() returns"
        )
    action = returned[0]
    try:
        values = np.asarray(action, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise PolicyError(f"predict returned an action that is not an array of numbers: {err}") from None
    if values.shape != shape:
        raise PolicyError(
            f"predict returned an action of shape {values.shape} at step {step}; expected {shape}: "
            f"{shape[0]} bodies × {shape[-1]} commands of {scenario} in [-1, 1]"
        )
    bad = ~np.isfinite(values)
    if bad.any():
        body = int(np.flatnonzero(bad.any(axis=-1))[0])
        raise PolicyError(
            f"predict returned a non-finite action at step {step} (body {body}: {values[body].tolist()}); "
            "expected finite numbers in [-1, 1]"
        )
    return action


def summarise(policy: str, scenario: str, integrator: str, scale: float, episodes: list[Episode]) -> Summary:
    """Success rate and means (settling time over the successful episodes only; propellant
    NaN without thrusters, wheel momentum used NaN without wheels)."""
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
        rms_error_deg=float(np.mean([e.rms_error_deg for e in episodes])),
        effort=float(np.mean([e.effort for e in episodes])),
        peak_rate=float(np.mean([e.peak_rate for e in episodes])),
        propellant=float(np.mean([e.propellant for e in episodes])),
        wheel_momentum_used=float(np.mean([e.wheel_momentum_used for e in episodes])),
    )


def failed(policy: str, scenario: str, integrator: str, scale: float, reason: str) -> Summary:
    """The summary of a case whose policy failed: no episodes, NaN measures, the reason."""
    nan = float("nan")
    return Summary(policy, scenario, integrator, scale, 0, nan, nan, nan, nan, nan, nan, nan, nan, reason)


def pairs(
    policies: dict[str, Any], scenarios: Sequence[Scenario]
) -> tuple[list[tuple[str, Scenario]], list[str]]:
    """The (policy, scenario) pairs that run, every policy on every scenario it gives a
    policy for (:func:`~rigidrot_gym.tools.bench.policies.policy_for`; None: a controller
    that cannot command the scenario's actuators, an agent on another scenario than its
    own, a user's policy whose ``for_scenario`` says so), and for each scenario with
    policies left out, which and why (:func:`~rigidrot_gym.tools.bench.policies.why_left_out`).

    Raises:
        PolicyError: naming the entry, for a policy that cannot be built for a scenario.
    """
    runs, left_out = [], []
    for scenario in scenarios:
        unfit = []
        for name, make in policies.items():
            if policy_for(name, make, scenario) is None:
                unfit.append(name)
            else:
                runs.append((name, scenario))
        if unfit:
            left_out.append(why_left_out(unfit, scenario, policies))
    return runs, left_out


def plan(
    policies: dict[str, Any],
    scenarios: Sequence[str | Path | Scenario] = DEFAULT_SCENARIOS,
    integrators: Sequence[str] = DEFAULT_INTEGRATORS,
    seeds: Sequence[int] = tuple(range(20)),
    scales: Sequence[float] = INERTIA_SCALES,
    block_size: int = BLOCK_SIZE,
) -> list[Task]:
    """The tasks of a campaign: every policy on every scenario it applies to
    (:func:`pairs`), on every integrator at every inertia scale, each case's seeds cut into
    blocks of ``block_size``. ``scenarios``: registered ids, file stems, ``.toml`` paths or
    :class:`~rigidrot_gym.attitude.scenario.Scenario` s, each resolved here once (the tasks
    carry it). ``policies``: by name, policy makers (called with the scenario: the built-in
    ones, :func:`~rigidrot_gym.tools.bench.policies.resolve`'s), classes (built with
    ``for_scenario(scenario)``, or with no arguments) or policy objects (anything with
    ``predict()``), built per scenario by
    :func:`~rigidrot_gym.tools.bench.policies.build`; a maker's ``fingerprint`` attribute,
    when it has one, identifies it in :attr:`Task.source`. A scenario's own integrator,
    when asked, comes first; the first block of its ×1 case (or, without that case, of the
    first) keeps the trace.

    Raises:
        ValueError: for a ``block_size`` below 1, no seeds or integrators or scales, a seed
            that is not an integer ≥ 0, repeated seeds, integrators or scales, a scale that
            is not a positive number, an integrator a scenario cannot run on, or no policy
            that applies to any of the scenarios (naming each pair and why).
    """
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
    seeds = tuple(validation.count(s, "seeds", 0) for s in seeds)
    scales, integrators = tuple(scales), tuple(integrators)
    for name, values in (("seeds", seeds), ("integrators", integrators), ("scales", scales)):
        if not values:
            raise ValueError(f"{name}: expected at least one, got none")
        if len(set(values)) != len(values):
            raise ValueError(f"{name} must be distinct, got {values!r}")
    if not all(np.isfinite(scale) and scale > 0 for scale in scales):
        raise ValueError(f"scales must be positive numbers, got {scales!r}")
    resolved = [s if isinstance(s, Scenario) else find(s) for s in scenarios]
    for scenario in resolved:
        for integrator in integrators:
            scenario.with_overrides(integrator=integrator)  # refuses one it cannot run on, before any task
    runs, left_out = pairs(policies, resolved)
    if not runs:
        raise ValueError(f"no policy applies to any scenario asked: {'; '.join(left_out)}")
    blocks = [seeds[i : i + block_size] for i in range(0, len(seeds), block_size)]
    tasks = []
    for name, scenario in runs:
        source = getattr(policies[name], "fingerprint", name)
        own_first = sorted(integrators, key=lambda i: i != scenario.integrator)
        cases = [(integrator, float(scale)) for integrator in own_first for scale in scales]
        traced = (scenario.integrator, 1.0) if (scenario.integrator, 1.0) in cases else cases[0]
        for case in cases:
            tasks += [
                Task(name, source, scenario, *case, block, case == traced and i == 0)
                for i, block in enumerate(blocks)
            ]
    return tasks


def run_task(task: Task, make: Any) -> Block:
    """The episodes of one task, the policy built from ``make`` for the task's scenario
    (:func:`~rigidrot_gym.tools.bench.policies.build`). A policy that cannot be built here
    or fails in the run (:class:`~rigidrot_gym.tools.bench.policies.PolicyError`) gives a
    failed block (:attr:`Block.failure`, the reason), not an exception: the campaign goes on."""
    scenario = task.spec
    try:
        policy = policy_for(task.policy, make, scenario)
        if policy is None:
            raise PolicyError(f"policy {task.policy!r} gave no policy (None) for {scenario.id} here")
        episodes, trace = run_episodes(policy, scenario, task.seeds, task.integrator, task.inertia_scale)
    except PolicyError as err:
        return Block(task, (), None, failure=str(err))
    return Block(task, tuple(episodes), trace if task.trace else None)


def gather(tasks: Sequence[Task], blocks: dict[str, Block]) -> tuple[list[Summary], dict]:
    """Summaries per case (in the plan's order, each over its blocks in the plan's order)
    and the traces, from the finished ``blocks`` keyed by :attr:`Task.key`. A case with a
    failed block is a failed summary (:func:`failed`, the first failed block's reason) and
    has no trace.

    Raises:
        ValueError: if a task of the plan has no block.
    """
    missing = [t.key for t in tasks if t.key not in blocks]
    if missing:
        raise ValueError(f"blocks missing for {len(missing)} of {len(tasks)} tasks, e.g. {missing[0]}")
    cases: dict[tuple, list[Episode]] = {}
    failures: dict[tuple, str] = {}
    traces = {}
    for task in tasks:
        block = blocks[task.key]
        case = (task.policy, task.scenario, task.integrator, task.inertia_scale)
        cases.setdefault(case, []).extend(block.episodes)
        if block.failure is not None:
            failures.setdefault(case, block.failure)
        if block.trace is not None:
            traces[(task.policy, task.scenario)] = block.trace
    for case in failures:
        traces.pop(case[:2], None)
    summaries = [
        failed(*case, failures[case]) if case in failures else summarise(*case, episodes)
        for case, episodes in cases.items()
    ]
    return summaries, traces


def benchmark(
    policies: dict[str, Any],
    scenarios: Sequence[str | Path | Scenario] = DEFAULT_SCENARIOS,
    integrators: Sequence[str] = DEFAULT_INTEGRATORS,
    seeds: Sequence[int] = tuple(range(20)),
    scales: Sequence[float] = INERTIA_SCALES,
    block_size: int = BLOCK_SIZE,
) -> tuple[list[Summary], dict]:
    """Every case of :func:`plan`, run here, task after task; summaries and traces.

    ``policies`` maps a name of your choice to a policy object (anything with
    stable-baselines3's ``predict()``, run on every scenario), a class or an object with
    ``for_scenario(scenario)`` (None: not on that scenario), or a policy maker, as
    :func:`plan` takes them. Here they need not pickle (only a campaign on Ray sends them
    to workers). A case whose policy failed is a summary with ``failure`` set (its
    :attr:`Summary.line` says which and why); the other cases run.

    Raises:
        ValueError: as :func:`plan`.
    """
    tasks = plan(policies, scenarios, integrators, seeds, scales, block_size)
    return gather(tasks, {t.key: run_task(t, policies[t.policy]) for t in tasks})


def format_table(summaries: list[Summary]) -> str:
    """Markdown table of the summaries that ran (the failed ones are left to
    :func:`failure_lines`), with a column of the propellant burnt (g) where a case has
    thrusters and one of the wheel momentum used (%, of the wheels' capacity) where a case
    has wheels; "—" in a row without them."""
    summaries = [s for s in summaries if not s.failure]
    fuel = any(np.isfinite(s.propellant) for s in summaries)
    wheels = any(np.isfinite(s.wheel_momentum_used) for s in summaries)
    header = (
        "policy",
        "scenario",
        "integrator",
        "true inertia",
        "episodes",
        "success",
        "settling time (s)",
        "final error (deg)",
        "RMS error (deg)",
        "effort ∫|τ|dt (N·m·s)",
        "peak rate (rad/s)",
    )
    header += (("propellant (g)",) if fuel else ()) + (("wheel momentum used (%)",) if wheels else ())
    cells = [
        (
            s.policy,
            s.scenario,
            s.integrator,
            f"×{s.inertia_scale:g}",
            s.episodes,
            f"{s.success_rate:.0%}",
            "—" if np.isnan(s.settling_time) else f"{s.settling_time:.1f}",
            f"{s.final_error_deg:.3g}",
            f"{s.rms_error_deg:.3g}",
            f"{s.effort:.3g}",
            f"{s.peak_rate:.3g}",
        )
        + ((_scaled(s.propellant, 1e3),) if fuel else ())
        + ((_scaled(s.wheel_momentum_used, 1e2),) if wheels else ())
        for s in summaries
    ]
    return markdown_table(header, cells, "lllrrrrrrrr" + "r" * fuel + "r" * wheels)


def _scaled(value: float, scale: float) -> str:
    """``value × scale`` to three figures, "—" for NaN (a measure the case does not have)."""
    return "—" if np.isnan(value) else f"{scale * value:.3g}"


def failure_lines(summaries: list[Summary]) -> list[str]:
    """The :attr:`Summary.line` of each failed case, in order."""
    return [s.line for s in summaries if s.failure]


def _runs(values: Sequence[int]) -> str:
    """Integers as runs: ``0–19, 40, 50–59``."""
    values = sorted(values)
    runs: list[list[int]] = []
    for v in values:
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in runs)


def statement(tasks: Sequence[Task]) -> str:
    """What a campaign ran, in one line for the top of its table: the seeds, and each
    scenario's body, control period, episode limit and integrator as its tasks carry them."""
    seeds = {seed for task in tasks for seed in task.seeds}
    scenarios = {task.scenario: task.spec for task in tasks}
    words = []
    for name, spec in scenarios.items():
        inertia = np.asarray(spec.inertia, dtype=float)
        if np.count_nonzero(inertia - np.diag(np.diag(inertia))):
            label, moments = "principal moments ", np.linalg.eigvalsh(inertia)
        else:
            label, moments = "J = diag", np.diag(inertia)
        body = f"{label}({', '.join(f'{m:g}' for m in moments)}) kg·m²"
        words.append(
            f"{name}: {body}, dt = {spec.dt:g} s, at most {spec.max_episode_steps} steps "
            f"({spec.dt * spec.max_episode_steps:g} s), integrator {spec.integrator}"
        )
    return (
        f"One episode per seed and row, seeds {_runs(seeds)}; {'; '.join(words)}. True inertia ×s: the "
        "body's inertia scaled by s, the policy keeping the nominal estimate."
    )


def plot(traces: dict, path: Path) -> None:
    """:func:`figure` of ``traces`` as a PNG."""
    import matplotlib.pyplot as plt

    fig = figure(traces)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def figure(traces: dict) -> Figure:
    """Pointing error and torque against time, first seed, one line per policy and
    scenario (``traces`` maps (policy, scenario) to the trace): a colour per policy and a
    line style per scenario, keyed apart. With more policies or scenarios than ten colours
    and four styles tell apart, each line gets a (colour, style) of its own, out of
    tab20's twenty colours and the four styles, and a key entry of its own."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from rigidrot_gym.tools.plot_style import LINE_STYLES

    policies = list(dict.fromkeys(policy for policy, _ in traces))
    scenarios = list(dict.fromkeys(scenario for _, scenario in traces))
    apart = len(policies) <= 10 and len(scenarios) <= len(LINE_STYLES)
    if apart:
        colours = matplotlib.colormaps["tab10"]
        styles = {
            key: {"color": colours(policies.index(key[0])), "ls": LINE_STYLES[scenarios.index(key[1])]}
            for key in traces
        }
    else:
        colours = matplotlib.colormaps["tab20"]
        pairs = [{"color": colours(c), "ls": ls} for ls in LINE_STYLES for c in range(20)]
        styles = {key: pairs[k % len(pairs)] for k, key in enumerate(traces)}
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 6), sharex=True)
    for key, trace in traces.items():
        error = np.maximum(trace["pointing_error_deg"], 1e-3)
        top.semilogy(trace["t"], error, label=f"{key[0]} ({key[1]})", lw=1.3, **styles[key])
        bottom.plot(trace["t"], np.linalg.norm(trace["torque"], axis=-1), lw=1.3, **styles[key])
    top.set_ylabel("pointing error (deg)")
    bottom.set_ylabel("|τ| (N·m)")
    bottom.set_xlabel("t (s)")
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
    # Beside the plots (inside, the key hid the curves): with a colour per policy and a
    # style per scenario, one entry for each.
    handles = top.get_lines()
    if apart:
        handles = [Line2D([], [], color=colours(i), lw=1.3, label=p) for i, p in enumerate(policies)]
        handles += [
            Line2D([], [], color="black", lw=1.3, ls=LINE_STYLES[j], label=s) for j, s in enumerate(scenarios)
        ]
    legend = fig.legend(handles=handles, fontsize=7.5, loc="center right", bbox_to_anchor=(0.995, 0.5))
    width = legend.get_window_extent(fig.canvas.get_renderer()).width / fig.bbox.width  # room for it
    fig.subplots_adjust(left=0.1, right=0.97 - width, top=0.97, bottom=0.09, hspace=0.08)
    return fig


def write(out_dir: Path, summaries: list[Summary], traces: dict, tasks: Sequence[Task] = ()) -> str:
    """``control.md``, ``control.csv`` and ``control.png`` into ``out_dir``; the Markdown:
    the table, under :func:`statement` of ``tasks`` (the plan that gave the summaries)
    when given, and over the failed cases' lines (:func:`failure_lines`); the CSV: every
    case, a failed one with its ``failure``."""
    lines = failure_lines(summaries)
    table = format_table(summaries) + ("\n\n" + "\n".join(lines) if lines else "")
    text = f"{statement(tasks)}\n\n{table}" if tasks else table
    write_results(out_dir, "control", text, summaries)
    plot(traces, out_dir / "control.png")
    return text

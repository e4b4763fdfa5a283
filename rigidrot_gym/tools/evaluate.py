"""``rigidrot evaluate``: a trained agent through the control benchmark, against classical
controllers.

The run folder (of ``rigidrot train``, ``training/train.py`` or ``rl_zoo3.train``; the
committed agents are in ``training/agents/``) gives the model, the observation normaliser
and the env (id and ``env_kwargs``). The agent and the policies named in ``--compare``
(controllers, or importable ``package.module:Name``)
run the same episodes (seeds 10000, 10001, ...: none was a training start) through
:mod:`rigidrot_gym.tools.bench.control`, on each of ``--integrators`` (default: the
integrator the agent was trained on). The table goes to stdout and, with a CSV of the
same rows, to ``--out`` (default ``outputs/evaluate/``); nothing is written into the run
folder. What ``rl_zoo3.enjoy`` does not do: the same episodes for agents and
controllers, several integrators, the benchmark's measures. Needs the ``[train]`` extra.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

EVALUATION_SEEDS = 10_000
OUT = Path("outputs/evaluate")

DESCRIPTION = """\
Runs a trained agent (a run folder of rigidrot train, training/train.py or
python -m rl_zoo3.train, e.g. logs/ppo/RigidRot-Reorient-v0_1) and the policies named
in --compare (controllers, or your own as package.module:Name) on the same episodes
(seeds 10000, 10001, ...: none was a training start) through the control benchmark, on
each of --integrators: success rate, settling time, final and RMS pointing error,
control effort, peak rate, and where they apply propellant burnt and wheel momentum
used. Writes evaluation.md and evaluation.csv into the output folder, nothing into the
run folder. Needs the [train] extra.

example: rigidrot evaluate training/agents/ppo/RigidRot-Reorient-v0_1 --compare quaternion_feedback lqr"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``rigidrot evaluate`` (and of ``training/evaluate.py``), onto ``parser``."""
    from rigidrot_gym.control import CONTROLLERS

    parser.add_argument(
        "run_dir",
        type=Path,
        metavar="RUN",
        help="a run folder of rigidrot train, training/train.py or rl_zoo3.train",
    )
    parser.add_argument("--episodes", type=int, default=100, help="episodes per policy and integrator")
    parser.add_argument("--integrators", nargs="+", help="default: the integrator the agent was trained on")
    parser.add_argument(
        "--compare",
        nargs="+",
        metavar="POLICY",
        help=f"policies run on the same episodes: controllers ({', '.join(CONTROLLERS)}) and/or "
        "importable policies package.module:Name (default: none)",
    )
    parser.add_argument("--video", action="store_true", help="also record one episode of the agent (mp4)")
    parser.add_argument("--out", type=Path, default=OUT, help="output folder (created if missing)")


def record_video(agent, env_id: str, env_kwargs: dict, out_dir: Path) -> Path:
    """One episode of the agent drawn by PyBullet, saved into ``out_dir``; its path."""
    import gymnasium as gym

    env = gym.make(env_id, render_mode="rgb_array", **env_kwargs)
    env = gym.wrappers.RecordVideo(
        env, str(out_dir), name_prefix="agent", episode_trigger=lambda e: e == 0, disable_logger=True
    )
    obs, _ = env.reset(seed=EVALUATION_SEEDS)
    done = False
    while not done:
        action, _ = agent.predict(obs, deterministic=True)
        obs, _, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
    env.close()
    return out_dir / "agent-episode-0.mp4"


def evaluate(
    run_dir: Path,
    episodes: int = 100,
    integrators: Sequence[str] | None = None,
    compare: Sequence[str] = (),
    video: bool = False,
    out: Path = OUT,
) -> str:
    """Evaluate the agent of ``run_dir`` and the policies ``compare`` (controllers by name,
    importable policies ``package.module:Name``); write
    ``evaluation.md`` and ``evaluation.csv`` (and with ``video`` the agent's first
    episode) into ``out``; print and return the table.

    Raises:
        ValueError: for ``episodes`` below 1, a folder that is not a training run, an
            unknown controller or one that cannot command the agent's actuators, an import
            entry that does not import or gives no policy for the agent's scenario, an
            unknown integrator.
        gymnasium.error.DependencyNotInstalled: without the ``[train]`` extra.
    """
    from rigidrot_gym.attitude.scenario import find
    from rigidrot_gym.control import CONTROLLERS, agents
    from rigidrot_gym.tools.bench import control
    from rigidrot_gym.tools.bench.policies import ImportMaker, is_entry, policy_for, why_left_out
    from rigidrot_gym.tools.report import write_results
    from rigidrot_gym.tools.train import import_train_extra

    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise ValueError(f"episodes must be a positive integer, got {episodes!r}")
    unknown = [name for name in compare if name not in CONTROLLERS and not is_entry(name)]
    if unknown:
        raise ValueError(
            f"compare: unknown controllers {unknown}; the controllers: {', '.join(CONTROLLERS)}, "
            "or an importable package.module:Name"
        )
    import_train_extra("stable_baselines3")
    try:
        agent = agents.load(run_dir)
    except FileNotFoundError as err:
        raise ValueError(str(err)) from None
    env_id, env_kwargs = agent.config["env"], agent.config["env_kwargs"]
    scenario = find(env_id).with_overrides(**env_kwargs)
    makers = {name: CONTROLLERS[name] if name in CONTROLLERS else ImportMaker(name) for name in compare}
    controllers = {name: policy_for(name, make, scenario) for name, make in makers.items()}
    unfit = [name for name, controller in controllers.items() if controller is None]
    if unfit:
        raise ValueError(f"compare: {why_left_out(unfit, scenario, makers)}")
    policies = {f"agent {agent.name}": agent, **controllers}
    seeds = range(EVALUATION_SEEDS, EVALUATION_SEEDS + episodes)
    summaries = []
    for integrator in integrators or [scenario.integrator]:
        for name, policy in policies.items():
            runs, _ = control.run_episodes(policy, scenario, seeds, integrator)
            summaries.append(control.summarise(name, scenario.id, integrator, 1.0, runs))
    kwargs = f" with {env_kwargs}" if env_kwargs else ""
    statement = (
        f"Agent {run_dir} on {scenario.id}{kwargs} (dt = {scenario.dt:g} s, at most "
        f"{scenario.max_episode_steps} steps), against {', '.join(compare) or 'no controller'}: one "
        f"episode per seed, seeds {seeds.start}–{seeds.stop - 1} (none a training start), on "
        f"{', '.join(integrators or [scenario.integrator])}."
    )
    table = f"{statement}\n\n{control.format_table(summaries)}"
    write_results(out, "evaluation", table, summaries)
    print(table)
    print(f"wrote {out / 'evaluation.md'}, {out / 'evaluation.csv'}")
    if video:
        print(f"wrote {record_video(agent, env_id, env_kwargs, out)}")
    return table


def run(args: argparse.Namespace) -> str:
    """:func:`evaluate` with the options of :func:`add_arguments`; the table."""
    return evaluate(args.run_dir, args.episodes, args.integrators, args.compare or (), args.video, args.out)

"""Evaluate a trained agent through the control benchmark, against classical controllers.

    python training/evaluate.py training/agents/ppo/RigidRot-Reorient-v0_1 --compare quaternion_feedback
    python training/evaluate.py logs/ppo/RigidRot-Reorient-v0_1 --integrators semi_implicit rk4 --video

The run folder (``rl_zoo3.train`` or ``training/train.py``; the committed agents are in
``training/agents/``) gives the model, the observation normaliser and the env (id and
``env_kwargs``). The agent and the controllers named in ``--compare`` run the same
episodes (seeds 10000, 10001, ...: none was a training start) through
:mod:`rigidrot_gym.tools.bench.control`, on each of ``--integrators`` (default: the
integrator the agent was trained on). The table goes to stdout and, with a CSV of the
same rows, to ``--out`` (default ``outputs/evaluate/``); nothing is written into the run
folder. What ``rl_zoo3.enjoy`` does not do: the same episodes for agents and
controllers, several integrators, the benchmark's measures.
"""

from __future__ import annotations

import argparse
from pathlib import Path

EVALUATION_SEEDS = 10_000


def build_parser() -> argparse.ArgumentParser:
    from rigidrot_gym.control import CONTROLLERS

    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=type(
            "Formatter", (argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter), {}
        ),
    )
    parser.add_argument("run_dir", type=Path, help="a run folder of rl_zoo3.train or training/train.py")
    parser.add_argument("--episodes", type=int, default=100, help="episodes per policy and integrator")
    parser.add_argument("--integrators", nargs="+", help="default: the integrator the agent was trained on")
    parser.add_argument("--compare", nargs="+", default=[], choices=sorted(CONTROLLERS), help="controllers")
    parser.add_argument("--video", action="store_true", help="also record one episode of the agent (mp4)")
    parser.add_argument("--out", type=Path, default=Path("outputs/evaluate"), help="output folder")
    return parser


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


def main(argv: list[str] | None = None) -> str:
    """Evaluate; write ``evaluation.md`` and ``evaluation.csv`` into ``--out``; return the table."""
    from rigidrot_gym.attitude.scenario import find
    from rigidrot_gym.control import CONTROLLERS, agents
    from rigidrot_gym.tools.bench import control
    from rigidrot_gym.tools.report import write_results

    args = build_parser().parse_args(argv)
    agent = agents.load(args.run_dir)
    env_id, env_kwargs = agent.config["env"], agent.config["env_kwargs"]
    scenario = find(env_id).with_overrides(**env_kwargs)
    policies = {f"agent {agent.name}": agent}
    policies.update({name: CONTROLLERS[name](scenario) for name in args.compare})
    seeds = range(EVALUATION_SEEDS, EVALUATION_SEEDS + args.episodes)
    summaries = []
    for integrator in args.integrators or [scenario.integrator]:
        for name, policy in policies.items():
            episodes, _ = control.run_episodes(policy, scenario, seeds, integrator)
            summaries.append(control.summarise(name, scenario.id, integrator, 1.0, episodes))
    table = control.format_table(summaries)
    write_results(args.out, "evaluation", table, summaries)
    print(table)
    print(f"wrote {args.out / 'evaluation.md'}, {args.out / 'evaluation.csv'}")
    if args.video:
        print(f"wrote {record_video(agent, env_id, env_kwargs, args.out)}")
    return table


if __name__ == "__main__":
    main()

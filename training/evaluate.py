"""Evaluate a saved training run through the control benchmark.

    python training/evaluate.py runs/ppo_Reorient-v0_0 --episodes 100 --compare quaternion_feedback
    python training/evaluate.py runs/ppo_Reorient-v0_0 --integrators semi_implicit rk4 --video agent.mp4

The run folder (``training/train.py``) gives the model, the observation normaliser and
the env (id and scenario overrides). The agent and any classical controllers named in
``--compare`` run the same episodes (seeds 10000, 10001, ...: none was a training
start) through :mod:`rigidrot_gym.tools.bench.control`, on each of ``--integrators`` (default:
the integrator the agent was trained on); the table goes to stdout and
``<run>/evaluation.md``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

EVALUATION_SEEDS = 10_000


def build_parser() -> argparse.ArgumentParser:
    from rigidrot_gym.control import CONTROLLERS

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("run_dir", type=Path, help="a run folder written by training/train.py")
    parser.add_argument("--episodes", type=int, default=100)
    parser.add_argument("--integrators", nargs="*", default=None, help="default: the training integrator")
    parser.add_argument("--compare", nargs="*", default=[], choices=sorted(CONTROLLERS), help="controllers")
    parser.add_argument("--video", type=Path, default=None, help="record one episode of the agent (mp4)")
    return parser


def record_video(agent, env_id: str, env_kwargs: dict, path: Path) -> None:
    """One episode of the agent drawn by PyBullet, saved as ``path``."""
    import gymnasium as gym

    env = gym.make(env_id, render_mode="rgb_array", **env_kwargs)
    env = gym.wrappers.RecordVideo(
        env, str(path.parent), name_prefix=path.stem, episode_trigger=lambda e: e == 0, disable_logger=True
    )
    obs, _ = env.reset(seed=EVALUATION_SEEDS)
    done = False
    while not done:
        action, _ = agent.predict(obs, deterministic=True)
        obs, _, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
    env.close()


def main(argv: list[str] | None = None) -> str:
    """Evaluate; return the markdown table."""
    from rigidrot_gym.attitude.scenario import find
    from rigidrot_gym.control import CONTROLLERS, agents
    from rigidrot_gym.tools.bench import control

    args = build_parser().parse_args(argv)
    agent = agents.load(args.run_dir)
    env_id, env_kwargs = agent.config["env"], agent.config.get("env_kwargs", {})
    scenario = find(env_id).with_overrides(**env_kwargs)
    policies = {f"agent ({args.run_dir.name})": agent}
    policies.update({name: CONTROLLERS[name](scenario) for name in args.compare})
    seeds = range(EVALUATION_SEEDS, EVALUATION_SEEDS + args.episodes)
    summaries = []
    for integrator in args.integrators or [scenario.integrator]:
        for name, policy in policies.items():
            episodes, _ = control.run_episodes(policy, scenario, seeds, integrator)
            summaries.append(control.summarise(name, scenario.id, integrator, 1.0, episodes))
    table = control.format_table(summaries)
    (args.run_dir / "evaluation.md").write_text(table + "\n")
    print(table)
    if args.video is not None:
        record_video(agent, env_id, env_kwargs, args.video)
        print(f"wrote a video to {args.video.parent} ({args.video.stem}-episode-0.mp4)")
    return table


if __name__ == "__main__":
    main()

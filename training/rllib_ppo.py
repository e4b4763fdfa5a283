"""Train PPO with RLlib's current API stack (RLModule, Learner, EnvRunner) on a rigidrot env.

    python training/rllib_ppo.py --env RigidRot/Reorient-v0 --timesteps 3e6
    python training/rllib_ppo.py --env RigidRot/Reorient-v0 --num-env-runners 8 --address auto

The recipe is :func:`ppo_config`. The env runners make the env by the name
``"rigidrot_gym:RigidRot/Reorient-v0"``: the module prefix makes Gymnasium import
``rigidrot_gym`` (which registers the ids) inside every runner process, so nothing has to
be registered by hand on the workers. With ``gym_env_vectorize_mode="vector_entry_point"``
each runner steps our native batched vector env (next-step autoreset, which RLlib
handles) instead of a Python loop over single envs. The success rate of the training
episodes (the env's ``info["is_success"]`` at their end) is logged by an
``on_episode_end`` callback.

After training, the deterministic policy (the mean of RLlib's Gaussian action
distribution) flies held-out episodes (seeds 10000, 10001, ...) through the control
benchmark's episode runner, like SB3 agents and the controllers.

Output, a new folder (an existing one is refused), by default
``logs/rllib/ppo/<EnvName>_<k>``: ``checkpoint/`` (``Algorithm.save_to_path``; the policy
alone: :func:`load_policy`), ``progress.csv`` (a line per iteration as it ends: env steps,
success rate, return, wall time), ``evaluation.md`` and ``evaluation.csv``, ``config.yml``, ``args.yml``,
``command.txt``.

Needs ``ray[rllib]`` (which also installs what ``[train]`` and ``[ray]`` do not: see the
README) and torch.
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

EVALUATION_SEEDS = 10_000
# The RLModule's path inside an Algorithm checkpoint (single-agent: the default module id).
MODULE_PATH = ("learner_group", "learner", "rl_module", "default_policy")


def log_success(*, episode, metrics_logger, **kwargs) -> None:
    """``on_episode_end``: the env's success flag at the episode's end, averaged by RLlib
    over the last 100 episodes (``result["env_runners"]["success_rate"]``)."""
    metrics_logger.log_value("success_rate", float(episode.get_infos(-1)["is_success"]), window=100)


def ppo_config(
    env_id: str = "RigidRot/Reorient-v0",
    env_kwargs: dict[str, Any] | None = None,
    num_env_runners: int = 1,
    num_envs_per_env_runner: int = 64,
    train_batch_size: int = 16384,
    minibatch_size: int = 4096,
    num_epochs: int = 10,
    lr: float = 3e-4,
    seed: int = 0,
):
    """RLlib's ``PPOConfig`` for ``env_id``: the hyperparameters of
    ``training/hyperparams/ppo.yml`` where RLlib has them (batch 16384 = 256 steps × 64
    envs, minibatches of 4096, 10 epochs, γ = 0.99, λ = 0.95, clip 0.2, separate 64-64 tanh
    networks); no observation or reward normalisation (the observation is already in
    [-1, 1]); the value loss is not clipped (returns reach about -200)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    return (
        PPOConfig()
        .environment(f"rigidrot_gym:{env_id}", env_config=dict(env_kwargs or {}))
        .env_runners(
            num_env_runners=num_env_runners,
            num_envs_per_env_runner=num_envs_per_env_runner,
            gym_env_vectorize_mode="vector_entry_point",
        )
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=num_epochs,
            lr=lr,
            gamma=0.99,
            lambda_=0.95,
            clip_param=0.2,
            vf_clip_param=float("inf"),
            entropy_coeff=0.0,
            grad_clip=0.5,
        )
        .rl_module(
            model_config=DefaultModelConfig(
                fcnet_hiddens=[64, 64], fcnet_activation="tanh", vf_share_layers=False
            )
        )
        .callbacks(on_episode_end=log_success)
        .debugging(seed=seed)
    )


class RLlibPolicy:
    """An RLlib RLModule with SB3's ``predict()``: the deterministic action (the mean of
    its action distribution), clipped to the action space [-1, 1]."""

    def __init__(self, module):
        self.module = module
        self.dist_cls = module.get_inference_action_dist_cls()

    def predict(self, observation, state: Any = None, episode_start=None, deterministic: bool = True):
        import torch

        obs = torch.as_tensor(np.asarray(observation, dtype=np.float32))
        with torch.no_grad():
            out = self.module.forward_inference({"obs": obs})
            dist = self.dist_cls.from_logits(out["action_dist_inputs"])
            action = (dist.to_deterministic() if deterministic else dist).sample()
        return np.clip(action.numpy(), -1.0, 1.0), state


def load_policy(checkpoint: str | Path) -> RLlibPolicy:
    """The policy saved in an Algorithm checkpoint, without building the algorithm."""
    from ray.rllib.core.rl_module.rl_module import RLModule

    return RLlibPolicy(RLModule.from_checkpoint(Path(checkpoint).resolve().joinpath(*MODULE_PATH)))


def evaluate(policy, env_id: str, env_kwargs: dict[str, Any], episodes: int):
    """The control benchmark's measurements of ``policy`` on held-out seeds."""
    from rigidrot_gym.attitude.scenario import find
    from rigidrot_gym.tools.bench.control import run_episodes, summarise

    scenario = find(env_id).with_overrides(**env_kwargs)
    seeds = range(EVALUATION_SEEDS, EVALUATION_SEEDS + episodes)
    measured, _ = run_episodes(policy, scenario, seeds)
    return summarise("RLlib PPO", scenario.id, scenario.integrator, 1.0, measured)


def run_folder(log_folder: Path, env_id: str, name: str | None) -> Path:
    """A new run folder: ``<log_folder>/ppo/<name>``, by default ``<EnvName>_<k>``."""
    parent = log_folder / "ppo"
    if name is None:
        stem = env_id.split("/")[-1]
        numbers = [re.fullmatch(rf"{re.escape(stem)}_(\d+)", p.name) for p in parent.glob(f"{stem}_*")]
        name = f"{stem}_{max((int(m.group(1)) for m in numbers if m), default=0) + 1}"
    folder = parent / name
    if folder.exists():
        raise SystemExit(f"{folder} exists: a run never overwrites another; pick another --name")
    return folder


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env", default="RigidRot/Reorient-v0", help="registered env id")
    parser.add_argument("--env-kwargs", nargs="*", help="scenario overrides, key=value (e.g. integrator=rk4)")
    parser.add_argument("--timesteps", type=float, default=3e6, help="env steps to sample (at least)")
    parser.add_argument("--num-env-runners", type=int, default=1)
    parser.add_argument("--num-envs-per-env-runner", type=int, default=64)
    parser.add_argument("--train-batch-size", type=int, default=16384)
    parser.add_argument("--minibatch-size", type=int, default=4096)
    parser.add_argument("--num-epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--eval-episodes", type=int, default=100)
    parser.add_argument("--address", default=None, help="Ray cluster to use (default: start one here)")
    parser.add_argument("--log-folder", default="logs/rllib", help="parent of ppo/<name>")
    parser.add_argument("--name", default=None, help="run folder name (default: <EnvName>_<k>)")
    return parser


def main(argv: list[str] | None = None) -> Path:
    """Train, evaluate, save; return the run folder."""
    import ray

    from rigidrot_gym.tools.report import markdown_table, write_results

    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    env_kwargs = {}
    for pair in args.env_kwargs or []:
        key, _, value = pair.partition("=")
        env_kwargs[key] = yaml.safe_load(value)
    folder = run_folder(Path(args.log_folder), args.env, args.name).resolve()
    folder.mkdir(parents=True)
    excluded = ("address", "log_folder", "name", "env_kwargs")
    settings = {k: v for k, v in vars(args).items() if k not in excluded}
    (folder / "args.yml").write_text(yaml.safe_dump(vars(args), sort_keys=False))
    (folder / "command.txt").write_text(shlex.join(["python", "training/rllib_ppo.py", *argv]) + "\n")

    started = not ray.is_initialized()
    if started:
        ray.init(address=args.address, logging_level="WARNING", log_to_driver=False)
    try:
        config = ppo_config(
            args.env,
            env_kwargs,
            args.num_env_runners,
            args.num_envs_per_env_runner,
            args.train_batch_size,
            args.minibatch_size,
            args.num_epochs,
            args.lr,
            args.seed,
        )
        (folder / "config.yml").write_text(
            yaml.safe_dump({"env": args.env, "env_kwargs": env_kwargs, **settings}, sort_keys=False)
        )
        algo = config.build_algo()
        progress = folder / "progress.csv"
        progress.write_text("iteration,env_steps,success_rate,episode_return_mean,wall_s\n")
        iteration, start, steps = 0, time.perf_counter(), 0
        while steps < args.timesteps:
            result = algo.train()
            runners = result["env_runners"]
            iteration, steps = iteration + 1, int(result["num_env_steps_sampled_lifetime"])
            row = (
                iteration,
                steps,
                float(runners.get("success_rate", float("nan"))),
                float(runners.get("episode_return_mean", float("nan"))),
                time.perf_counter() - start,
            )
            with open(progress, "a") as f:
                f.write(",".join(repr(v) for v in row) + "\n")
        minutes = (time.perf_counter() - start) / 60
        algo.save_to_path(folder / "checkpoint")
        summary = evaluate(RLlibPolicy(algo.get_module()), args.env, env_kwargs, args.eval_episodes)
        algo.stop()
    finally:
        if started:
            ray.shutdown()
    table = markdown_table(
        ("policy", "env steps", "training (min)", "episodes", "success", "settling (s)", "final error (deg)"),
        [
            (
                summary.policy,
                steps,
                f"{minutes:.1f}",
                summary.episodes,
                f"{summary.success_rate:.0%}",
                f"{summary.settling_time:.1f}",
                f"{summary.final_error_deg:.3g}",
            )
        ],
    )
    write_results(folder, "evaluation", table, [summary])
    print(table)
    print(f"wrote {folder}")
    return folder


if __name__ == "__main__":
    main()

"""Train a stable-baselines3 agent on a rigidrot_gym environment.

    python training/train.py --algo ppo --env RigidRot/Reorient-v0 --seed 0
    python training/train.py --algo ppo --env RigidRot/Reorient-v0 --hyperparams n_timesteps=1e6 n_envs=32
    python training/train.py --algo ppo --env RigidRot/Reorient-v0 --env-kwargs integrator=semi_implicit

Hyperparameters come from ``training/hyperparams/<algo>.yml``, keyed by env id, with
rl-baselines3-zoo's key names (``n_envs``, ``n_timesteps``, ``policy``, ``normalize``,
``policy_kwargs``, schedules such as ``lin_1e-3``, ``noise_type``/``noise_std``);
``--hyperparams`` overrides them. The envs are the native batched core through
:class:`rigidrot_gym.attitude.sb3.AttitudeSB3VecEnv`. The run folder gets ``model.zip``,
``vecnormalize.pkl`` (when normalising), ``config.yml``, ``args.yml``, ``command.txt``
and TensorBoard logs; ``training/evaluate.py`` rebuilds everything from it.
"""

from __future__ import annotations

import argparse
import ast
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
ALGORITHMS = ("ppo", "sac", "td3")
# Keys that configure the run rather than the algorithm's constructor.
RUN_KEYS = ("n_envs", "n_timesteps", "policy", "normalize", "noise_type", "noise_std")


def linear_schedule(initial: float):
    """Linearly decreasing from ``initial`` to 0 over training (zoo's ``lin_<value>``)."""

    def schedule(progress_remaining: float) -> float:
        return progress_remaining * initial

    return schedule


def parse_value(text: str) -> Any:
    """A CLI or YAML value: a number, a Python literal, or a string."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        try:
            return float(text)
        except ValueError:
            return text


def parse_pairs(pairs: list[str] | None, what: str) -> dict[str, Any]:
    """``key=value`` strings as a dict."""
    out = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise SystemExit(f"{what}: expected key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        out[key] = parse_value(value)
    return out


def hyperparameters(algo: str, env_id: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """The YAML entry for ``env_id`` with the CLI overrides applied."""
    table = yaml.safe_load((HERE / "hyperparams" / f"{algo}.yml").read_text())
    if env_id not in table:
        raise SystemExit(f"no {algo} hyperparameters for {env_id!r} in training/hyperparams/{algo}.yml")
    return {**table[env_id], **overrides}


def algorithm_kwargs(algo: str, params: dict[str, Any], n_actions: int) -> dict[str, Any]:
    """Constructor arguments of the SB3 algorithm from zoo-style hyperparameters."""
    from stable_baselines3.common.noise import NormalActionNoise

    kwargs = {k: v for k, v in params.items() if k not in RUN_KEYS}
    for key, value in list(kwargs.items()):
        if isinstance(value, str) and value.startswith("lin_"):
            kwargs[key] = linear_schedule(float(value[4:]))
    if isinstance(kwargs.get("policy_kwargs"), str):
        kwargs["policy_kwargs"] = eval(kwargs["policy_kwargs"], {"dict": dict})  # zoo convention
    for key in (
        "n_steps",
        "batch_size",
        "n_epochs",
        "buffer_size",
        "train_freq",
        "gradient_steps",
        "learning_starts",
    ):
        if key in kwargs:
            kwargs[key] = int(kwargs[key])
    if params.get("noise_type") == "normal":
        sigma = float(params.get("noise_std", 0.1))
        kwargs["action_noise"] = NormalActionNoise(np.zeros(n_actions), sigma * np.ones(n_actions))
    return kwargs


def make_env(env_id: str, n_envs: int, seed: int, env_kwargs: dict, normalize: Any):
    """The batched SB3 env, with episode statistics and (optionally) normalisation."""
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv

    env = VecMonitor(AttitudeSB3VecEnv(n_envs, env_id, **env_kwargs))
    env.seed(seed)
    if normalize:
        options = ast.literal_eval(normalize) if isinstance(normalize, str) else {}
        env = VecNormalize(env, **options)
    return env


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--algo", choices=ALGORITHMS, default="ppo")
    parser.add_argument("--env", default="RigidRot/Reorient-v0", help="registered env id")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hyperparams", nargs="*", help="overrides, key=value (e.g. n_timesteps=1e6)")
    parser.add_argument("--env-kwargs", nargs="*", help="scenario overrides, key=value (e.g. integrator=rk4)")
    parser.add_argument("--log-folder", default="training/runs", help="parent folder of the run folder")
    parser.add_argument("--run-name", default=None, help="run folder name (default: <algo>_<env>_<seed>)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> Path:
    """Train, save the run folder, return its path."""
    import stable_baselines3 as sb3
    from stable_baselines3.common.utils import set_random_seed

    import rigidrot_gym  # noqa: F401  (registers the ids)

    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    params = hyperparameters(args.algo, args.env, parse_pairs(args.hyperparams, "--hyperparams"))
    env_kwargs = parse_pairs(args.env_kwargs, "--env-kwargs")
    name = args.run_name or f"{args.algo}_{args.env.split('/')[-1]}_{args.seed}"
    run_dir = Path(args.log_folder) / name
    run_dir.mkdir(parents=True, exist_ok=True)

    set_random_seed(args.seed)
    env = make_env(args.env, int(params["n_envs"]), args.seed, env_kwargs, params.get("normalize"))
    algorithm = getattr(sb3, args.algo.upper())
    model = algorithm(
        params["policy"],
        env,
        seed=args.seed,
        device="cpu",
        tensorboard_log=str(run_dir / "tensorboard"),
        verbose=0,
        **algorithm_kwargs(args.algo, params, env.action_space.shape[0]),
    )
    config = {"algo": args.algo, "env": args.env, "env_kwargs": env_kwargs, "seed": args.seed, **params}
    (run_dir / "config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    (run_dir / "args.yml").write_text(yaml.safe_dump(vars(args), sort_keys=False))
    (run_dir / "command.txt").write_text(shlex.join(["python", "training/train.py", *argv]) + "\n")

    start = time.perf_counter()
    model.learn(total_timesteps=int(float(params["n_timesteps"])), progress_bar=not args.no_progress)
    minutes = (time.perf_counter() - start) / 60
    model.save(run_dir / "model.zip")
    if params.get("normalize"):
        env.save(str(run_dir / "vecnormalize.pkl"))
    (run_dir / "training_time.txt").write_text(
        f"{minutes:.1f} min wall time for {params['n_timesteps']} steps\n"
    )
    print(f"trained {args.algo} on {args.env} in {minutes:.1f} min; saved to {run_dir}")
    return run_dir


if __name__ == "__main__":
    main()

"""Sweep an SB3 agent's hyperparameters over seeds on Ray Tune; report it the rliable way.

    python training/sweep.py --env RigidRot/Reorient-v0
    python training/sweep.py --env RigidRot/Reorient-v0 --seeds 3 --grid learning_rate=lin_1e-3,lin_3e-4
    python training/sweep.py --env RigidRot/Reorient-v0 --hyperparams n_timesteps=5e5 --address auto

The sweep of ``--env`` comes from ``training/hyperparams/sweeps/<algo>.yml`` (keyed by env
id, rl-baselines3-zoo key names): the hyperparameters, a grid of values for some of them
and the number of seeds; ``--grid``, ``--seeds`` and ``--hyperparams`` override it. Every
trial (one grid point × one seed) trains on the native batched env
(:class:`rigidrot_gym.attitude.sb3.AttitudeSB3VecEnv`, ``VecMonitor``, ``VecNormalize``)
and reports every ``report_every`` steps the success rate and the mean return of the
training episodes (SB3's buffers of the last 100 episodes); at the end the deterministic
policy flies held-out episodes (seeds 10000, 10001, ...: none was a training start)
through the control benchmark's episode runner.

Across seeds, results are reported as rliable recommends (Agarwal et al., "Deep RL at
the edge of the statistical precipice", NeurIPS 2021): per grid point the interquartile
mean (IQM) of the evaluation success rate and of the final training return with 95 %
stratified-bootstrap confidence intervals, the per-seed success table, and a performance
profile (fraction of runs whose success rate exceeds τ).

Output, a new folder (an existing one is refused), by default
``logs/sweeps/<algo>/<EnvName>_<k>`` with k one more than the largest there:

* ``results.md``, ``results.csv`` (one row per trial), ``summary.csv`` (per grid point:
  the IQMs and their confidence bounds), ``progress.csv`` (every report),
  ``curves.png`` (success rate and return over training), ``profile.png``;
* ``best/``: the agent of the best grid point's best seed (grid point by IQM of success,
  then of return; seed by success, then return) saved like a ``training/train.py`` run
  (rl_zoo3's layout): ``<EnvName>.zip`` and ``<EnvName>/`` with ``vecnormalize.pkl``,
  ``vecnormalize.json``, ``config.yml``, ``args.yml``, ``command.txt``;
* ``sweep.yml``, ``args.yml``, ``command.txt``; ``tune/``: Ray Tune's experiment folder.

Needs the ``[train]`` and ``[ray]`` extras. With ``--address`` the trials run on that
cluster (its nodes need the package installed; ``--log-folder`` must then be storage that
every node can write, e.g. a shared file system).
"""

from __future__ import annotations

import argparse
import ast
import itertools
import re
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from rigidrot_gym.tools.bench import aggregate

HERE = Path(__file__).resolve().parent
ALGORITHMS = ("ppo", "sac", "td3")
# Keys that configure the run rather than the algorithm's constructor (zoo conventions).
RUN_KEYS = ("n_envs", "n_timesteps", "policy", "normalize", "noise_type", "noise_std")
INT_KEYS = ("n_steps", "batch_size", "n_epochs", "buffer_size", "train_freq", "gradient_steps")
INT_KEYS += ("learning_starts",)
EVALUATION_SEEDS = 10_000
BOOTSTRAP_REPS = 10_000


def parse_value(text: str) -> Any:
    """A CLI value: a Python literal, a number, or the string itself."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_pairs(pairs: list[str] | None, what: str, split: bool = False) -> dict[str, Any]:
    """``key=value`` (or ``key=v1,v2`` with ``split``) strings as a dict."""
    out = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise SystemExit(f"{what}: expected key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        out[key] = [parse_value(v) for v in value.split(",")] if split else parse_value(value)
    return out


def sweep_spec(algo: str, env_id: str, args: argparse.Namespace) -> dict[str, Any]:
    """The sweep of ``env_id`` from ``training/hyperparams/sweeps/<algo>.yml``, with the CLI's overrides."""
    path = HERE / "hyperparams" / "sweeps" / f"{algo}.yml"
    table = yaml.safe_load(path.read_text()) if path.exists() else {}
    if env_id not in table:
        raise SystemExit(f"no {algo} sweep for {env_id!r} in {path}")
    spec = dict(table[env_id])
    spec["hyperparams"] = {**spec["hyperparams"], **parse_pairs(args.hyperparams, "--hyperparams")}
    spec["grid"] = {**spec.get("grid", {}), **parse_pairs(args.grid, "--grid", split=True)}
    spec["seeds"] = int(args.seeds if args.seeds is not None else spec["seeds"])
    spec["report_every"] = int(float(args.report_every or spec["report_every"]))
    if spec["seeds"] < 1 or spec["report_every"] < 1:
        raise SystemExit(f"seeds and report_every must be >= 1, got {spec['seeds']}, {spec['report_every']}")
    return spec


def grid_points(grid: dict[str, list]) -> list[dict[str, Any]]:
    """Every combination of the grid's values (one empty point for an empty grid)."""
    keys = sorted(grid)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*(grid[k] for k in keys))]


def label(point: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in point.items()) or "default"


def algorithm_kwargs(params: dict[str, Any], n_actions: int) -> dict[str, Any]:
    """The SB3 constructor's arguments from zoo-style hyperparameters (``lin_<x>`` schedules,
    ``policy_kwargs`` as a string, Gaussian action noise)."""
    from stable_baselines3.common.noise import NormalActionNoise

    kwargs = {k: v for k, v in params.items() if k not in RUN_KEYS}
    for key, value in list(kwargs.items()):
        if isinstance(value, str) and value.startswith("lin_"):
            initial = float(value[4:])
            kwargs[key] = lambda progress_remaining, initial=initial: progress_remaining * initial
        elif key in INT_KEYS:
            kwargs[key] = int(value)
    if isinstance(kwargs.get("policy_kwargs"), str):
        kwargs["policy_kwargs"] = eval(kwargs["policy_kwargs"], {"dict": dict})  # the zoo's convention
    if params.get("noise_type") == "normal":
        sigma = float(params.get("noise_std", 0.1))
        kwargs["action_noise"] = NormalActionNoise(np.zeros(n_actions), sigma * np.ones(n_actions))
    return kwargs


def trial(config: dict[str, Any]) -> None:
    """One seed of one grid point, run by Ray Tune in a worker: train, reporting as it
    goes; evaluate; report the last time with the run folder as the checkpoint."""
    import stable_baselines3 as sb3
    import torch
    from ray import tune
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.utils import set_random_seed
    from stable_baselines3.common.vec_env import VecMonitor, VecNormalize

    from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv
    from rigidrot_gym.attitude.scenario import find
    from rigidrot_gym.control.agents import NORMALIZER_JSON, Agent, save_normalizer
    from rigidrot_gym.tools.bench.control import run_episodes

    torch.set_num_threads(config["threads"])
    params, seed, env_id = {**config["hyperparams"], **config["point"]}, config["seed"], config["env"]
    total = int(float(params["n_timesteps"]))
    set_random_seed(seed)
    env = VecMonitor(AttitudeSB3VecEnv(int(params["n_envs"]), env_id, **config["env_kwargs"]))
    env.seed(seed)
    if params.get("normalize"):
        normalize = params["normalize"]
        env = VecNormalize(env, **(ast.literal_eval(normalize) if isinstance(normalize, str) else {}))
    algorithm = getattr(sb3, config["algo"].upper())
    model = algorithm(
        params["policy"],
        env,
        seed=seed,
        device="cpu",
        verbose=0,
        **algorithm_kwargs(params, env.action_space.shape[0]),
    )

    def training_metrics() -> dict[str, float]:
        successes = list(model.ep_success_buffer)
        returns = [episode["r"] for episode in model.ep_info_buffer]
        return {
            "timesteps": model.num_timesteps,
            "success_rate": float(np.mean(successes)) if successes else float("nan"),
            "ep_return": float(np.mean(returns)) if returns else float("nan"),
        }

    class Report(BaseCallback):
        """Reports after the first rollout past each multiple of ``report_every``."""

        def __init__(self) -> None:
            super().__init__()
            self.next = config["report_every"]

        def _on_step(self) -> bool:
            return True

        def _on_rollout_end(self) -> None:
            if self.next <= self.num_timesteps < total:
                tune.report(training_metrics())
                self.next = (self.num_timesteps // config["report_every"] + 1) * config["report_every"]

    model.learn(total_timesteps=total, callback=Report())
    if isinstance(env, VecNormalize):
        env.training = False
    scenario = find(env_id).with_overrides(**config["env_kwargs"])
    agent = Agent(model, env if isinstance(env, VecNormalize) else None)
    seeds = range(EVALUATION_SEEDS, EVALUATION_SEEDS + config["eval_episodes"])
    episodes, _ = run_episodes(agent, scenario, seeds)
    successes = [e.settling_time for e in episodes if e.success]
    final = {
        **training_metrics(),
        "eval_success": float(np.mean([e.success for e in episodes])),
        "eval_final_error_deg": float(np.mean([e.final_error_deg for e in episodes])),
        "eval_settling_time": float(np.mean(successes)) if successes else float("nan"),
    }
    args = {"algo": config["algo"], "env": env_id, "env_kwargs": config["env_kwargs"], "seed": seed}
    name = zoo_name(env_id)
    with tempfile.TemporaryDirectory() as folder:
        model.save(Path(folder) / f"{name}.zip")
        params_dir = Path(folder) / name
        params_dir.mkdir()
        if isinstance(env, VecNormalize):
            env.save(str(params_dir / "vecnormalize.pkl"))
            save_normalizer(env, params_dir / NORMALIZER_JSON)
        (params_dir / "config.yml").write_text(yaml.safe_dump(params, sort_keys=False))
        (params_dir / "args.yml").write_text(yaml.safe_dump(args, sort_keys=False))
        tune.report(final, checkpoint=tune.Checkpoint.from_directory(folder))


def interval_estimates(scores: dict[str, np.ndarray]) -> dict[str, tuple[float, float, float]]:
    """Per key, the IQM of the per-seed ``scores`` (shape (seeds,)) and its 95 % stratified
    bootstrap confidence interval (:func:`rigidrot_gym.tools.bench.aggregate.iqm_intervals`)."""
    return aggregate.iqm_intervals(scores, reps=BOOTSTRAP_REPS)


def plot_profile(scores: dict[str, np.ndarray], path: Path) -> None:
    """Performance profile of the evaluation success rates, with 95 % bootstrap bands."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    aggregate.plot_profiles(scores, np.linspace(0.0, 1.0, 101), ax)
    ax.set_xlabel(r"evaluation success rate $\tau$", fontsize=11)
    ax.set_ylabel(r"fraction of runs with success rate $> \tau$", fontsize=11)
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_curves(progress: list[dict], path: Path) -> None:
    """Training success rate and return against steps: one thin line per trial."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    colors = {}
    for row in progress:
        colors.setdefault(row["point"], f"C{len(colors)}")
    for (point, seed), rows in itertools.groupby(progress, key=lambda r: (r["point"], r["seed"])):
        rows = list(rows)
        steps = [r["timesteps"] for r in rows]
        name = point if seed == 0 else None
        top.plot(steps, [r["success_rate"] for r in rows], color=colors[point], lw=0.8, label=name)
        bottom.plot(steps, [r["ep_return"] for r in rows], color=colors[point], lw=0.8)
    top.set_ylabel("training success rate")
    bottom.set_ylabel("training return")
    bottom.set_xlabel("env steps")
    top.legend(fontsize=8)
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def zoo_name(env_id: str) -> str:
    """The name rl_zoo3 gives an env id's files in a run folder (``RigidRot-Reorient-v0``)."""
    return env_id.replace("/", "-")


def run_folder(log_folder: Path, algo: str, env_id: str, name: str | None) -> Path:
    """A new sweep folder: ``<log_folder>/<algo>/<name>``, by default ``<EnvName>_<k>``."""
    parent = log_folder / algo
    if name is None:
        stem = env_id.split("/")[-1]
        numbers = [re.fullmatch(rf"{re.escape(stem)}_(\d+)", p.name) for p in parent.glob(f"{stem}_*")]
        taken = [int(m.group(1)) for m in numbers if m]
        name = f"{stem}_{max(taken, default=0) + 1}"
    folder = parent / name
    if folder.exists():
        raise SystemExit(f"{folder} exists: a sweep never overwrites another; pick another --name")
    return folder


def report(folder: Path, results: list[dict], points: list[dict], progress: list[dict]) -> tuple[str, dict]:
    """Write the tables and plots; return the Markdown and the best trial's result."""
    from rigidrot_gym.tools.report import markdown_table

    labels = [label(p) for p in points]
    by_point = {name: [r for r in results if r["point"] == name] for name in labels}
    success = {name: np.array([r["eval_success"] for r in rows]) for name, rows in by_point.items()}
    returns = {name: np.array([r["ep_return"] for r in rows]) for name, rows in by_point.items()}
    iqm_success, iqm_return = interval_estimates(success), interval_estimates(returns)
    best_point = max(labels, key=lambda n: (iqm_success[n][0], iqm_return[n][0]))
    best = max(by_point[best_point], key=lambda r: (r["eval_success"], r["ep_return"]))

    def ci(estimate: tuple[float, float, float], fmt: str) -> str:
        return f"{estimate[0]:{fmt}} [{estimate[1]:{fmt}}, {estimate[2]:{fmt}}]"

    summary = markdown_table(
        ("grid point", "seeds", "IQM evaluation success [95% CI]", "IQM final training return [95% CI]"),
        [(n, len(by_point[n]), ci(iqm_success[n], ".2f"), ci(iqm_return[n], ".1f")) for n in labels],
        "lrrr",
    )
    seeds = sorted({r["seed"] for r in results})
    per_seed = markdown_table(
        ("grid point", *(f"seed {s}" for s in seeds)),
        [
            (n, *(f"{next(r['eval_success'] for r in by_point[n] if r['seed'] == s):.0%}" for s in seeds))
            for n in labels
        ],
    )
    estimates = [
        {"point": n, "seeds": len(by_point[n])}
        | dict(zip(("iqm_success", "success_low", "success_high"), iqm_success[n], strict=True))
        | dict(zip(("iqm_return", "return_low", "return_high"), iqm_return[n], strict=True))
        for n in labels
    ]
    text = (
        f"{summary}\n\nEvaluation success per seed ({results[0]['eval_episodes']} episodes each):\n\n"
        f"{per_seed}\n\nBest: {best_point}, seed {best['seed']} (saved in best/).\n"
    )
    (folder / "results.md").write_text(text)
    for name, rows in (("results.csv", results), ("progress.csv", progress), ("summary.csv", estimates)):
        keys = list(rows[0])
        cells = [[f'"{r[k]}"' if k == "point" else repr(r[k]) for k in keys] for r in rows]
        lines = [",".join(keys)] + [",".join(row) for row in cells]
        (folder / name).write_text("\n".join(lines) + "\n")
    plot_profile(success, folder / "profile.png")
    plot_curves(progress, folder / "curves.png")
    return text, best


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--algo", choices=ALGORITHMS, default="ppo")
    parser.add_argument("--env", default="RigidRot/Reorient-v0", help="registered env id")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per grid point (default: the yml's)")
    parser.add_argument("--grid", nargs="*", help="grid overrides, key=v1,v2 (e.g. n_epochs=5,10)")
    parser.add_argument("--hyperparams", nargs="*", help="fixed overrides, key=value (e.g. n_timesteps=5e5)")
    parser.add_argument("--env-kwargs", nargs="*", help="scenario overrides, key=value (e.g. integrator=rk4)")
    parser.add_argument("--report-every", type=float, default=None, help="env steps between reports")
    parser.add_argument("--eval-episodes", type=int, default=100, help="held-out episodes per trial")
    parser.add_argument("--cpus-per-trial", type=int, default=1, help="CPUs (and torch threads) per trial")
    parser.add_argument("--address", default=None, help="Ray cluster to use (default: start one here)")
    parser.add_argument("--log-folder", default="logs/sweeps", help="parent of <algo>/<name>")
    parser.add_argument("--name", default=None, help="sweep folder name (default: <EnvName>_<k>)")
    return parser


def main(argv: list[str] | None = None) -> Path:
    """Run the sweep, write its folder, return the folder."""
    import ray
    from ray import cloudpickle, tune

    import rigidrot_gym  # noqa: F401  (registers the ids)

    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    spec = sweep_spec(args.algo, args.env, args)
    if args.eval_episodes < 1 or args.cpus_per_trial < 1:
        raise SystemExit("--eval-episodes and --cpus-per-trial must be >= 1")
    folder = run_folder(Path(args.log_folder), args.algo, args.env, args.name).resolve()
    folder.mkdir(parents=True)
    env_kwargs = parse_pairs(args.env_kwargs, "--env-kwargs")
    points = grid_points(spec["grid"])
    sweep = {"env": args.env, "algo": args.algo, **spec}
    (folder / "sweep.yml").write_text(yaml.safe_dump(sweep, sort_keys=False))
    (folder / "args.yml").write_text(yaml.safe_dump(vars(args), sort_keys=False))
    command = shlex.join(["python", "training/sweep.py", *argv]) + "\n"
    (folder / "command.txt").write_text(command)

    # The trial function must travel to the workers by value: this script is no installed
    # module. cloudpickle does so for __main__ and for a module missing from sys.modules.
    module = sys.modules.get(trial.__module__)
    if module is not None and module.__name__ != "__main__":
        cloudpickle.register_pickle_by_value(module)
    started = not ray.is_initialized()
    if started:
        ray.init(address=args.address, logging_level="WARNING", log_to_driver=False)
    try:
        start = time.perf_counter()
        tuner = tune.Tuner(
            tune.with_resources(trial, {"cpu": args.cpus_per_trial}),
            param_space={
                "algo": args.algo,
                "env": args.env,
                "env_kwargs": env_kwargs,
                "hyperparams": spec["hyperparams"],
                "report_every": spec["report_every"],
                "eval_episodes": args.eval_episodes,
                "threads": args.cpus_per_trial,
                "point": tune.grid_search(points),
                "seed": tune.grid_search(list(range(spec["seeds"]))),
            },
            # Reused actors keep torch, SB3 and the numba kernels loaded from trial to trial.
            tune_config=tune.TuneConfig(reuse_actors=True),
            run_config=tune.RunConfig(name="tune", storage_path=str(folder), verbose=0),
        )
        grid = tuner.fit()
        minutes = (time.perf_counter() - start) / 60
    finally:
        if started:
            ray.shutdown()
    failed = [r.error for r in grid if r.error is not None]
    if failed:
        raise RuntimeError(f"{len(failed)} of {len(grid)} trials failed, the first: {failed[0]!r}")
    unfinished = sum(1 for r in grid if "eval_success" not in (r.metrics or {}))
    if unfinished:
        raise RuntimeError(f"{unfinished} of {len(grid)} trials did not finish (interrupted?): {folder}/tune")

    results, progress, checkpoints = [], [], {}
    for result in sorted(grid, key=lambda r: (points.index(r.config["point"]), r.config["seed"])):
        name, seed = label(result.config["point"]), result.config["seed"]
        m = result.metrics
        results.append(
            {
                "point": name,
                "seed": seed,
                "timesteps": m["timesteps"],
                "success_rate": m["success_rate"],
                "ep_return": m["ep_return"],
                "eval_success": m["eval_success"],
                "eval_final_error_deg": m["eval_final_error_deg"],
                "eval_settling_time": m["eval_settling_time"],
                "eval_episodes": args.eval_episodes,
                "minutes": m["time_total_s"] / 60,
            }
        )
        frame = result.metrics_dataframe
        progress += [
            {"point": name, "seed": seed, "timesteps": int(row.timesteps)}
            | {"success_rate": float(row.success_rate), "ep_return": float(row.ep_return)}
            for row in frame.itertuples()
        ]
        checkpoints[(name, seed)] = result.checkpoint
    text, best = report(folder, results, points, progress)

    best_dir = folder / "best"
    checkpoints[(best["point"], best["seed"])].to_directory(str(best_dir))
    params_dir = best_dir / zoo_name(args.env)
    trained = yaml.safe_load((params_dir / "args.yml").read_text())
    (params_dir / "args.yml").write_text(yaml.safe_dump({**vars(args), **trained}, sort_keys=False))
    (params_dir / "command.txt").write_text(command)
    minutes_best = f"{best['minutes']:.1f} min wall time (one trial of the sweep)\n"
    (best_dir / "training_time.txt").write_text(minutes_best)
    print(text)
    print(f"{len(results)} trials in {minutes:.1f} min; wrote {folder}")
    return folder


if __name__ == "__main__":
    main()

"""How much faster ``training/train.py`` trains than ``rl_zoo3.train``: one PPO run, three VecEnvs.

    python training/vec_env_speed.py --env RigidRot/Reorient-v0 -n 32768 --repeats 3
    python training/vec_env_speed.py --vec-envs dummy subproc batched

Runs the zoo's training command with its ``DummyVecEnv`` (``--vec-env dummy``, the zoo's
default) and, when asked, its ``SubprocVecEnv`` (``--vec-env subproc``: one process per
env, 64 for PPO's hyperparameters, about 10 GB), and ``training/train.py`` (the batched
:class:`~rigidrot_gym.attitude.sb3.AttitudeSB3VecEnv`), on the same
hyperparameters (``training/hyperparams/<algo>.yml``, ``n_envs`` included), the same seed
and the same number of steps, evaluation off, torch on one thread (the zoo's advice for
CPUs: on a busy machine a second thread spins and slows every step), each in a fresh
process (the env kernels compiled beforehand); they alternate, ``--repeats`` times. Measured:
stable-baselines3's own ``time/fps`` at the end of ``learn()`` (steps per second of the
whole training loop: collection and gradient steps), and per repeat the ratio of the
batched run to each zoo run; reported are the medians. Writes ``speed.md`` into ``--out``.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FPS = re.compile(r"\|\s+fps\s+\|\s+(\d+)\s+\|")


BATCHED = "training/train.py, batched env"
LABELS = {
    "dummy": "rl_zoo3.train, DummyVecEnv",
    "subproc": "rl_zoo3.train, SubprocVecEnv",
    "batched": BATCHED,
}


def commands(algo: str, env_id: str, steps: int, seed: int, log_folder: str) -> dict[str, list[str]]:
    """The three training commands, by key of :data:`LABELS`."""
    common = ["--algo", algo, "--env", env_id, "-n", str(steps), "--seed", str(seed), "--eval-freq", "-1"]
    common += ["--conf-file", str(HERE / "hyperparams" / f"{algo}.yml"), "-f", log_folder, "--device", "cpu"]
    common += ["--num-threads", "1"]
    zoo = [sys.executable, "-m", "rl_zoo3.train", "--gym-packages", "rigidrot_gym", *common]
    return {
        "dummy": [*zoo, "--vec-env", "dummy"],
        "subproc": [*zoo, "--vec-env", "subproc"],
        "batched": [sys.executable, str(HERE / "train.py"), *common],
    }


def warm_up(env_id: str) -> None:
    """Compile the single and the batched env's kernels here, once: the measured processes
    then load them from numba's cache (a SubprocVecEnv's workers would otherwise each
    compile them, all at once)."""
    import gymnasium as gym
    import numpy as np

    import rigidrot_gym  # noqa: F401  (registers the ids)
    from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv

    env = gym.make(env_id)
    env.reset(seed=0)
    env.step(env.action_space.sample())
    batched = AttitudeSB3VecEnv(2, env_id)
    batched.reset()
    batched.step(np.zeros((2, *batched.action_space.shape), dtype=np.float32))


def steps_per_second(command: list[str]) -> float:
    """SB3's last ``time/fps`` of a training run (steps per second since ``learn()`` began)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{out.stderr[-2000:]}")
    rates = FPS.findall(out.stdout)
    if not rates:
        raise RuntimeError(f"no time/fps in the output of {' '.join(command)}")
    return float(rates[-1])


def main(argv: list[str] | None = None) -> str:
    """Measure; print and write the table; return it."""
    from rigidrot_gym.tools.report import markdown_table

    parser = argparse.ArgumentParser(
        description=__doc__,
        formatter_class=type(
            "Formatter", (argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter), {}
        ),
    )
    parser.add_argument("--algo", default="ppo", choices=("ppo", "sac", "td3"))
    parser.add_argument("--env", default="RigidRot/Reorient-v0", help="registered env id")
    parser.add_argument("-n", "--n-timesteps", type=int, default=65536, help="steps per training run")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each command, alternating")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--vec-envs", nargs="+", choices=tuple(LABELS), default=["dummy", "batched"], help="which to run"
    )
    parser.add_argument("--out", type=Path, default=Path("outputs/vec_env_speed"), help="output folder")
    args = parser.parse_args(argv)

    warm_up(args.env)
    rates: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as logs:
        runs = commands(args.algo, args.env, args.n_timesteps, args.seed, logs)
        for repeat in range(args.repeats):
            for key in dict.fromkeys(["batched", *args.vec_envs]):
                label = LABELS[key]
                rates.setdefault(label, []).append(steps_per_second(runs[key]))
                print(
                    f"repeat {repeat + 1}/{args.repeats}: {label}: {rates[label][-1]:,.0f} steps/s",
                    flush=True,
                )
    batched = rates[BATCHED]
    rows = [
        (
            label,
            f"{statistics.median(r):,.0f}",
            f"{statistics.median(b / z for b, z in zip(batched, r, strict=True)):.2f}",
        )
        for label, r in rates.items()
    ]
    table = "\n".join(
        [
            f"{args.algo.upper()} on {args.env}, hyperparameters of training/hyperparams/{args.algo}.yml, "
            f"{args.n_timesteps} steps per run, medians of {args.repeats} alternating runs.",
            "",
            markdown_table(("command, VecEnv", "training steps/s", "batched / this (median)"), rows),
        ]
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "speed.md").write_text(table + "\n")
    print(table)
    print(f"wrote {args.out / 'speed.md'}")
    return table


if __name__ == "__main__":
    main()

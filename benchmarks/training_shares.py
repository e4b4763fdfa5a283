"""Where PPO's training time goes: the env's steps, the rest of the rollout, the gradient steps.

    python benchmarks/training_shares.py                               # NadirPoint-v0, about 2 minutes
    python benchmarks/training_shares.py --ids RigidRot/Reorient-v0 RigidRot/NadirPoint-v0

Not a test: a measurement, on one machine in one run. Each id trains as ``training/train.py``
trains it (the zoo's hyperparameters in ``training/hyperparams/ppo.yml``, the batched env,
``--num-threads 1``, no evaluation) for ``--iterations`` rollouts and their updates, into a
temporary folder. Timers around the classes' own methods split each iteration's wall time
into the env's batched step (``AttitudeSB3VecEnv.step_wait``), the rest of the rollout
(the policy's forward pass, the rollout buffer, the zoo's normaliser and monitor) and the
update (``PPO.train``: the epochs of gradient steps). The first iteration is left out (it
compiles or loads the kernels). The CPU model heads the output.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import defaultdict

import yaml
from stable_baselines3 import PPO

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv
from rigidrot_gym.tools import train
from rigidrot_gym.tools.bench.throughput import machine

PARTS = ("env", "rollout", "update")


def _timed(cls: type, name: str, part: str, spent: dict[str, list[float]]) -> None:
    """Wrap ``cls.name`` so that each call's wall time joins ``spent[part]``."""
    plain = getattr(cls, name)

    def timed(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return plain(self, *args, **kwargs)
        finally:
            spent[part].append(time.perf_counter() - start)

    setattr(cls, name, timed)


def shares(env_id: str, iterations: int, spent: dict[str, list[float]]) -> dict[str, float]:
    """Seconds per iteration (median over all but the first) of each part of :data:`PARTS`
    (``rollout`` without the env's steps) for ``env_id``, and the env-steps per iteration."""
    hyperparameters = train.hyperparameter_folder() / "ppo.yml"
    table = yaml.safe_load(hyperparameters.read_text())
    if env_id not in table:
        raise ValueError(
            f"ids: {env_id!r} has no PPO hyperparameters in {hyperparameters}; ids with them: {sorted(table)}"
        )
    chosen = table[env_id]
    per_iteration = int(chosen["n_envs"]) * int(chosen["n_steps"])
    spent.clear()
    with tempfile.TemporaryDirectory() as folder:
        argv = ["--algo", "ppo", "--env", env_id, "-n", str(per_iteration * (iterations + 1))]
        argv += ["--eval-freq", "-1", "--num-threads", "1", "--seed", "0", "--verbose", "0"]
        train.run([*argv, "--log-folder", folder])
    calls = int(chosen["n_steps"])  # the env's batched steps per rollout
    env = [sum(spent["env"][k : k + calls]) for k in range(0, len(spent["env"]), calls)]
    rows = list(zip(env, spent["rollout"], spent["update"], strict=True))[1:]
    return {
        "env": statistics.median(e for e, _, _ in rows),
        "rollout": statistics.median(r - e for e, r, _ in rows),
        "update": statistics.median(u for _, _, u in rows),
        "steps": per_iteration,
        "n_timesteps": float(chosen["n_timesteps"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", nargs="+", default=["RigidRot/NadirPoint-v0"])
    parser.add_argument("--iterations", type=int, default=4, help="timed iterations after the first")
    args = parser.parse_args()
    spent: dict[str, list[float]] = defaultdict(list)
    _timed(AttitudeSB3VecEnv, "step_wait", "env", spent)
    _timed(PPO, "collect_rollouts", "rollout", spent)
    _timed(PPO, "train", "update", spent)
    print(f"CPU: {machine()}")
    print(
        "| id | env-steps per iteration | env's steps | rest of the rollout | update | env-steps/s "
        "| the id's n_timesteps at that rate |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for env_id in args.ids:
        s = shares(env_id, args.iterations, spent)
        total = s["env"] + s["rollout"] + s["update"]
        cells = [f"{s[p]:.2f} s ({s[p] / total:.0%})" for p in PARTS]
        rate = s["steps"] / total
        minutes = s["n_timesteps"] / rate / 60
        print(f"| {env_id} | {s['steps']} | {' | '.join(cells)} | {rate:,.0f} | {minutes:.1f} min |")


if __name__ == "__main__":
    main()

"""Train a stable-baselines3 agent on a rigidrot_gym env: rl-baselines3-zoo on the batched env.

    python training/train.py --algo ppo --env RigidRot/Reorient-v0 --seed 0 --progress
    python training/train.py --algo ppo --env RigidRot/Reorient-v0 -n 1000000 --hyperparams n_envs:32
    python training/train.py --algo ppo --env RigidRot/Reorient-v0 --env-kwargs "integrator:'semi_implicit'"

This is rl-baselines3-zoo's ``python -m rl_zoo3.train``: the same options (``--help``),
the same hyperparameter files (``training/hyperparams/<algo>.yml``, the default
``--conf-file`` here), the same run folders (``logs/<algo>/<env>_<n>/``, a new ``n`` for
every run, so no run is ever written over) and the same tools afterwards
(``rl_zoo3.enjoy``, ``rl_zoo3.plots``, ``training/evaluate.py``). One thing differs, what
the zoo cannot do: the zoo steps ``n_envs`` single envs one after the other
(``DummyVecEnv``) or in ``n_envs`` processes (``SubprocVecEnv``); here they are one
:class:`~rigidrot_gym.attitude.sb3.AttitudeSB3VecEnv`, every body advanced by one
compiled call (the speed ratio is measured by ``training/vec_env_speed.py``).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

import rl_zoo3.train as zoo_train
from rl_zoo3.exp_manager import ExperimentManager
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecEnv, VecFrameStack, VecMonitor

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv

HYPERPARAMS = Path(__file__).resolve().parent / "hyperparams"


class BatchedExperimentManager(ExperimentManager):
    """The zoo's experiment, with the training and evaluation envs made by
    :class:`AttitudeSB3VecEnv` instead of a ``DummyVecEnv`` of single envs.

    Same seeding (env i gets ``seed + i`` at its first reset), the same episode monitor
    (``monitor.csv`` in the run folder) and the zoo's normalisation, vec-env wrappers
    and frame stacking on top. The zoo's ``env_wrapper`` hyperparameter wraps single
    envs and has no batched counterpart: it is refused.
    """

    def create_envs(self, n_envs: int, eval_env: bool = False, no_log: bool = False) -> VecEnv:
        if self.env_wrapper is not None:
            raise ValueError(
                f"env_wrapper={self.env_wrapper!r}: wrappers of single envs do not apply to the batched "
                "env; use vec_env_wrapper, or python -m rl_zoo3.train"
            )
        env_kwargs = self.eval_env_kwargs if eval_env else self.env_kwargs
        env = AttitudeSB3VecEnv(n_envs, self.env_name.gym_id, **env_kwargs)
        env.seed(self.seed)
        log_dir = None if eval_env or no_log else self.save_path
        env = VecMonitor(env, filename=log_dir, **self.monitor_kwargs)
        if self.vec_env_wrapper is not None:
            env = self.vec_env_wrapper(env)
        env = self._maybe_normalize(env, eval_env)
        if self.frame_stack is not None:
            env = VecFrameStack(env, self.frame_stack)
        return env

    def learn(self, model: BaseAlgorithm) -> None:
        """The zoo's training, timed: the wall time of ``model.learn`` (sampling, gradient
        steps and the zoo's callbacks, without start-up and saving) goes to
        ``training_time.txt`` in the run folder."""
        start = time.perf_counter()
        super().learn(model)
        seconds = time.perf_counter() - start
        line = f"{seconds:.1f} s wall time for {model.num_timesteps} steps ({self.n_timesteps:.0f} asked)\n"
        print(f"Training time: {line}", end="")
        (Path(self.save_path) / "training_time.txt").write_text(line)

    def _save_config(self, saved_hyperparams: dict) -> None:
        super()._save_config(saved_hyperparams)
        # The zoo records sys.orig_argv, which starts with the interpreter's absolute path.
        command = shlex.join(["python", *sys.argv])
        (Path(self.params_path) / "command.txt").write_text(command + "\n")


def with_default_conf_file(argv: list[str]) -> list[str]:
    """``argv`` with ``--conf-file training/hyperparams/<algo>.yml`` (a path relative to
    the working folder) unless it names one."""
    if any(arg.split("=")[0] in ("-conf", "--conf-file") for arg in argv):
        return argv
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--algo", default="ppo")
    algo = parser.parse_known_args(argv)[0].algo
    return [*argv, "--conf-file", os.path.relpath(HYPERPARAMS / f"{algo}.yml")]


def main(argv: list[str] | None = None) -> None:
    """Run ``rl_zoo3.train`` with ``argv`` (default: the command line) on the batched env."""
    argv = with_default_conf_file(list(sys.argv[1:] if argv is None else argv))
    # rl_zoo3.train.train() reads sys.argv and builds the zoo's ExperimentManager by name:
    # both are swapped for the duration of the call.
    saved = sys.argv, zoo_train.ExperimentManager
    sys.argv = [os.path.relpath(__file__), *argv]
    zoo_train.ExperimentManager = BatchedExperimentManager
    try:
        zoo_train.train()
    finally:
        sys.argv, zoo_train.ExperimentManager = saved


if __name__ == "__main__":
    main()

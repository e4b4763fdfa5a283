"""rl-baselines3-zoo's experiment on the batched env: what ``rigidrot train`` runs.

Importing this module imports rl-baselines3-zoo, stable-baselines3 and torch (the
``[train]`` extra); :mod:`rigidrot_gym.tools.train` imports it only when it trains.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rl_zoo3.exp_manager import ExperimentManager
from stable_baselines3.common.base_class import BaseAlgorithm
from stable_baselines3.common.vec_env import VecEnv, VecFrameStack, VecMonitor

from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv


class BatchedExperimentManager(ExperimentManager):
    """The zoo's experiment, with the training and evaluation envs made by
    :class:`AttitudeSB3VecEnv` instead of a ``DummyVecEnv`` of single envs.

    Same seeding (env i gets ``seed + i`` at its first reset), the same episode monitor
    (``monitor.csv`` in the run folder) and the zoo's normalisation, vec-env wrappers
    and frame stacking on top. The zoo's ``env_wrapper`` hyperparameter wraps single
    envs and has no batched counterpart: it is refused.

    Args:
        *args: the zoo's ``ExperimentManager`` arguments.
        **kwargs: the zoo's ``ExperimentManager`` keyword arguments.
        command: the command line that started the run, as words, written to
            ``command.txt`` in the run's parameter folder.
    """

    def __init__(self, *args: Any, command: Sequence[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.command = list(command)

    def create_envs(self, n_envs: int, eval_env: bool = False, no_log: bool = False) -> VecEnv:
        """``n_envs`` envs in one :class:`AttitudeSB3VecEnv`, wrapped as the zoo wraps its own.

        Raises:
            ValueError: if the hyperparameters name an ``env_wrapper``.
        """
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

    def save_trained_model(self, model: BaseAlgorithm) -> None:
        """The zoo's saving, and the normaliser's statistics also as JSON
        (``vecnormalize.json`` next to its ``vecnormalize.pkl``: read without unpickling,
        :func:`rigidrot_gym.control.agents.load_normalizer`)."""
        from rigidrot_gym.control import agents

        super().save_trained_model(model)
        normalizer = model.get_vec_normalize_env()
        if normalizer is not None:
            agents.save_normalizer(normalizer, Path(self.params_path) / agents.NORMALIZER_JSON)

    def _save_config(self, saved_hyperparams: dict) -> None:
        super()._save_config(saved_hyperparams)
        # The zoo records sys.orig_argv, which starts with the interpreter's absolute path.
        (Path(self.params_path) / "command.txt").write_text(shlex.join(self.command) + "\n")

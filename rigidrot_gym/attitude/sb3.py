"""A stable-baselines3 ``VecEnv`` over the batched attitude core.

stable-baselines3 does not accept Gymnasium vector envs; this thin adapter gives it the
same batched core as :class:`~rigidrot_gym.attitude.vector_env.AttitudeVectorEnv`, with
SB3's conventions: an env that finishes is reset within the same ``step``; its last
observation goes to ``infos[i]["terminal_observation"]`` and
``infos[i]["TimeLimit.truncated"]`` tells a time-out from a real termination. Seeds
follow ``DummyVecEnv``: ``seed(s)`` gives env i the seed ``s + i`` at the next reset.

Importing this module imports stable-baselines3 (the ``[train]`` extra).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn

from rigidrot_gym.attitude import arguments
from rigidrot_gym.attitude.autoreset import Autoreset
from rigidrot_gym.attitude.batch import AttitudeBatch
from rigidrot_gym.attitude.env import resolve_scenario
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.attitude.task import observation_bounds


class AttitudeSB3VecEnv(VecEnv):
    """N attitude-control envs for stable-baselines3, stepped in one batched call.

    Every call checks its arguments before it changes anything, and a step that raises
    leaves every env as it was (see :class:`~rigidrot_gym.attitude.batch.AttitudeBatch`).
    ``env_method("reset", indices=...)`` resets only the selected envs and returns their
    ``(obs, info)``; any other method runs once (the envs share one core) and its result
    is returned for each selected env.

    Args:
        num_envs: N.
        scenario: a registered id, scenario file stem or path, or a ``Scenario``.
        max_episode_steps: overrides the scenario's (the one limit every env class uses).
        integrator_options: options of the scenario's integrator.
        num_threads: threads of the compiled step (see
            :class:`~rigidrot_gym.attitude.batch.AttitudeBatch`; 1 by default).
        **overrides: scenario fields by flat name (``integrator``, ``dt``, ...).
    """

    def __init__(
        self,
        num_envs: int = 1,
        scenario: str | os.PathLike | Scenario = "RigidRot/Reorient-v0",
        max_episode_steps: int | None = None,
        integrator_options: dict[str, Any] | None = None,
        num_threads: int = 1,
        **overrides,
    ):
        if max_episode_steps is not None:
            overrides = {**overrides, "max_episode_steps": max_episode_steps}
        self.scenario = resolve_scenario(scenario, overrides)
        self.batch = AttitudeBatch(self.scenario, num_envs, integrator_options, num_threads)
        self.render_mode = None
        super().__init__(
            self.batch.num_bodies,
            spaces.Box(*observation_bounds(self.scenario), dtype=np.float32),
            spaces.Box(-1.0, 1.0, (self.batch.actuators.count,), dtype=np.float32),
        )
        self.batch.rngs = [seeding.np_random()[0] for _ in range(self.num_envs)]
        self._autoreset = Autoreset(self.batch, AutoresetMode.SAME_STEP)
        self._actions: np.ndarray | None = None
        # What the next reset() uses, set through SB3's public seed() and set_options().
        self._next_seeds: list[int | None] = [None] * self.num_envs
        self._next_options: list[dict] = [{} for _ in range(self.num_envs)]

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """SB3's ``seed``: env i gets ``seed + i`` at the next reset (a random base if None)."""
        seeds = list(super().seed(seed))
        self._next_seeds = seeds
        return seeds

    def set_options(self, options: list[dict] | dict | None = None) -> None:
        """SB3's ``set_options``: reset options for the next reset, one dict for every env
        or one per env."""
        super().set_options(options)
        options = {} if options is None else options
        per_env = [options] * self.num_envs if isinstance(options, dict) else list(options)
        self._next_options = copy.deepcopy(per_env)

    def reset(self):
        # checked, every env, before any changes
        seeds = [arguments.seed(s, f"seed of env {i}") for i, s in enumerate(self._next_seeds)]
        fixed = [arguments.reset_options(o or None) for o in self._next_options]
        self.batch.rngs = [
            self.batch.rngs[i] if seed is None else seeding.np_random(seed)[0] for i, seed in enumerate(seeds)
        ]
        result = self._autoreset.reset(fixed)  # a list: the envs without options drawn together
        self._next_seeds = [None] * self.num_envs
        self._next_options = [{} for _ in range(self.num_envs)]
        self.reset_infos = result.infos()
        return result.obs

    def step_async(self, actions: np.ndarray) -> None:
        shape = (self.num_envs, self.batch.actuators.count)
        self._actions = arguments.actions(actions, shape, "actions")

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("call step_async() before step_wait()")
        autoreset = self._autoreset
        try:
            result = autoreset.step(self._actions)  # raises before anything changes
        finally:
            self._actions = None
        infos = result.infos()
        for info, terminated, truncated in zip(
            infos, result.terminated.tolist(), result.truncated.tolist(), strict=True
        ):
            info["TimeLimit.truncated"] = truncated and not terminated  # as DummyVecEnv
        for j, i in enumerate(autoreset.restarted.tolist()):
            infos[i]["terminal_observation"] = autoreset.final_obs[j]
            self.reset_infos[i] = autoreset.fresh.info(i)
        return result.obs, result.reward.astype(np.float32), autoreset.ended, infos

    def close(self) -> None:
        """Nothing to release: the batch holds only arrays."""

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The adapter's attribute, once per selected env (all envs share one core)."""
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set an attribute of the shared core (for every env: they cannot differ)."""
        setattr(self, attr_name, value)

    def env_method(
        self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs
    ) -> list[Any]:
        """``"reset"``: reset the selected envs only (``seed=``, ``options=`` as a Gymnasium
        env's ``reset``) and return their ``(obs, info)``. Any other method of the adapter
        runs once, and its result is returned for each selected env."""
        rows = list(self._get_indices(indices))
        if method_name == "reset":
            return self._reset_envs(rows, *method_args, **method_kwargs)
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in rows]

    def _reset_envs(
        self, rows: list[int], seed: int | None = None, options: dict | None = None
    ) -> list[tuple]:
        """Reset the envs ``rows`` as each one's ``reset(seed=seed, options=options)``."""
        seed, fixed = arguments.seed(seed), arguments.reset_options(options)
        indices = np.asarray(rows, dtype=np.int64)
        if seed is not None:
            fresh = {i: seeding.np_random(seed)[0] for i in rows}
            self.batch.rngs = [fresh.get(i, rng) for i, rng in enumerate(self.batch.rngs)]
        self.batch.restart(indices, fixed)
        result = self.batch.result()
        for i in rows:
            self.reset_infos[i] = result.info(i)
        return [(result.obs[i], result.info(i)) for i in rows]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> Sequence[bool]:
        """The envs are not Gymnasium envs and carry no wrappers."""
        return [False for _ in self._get_indices(indices)]

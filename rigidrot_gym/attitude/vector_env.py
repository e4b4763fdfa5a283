"""The attitude-control task as a native Gymnasium vector env: N bodies per batched call."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from rigidrot_gym.attitude.batch import AttitudeBatch, StepResult
from rigidrot_gym.attitude.env import close_renderer, configure, renderer_of
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.attitude.task import observation_bounds


def row_generators(seed: int | list[int | None] | None, n: int) -> list[np.random.Generator]:
    """One generator per body: body i gets ``seed + i`` (or ``seed[i]``), as body i of a
    ``SyncVectorEnv`` would, so row i repeats a single env seeded the same way."""
    if seed is None:
        seeds: list[int | None] = [None] * n
    elif isinstance(seed, int | np.integer):
        seeds = [int(seed) + i for i in range(n)]
    else:
        seeds = list(seed)
        if len(seeds) != n:
            raise ValueError(f"seed must be an int, None or a list of {n} seeds, got {len(seeds)} seeds")
    return [seeding.np_random(s)[0] for s in seeds]


class AttitudeVectorEnv(VectorEnv):
    """N independent copies of :class:`~rigidrot_gym.attitude.env.AttitudeEnv` stepped in
    one batched call of the shared core (see its docstring for spaces, reward and episode
    end). Next-step autoreset: the step after an episode ends returns the new episode's
    first observation with reward 0 and both flags false, ignoring that row's action.

    ``info`` holds arrays over the envs: ``pointing_error_deg``, ``rate``, ``is_success``
    and, with reaction wheels, ``wheel_momentum`` and ``wheel_saturated`` (with
    Gymnasium's ``_key`` masks, all true).

    Rendering (``[render]`` extra): ``"rgb_array"`` returns one frame per env (Gymnasium's
    vector convention, which its vector ``RecordVideo`` tiles into a grid; each frame
    costs ≈5 ms at 320×240, so render small batches); ``"human"`` shows env 0.
    """

    metadata = {
        "render_modes": ["rgb_array", "human"],
        "render_fps": 30,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self,
        num_envs: int = 1,
        scenario: str | Scenario = "RigidRot/Reorient-v0",
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
        integrator_options: dict[str, Any] | None = None,
        render_options: dict[str, Any] | None = None,
        **overrides,
    ):
        configure(self, scenario, overrides, render_mode, render_options)
        limit = self.scenario.max_episode_steps if max_episode_steps is None else max_episode_steps
        self.batch = AttitudeBatch(self.scenario, num_envs, limit, integrator_options)
        self.num_envs = self.batch.num_bodies
        self.single_action_space = spaces.Box(-1.0, 1.0, (self.batch.actuators.count,), dtype=np.float32)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.single_observation_space = spaces.Box(*observation_bounds(self.scenario), dtype=np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._autoreset = np.zeros(self.num_envs, dtype=bool)
        self._ready = False

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None):
        super().reset(seed=seed if isinstance(seed, int | None) else None)
        self.batch.rngs = row_generators(seed, self.num_envs)
        self.batch.reset_rows(np.arange(self.num_envs), options)
        self._autoreset[:] = False
        self._ready = True
        self.batch.observe()
        result = self.batch.result()
        return result.obs, self._info(result)

    def step(self, actions):
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        actions = np.asarray(actions)
        if actions.shape != self.action_space.shape:
            raise ValueError(f"actions must have shape {self.action_space.shape}, got shape {actions.shape}")
        self.batch.step(actions)
        rows = np.flatnonzero(self._autoreset)
        if rows.size:
            self.batch.restart(rows)
        result = self.batch.result()
        if rows.size:
            result.reward[rows] = 0.0
            result.terminated[rows] = False
            result.truncated[rows] = False
        self._autoreset = result.terminated | result.truncated
        if self.render_mode == "human":
            self.render()
        return result.obs, result.reward, result.terminated, result.truncated, self._info(result)

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One frame per env (``"rgb_array"``), or env 0 drawn in the window (``"human"``)."""
        if self.render_mode is None:
            return None
        if not self._ready:
            raise RuntimeError("call reset() before render()")
        q, w = self.batch.body_state()
        renderer = renderer_of(self)
        if self.render_mode == "human":
            renderer.render(q[0], w[0], self.batch.target[0])
            return None
        return tuple(renderer.render(q[i], w[i], self.batch.target[i]) for i in range(self.num_envs))

    def close_extras(self, **kwargs):
        close_renderer(self)

    def _info(self, result: StepResult) -> dict[str, np.ndarray]:
        present = np.ones(self.num_envs, dtype=bool)
        info: dict[str, np.ndarray] = {}
        for key, value in result.info_arrays().items():
            info[key], info[f"_{key}"] = value, present
        return info

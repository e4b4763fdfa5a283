"""The attitude-control task as a native Gymnasium vector env: N bodies per batched call."""

from __future__ import annotations

import numbers
import os
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from rigidrot_gym.attitude import arguments
from rigidrot_gym.attitude.autoreset import Autoreset
from rigidrot_gym.attitude.batch import AttitudeBatch
from rigidrot_gym.attitude.env import ScenarioSpec, close_renderer, configure, render_frames
from rigidrot_gym.attitude.result import StepResult
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.attitude.task import ObservationColumns, observation_bounds, observation_columns


def row_generators(seeds: list[int | None], rngs: list[np.random.Generator]) -> list[np.random.Generator]:
    """One generator per body: a new one for each row given a seed (or every row, before
    the first reset), else the row's own one, which goes on with its stream (as a
    ``SyncVectorEnv``'s envs do on ``reset()`` without a seed), so row i repeats a single
    env seeded the same way."""
    return [seeding.np_random(s)[0] if s is not None or not rngs else rngs[i] for i, s in enumerate(seeds)]


class AttitudeVectorEnv(VectorEnv):
    """N independent copies of :class:`~rigidrot_gym.attitude.env.AttitudeEnv` stepped in
    one batched call of the shared core (see its docstring for spaces, reward and episode
    end). Next-step autoreset: the step after an episode ends returns the new episode's
    first observation with reward 0 and both flags false, ignoring that row's action (it
    is neither read nor integrated, so a NaN there is ignored too).

    ``info`` holds arrays over the envs: ``pointing_error_deg``, ``rate``, ``is_success``
    and, with reaction wheels, ``wheel_momentum`` and ``wheel_saturated`` (with
    Gymnasium's ``_key`` masks, all true).

    ``max_episode_steps`` overrides the scenario's (the one limit every env class uses).
    ``num_threads`` > 1 runs the step on that many of numba's threads (scenarios without
    realism options; see :class:`~rigidrot_gym.attitude.batch.AttitudeBatch`), bitwise as
    on one.
    ``reset(seed=s)`` seeds row i with s + i (or with ``seed[i]`` for a list); ``reset()``
    without a seed goes on with each row's generator. A call that raises leaves the env
    as it was; after ``close()`` every call but ``close()`` raises.

    Rendering (``[render]`` extra): ``"rgb_array"`` returns one frame per env (Gymnasium's
    vector convention, which its vector ``RecordVideo`` tiles into a grid; each frame
    costs ≈15–20 ms at the default 640×480 and ≈5 ms at 320×240 (``render_options``),
    so render small batches), each showing its own Sun and nadir and its own thrusters'
    plumes, each with its own readout under
    ``render_options={"overlay": True}``; ``"human"`` shows env 0.
    """

    metadata = {
        "render_modes": ["rgb_array", "human"],
        "render_fps": 30,
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }
    spec = ScenarioSpec()

    def __init__(
        self,
        num_envs: int = 1,
        scenario: str | os.PathLike | Scenario = "RigidRot/Reorient-v0",
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
        integrator_options: dict[str, Any] | None = None,
        num_threads: int = 1,
        render_options: dict[str, Any] | None = None,
        **overrides,
    ):
        if max_episode_steps is not None:
            overrides = {**overrides, "max_episode_steps": max_episode_steps}
        configure(self, scenario, overrides, render_mode, render_options)
        self.batch = AttitudeBatch(self.scenario, num_envs, integrator_options, num_threads)
        self.num_envs = self.batch.num_bodies
        self.single_action_space = spaces.Box(-1.0, 1.0, (self.batch.actuators.count,), dtype=np.float32)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.single_observation_space = spaces.Box(*observation_bounds(self.scenario), dtype=np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._autoreset = Autoreset(self.batch, self.metadata["autoreset_mode"])
        self._present = np.ones(self.num_envs, dtype=bool)  # the info masks' template
        self._ready = False

    def reset(self, *, seed: int | list[int | None] | None = None, options: dict | None = None):
        self._check_open()
        seeds = arguments.row_seeds(seed, self.num_envs)  # checked before anything changes
        fixed = arguments.reset_options(options)
        super().reset(seed=seeds[0] if seeds is not None and isinstance(seed, numbers.Integral) else None)
        self.batch.rngs = row_generators(seeds or [None] * self.num_envs, self.batch.rngs)
        result = self._autoreset.reset(fixed)
        self._ready = True
        return result.obs, self._info(result)

    def step(self, actions):
        self._check_open()
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        actions = arguments.actions(actions, self.action_space.shape, "actions")
        # The rows whose episodes ended restart in the same call, with reward 0 and both
        # flags false; it raises before anything changes.
        result = self._autoreset.step(actions)
        if self.render_mode == "human":
            self.render()
        return result.obs, result.reward, result.terminated, result.truncated, self._info(result)

    def render(self) -> tuple[np.ndarray, ...] | None:
        """One frame per env (``"rgb_array"``), or env 0 drawn in the window (``"human"``)."""
        self._check_open()
        if self.render_mode is None:
            return None
        if not self._ready:
            raise RuntimeError("call reset() before render()")
        frames = render_frames(self, 1 if self.render_mode == "human" else self.num_envs)
        return None if self.render_mode == "human" else tuple(frames)

    def close_extras(self, **kwargs):
        close_renderer(self)

    def observation_columns(self) -> tuple[ObservationColumns, ...]:
        """The blocks of each row of the observation in column order, as
        :meth:`~rigidrot_gym.attitude.env.AttitudeEnv.observation_columns` gives them."""
        return observation_columns(self.scenario)

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("this vector env is closed; make a new one")

    def _info(self, result: StepResult) -> dict[str, np.ndarray]:
        present = self._present.copy()  # a copy: a fraction of np.ones' cost
        info: dict[str, np.ndarray] = {}
        for key, value in result.info_arrays().items():
            info[key], info[f"_{key}"] = value, present
        return info

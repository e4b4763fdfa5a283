"""The policies of the control benchmark by name, in a form that travels to Ray workers.

A policy maker is called with a scenario and returns a policy (SB3's ``predict()``) or
None where the policy does not apply. Two kinds, both small when pickled:

* :class:`ControllerMaker`: a controller of :data:`rigidrot_gym.control.CONTROLLERS` by
  name; a worker builds it from the name.
* :class:`AgentMaker`: a zoo training run's files (``<env>.zip`` and ``<env>/``'s
  ``args.yml``, ``config.yml``, ``vecnormalize.pkl``) held as bytes. Shipped once to the
  object store, they reach each worker as bytes; a process loads the agent from them
  once and keeps it (keyed by the files' digest), so no task trains, loads or pickles
  an agent again. The agent predicts on one torch thread: how a matrix product is split
  over threads changes its rounding (measured: 3.6e-7 on a batch of 5 with 2 threads
  against 1), and a campaign must give the same bits in any process.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.control import CONTROLLERS, agents

# The files of a zoo run's parameter folder that rebuild its agent (agents.load).
AGENT_FILES = ("args.yml", "config.yml", "vecnormalize.pkl")

# Agents loaded in this process, by the digest of their files.
_LOADED: dict[str, Any] = {}


class ControllerMaker:
    """Builds the controller ``name`` of :data:`CONTROLLERS` for a scenario."""

    def __init__(self, name: str):
        if name not in CONTROLLERS:
            raise ValueError(f"controller must be one of {sorted(CONTROLLERS)}, got {name!r}")
        self.name = name
        self.fingerprint = name

    def __call__(self, scenario: Scenario):
        return CONTROLLERS[self.name](scenario)


class AgentMaker:
    """A trained agent, as the bytes of its run folder's files.

    Args:
        run_dir: a run folder of ``rl_zoo3.train`` / ``training/train.py``
            (e.g. ``training/agents/ppo/RigidRot-Reorient-v0_1``).

    Raises:
        FileNotFoundError: if ``run_dir`` is not a zoo run folder.
    """

    def __init__(self, run_dir: str | Path):
        model, params = agents.run_files(run_dir)
        self.files = {model.name: model.read_bytes()}
        for name in AGENT_FILES:
            if (params / name).exists():
                self.files[f"{params.name}/{name}"] = (params / name).read_bytes()
        digest = hashlib.sha256()
        for name in sorted(self.files):
            digest.update(name.encode() + b"\0" + self.files[name])
        self.fingerprint = f"agent:{digest.hexdigest()[:16]}"

    def agent(self):
        """The agent, loaded once per process from the files."""
        if self.fingerprint not in _LOADED:
            with tempfile.TemporaryDirectory(prefix="rigidrot-agent-") as folder:
                for name, data in self.files.items():
                    (Path(folder) / name).parent.mkdir(exist_ok=True)
                    (Path(folder) / name).write_bytes(data)
                _LOADED[self.fingerprint] = agents.load(folder)
        return _LOADED[self.fingerprint]

    def __call__(self, scenario: Scenario) -> OneThread | None:
        agent = self.agent().for_scenario(scenario)
        return None if agent is None else OneThread(agent)


class OneThread:
    """A policy whose ``predict()`` runs with torch limited to one thread (restored after)."""

    def __init__(self, policy):
        self.policy = policy

    def predict(self, observation, state: Any = None, episode_start=None, deterministic: bool = True):
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return self.policy.predict(observation, state, episode_start, deterministic)
        finally:
            torch.set_num_threads(threads)


def resolve(names: list[str]) -> dict[str, ControllerMaker | AgentMaker]:
    """Policy makers by display name: controller names as they are, agent folders as
    ``agent <algo folder>/<run folder>`` (the zoo's layout, e.g. ``agent ppo/RigidRot-Reorient-v0_1``).

    Raises:
        ValueError: for a name that is neither a controller nor a folder.
    """
    makers: dict[str, ControllerMaker | AgentMaker] = {}
    for name in names:
        if name in CONTROLLERS:
            makers[name] = ControllerMaker(name)
        elif Path(name).is_dir():
            folder = Path(name).resolve()
            makers[f"agent {folder.parent.name}/{folder.name}"] = AgentMaker(name)
        else:
            raise ValueError(
                f"policy {name!r} is neither a controller ({', '.join(CONTROLLERS)}) nor a run folder"
            )
    return makers


def why_left_out(names: Sequence[str], scenario: Scenario) -> str:
    """Why the policies ``names`` (controller names, agents' display names) give no policy
    for ``scenario``, as ``rigidrot evaluate --compare`` and ``rigidrot bench control`` say it."""
    controllers = [name for name in names if name in CONTROLLERS]
    others = [name for name in names if name not in CONTROLLERS]
    reasons = []
    if controllers:
        fit = [name for name, make in CONTROLLERS.items() if make(scenario) is not None]
        reasons.append(
            f"{', '.join(controllers)} cannot command the actuators of {scenario.id}; "
            f"the controllers that can: {', '.join(fit) or 'none'}"
        )
    if others:
        reasons.append(
            f"{', '.join(others)} on {scenario.id}: "
            "a trained agent runs only on the scenario it was trained on"
        )
    return "; ".join(reasons)

"""A controller of one's own, outside rigidrot_gym: the example of docs/controllers.md.

With this folder's ``my_gnc/`` in the current folder (or on ``PYTHONPATH``)::

    rigidrot bench control --policies my_gnc.controller:MyPD quaternion_feedback
"""

import numpy as np


class MyPD:
    """u = −k δq_v − c ω, over the torque limits, read from the observation: the error
    quaternion's x, y, z in columns 1–3, ω / max_rate in columns 4–6."""

    def __init__(self, max_torque, max_rate, k=0.02, c=0.05):
        self.max_torque = np.asarray(max_torque, dtype=float)
        self.max_rate, self.k, self.c = max_rate, k, c

    @classmethod
    def for_scenario(cls, scenario):
        """Torquers only: None (left out) on a scenario with wheels or magnetorquers."""
        if scenario.wheels or scenario.magnetorquers:
            return None
        return cls(scenario.max_torque, scenario.max_rate)

    def predict(self, observation, state=None, episode_start=None, deterministic=True):
        """Stable-baselines3's predict(): actions (N, 3) in [-1, 1] for observations (N, 7)."""
        obs = np.asarray(observation, dtype=float)
        torque = -self.k * obs[..., 1:4] - self.c * obs[..., 4:7] * self.max_rate
        return np.clip(torque / self.max_torque, -1.0, 1.0).astype(np.float32), state

"""Every scenario file in ``envs/`` becomes a Gymnasium id at ``import rigidrot_gym``.

Gymnasium ≥ 1.0 has no entry-point plugin hook, so the package registers its ids when it
is imported; ``gym.make("rigidrot_gym:RigidRot/Reorient-v0")`` imports it on demand.
"""

from __future__ import annotations

import gymnasium as gym

from rigidrot_gym.scenario import builtin

ENTRY_POINT = "rigidrot_gym.attitude_env:AttitudeEnv"
VECTOR_ENTRY_POINT = "rigidrot_gym.attitude_vector_env:AttitudeVectorEnv"


def register_scenarios() -> list[str]:
    """Register the built-in scenarios (once); return their ids."""
    ids = []
    for scenario in builtin():
        if scenario.id not in gym.registry:
            gym.register(
                id=scenario.id,
                entry_point=ENTRY_POINT,
                vector_entry_point=VECTOR_ENTRY_POINT,
                max_episode_steps=scenario.max_episode_steps,
                kwargs={"scenario": scenario.id},
            )
        ids.append(scenario.id)
    return ids

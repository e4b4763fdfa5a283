"""rigidrot_gym: accurate quaternion integrators for rigid-body rotation, and a spacecraft
attitude-control Gymnasium environment built on them.

Conventions are stated once, in :mod:`rigidrot_gym.quaternion`. Importing the package
registers the environment ids of the scenario files (``RigidRot/Reorient-v0``, ...).
"""

from rigidrot_gym.propagate import propagate
from rigidrot_gym.registration import register_scenarios
from rigidrot_gym.trajectory import Trajectory

__version__ = "0.1.0"
__all__ = ["ENV_IDS", "Trajectory", "propagate"]

ENV_IDS = register_scenarios()

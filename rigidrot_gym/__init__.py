"""rigidrot_gym: accurate quaternion integrators for rigid-body rotation.

Conventions are stated once, in :mod:`rigidrot_gym.quaternion`.
"""

__version__ = "0.1.0"

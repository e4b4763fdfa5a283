"""Foreign physics engines wrapped as methods of :mod:`rigidrot_gym.physics.integrators`.

Each module here holds one engine behind the same :class:`~rigidrot_gym.physics.integrators.Method`
interface as our own methods, registered by name on import of this package (which the
top-level ``import rigidrot_gym`` does). The engine itself is imported only when a method
runs, so an engine that is not installed costs nothing until it is asked for, and then
raises ``DependencyNotInstalled`` naming the extra that installs it.

* :mod:`~rigidrot_gym.engines.bullet`: PyBullet (``"pybullet"``; ``[render]`` extra).
"""

from rigidrot_gym.engines import bullet
from rigidrot_gym.physics import integrators

for _module in (bullet,):
    integrators.register(_module.METHOD)

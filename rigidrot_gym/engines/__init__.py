"""Foreign physics engines wrapped as methods of :mod:`rigidrot_gym.physics.rotation.integrators`.

Each module here holds one engine behind the same :class:`~rigidrot_gym.physics.rotation.integrators.Method`
interface as our own methods, registered on import of this package (which the top-level
``import rigidrot_gym`` does). The engine itself is imported only when a method runs, so
an engine that is not installed costs nothing until it is asked for, and then raises
``DependencyNotInstalled`` naming the extra that installs it.

One registered name per engine variant, ``<engine>_<variant>`` (the engine's default
variant may drop the suffix), accepted wherever a method name is (``propagate(...,
method=...)``, ``gym.make(id, integrator=...)``):

* :mod:`~rigidrot_gym.engines.bullet`: PyBullet, ``"pybullet"`` (multibody) and
  ``"pybullet_maximal"`` (maximal-coordinates rigid body); ``[render]`` extra.
* :mod:`~rigidrot_gym.engines.mujoco`: MuJoCo, ``"mujoco_euler"``,
  ``"mujoco_implicitfast"``, ``"mujoco_implicit"``, ``"mujoco_rk4"``; ``[mujoco]`` extra.
* :mod:`~rigidrot_gym.engines.basilisk`: Basilisk, ``"basilisk_rk4"``,
  ``"basilisk_rkf45"``, ``"basilisk_rkf78"``; ``[basilisk]`` extra.

Engine state (clients, models, hubs) is kept per thread (:mod:`~rigidrot_gym.engines.local`).
"""

from rigidrot_gym.engines import basilisk, bullet, mujoco
from rigidrot_gym.physics.rotation import integrators

for _module in (bullet, mujoco, basilisk):
    for _method in _module.METHODS:
        integrators.register(_method)

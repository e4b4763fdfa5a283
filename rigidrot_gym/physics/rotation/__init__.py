"""The rigid body's rotation: its conventions, its dynamics, its exact solution and the methods
that integrate it.

Bottom up:

* :mod:`~rigidrot_gym.physics.rotation.quaternion` (the conventions, batched quaternion
  functions) and :mod:`~rigidrot_gym.physics.rotation.vector` (component-wise 3-vector algebra);
* :mod:`~rigidrot_gym.physics.rotation.inertia` (shapes, composition, principal axes),
  :mod:`~rigidrot_gym.physics.rotation.dynamics` (Euler's equations and the kinematics),
  :mod:`~rigidrot_gym.physics.rotation.torques` (compiled torque terms and potentials);
* :mod:`~rigidrot_gym.physics.rotation.elliptic` and :mod:`~rigidrot_gym.physics.rotation.exact`
  (the exact torque-free motion);
* :mod:`~rigidrot_gym.physics.rotation.nystrom` (the Runge–Kutta–Nyström step that the ``rkn``
  method and the translation share);
* :mod:`~rigidrot_gym.physics.rotation.integrators` (the methods, chosen by name),
  :mod:`~rigidrot_gym.physics.rotation.propagate` and
  :mod:`~rigidrot_gym.physics.rotation.trajectory`;
* beside them: :mod:`~rigidrot_gym.physics.rotation.linear` and
  :mod:`~rigidrot_gym.physics.rotation.rigid_body` (translation, and translation coupled with
  rotation), :mod:`~rigidrot_gym.physics.rotation.heavy_top`,
  :mod:`~rigidrot_gym.physics.rotation.extrapolation` (torque known only at the main steps).

The integrators live here, not on a floor of their own: they step Euler's equations with the
torque terms and the exact solution of this floor, and ``propagate`` and the rigid body's
translation, also here, run them.
"""

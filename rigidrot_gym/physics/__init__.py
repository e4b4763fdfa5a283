"""The physics of the seeds, usable without Gymnasium: rigid-body rotation and its integrators,
and the orbit environment of a spacecraft.

Modules, bottom up:

* :mod:`~rigidrot_gym.physics.quaternion` (the conventions, batched quaternion functions),
  :mod:`~rigidrot_gym.physics.vector` (component-wise 3-vector algebra),
  :mod:`~rigidrot_gym.physics.jit` (one source run as numpy or compiled by numba),
  :mod:`~rigidrot_gym.physics.validation` (argument checks);
* :mod:`~rigidrot_gym.physics.inertia` (shapes, composition, principal axes),
  :mod:`~rigidrot_gym.physics.dynamics` (Euler's equations and the kinematics),
  :mod:`~rigidrot_gym.physics.torques` (compiled torque terms and potentials);
* :mod:`~rigidrot_gym.physics.elliptic` and :mod:`~rigidrot_gym.physics.exact` (the exact
  torque-free motion);
* :mod:`~rigidrot_gym.physics.integrators` (the methods, chosen by name),
  :mod:`~rigidrot_gym.physics.propagate` and :mod:`~rigidrot_gym.physics.trajectory`;
* beside them: :mod:`~rigidrot_gym.physics.nystrom`, :mod:`~rigidrot_gym.physics.linear`,
  :mod:`~rigidrot_gym.physics.rigid_body` (translation, and translation coupled with
  rotation), :mod:`~rigidrot_gym.physics.heavy_top`,
  :mod:`~rigidrot_gym.physics.extrapolation` (torque known only at the main steps);
* the spacecraft's surroundings: :mod:`~rigidrot_gym.physics.earth` (constants, time,
  the Earth-fixed frame), :mod:`~rigidrot_gym.physics.orbit` (Keplerian orbits with J₂
  drift), :mod:`~rigidrot_gym.physics.geomagnetic` (the IGRF centred dipole) and
  :mod:`~rigidrot_gym.physics.sun` (the Sun's position and the Earth's shadow); the
  actuators' models: :mod:`~rigidrot_gym.physics.reaction_wheels` (motor and friction);
  the sensors' models: :mod:`~rigidrot_gym.physics.gyro` (angle and rate random walk),
  :mod:`~rigidrot_gym.physics.star_tracker` (noise-equivalent angles, exclusion cones),
  :mod:`~rigidrot_gym.physics.magnetometer` and :mod:`~rigidrot_gym.physics.sun_sensors`
  (coarse Sun sensors); the estimator: :mod:`~rigidrot_gym.physics.mekf` (the
  multiplicative EKF of attitude and gyro bias).

Nothing here imports Gymnasium, PyBullet, torch or matplotlib.
"""

from rigidrot_gym.physics.exact import torque_free
from rigidrot_gym.physics.propagate import propagate
from rigidrot_gym.physics.trajectory import Trajectory

__all__ = ["Trajectory", "propagate", "torque_free"]

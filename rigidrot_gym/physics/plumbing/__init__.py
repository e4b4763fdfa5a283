"""The compiler's plumbing, and nothing of the physics: the floor below every other.

* :mod:`~rigidrot_gym.physics.plumbing.jit`: one source run as numpy or compiled by numba,
  the kernels' options, their on-disk cache and its stamp;
* :mod:`~rigidrot_gym.physics.plumbing.numba_compat`: the internals of numba and llvmlite that
  ``jit`` relies on, each left out with a warning where a release lacks it;
* :mod:`~rigidrot_gym.physics.plumbing.quiet`: what C libraries print to the standard streams,
  kept off standard output (PyBullet's banner);
* :mod:`~rigidrot_gym.physics.plumbing.validation`: the argument checks of every public entry
  point, each ``ValueError`` naming its argument.
"""

"""The attitude-control task for Gymnasium and stable-baselines3.

* :mod:`~rigidrot_gym.attitude.scenario` (the task as data, read from ``envs/*.toml``) and
  :mod:`~rigidrot_gym.attitude.registration` (each scenario becomes an id);
* the realism options: :mod:`~rigidrot_gym.attitude.actuators`,
  :mod:`~rigidrot_gym.attitude.disturbances`, :mod:`~rigidrot_gym.attitude.randomization`,
  :mod:`~rigidrot_gym.attitude.variates` (counter-based noise);
* the batched core: :mod:`~rigidrot_gym.attitude.task` (spaces, reward, output columns),
  :mod:`~rigidrot_gym.attitude.starts` (episode starts), the compiled per-step kernels
  :mod:`~rigidrot_gym.attitude.actuation`, :mod:`~rigidrot_gym.attitude.observation` and
  :mod:`~rigidrot_gym.attitude.assessment`, :mod:`~rigidrot_gym.attitude.staging` (a step
  staged in scratch arrays, checked, then committed), :mod:`~rigidrot_gym.attitude.arguments`
  (checks of actions, reset options and seeds) and :mod:`~rigidrot_gym.attitude.batch`
  (:class:`~rigidrot_gym.attitude.batch.AttitudeBatch`, the bookkeeping);
* the envs over that core: :mod:`~rigidrot_gym.attitude.env` (single),
  :mod:`~rigidrot_gym.attitude.vector_env` (native vector env) and
  :mod:`~rigidrot_gym.attitude.sb3` (stable-baselines3 ``VecEnv``).

Importing this package imports nothing heavy; the env modules import Gymnasium.
"""

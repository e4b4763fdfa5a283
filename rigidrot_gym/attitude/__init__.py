"""The attitude-control task for Gymnasium and stable-baselines3, in layers (each imports
only the ones above it in this list):

* the task as data: :mod:`~rigidrot_gym.attitude.settings` (how a scenario's settings are
  declared), :mod:`~rigidrot_gym.attitude.scenario` (the scenario, read from
  ``envs/*.toml``), :mod:`~rigidrot_gym.attitude.data` (the named records a control period
  reads and writes), :mod:`~rigidrot_gym.attitude.actuators` (a scenario's actuators, as
  controllers see them), :mod:`~rigidrot_gym.attitude.task` (spaces, rules, reward bounds);
* randomness: :mod:`~rigidrot_gym.attitude.draws` (each body's generator, from compiled
  code), :mod:`~rigidrot_gym.attitude.variates` (normals and counter-based noise),
  :mod:`~rigidrot_gym.attitude.starts` (episode starts),
  :mod:`~rigidrot_gym.attitude.randomization` (domain randomisation);
* the components of a control period, one module each:
  :mod:`~rigidrot_gym.attitude.components` (torquers, actions, delay, actuator noise,
  wheels, loads, disturbances, gravity gradient, integration, sensors, evaluation,
  restart);
* :mod:`~rigidrot_gym.attitude.pipeline`: the components composed into one compiled call
  per control period;
* the batched core, :class:`~rigidrot_gym.attitude.batch.AttitudeBatch`, assembled in
  :mod:`~rigidrot_gym.attitude.batch` (the bodies' data and equipment) from its parts:
  :mod:`~rigidrot_gym.attitude.views` (the bodies by rows),
  :mod:`~rigidrot_gym.attitude.transport` (the records to the compiled call) and
  :mod:`~rigidrot_gym.attitude.engine_period` (an engine between its two parts),
  :mod:`~rigidrot_gym.attitude.period` (control periods and their errors),
  :mod:`~rigidrot_gym.attitude.autoreset` (episode starts and the autoreset, by
  Gymnasium's modes) and :mod:`~rigidrot_gym.attitude.result` (the one result type every
  env reads);
* the envs over that core: :mod:`~rigidrot_gym.attitude.env` (single),
  :mod:`~rigidrot_gym.attitude.vector_env` (native vector env) and
  :mod:`~rigidrot_gym.attitude.sb3` (stable-baselines3 ``VecEnv``), with
  :mod:`~rigidrot_gym.attitude.arguments` (checks of actions, reset options and seeds) and
  :mod:`~rigidrot_gym.attitude.registration` (each scenario becomes an id).

Importing this package imports nothing heavy; the env modules import Gymnasium.
"""

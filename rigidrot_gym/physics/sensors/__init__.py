"""The sensors' models, each a reading of the true state and of the environment:
:mod:`~rigidrot_gym.physics.sensors.gyro` (angle and rate random walk),
:mod:`~rigidrot_gym.physics.sensors.star_tracker` (noise-equivalent angles, exclusion cones),
:mod:`~rigidrot_gym.physics.sensors.magnetometer` and
:mod:`~rigidrot_gym.physics.sensors.sun_sensors` (coarse Sun sensors).
"""

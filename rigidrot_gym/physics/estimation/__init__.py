"""Estimators over the sensors' readings: :mod:`~rigidrot_gym.physics.estimation.mekf` (the
multiplicative EKF of attitude and gyro bias)."""

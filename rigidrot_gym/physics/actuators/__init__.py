"""The actuators' models: :mod:`~rigidrot_gym.physics.actuators.reaction_wheels` (Basilisk's
wheel motor and friction)."""

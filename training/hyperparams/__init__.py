"""rl-baselines3-zoo hyperparameter files (``<algo>.yml``, keyed by env id), shipped in the
wheel as ``rigidrot_gym.hyperparams``: the default ``--conf-file`` of ``rigidrot train``.

This file makes the folder a package in an editable install too, so that
``importlib.resources.files("rigidrot_gym.hyperparams")`` finds it there as well.
"""

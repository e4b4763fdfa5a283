"""Shared pytest configuration."""

from __future__ import annotations

# ----------------------------------------------------------------- env property tests: begin
# Hypothesis profiles of tests/test_env_properties.py. CI runs "rigidrot-env-ci": a few
# examples per property, derandomised (the same examples on every run) and without an
# example database (nothing written to the checkout). The long profile, many random
# examples (minutes), runs on demand:
#     RIGIDROT_HYPOTHESIS=long python -m pytest tests/test_env_properties.py
from hypothesis import HealthCheck, settings

settings.register_profile(
    "rigidrot-env-ci",
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "rigidrot-env-long",
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# ----------------------------------------------------------------- env property tests: end

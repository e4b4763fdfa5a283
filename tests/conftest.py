"""Shared pytest configuration: the hypothesis profiles of the property tests.

"ci" (the default): 25 examples per property, derandomised (the same examples on every
run) and without an example database (nothing written to the checkout), so CI is quick
and repeatable. "long": many random examples, minutes, on demand:

    HYPOTHESIS_PROFILE=long python -m pytest tests/test_properties.py tests/test_env_properties.py
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile(
    "ci", max_examples=25, deadline=None, derandomize=True, database=None, suppress_health_check=_SLOW_IS_FINE
)
settings.register_profile("long", max_examples=2000, deadline=None, suppress_health_check=_SLOW_IS_FINE)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

"""Shared pytest configuration."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

# ---- hypothesis profiles (physics property tests) ------------------------------------------
# "ci" (the default): few examples, derandomised, so that CI is quick and repeatable.
# "long" (HYPOTHESIS_PROFILE=long): many random examples, for a search on demand.
_SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile(
    "ci", max_examples=25, deadline=None, derandomize=True, suppress_health_check=_SLOW_IS_FINE
)
settings.register_profile("long", max_examples=2000, deadline=None, suppress_health_check=_SLOW_IS_FINE)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
# ---- end of hypothesis profiles --------------------------------------------------------------

"""Benchmarks of the integrators: accuracy against cost (``rigidrot bench ...``)."""

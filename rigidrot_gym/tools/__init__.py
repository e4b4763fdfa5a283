"""What a user runs: the command line (``rigidrot``), the demo, the cross-check of engines
against the exact solution, and the benchmarks (:mod:`~rigidrot_gym.tools.bench`)."""

"""The Python API (`accord.evals`): Autoblocks-style test suites run on the engine."""

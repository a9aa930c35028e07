"""Fixtures of the comparison tests: the evaluation tests' project (the fake model as judge)."""

from tests.evals.conftest import project

__all__ = ["project"]

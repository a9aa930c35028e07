"""Scenario suites in Python: `RegressionRunner` runs scenario files (with their macros, model
matrices and agent classes) as `accord eval` does; `@macro("NAME")` adds a macro of your own.
"""

from __future__ import annotations

from .tasks.suites.core.verdicts import SuiteRun
from .tasks.suites.frontends.scenarios.macros import macro
from .tasks.suites.frontends.scenarios.runner import RegressionRunner

__all__ = ["RegressionRunner", "SuiteRun", "macro"]

"""Built-in task types. Importing this package registers them with the engine."""

from engine.registry import register_file_kind
from tasks import agent, conditional, consistency, formatter, loop, sql, subworkflow, visualize
from tasks.suites.specs import TestSuiteSpec

register_file_kind("test", TestSuiteSpec)

__all__ = [
    "agent",
    "conditional",
    "consistency",
    "formatter",
    "loop",
    "sql",
    "subworkflow",
    "visualize",
]

"""Built-in task types. Importing this package registers them with the engine."""

from pathlib import Path

from engine.registry import register_file_check, register_file_kind
from tasks import agent, conditional, consistency, formatter, loop, sql, subworkflow, visualize
from tasks.suites.specs import TestSuiteSpec, declares_tests

register_file_kind("test", TestSuiteSpec)
register_file_check(agent.check_agent_file)


def _check_tests(path: Path) -> str | None:
    if not declares_tests(path):
        return None
    from tasks.suites.loading import check_tests  # the test runner: only for files with tests

    return check_tests(path)


register_file_check(_check_tests)

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

"""Built-in task types. Importing this package registers them with the engine.

The evaluators (`accord.tasks.evaluators`) are no task type: their registry imports them when
it is first read (a suite, `accord schema`), so a workflow that only runs tasks, the common
case, does not import them.
"""

from pathlib import Path

from ..engine.kinds import register_file_check, register_file_kind
from . import (
    agent,
    apps,
    conditional,
    consistency,
    formatter,
    loop,
    semantic,
    sql,
    subworkflow,
    visualize,
)
from .suites.core import frontend as frontends
from .suites.frontends.oxy.specs import TestSuiteSpec, declares_tests

register_file_kind("test", TestSuiteSpec)
register_file_check("agent", agent.check_agent_file)


def _check_tests(path: Path) -> str | None:
    """`accord validate` on a file's tests: a .test.yml, or the `tests:` of a workflow or an
    agent (everything `accord test` checks before it runs); None for a file with none."""
    if not declares_tests(path):
        return None
    from .suites.frontends.oxy.loading import prepare

    count = len(prepare(path).tests)
    return f"{count} test{'' if count == 1 else 's'}"


register_file_check("tests", _check_tests)
register_file_check("suites", frontends.check_file)  # .eval.yml, AgentV and scenario files

__all__ = [
    "agent",
    "apps",
    "conditional",
    "consistency",
    "formatter",
    "loop",
    "semantic",
    "sql",
    "subworkflow",
    "visualize",
]

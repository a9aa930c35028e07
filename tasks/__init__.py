"""Built-in task types. Importing this package registers them with the engine."""

from tasks import agent, conditional, consistency, formatter, loop, sql, subworkflow, visualize

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

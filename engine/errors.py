"""The exception hierarchy. Every error a user can cause is an `AccordError`.

The CLI turns an `AccordError` into its message on stderr and its `exit_code`, with no traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class AccordError(Exception):
    """Root of every error accord reports to a user."""

    exit_code = 2

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class LoadError(AccordError):
    """A file could not be read or is not valid YAML."""


@dataclass(frozen=True)
class Issue:
    """One problem found in a file, with its position."""

    file: Path | None
    line: int | None
    column: int | None
    path: str
    message: str

    def render(self) -> str:
        where = str(self.file) if self.file else "<input>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        field = f" {self.path}:" if self.path else ""
        return f"{where}{field} {self.message}"


class ValidationError(AccordError):
    """One or more issues in the files; all of a file's issues are reported together."""

    def __init__(self, issues: list[Issue]) -> None:
        self.issues = issues
        lines = [issue.render() for issue in issues]
        count = len(issues)
        head = f"{count} problem{'s' if count != 1 else ''} found:" if count > 1 else ""
        super().__init__("\n".join([head, *lines]) if head else lines[0])


class CycleError(ValidationError):
    """The tasks' references form a cycle."""


class ConfigError(AccordError):
    """The project configuration cannot be used as asked (unknown database, bad variable)."""


class TaskError(AccordError):
    """A task failed while running."""

    exit_code = 1

    def __init__(self, task: str, message: str, attempt: int = 1) -> None:
        self.task = task
        self.attempt = attempt
        super().__init__(f"task '{task}' failed: {message}")
        self.cause_message = message


class ModelError(AccordError):
    """A model call failed."""

    exit_code = 1

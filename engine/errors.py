"""The exception hierarchy. Every error a user can cause is an `AccordError`.

The CLI turns an `AccordError` into its message on stderr and its `exit_code`, with no traceback.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .masking import mask


class AccordError(Exception):
    """Root of every error accord reports to a user.

    An error carries fields: `task` (the node it happened in), `model`, `kind` (the provider's
    error class, say) and `message` (what went wrong, without the task). `str(exc)` and
    `exc.text` compose them once: "task 'x': model 'm' failed: RateLimitError: ...".
    `permanent` errors (bad input, a missing package, an auth error) are never retried.
    """

    exit_code = 2
    permanent = False

    def __init__(
        self,
        message: str,
        *,
        task: str | None = None,
        model: str | None = None,
        kind: str | None = None,
        permanent: bool | None = None,
    ) -> None:
        # composed here once, so no error shows a secret (a key echoed by a provider, a
        # `${{ VAR }}` value in a validation message, a macro's expanded arguments)
        message = mask(message)
        super().__init__(message)
        self.message = message
        self.task = task
        self.model = model
        self.kind = kind
        if permanent is not None:
            self.permanent = permanent

    @property
    def detail(self) -> str:
        """The error without the task it happened in."""
        return self.message

    def text_in(self, task: str | None) -> str:
        """The error as said inside `task`: the task is named only when it is another."""
        if self.task is None or self.task == task:
            return self.detail
        return f"task '{self.task}': {self.detail}"

    @property
    def text(self) -> str:
        """The whole message, naming the task."""
        return self.text_in(None)

    def __str__(self) -> str:
        return self.text


OUT_OF_MEMORY = (
    "accord ran out of memory (the machine's, or a limit such as `ulimit -v`): run fewer "
    "cases or tasks at once (--case, --tag, a smaller file), or give it more memory"
)


class OutOfMemory(AccordError):
    """A run ran out of memory: it stopped, and says so (exit 2), never as a bug."""

    permanent = True

    def __init__(self, task: str | None = None) -> None:
        where = f" (in task '{task}')" if task else ""
        super().__init__(OUT_OF_MEMORY.replace(": run", f"{where}: run", 1))


class LoadError(AccordError):
    """A file could not be read or is not valid YAML."""

    permanent = True


@dataclass(frozen=True)
class Issue:
    """One problem found in a file, with its position."""

    file: Path | None
    line: int | None
    column: int | None
    path: str
    message: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "message", mask(self.message))

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

    permanent = True

    def __init__(self, issues: list[Issue]) -> None:
        self.issues = issues
        lines = [issue.render() for issue in issues]
        count = len(issues)
        head = f"{count} problem{'s' if count != 1 else ''} found:" if count > 1 else ""
        super().__init__("\n".join([head, *lines]) if head else lines[0])


class CycleError(ValidationError):
    """The tasks' references form a cycle."""


class UnsupportedFeature(AccordError):
    """A file of an Oxy feature accord does not have (`.app.yml`, `.aw.yml`): `validate`
    names it and goes on with the other files."""

    permanent = True


class ConfigError(AccordError):
    """The project configuration cannot be used as asked (unknown database, bad variable)."""

    permanent = True


class TaskError(AccordError):
    """A task failed while running; `message` is the cause, without the task."""

    exit_code = 1

    def __init__(
        self, task: str, message: str, attempt: int = 1, *, permanent: bool | None = None
    ) -> None:
        super().__init__(message, task=task, permanent=permanent)
        self.attempt = attempt

    def text_in(self, task: str | None) -> str:
        if task == self.task:
            return self.message
        return f"task '{self.task}' failed: {self.message}"


class ModelError(AccordError):
    """A model call failed: `model` names the model, `kind` the provider's error class."""

    exit_code = 1

    def __init__(
        self,
        message: str,
        *,
        task: str | None = None,
        model: str | None = None,
        kind: str | None = None,
        permanent: bool | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message, task=task, model=model, kind=kind, permanent=permanent)
        self.attempts = attempts

    @property
    def detail(self) -> str:
        if self.kind is None:
            return f"model '{self.model}' {self.message}" if self.model else self.message
        tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        return f"model '{self.model}' failed{tries}: {self.kind}: {self.message}"


def did_you_mean(word: str, known: Iterable[str], *, before: str = "; ", after: str = "") -> str:
    """`{before}did you mean 'X'?{after}`, X the known name closest to `word` (difflib's
    ratio at least 0.6), or "" when none is close: the hint of every "unknown name" message,
    worded into it by `before` and `after`."""
    import difflib

    match = difflib.get_close_matches(word, list(known), n=1)
    return f"{before}did you mean '{match[0]}'?{after}" if match else ""

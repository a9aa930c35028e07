"""Task types register here; the loader builds its discriminated union from this table.

The engine never imports the `tasks` package: built-in and third-party task types arrive
through the `accord.plugins` entry point group, loaded once on first use.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import AccordError

if TYPE_CHECKING:
    from engine.context import TaskContext
    from engine.plan import PlannedTask
    from engine.spec import TaskSpec

TaskRunner = Callable[["PlannedTask", "TaskContext"], Awaitable[Any]]


@dataclass(frozen=True)
class TaskType:
    """A registered task type: its spec model and the coroutine that runs it.

    `container` types (loops, sub-workflows, branches) schedule child nodes and hold no
    concurrency slot of their own while they wait for them.
    """

    name: str
    spec: type[TaskSpec]
    run: TaskRunner
    container: bool = False
    internal: bool = False


_TASK_TYPES: dict[str, TaskType] = {}
_FILE_KINDS: dict[str, Any] = {}
_FILE_CHECKS: list[Callable[[Path], str | None]] = []
_loaded = False


def register_task(
    name: str, spec: type[TaskSpec], *, container: bool = False, internal: bool = False
) -> Callable[[TaskRunner], TaskRunner]:
    """Decorator: `@register_task("formatter", FormatterSpec)` on the runner coroutine.

    `internal` types are compiled from other tasks (consistency runs, their selection) and
    cannot be written in a file.
    """

    def decorate(run: TaskRunner) -> TaskRunner:
        _TASK_TYPES[name] = TaskType(name, spec, run, container, internal)
        return run

    return decorate


def load_plugins() -> None:
    """Import every `accord.plugins` entry point once."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    found = entry_points(group="accord.plugins")
    if not found:
        raise AccordError(
            "no task types are registered: accord is not installed as a package "
            "(run 'pip install -e .' in the checkout)"
        )
    for entry in found:
        entry.load()


def register_file_check(check: Callable[[Path], str | None]) -> None:
    """A check `accord validate` runs on every file: it returns a summary for a file it
    knows (raising AccordError for a bad one), or None."""
    _FILE_CHECKS.append(check)


def file_checks() -> list[Callable[[Path], str | None]]:
    load_plugins()
    return list(_FILE_CHECKS)


def register_file_kind(name: str, model: Any) -> None:
    """A file kind a plugin defines (e.g. `.test.yml`), for `accord schema`."""
    _FILE_KINDS[name] = model


def file_kinds() -> dict[str, Any]:
    """File kinds defined by plugins, by name."""
    load_plugins()
    return _FILE_KINDS


def task_types() -> dict[str, TaskType]:
    """All registered task types by name."""
    load_plugins()
    return _TASK_TYPES


def task_type(name: str) -> TaskType:
    """The registered task type `name`."""
    return task_types()[name]


def command_plugin(name: str) -> Callable[[dict[str, Any]], int]:
    """The implementation of a CLI command provided by a plugin (`accord.commands` group):
    the test runner lives with the task types it runs, and the engine never imports it."""
    found = [e for e in entry_points(group="accord.commands") if e.name == name]
    if not found:
        raise AccordError(
            f"no plugin provides the '{name}' command: accord is not installed as a package "
            "(run 'pip install -e .' in the checkout)"
        )
    runner: Callable[[dict[str, Any]], int] = found[0].load()
    return runner

"""What plugins add to the engine, each in its registry (`registry.Registry`): task types,
file kinds `accord schema` and `accord validate` know, file checks, workflow kinds, and the
sections a plugin adds to workflow and agent files."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .registry import Registry, load_plugins

if TYPE_CHECKING:
    from .context import TaskContext
    from .plan import Plan, PlannedTask
    from .spec import TaskSpec
    from .yamlmarks import Loc

TaskRunner = Callable[["PlannedTask", "TaskContext"], Awaitable[Any]]


# --- task types ----------------------------------------------------------------------------


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
    on_failure: Callable[[PlannedTask, str, str], Any] | None = None
    outputs: tuple[type, ...] | None = None

    def accepts(self, output: Any) -> bool:
        """Whether `output` may be this type's output (one read back from a run store)."""
        return self.outputs is None or isinstance(output, self.outputs)


TASK_TYPES: Registry[TaskType] = Registry("task type")
FILE_KINDS: Registry[Any] = Registry("file kind")
FILE_CHECKS: Registry[Callable[[Path], str | None]] = Registry("file check")
WORKFLOW_KINDS: Registry[Callable[[Path], Any]] = Registry("workflow kind")


def register_task(
    name: str,
    spec: type[TaskSpec],
    *,
    container: bool = False,
    internal: bool = False,
    on_failure: Callable[[PlannedTask, str, str], Any] | None = None,
    outputs: tuple[type, ...] | None = None,
) -> Callable[[TaskRunner], TaskRunner]:
    """Decorator: `@register_task("formatter", FormatterSpec)` on the runner coroutine.

    `internal` types are compiled from other tasks (consistency runs, their selection) and
    cannot be written in a file. `on_failure` turns a failure that outlived the task's
    retries into an output (a consistency sample's failure is dropped by the selection,
    not a failure of the run). `outputs`: the classes its output may have; `--resume` runs
    the task again rather than reuse a stored output of another class (a tampered store).
    """

    def decorate(run: TaskRunner) -> TaskRunner:
        kind = TaskType(name, spec, run, container, internal, on_failure, outputs)
        TASK_TYPES.add(name, kind)
        return run

    return decorate


def register_file_check(name: str, check: Callable[[Path], str | None]) -> None:
    """A check `accord validate` runs on every file: it returns a summary for a file it
    knows (raising AccordError for a bad one), or None."""
    FILE_CHECKS.add(name, check)


def file_checks() -> list[Callable[[Path], str | None]]:
    return [check for _name, check in FILE_CHECKS.items()]


def register_workflow_kind(suffix: str, load: Callable[[Path], Any]) -> None:
    """A file that runs as a workflow though it is written otherwise (Oxy's `.app.yml`):
    `load` turns a file whose name ends in `suffix` into a `Loaded` workflow spec."""
    WORKFLOW_KINDS.add(suffix, load)


def workflow_kind(path: Path) -> Callable[[Path], Any] | None:
    """The loader registered for the file's name, if any."""
    load_plugins()
    for suffix, load in WORKFLOW_KINDS.items():
        if path.name.endswith(suffix):
            return load
    return None


def register_file_kind(name: str, model: Any) -> None:
    """A file kind a plugin defines (e.g. `.test.yml`), for `accord schema`."""
    FILE_KINDS.add(name, model)


def file_kinds() -> dict[str, Any]:
    """File kinds defined by plugins, by name."""
    return dict(FILE_KINDS.items())


def task_types() -> dict[str, TaskType]:
    """All registered task types by name."""
    return dict(TASK_TYPES.items())


def task_type(name: str) -> TaskType:
    """The registered task type `name`."""
    return TASK_TYPES.get(name)


# --- file sections -------------------------------------------------------------------------


@dataclass(frozen=True)
class Section:
    """A top-level key a plugin adds to workflow or agent files (the test runner's `tests:`).

    `annotation` and `field` are its pydantic field; `files` the kinds of file that take it
    ("workflow", "agent"). `check`, on a workflow's value once its tasks are compiled, returns
    its problems, each at its place in the file (`validate` and `run` report them with the
    file's own).
    """

    name: str
    annotation: Any
    field: Any
    files: tuple[str, ...] = ("workflow",)
    check: Callable[[Any, Plan], list[tuple[Loc, str]]] | None = None


SECTIONS: Registry[Section] = Registry("file section")


def register_section(
    name: str,
    annotation: Any,
    field: Any,
    *,
    files: tuple[str, ...] = ("workflow",),
    check: Callable[[Any, Plan], list[tuple[Loc, str]]] | None = None,
) -> None:
    """Add the key `name` to the files of `files` (see `Section`)."""
    SECTIONS.add(name, Section(name, annotation, field, files, check))


def sections(file: str) -> list[Section]:
    """The sections plugins added to a kind of file ("workflow", "agent")."""
    return [section for _name, section in SECTIONS.items() if file in section.files]

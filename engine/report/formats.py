"""Output formats: one registry for every command that reports (`run`, `test`, `eval`).

A command's formats are a `CommandFormats` table, found by the command's name in `FORMATS`;
each format is a writer of the command's report object to a text stream, registered with a
decorator:

    @formats_of("eval").register("junit", file="results.xml")
    def junit(report: EvalReport, out: TextIO) -> None: ...

`--format` offers the table's `choices()`; `--output FILE` is written in the format its suffix
names when one claims it (`.jsonl`: AgentV's result records), else in `--format`'s;
`--output-dir` writes the table's one folder writer. The engine registers `run`'s formats
(below); the evaluation commands register theirs where they render them, so the engine knows
none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TextIO, TypeVar

from ..registry import Registry

if TYPE_CHECKING:
    from ..plan import Plan
    from ..results import RunResult

R = TypeVar("R")
Writer = Callable[[R, TextIO], None]
# writes the command's files into a folder (`--output-dir`); returns the paths written
FolderWriter = Callable[[R, Path], list[Path]]


@dataclass(frozen=True)
class OutputFormat(Generic[R]):
    """One format of one command."""

    command: str
    name: str
    write: Writer[R]
    file: str  # the file it writes in a folder, and the example a message gives for --output
    suffix: str | None = None  # an --output file with this suffix is written in this format
    choice: bool = True  # offered by --format (False: only chosen by its suffix)


class CommandFormats(Generic[R]):
    """The formats of one command, in registration order, and what `--output-dir` writes."""

    def __init__(self, command: str) -> None:
        self.command = command
        self._formats: Registry[OutputFormat[R]] = Registry(
            f"{command} output format", plugins=False
        )
        self.folder: FolderWriter[R] | None = None
        self.folder_files: tuple[str, ...] = ()

    def register(
        self, name: str, *, file: str, suffix: str | None = None, choice: bool = True
    ) -> Callable[[Writer[R]], Writer[R]]:
        def decorate(write: Writer[R]) -> Writer[R]:
            self._formats.add(name, OutputFormat(self.command, name, write, file, suffix, choice))
            return write

        return decorate

    def register_folder(self, *files: str) -> Callable[[FolderWriter[R]], FolderWriter[R]]:
        """The one set of files `--output-dir` writes (`files`: the names it always writes,
        which an `--output` in that folder may not also name)."""

        def decorate(write: FolderWriter[R]) -> FolderWriter[R]:
            self.folder, self.folder_files = write, files
            return write

        return decorate

    def get(self, name: str) -> OutputFormat[R]:
        return self._formats.get(name)

    def choices(self) -> list[str]:
        """What `--format` offers."""
        return [name for name, f in self._formats.items() if f.choice]

    def __iter__(self) -> Iterator[str]:
        return iter(self.choices())

    def for_file(self, path: Path, name: str) -> OutputFormat[R]:
        """The format `--output path` is written in: the one its suffix claims, else `name`."""
        for _name, found in self._formats.items():
            if found.suffix is not None and path.suffix == found.suffix:
                return found
        return self.get(name)

    def write_folder(self, report: R, folder: Path) -> list[Path]:
        if self.folder is None:
            raise LookupError(f"`{self.command}` writes no folder of reports")
        folder.mkdir(parents=True, exist_ok=True)
        return self.folder(report, folder)


FORMATS: Registry[CommandFormats[Any]] = Registry("command with output formats", plugins=False)


def formats_of(command: str) -> CommandFormats[Any]:
    """The formats table of `command` (created on first use)."""
    if command not in FORMATS:
        FORMATS.add(command, CommandFormats(command))
    return FORMATS.get(command)


# --- `accord run` ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RunReport:
    """What `accord run` reports: the run, its plan, and whether only the summary is asked."""

    result: RunResult
    plan: Plan
    quiet: bool = False


RUN_FORMATS: CommandFormats[RunReport] = formats_of("run")


@RUN_FORMATS.register("pretty", file="run.txt")
def _run_pretty(report: RunReport, out: TextIO) -> None:
    from . import pretty

    pretty.print_run(report.result, report.plan, quiet=report.quiet, stream=out)


@RUN_FORMATS.register("json", file="run.json")
def _run_json(report: RunReport, out: TextIO) -> None:
    from . import json_report

    out.write(json_report.render_run(report.result) + "\n")

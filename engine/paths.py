"""Where a project's files may lead: every path written in a project file (SQL files, refs,
agent context, sub-workflows, exports, pinned caches) stays inside the project root, symbolic
links followed; what accord writes never replaces a file the project reads, nor anything
under `.accord/`; and the parts of a path filled in from data or a model's answer
(`out/{{ value }}.csv`) cannot climb out of their folder.

Paths given on the command line (`--output`, `--report`) are the user's own choice and may
lead anywhere, but never onto a file the project reads.
"""

from __future__ import annotations

import re
from pathlib import Path

from accord.engine.errors import AccordError

# files a project reads, whatever their folder: accord never writes over them
READ_SUFFIXES = (
    ".yml", ".yaml", ".sql", ".duckdb", ".db", ".sqlite", ".sqlite3", ".parquet", ".gguf",
)  # fmt: skip
READ_NAMES = (".env",)


class PathError(AccordError):
    """A path that would leave the project, or write over what it reads."""

    exit_code = 1


def resolved(path: Path) -> Path:
    """The path with symbolic links followed; absolute as given when that fails (a loop)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return path.absolute()


def inside(root: Path, relative: str | Path, what: str) -> Path:
    """`root / relative`, refused when it is absolute or leads outside the root (`..`, or a
    symbolic link to elsewhere)."""
    given = Path(relative)
    if given.is_absolute():
        raise PathError(
            f"{what} '{relative}' is an absolute path: paths in project files are relative "
            f"to the project root ({root})"
        )
    target = root / given
    if not resolved(target).is_relative_to(resolved(root)):
        how = "with '..'" if ".." in given.parts else "through a symbolic link"
        raise PathError(f"{what} '{relative}' leads outside the project root {root} ({how})")
    return target


def is_inside(root: Path, relative: str | Path) -> bool:
    """Whether `inside` accepts the path (its refusals are reported elsewhere)."""
    try:
        inside(root, relative, "path")
    except PathError:
        return False
    return True


def written_by_accord(root: Path, relative: str | Path, what: str) -> Path:
    """`inside`, and also never a file the project reads nor anything under `.accord/`."""
    target = inside(root, relative, what)
    refuse_overwrite(target, root, what, relative)
    return target


def refuse_overwrite(
    target: Path, root: Path | None, what: str, given: str | Path, *, project_files: bool = True
) -> None:
    """Refuse writing `target` when it is accord's own store or (`project_files`) a file the
    project reads."""
    real = resolved(target)
    if root is not None and real.is_relative_to(resolved(root / ".accord")):
        raise PathError(
            f"{what} '{given}' is inside .accord/, where accord keeps its run store and "
            "cache: give another path"
        )
    if real.is_dir() or not project_files:
        return
    if real.name.lower() in READ_NAMES or (real.suffix.lower() in READ_SUFFIXES and real.exists()):
        raise PathError(
            f"{what} '{given}' would replace {real.name}, a file the project reads "
            "(configuration, workflows, agents, SQL, data): give another path"
        )


def check_filled_parts(parts: list[str], what: str, template: str) -> None:
    """The values filled into a path template: no folders, no `..`, no absolute paths."""
    for part in parts:
        if "/" in part or "\\" in part or part in ("..", ".") or part.startswith("~"):
            raise PathError(
                f"{what} '{template}': a value filled into it is {part!r}, which would pick "
                "another folder; values in paths may not contain '/', '\\', '..' or '~'"
            )
        if not part.strip():
            raise PathError(f"{what} '{template}': a value filled into it is empty")


def file_name_part(text: str, limit: int = 40) -> str:
    """`text` as part of a file or folder name: letters, digits, dot, dash and underscore
    only, at most `limit` characters, never empty (a case id `../x/y` is `x-y`)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:limit] or "x"


def shown_path(path: Path) -> str:
    """A path as it opens from the current folder: relative when it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return str(path)

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
from typing import NamedTuple

from .errors import AccordError

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
    symbolic link to elsewhere), or when it is a file no project file may read as data: a
    `.env` file (`.env.*` too) or anything under `.accord/` (`private`)."""
    target = _confined(root, relative, what)
    reason = private(root, target, relative)
    if reason is not None:
        raise PathError(f"{what} '{relative}' {reason}")
    return target


# files that hold secrets or accord's own records: never data, whatever reads them
PRIVATE_FOLDER = ".accord"


def _private_name(name: str) -> bool:
    # `.envrc` is direnv's (`export KEY=...`); any case, as a case-insensitive file system
    # opens `.ENV` as `.env`
    name = name.lower()
    return name in (".env", ".envrc") or name.startswith(".env.")


def private(root: Path, path: Path, given: str | Path | None = None) -> str | None:
    """Why `path` (under `root`) may not be read as data, else None: a `.env` file (or
    `.env.*`), whose values are secrets, or anything under a `.accord/` folder, accord's run
    store and caches; by its name as written or the file a link leads to. A glob that merely
    matches such a file leaves it out (`is_private`); a path naming it is refused."""
    real = resolved(path)
    try:
        inner = real.relative_to(resolved(root)).parts
    except ValueError:
        inner = real.parts[-1:]
    written = Path(given).parts if given is not None else ()
    names = (*inner, *written)
    if any(_private_name(name) for name in (real.name, path.name, *written[-1:])):
        return (
            "is a .env file (or .envrc), which holds secrets (keys, passwords): it is never read "
            "as data; put what the file needs in another file"
        )
    if PRIVATE_FOLDER in (name.lower() for name in names):
        return (
            "is under .accord/, where accord keeps its run store and caches: it is never read "
            "as data"
        )
    return None


def is_private(root: Path, path: Path) -> bool:
    """Whether `private` refuses `path`: what a glob's expansion leaves out, with no error."""
    return private(root, path) is not None


def _confined(root: Path, relative: str | Path, what: str) -> Path:
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
    """Inside the root, and never a file the project reads nor anything under `.accord/`."""
    target = _confined(root, relative, what)
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


class Output(NamedTuple):
    """A path a command writes: a file, or (`names`) a folder it writes those files in (an
    empty tuple: names known only later); `example` is the file name a message suggests
    when a folder is given for a file."""

    option: str
    path: Path
    names: tuple[str, ...] | None = None
    example: str = "results.txt"


def check_outputs(
    outputs: list[Output],
    *,
    inputs: dict[Path, str],
    roots: list[Path],
    nothing_ran: str,
) -> None:
    """Refuse, before anything runs, the output paths of a command that could not be written
    or would
    destroy what the project keeps: a folder given for a file or a file for a folder, a
    file in place of a parent folder, one of the command's `inputs`, two options naming one
    file, a file the project reads or anything under a root's `.accord/`, a relative path
    climbing out of the project and the current folder, a place that cannot be written.
    Missing folders are created (writing at the end would create them too); a probe file
    is removed. `nothing_ran` ends each message ("no case was run")."""
    seen = {resolved(path): what for path, what in inputs.items()}
    for output in outputs:
        _check_output(output, seen, roots, nothing_ran)


def _check_output(
    output: Output, seen: dict[Path, str], roots: list[Path], nothing_ran: str
) -> None:
    option, path, contents = output.option, output.path, output.names
    written = [path] if contents is None else [path / name for name in contents]
    for file in written:
        key = resolved(file)
        if key in seen:
            which = "" if contents is None else f"{file.name} in it "
            raise AccordError(
                f"{option} {path}: {which}is {seen[key]}; give another path; {nothing_ran}"
            )
        seen[key] = f"also given to {option}"
    kind = _kind(path)
    if contents is None and kind == "folder":
        example = path / output.example
        raise AccordError(
            f"{option} {path}: is a folder; give a file in it, e.g. {example}; {nothing_ran}"
        )
    if contents is not None and kind == "file":
        raise AccordError(
            f"{option} {path}: is a file; give a folder to write the reports in; {nothing_ran}"
        )
    for root in roots:
        for file in {path, *written}:  # never onto what the project reads, nor into .accord/
            try:
                refuse_overwrite(file, root, option, path)
            except PathError as exc:
                raise AccordError(f"{exc.message}; {nothing_ran}") from None
    if not path.is_absolute() and not any(
        resolved(path).is_relative_to(resolved(folder)) for folder in (Path.cwd(), *roots)
    ):
        raise AccordError(
            f"{option} {path}: leads outside the project and the current folder; give "
            f"an absolute path to write there; {nothing_ran}"
        )
    folder = path if contents is not None else path.parent
    for parent in (folder, *folder.parents):
        found = _kind(parent)
        if found == "file":
            raise AccordError(f"{option} {path}: '{parent}' is a file, not a folder; {nothing_ran}")
        if found == "folder":
            break
    # a folder whose files are named only once the run has an id: probe with a name of ours
    names = contents or (".accord-write-check",)
    _probe(option, path if contents is None else path / names[0], nothing_ran)


def _probe(option: str, file: Path, nothing_ran: str) -> None:
    """Open `file` for writing as the command will, leaving it as it was."""
    import os

    existed = _kind(file) == "file"
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        os.close(os.open(file, os.O_WRONLY | os.O_APPEND | os.O_CREAT))
        if not existed:
            file.unlink()
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise AccordError(f"{option} {file}: cannot write: {reason}; {nothing_ran}") from None


def _kind(path: Path) -> str:
    import os
    import stat

    try:
        return "folder" if stat.S_ISDIR(os.stat(path).st_mode) else "file"
    except (OSError, ValueError):
        return "missing"

"""`accord init [DIR]`: a small working project, runnable at once with no key.

A DuckDB database over one CSV, the embedded `local` model, a workflow (SQL, a template, an
agent) with a consistency test that needs no judge, and an evaluation suite of deterministic
checks. Nothing is overwritten and no link is followed: a folder that already holds any of
these paths is refused before anything is written.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from .errors import LoadError

FILES: dict[str, str] = {
    "config.yml": """\
# One DuckDB database over the CSV files in data/ (each file is a view: `orders`), and the
# embedded `local` model (no key). Add models under `models:` (see docs/models.md in accord).
databases:
  - name: shop
    type: duckdb
    dataset: data

defaults:
  database: shop
  model: local
""",
    "data/orders.csv": """\
order_id,region,product,amount
1,North,Laptop,1200
2,South,Monitor,300
3,North,Keyboard,80
4,East,Laptop,1150
5,South,Laptop,1250
6,East,Mouse,40
7,North,Monitor,320
8,West,Keyboard,90
""",
    "revenue.workflow.yml": """\
# accord run revenue.workflow.yml      (then: accord test revenue.workflow.yml)
name: revenue
description: Revenue by region, a headline, and a sentence about it.
tasks:
  - name: by_region
    type: execute_sql
    sql_query: |
      SELECT region, SUM(amount) AS revenue FROM orders GROUP BY region ORDER BY revenue DESC
  - name: headline
    type: formatter
    template: "{{ by_region.region[0] }} leads with {{ by_region.revenue[0] }} in revenue."
  - name: comment
    type: agent
    prompt: |
      In one sentence, comment on this revenue by region:
      {{ by_region }}
tests:
  # The headline is SQL and a template: every run agrees, and no judge is asked.
  - type: consistency
    name: headline is deterministic
    task_ref: headline
    n: 3
""",
    "checks.eval.yml": """\
# accord eval checks.eval.yml: cases, a target and evaluators (no model: `echo` returns the
# input). Change `target` to a model (`local`, or one of config.yml) to evaluate it.
name: checks
target: echo
evaluators:
  - {type: contains, case_sensitive: false}
  - {type: regex, pattern: "[.?!]$", name: ends_a_sentence}
cases:
  - id: capital
    input: The capital of France is Paris.
    expected: paris
  - id: question
    input: Which region sold most?
    expected: region
""",
}


def scaffold(folder: Path) -> list[Path]:
    """Write the project's files into `folder` (created if missing); their paths.

    Everything is checked before anything is written: a refusal leaves the folder as it
    was. The folder named on the command line is the user's and may be a link; inside it no
    link is followed (a `config.yml` or `data` that is a link, even a broken one, is
    refused), so nothing lands outside it. A write that fails halfway (a full disk) removes
    what was written.
    """
    _check(folder)
    written: list[Path] = []
    made: list[Path] = []
    try:
        for folder_made in _missing_folders(folder):
            folder_made.mkdir()
            made.append(folder_made)
        for name, text in FILES.items():
            path = folder / name
            if not path.parent.is_dir():
                path.parent.mkdir()
                made.append(path.parent)
            # "x": O_CREAT | O_EXCL, which never follows a link nor replaces a file that
            # appeared since the check
            with path.open("x", encoding="utf-8") as handle:
                written.append(path)
                handle.write(text)
    except OSError as exc:
        for path in reversed(written):
            path.unlink(missing_ok=True)
        for created in reversed(made):
            with contextlib.suppress(OSError):
                created.rmdir()
        raise LoadError(
            f"cannot write the project into {folder}: {exc.strerror or exc} "
            f"({exc.filename or folder}); nothing was written"
        ) from None
    return written


def _missing_folders(folder: Path) -> list[Path]:
    """The folders to create, outermost first, for `folder` to exist."""
    missing = []
    for candidate in (folder, *folder.parents):
        if candidate.is_dir():
            break
        missing.append(candidate)
    return list(reversed(missing))


def _check(folder: Path) -> None:
    """Refuse, before anything is written, a project that could not be written whole."""
    for candidate in (folder, *folder.parents):
        if candidate.is_dir():
            if not os.access(candidate, os.W_OK | os.X_OK):
                raise LoadError(
                    f"{candidate} is not writable: accord init cannot create the project "
                    f"there; give a folder you can write"
                )
            break
        if candidate.is_symlink():
            raise LoadError(
                f"{candidate} is a broken symbolic link: accord init writes no file through "
                "a link; remove the link or give another folder"
            )
        if candidate.exists():
            what = "the folder to create the project in" if candidate == folder else "a folder"
            raise LoadError(f"{candidate} is a file, not a folder: give {what} that is one")
    problems = []
    for name in sorted({part for file in FILES for part in _with_folders(file)}):
        path = folder / name
        is_folder = name not in FILES
        if path.is_symlink():
            problems.append(f"{name} is a symbolic link")
        elif is_folder and path.exists() and not path.is_dir():
            problems.append(f"{name} is a file where accord init puts a folder")
        elif not is_folder and path.exists():
            problems.append(f"{name} exists")
    if problems:
        raise LoadError(
            f"{folder} cannot take a new project: {'; '.join(problems)}. accord init writes a "
            "new project, overwrites nothing and follows no link: give an empty or new folder"
        )


def _with_folders(name: str) -> list[str]:
    """`data/orders.csv` -> `data`, `data/orders.csv`: every path the file needs."""
    parts = Path(name).parts
    return [str(Path(*parts[: i + 1])) for i in range(len(parts))]

"""`accord runs`: the run store's past runs and their task results (`compare` and
`baselines` are added by the evaluation commands, lazily)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .app import LazyGroup, handle_errors, main

F = TypeVar("F", bound=Callable[..., Any])


@main.group(cls=LazyGroup)
def runs() -> None:
    """The run store: past runs and their task results."""


def store_options(func: F) -> F:
    """`--format` and `--project`, shared by the `runs` commands."""
    func = click.option(
        "--project",
        "folder",
        type=click.Path(path_type=Path),
        default=Path("."),
        show_default=True,
        help="A file or folder of the project.",
    )(func)
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["pretty", "json"]),
        default="pretty",
        show_default=True,
    )(func)


def store_path(folder: Path) -> Path:
    from ..store import runs_db_of

    return runs_db_of(folder)


@runs.command("list")
@store_options
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@handle_errors
def runs_list(fmt: str, limit: int, folder: Path) -> None:
    """The newest runs first."""
    from ..report import store_report
    from ..store import list_runs

    path = store_path(folder)
    runs = list_runs(path, limit)
    click.echo(store_report.render_runs(runs, fmt))
    if not runs and fmt != "json":
        click.echo(_where_runs_are(path), err=True)


def _where_runs_are(path: Path) -> str:
    """Where to look instead: each project keeps its runs in its own .accord/runs.db."""
    from ..paths import shown_path

    here = Path.cwd()
    # three levels down at most: a search of a whole home folder would take minutes
    patterns = ("*/.accord/runs.db", "*/*/.accord/runs.db", "*/*/*/.accord/runs.db")
    found = sorted(p.parent.parent for pattern in patterns for p in here.glob(pattern))[:10]
    text = f"no runs in {shown_path(path)}: each project keeps its runs in its own .accord/"
    if found:
        listing = ", ".join(shown_path(p) for p in found)
        text += f"; runs recorded under {listing}: `accord runs list --project <folder>`"
    return text


@runs.command("show")
@click.argument("run_id", metavar="RUN")
@store_options
@handle_errors
def runs_show(run_id: str, fmt: str, folder: Path) -> None:
    """One run's task results (RUN is an id, a unique prefix, or 'last')."""
    from ..report import store_report
    from ..store import find_run, run_results

    path = store_path(folder)
    stored = find_run(path, run_id)
    click.echo(store_report.render_run(stored, run_results(path, stored.run_id), fmt))

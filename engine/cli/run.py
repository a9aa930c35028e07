"""`accord run FILE`: run a workflow, show its progress, report, exit with its outcome."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from ..report.formats import RUN_FORMATS, RunReport
from .app import EXIT_FAILED, EXIT_NO_RESULT, EXIT_OK, handle_errors, main
from .options import CommandParams, argument, declared_options, executor_options, option, shared
from .signals import interrupted, run_stoppable, sigterm_interrupts


@dataclass(frozen=True)
class RunCommand(CommandParams):
    """The options of `accord run`."""

    file: Path = argument(type=click.Path(path_type=Path))
    variables: tuple[str, ...] = shared("variables", help="Set a workflow variable (repeatable).")
    keep_going: bool = option(
        "--keep-going", is_flag=True, help="Run everything that does not depend on a failure."
    )
    max_concurrency: int | None = shared(
        "max_concurrency", help="Tasks running at once (default: config, else 16)."
    )
    fmt: str = shared(
        "fmt", type=click.Choice(RUN_FORMATS.choices()), help="Output format on stdout."
    )
    quiet: bool = shared("quiet", help="Only the summary (pretty) and errors.")
    cache_mode: str = shared("cache_mode")
    resume: str | None = shared(
        "resume",
        help="Reuse the finished tasks of an earlier run of this workflow (its id, or 'last').",
    )
    filters: tuple[str, ...] = option(
        "--filter",
        multiple=True,
        metavar="NAME=VALUE",
        help="A row-level filter value for the databases that declare it (Oxy's `filters`; "
        "repeatable).",
    )


@main.command()
@declared_options(RunCommand)
@executor_options
@handle_errors
def run(**params: Any) -> None:
    """Run a workflow file."""
    command = RunCommand.from_params(params)
    from .. import log
    from ..report import pretty

    if command.fmt == "json":
        log.json_by_default()
    from ..databases.filters import parse_assignments as parse_filters
    from ..runner import RunOptions, compile_workflow, execute
    from ..variables import parse_assignments

    parsed = parse_assignments(command.variables)
    project, plan = compile_workflow(command.file)
    resume = command.resume
    if resume is not None:
        from ..store import find_run_of, runs_db

        store_path = runs_db(project.root)
        resume = find_run_of(store_path, resume, plan.name, command.file).run_id
    options = RunOptions(
        variables=parsed,
        keep_going=command.keep_going,
        max_concurrency=command.max_concurrency,
        cache_mode=command.cache_mode,
        resume=resume,
        filters=parse_filters(command.filters) if command.filters else None,
    )
    fmt = command.fmt
    try:
        with sigterm_interrupts():
            if fmt == "json":
                result = run_stoppable(execute(project, plan, options))
            else:
                with pretty.RunDisplay(plan, quiet=command.quiet) as display:
                    result = run_stoppable(execute(project, plan, options, display))
    except KeyboardInterrupt:
        interrupted(options.open_stores)
    RUN_FORMATS.get(fmt).write(RunReport(result, plan, command.quiet), sys.stdout)
    if result.error and fmt == "json":
        click.echo(f"error: task '{result.failed_task}': {result.error}", err=True)
    sys.exit(exit_code_for(result))


def exit_code_for(result: Any) -> int:
    from ..results import Status

    if result.status is Status.SUCCEEDED:
        return EXIT_OK
    usage = result.usage
    produced = any(r.status is Status.SUCCEEDED for r in result.results)
    if usage is not None and usage.total.failures and not usage.total.calls and not produced:
        return EXIT_NO_RESULT  # every model call failed and nothing was produced
    return EXIT_FAILED

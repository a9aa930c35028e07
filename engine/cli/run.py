"""`accord run FILE`: run a workflow, show its progress, report, exit with its outcome."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ..report.formats import RUN_FORMATS, RunReport
from .app import EXIT_FAILED, EXIT_NO_RESULT, EXIT_OK, handle_errors, main
from .options import (
    cache_option,
    check_resume,
    executor_options,
    file_argument,
    max_concurrency_option,
    variables_option,
)
from .signals import interrupted, run_stoppable, sigterm_interrupts


@main.command()
@file_argument()
@variables_option("Set a workflow variable (repeatable).")
@click.option(
    "--keep-going", is_flag=True, help="Run everything that does not depend on a failure."
)
@max_concurrency_option("Tasks running at once (default: config, else 16).")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(RUN_FORMATS.choices()),
    default="pretty",
    show_default=True,
    help="Output format on stdout.",
)
@click.option("--quiet", is_flag=True, help="Only the summary (pretty) and errors.")
@cache_option
@executor_options
@click.option(
    "--resume",
    "resume",
    metavar="RUN",
    callback=check_resume,
    help="Reuse the finished tasks of an earlier run of this workflow (its id, or 'last').",
)
@handle_errors
def run(
    file: Path,
    variables: tuple[str, ...],
    keep_going: bool,
    max_concurrency: int | None,
    fmt: str,
    quiet: bool,
    cache_mode: str,
    resume: str | None,
) -> None:
    """Run a workflow file."""

    from .. import log
    from ..report import pretty

    if fmt == "json":
        log.json_by_default()
    from ..runner import RunOptions, compile_workflow, execute
    from ..variables import parse_assignments

    parsed = parse_assignments(variables)
    project, plan = compile_workflow(file)
    if resume is not None:
        from ..store import find_run_of, runs_db

        store_path = runs_db(project.root)
        resume = find_run_of(store_path, resume, plan.name, file).run_id
    options = RunOptions(
        variables=parsed,
        keep_going=keep_going,
        max_concurrency=max_concurrency,
        cache_mode=cache_mode,
        resume=resume,
    )
    try:
        with sigterm_interrupts():
            if fmt == "json":
                result = run_stoppable(execute(project, plan, options))
            else:
                with pretty.RunDisplay(plan, quiet=quiet) as display:
                    result = run_stoppable(execute(project, plan, options, display))
    except KeyboardInterrupt:
        interrupted(options.open_stores)
    RUN_FORMATS.get(fmt).write(RunReport(result, plan, quiet), sys.stdout)
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

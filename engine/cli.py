"""The `accord` command line: parse, call the engine, render. Nothing else lives here.

Imports of the engine happen inside the commands so that `accord --help` stays fast.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_NO_RESULT = 0, 1, 2, 3


def _debug_enabled() -> bool:
    ctx = click.get_current_context(silent=True)
    while ctx is not None:
        if ctx.obj and ctx.obj.get("debug"):
            return True
        ctx = ctx.parent
    return False


def handle_errors(func: F) -> F:
    """Turn an `AccordError` into its message and exit code; anything else is a bug."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from engine.errors import AccordError

        try:
            return func(*args, **kwargs)
        except AccordError as exc:
            if _debug_enabled():
                traceback.print_exc()
            click.echo(f"error: {exc.message}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except click.exceptions.Exit:
            raise
        except click.ClickException:
            raise
        except Exception:
            traceback.print_exc()
            click.echo(
                "accord hit an internal error (the traceback is above); please report it "
                "with the command you ran",
                err=True,
            )
            sys.exit(70)

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="warning",
    show_default=True,
    help="Log level (logs go to stderr).",
)
@click.version_option(package_name="accord")
@click.pass_context
def main(ctx: click.Context, debug: bool, log_level: str) -> None:
    """accord: workflow DAGs for LLM data analysis, and the tests that check them."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    from engine import log

    log.configure("debug" if debug else log_level)


def _files_arg(**kwargs: Any) -> Callable[[F], F]:
    return click.argument("file", type=click.Path(path_type=Path), **kwargs)


@main.command()
@_files_arg()
@click.option(
    "-v",
    "--var",
    "variables",
    multiple=True,
    metavar="NAME=VALUE",
    help="Set a workflow variable (repeatable).",
)
@click.option(
    "--keep-going", is_flag=True, help="Run everything that does not depend on a failure."
)
@click.option(
    "--max-concurrency",
    type=click.IntRange(min=1),
    default=None,
    help="Tasks running at once (default: config, else 16).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["pretty", "json"]),
    default="pretty",
    show_default=True,
    help="Output format on stdout.",
)
@click.option("--quiet", is_flag=True, help="Only the summary (pretty) and errors.")
@click.option(
    "--cache",
    "cache_mode",
    type=click.Choice(["on", "off", "readonly", "replay"]),
    default="on",
    show_default=True,
    help="Model-call cache; replay fails on any call not recorded before.",
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
) -> None:
    """Run a workflow file."""
    import asyncio

    from engine.report import json_report, pretty
    from engine.runner import RunOptions, compile_workflow, execute
    from engine.variables import parse_assignments

    options = RunOptions(
        variables=parse_assignments(variables),
        keep_going=keep_going,
        max_concurrency=max_concurrency,
        cache_mode=cache_mode,
    )
    project, plan = compile_workflow(file)
    if fmt == "json":
        result = asyncio.run(execute(project, plan, options))
        click.echo(json_report.render_run(result))
    else:
        with pretty.RunDisplay(plan, quiet=quiet) as display:
            result = asyncio.run(execute(project, plan, options, display))
        pretty.print_run(result, plan, quiet=quiet)
    if result.error and fmt == "json":
        click.echo(f"error: task '{result.failed_task}': {result.error}", err=True)
    sys.exit(exit_code_for(result))


def exit_code_for(result: Any) -> int:
    from engine.results import Status

    if result.status is Status.SUCCEEDED:
        return EXIT_OK
    usage = result.usage
    produced = any(r.status is Status.SUCCEEDED for r in result.results)
    if usage is not None and usage.total.failures and not usage.total.calls and not produced:
        return EXIT_NO_RESULT  # every model call failed and nothing was produced
    return EXIT_FAILED


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@handle_errors
def validate(files: tuple[Path, ...]) -> None:
    """Parse, type-check and compile files; no model or database is called."""
    from engine.errors import AccordError
    from engine.runner import compile_workflow

    failures = 0
    for file in files:
        try:
            _project, plan = compile_workflow(file)
        except AccordError as exc:
            failures += 1
            click.echo(f"error: {exc.message}", err=True)
            continue
        click.echo(f"ok: {file} ({plan.count_nodes()} tasks)")
    if failures:
        sys.exit(EXIT_INVALID)


@main.command()
@_files_arg()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "dot", "mermaid"]),
    default="text",
    show_default=True,
)
@handle_errors
def graph(file: Path, fmt: str) -> None:
    """Print the compiled DAG."""
    from engine.report import graph as graph_report
    from engine.runner import compile_workflow

    _project, plan = compile_workflow(file)
    click.echo(graph_report.render(plan, fmt))


@main.command()
@click.argument("kind", required=False, type=click.Choice(["workflow", "config"]))
@handle_errors
def schema(kind: str | None) -> None:
    """Print the JSON Schema of a file kind (all kinds without an argument)."""
    import json

    from engine.report.schema import schemas

    documents = schemas()
    click.echo(json.dumps(documents[kind] if kind else documents, indent=2))


if __name__ == "__main__":  # pragma: no cover
    main()

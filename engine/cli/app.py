"""The `accord` group and what every command shares: the lazy command map (`LazyGroup`), the
error handling that turns an `AccordError` into its message and exit code (`handle_errors`),
and the collector's settings for a command's process.

Imports of the engine happen inside the commands so that `accord --help` stays fast.
"""

from __future__ import annotations

import contextlib
import errno
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, NoReturn, TypeVar

import click

from .signals import interrupted

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_FAILED, EXIT_INVALID, EXIT_NO_RESULT = 0, 1, 2, 3
# a stream that cannot be written: a full disk or /dev/full, a closed pipe, an I/O error
_OUTPUT_ERRORS = frozenset({errno.ENOSPC, errno.EPIPE, errno.EIO, errno.EDQUOT, errno.EBADF})


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
        from ..errors import AccordError

        try:
            return func(*args, **kwargs)
        except AccordError as exc:
            if _debug_enabled():
                _print_traceback()
            from ..report.terminal import printable  # may quote stored text

            click.echo(f"error: {printable(exc.text)}", err=True)
            if _json_requested():
                click.echo(_error_document(exc))
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            interrupted([])
        except click.exceptions.Exit:
            raise
        except click.ClickException:
            raise
        except OSError as exc:
            if exc.errno in _OUTPUT_ERRORS:
                _output_failed(exc)
            _internal_error(exc)
        except MemoryError:
            _out_of_memory()
        except Exception as exc:
            _internal_error(exc)

    return wrapper  # type: ignore[return-value]


def _out_of_memory() -> NoReturn:
    """Memory ran out (the machine's, or a limit such as `ulimit -v`): not a bug, and no
    traceback; what was held is released by now, so the message can be written."""
    from ..errors import OUT_OF_MEMORY

    with contextlib.suppress(Exception):
        click.echo(f"error: {OUT_OF_MEMORY}", err=True)
    sys.exit(EXIT_INVALID)


def _internal_error(exc: Exception) -> NoReturn:
    """A bug: its one line and the request to report it; the traceback with `--debug`."""
    from ..log import BUG_HINT
    from ..masking import mask

    if _debug_enabled():
        _print_traceback()
    click.echo(mask(f"error: internal error: {type(exc).__name__}: {exc}"), err=True)
    click.echo(BUG_HINT, err=True)
    sys.exit(70)


def _print_traceback() -> None:
    """The exception being handled, for `--debug`: plain, without the frames' variables, and
    masked (engine/masking): a key in a message or a line of source stays hidden."""
    import traceback

    from ..masking import mask

    click.echo(mask(traceback.format_exc()), err=True, nl=False)


def _output_failed(exc: OSError) -> NoReturn:
    """stdout or stderr could not be written (a full disk, /dev/full, a closed pipe): say so
    where possible and exit 1; a closed pipe (`| head`) ends quietly, as Unix tools do."""
    import os

    with contextlib.suppress(OSError, ValueError):  # nothing more may reach a dead stream
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    if exc.errno == errno.EPIPE:
        sys.exit(141)
    with contextlib.suppress(Exception):
        click.echo(f"error: cannot write the output: {exc.strerror}", err=True)
    sys.exit(EXIT_FAILED)


def _json_requested() -> bool:
    ctx = click.get_current_context(silent=True)
    return ctx is not None and ctx.params.get("fmt") == "json"


def _error_document(exc: Any) -> str:
    """What `--format json` prints on stdout for an error: the message, the exit code, and
    each problem with its file and line, so a CI parser sees why (stdout was empty)."""
    import json

    problems = [
        {
            "file": str(issue.file) if issue.file else None,
            "line": issue.line,
            "column": issue.column,
            "field": issue.path or None,
            "message": issue.message,
        }
        for issue in getattr(exc, "issues", [])
    ]
    document = {
        "status": "invalid" if exc.exit_code == EXIT_INVALID else "error",
        "exit_code": exc.exit_code,
        "error": exc.text,
        "problems": problems,
    }
    return json.dumps(document, indent=2)


class LazyGroup(click.Group):
    """A click group whose further commands are imported only when one of them is run.

    `lazy` maps a command name to its `module:attribute` and its one-line help, so `accord
    --help` lists them without importing the evaluation code.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy: dict[str, tuple[str, str]] = {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.lazy])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            import importlib

            module, _, attribute = self.lazy[cmd_name][0].partition(":")
            command = getattr(importlib.import_module(module), attribute)
            self.add_command(command, cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, cmd.get_short_help_str(60)) for name, cmd in self.commands.items()]
        rows += [(name, short) for name, (_path, short) in self.lazy.items()]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(sorted(rows))


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logs.")
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="warning",
    show_default=True,
    help="Log level (logs go to stderr).",
)
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default=None,
    help="Log lines as text, or as JSON (default: JSON with --format json, else text).",
)
@click.version_option(package_name="accord")
@click.pass_context
def main(ctx: click.Context, debug: bool, log_level: str, log_format: str | None) -> None:
    """accord: workflow DAGs for LLM data analysis, and the tests that check them."""
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    from .. import log
    from ..masking import remember_environment

    remember_environment()  # keys a provider's SDK reads by itself are masked too
    json_logs = None if log_format is None else log_format == "json"
    log.configure("debug" if debug else log_level, json_logs=json_logs, tracebacks=debug)
    _collect_for_a_command()


# the collector's thresholds for a command, a run's (engine/runner.py): a command builds a
# plan, its specs and the libraries' classes, all living as long as the process, and at
# Python's defaults (700, 10, 10) rescanned them over and over (B16: 250 collections, 60 ms of
# `accord validate` of 2,000 tasks); garbage is still collected, less often
COMMAND_GC_THRESHOLDS = (5000, 50, 100)
_exit_registered = False


def _collect_for_a_command() -> None:
    """The collector's settings for the process of a command.

    Besides the thresholds: when the process exits, the objects still alive are left to the
    OS. After the exit handlers (the run store, the template cache and the logs are written
    by then), Python collects garbage over every live object twice more while it tears the
    interpreter down; after a run of 2,000 tasks that is some 165,000 objects and a quarter
    of a second (B16), for memory the process is about to give back. Frozen, the collector
    skips them; objects are still freed as their last reference goes, so files and
    connections close as before.
    """
    import gc

    global _exit_registered
    gc.set_threshold(*COMMAND_GC_THRESHOLDS)
    if not _exit_registered:
        import atexit

        _exit_registered = True
        # registered before the command starts, so it runs after the handlers it registers
        atexit.register(gc.freeze)

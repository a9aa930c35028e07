"""The `accord` command line: parse, call the engine, render. Nothing else lives here.

Imports of the engine happen inside the commands so that `accord --help` stays fast.
"""

from __future__ import annotations

import contextlib
import errno
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from .report.formats import RUN_FORMATS, RunReport

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Coroutine

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
        from .errors import AccordError

        try:
            return func(*args, **kwargs)
        except AccordError as exc:
            if _debug_enabled():
                _print_traceback()
            from .report.terminal import printable  # may quote stored text

            click.echo(f"error: {printable(exc.text)}", err=True)
            if _json_requested():
                click.echo(_error_document(exc))
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            _interrupted([])
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
    from .errors import OUT_OF_MEMORY

    with contextlib.suppress(Exception):
        click.echo(f"error: {OUT_OF_MEMORY}", err=True)
    sys.exit(EXIT_INVALID)


def _internal_error(exc: Exception) -> NoReturn:
    """A bug: its one line and the request to report it; the traceback with `--debug`."""
    from .log import BUG_HINT
    from .masking import mask

    if _debug_enabled():
        _print_traceback()
    click.echo(mask(f"error: internal error: {type(exc).__name__}: {exc}"), err=True)
    click.echo(BUG_HINT, err=True)
    sys.exit(70)


def _print_traceback() -> None:
    """The exception being handled, for `--debug`: plain, without the frames' variables, and
    masked (engine/masking): a key in a message or a line of source stays hidden."""
    import traceback

    from .masking import mask

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


_signal_received: int | None = None  # SIGTERM, when that is what interrupted `accord run`
_main_task: asyncio.Task[Any] | None = None  # the run's task while `accord run` is under way


def _interrupted(open_stores: list[Any], again: str | None = None) -> NoReturn:
    """Ctrl-C or SIGTERM: record the command's unfinished runs as interrupted, and exit.

    Every task that finished is already on its way to the run store, so `--resume` reuses it
    (`again`: the command that does, when it is not `accord run FILE --resume last`).
    """
    import signal

    from .paths import shown_path

    signum = _signal_received or signal.SIGINT
    name = signal.Signals(signum).name
    stored: list[Any] = []
    if open_stores:
        from .store import interrupt_runs

        try:
            stored = interrupt_runs(open_stores, f"interrupted ({name})")
        except KeyboardInterrupt:  # a second Ctrl-C: stop waiting for the disk
            stored = []
    if not stored:
        click.echo(f"interrupted ({name})", err=True)
    for run_store in stored:
        for key, error in run_store.failures:
            click.echo(f"✗ {key}: {error}", err=True)
        kept = run_store.counts.get("succeeded", 0)
        file = shown_path(run_store.file) if run_store.file is not None else "FILE"
        click.echo(
            f"interrupted ({name}): run {run_store.run_id} is recorded as interrupted with "
            f"{kept} finished task{'' if kept == 1 else 's'} kept; "
            f"`{again or f'accord run {file} --resume last'}` runs the rest",
            err=True,
        )
    sys.exit(128 + signum)


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """While a run is under way, SIGTERM stops it the way Ctrl-C does (and exits 143)."""
    import signal
    import threading

    global _signal_received
    _signal_received = None
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread can set handlers (the run is embedded: leave them)
        return

    def on_sigterm(signum: int, frame: Any) -> None:
        global _signal_received
        _signal_received = signum
        from . import render_budget

        render_budget.request_stop("the run received SIGTERM")  # a long render ends now
        handler = signal.getsignal(signal.SIGINT)  # asyncio's while a run is under way
        if callable(handler):
            handler(signal.SIGINT, frame)
            return
        # asyncio installs its Ctrl-C handler only where SIGINT has its default handler: a
        # process started in the background by a shell without job control inherits SIGINT
        # ignored, and a KeyboardInterrupt raised here, inside whatever the loop was doing,
        # left a traceback and a task that was never recorded. Cancel the run as asyncio's
        # handler does (a second SIGTERM still interrupts at once).
        task = _main_task
        if task is not None and not task.done() and not task.cancelling():
            task.get_loop().call_soon_threadsafe(task.cancel)
            return
        raise KeyboardInterrupt

    from .stopping import deadline_after_signal

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        # should the orderly stop above not get through (a run out of memory), the process
        # still ends within seconds of the signal
        with deadline_after_signal():
            yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        from . import render_budget

        render_budget.clear_stop()


def _run_stoppable(work: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(work)`, its task known to the SIGTERM handler: a run that SIGTERM
    cancelled ends as a Ctrl-C'd one does, with KeyboardInterrupt."""

    import asyncio

    async def main() -> T:
        global _main_task
        _main_task = asyncio.current_task()
        try:
            return await work
        finally:
            _main_task = None

    try:
        return asyncio.run(main())
    except asyncio.CancelledError:
        if _signal_received is None:
            raise
        raise KeyboardInterrupt from None


@contextmanager
def interruptible(open_stores: list[Any], again: str) -> Iterator[None]:
    """Runs under way (`accord test`, `accord eval`): Ctrl-C or SIGTERM records them as
    interrupted, names `again` (the command that finishes them) and exits 130 or 143."""
    try:
        with _sigterm_interrupts():
            yield
    except KeyboardInterrupt:
        _interrupted(open_stores, again)


cache_option = click.option(
    "--cache",
    "cache_mode",
    type=click.Choice(["on", "off", "readonly", "replay"]),
    default="on",
    show_default=True,
    help="Model-call cache; replay fails on any call not recorded before.",
)


def _choose_executor(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    from . import executor

    name, address = executor.chosen()
    if param.name == "executor":
        name = value
    else:
        address = value
    executor.choose(name, address)
    return value


def executor_options(fn: F) -> F:
    """`--executor local|ray` and `--ray-address ADDR` (run, test, eval): where node bodies
    do their work, for every run of the command (default: config.yml's `executor:`)."""
    fn = click.option(
        "--ray-address", expose_value=False, callback=_choose_executor,
        help="The Ray cluster to use (ray://host:10001, auto); default: a local one.",
    )(fn)  # fmt: skip
    return click.option(
        "--executor", type=click.Choice(["local", "ray"]), expose_value=False,
        callback=_choose_executor,
        help="Where model calls, queries, programs and evaluators run (default: config.yml's, "
        "else local).",
    )(fn)  # fmt: skip


def variables_option(help_text: str) -> Callable[[F], F]:
    """`-v/--var NAME=VALUE`, repeatable (the run and test commands)."""
    return click.option(
        "-v", "--var", "variables", multiple=True, metavar="NAME=VALUE", help=help_text
    )


def max_concurrency_option(help_text: str) -> Callable[[F], F]:
    """`--max-concurrency N` (the run, test and eval commands)."""
    return click.option(
        "--max-concurrency", type=click.IntRange(min=1), default=None, help=help_text
    )


def _check_resume(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise click.BadParameter(
            "it is empty: give a run id (see `accord runs list`) or 'last', "
            "or leave --resume out to start fresh"
        )
    return value.strip() if value is not None else None


class FiniteFloatRange(click.FloatRange):
    """A float option in a range that refuses NaN and the infinities (NaN compares false
    with every bound, so `--min-accuracy nan` would pass any range check and turn a gate
    off)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        import math

        number = super().convert(value, param, ctx)
        if isinstance(number, float) and not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


class OutputFile(click.Path):
    """A file an option writes. A path ending in '/' names a folder: refused, as a folder
    is (converted to a Path, it would lose the '/' and a file named like the folder would
    be written)."""

    def __init__(self, example: str = "results.json") -> None:
        super().__init__(path_type=Path)
        self.example = example

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.endswith(("/", "\\")):
            problem = f"{value} names a folder; give a file in it, e.g. {value}{self.example}"
            self.fail(problem, param, ctx)
        return super().convert(value, param, ctx)


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
    from . import log
    from .masking import remember_environment

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


def _files_arg(**kwargs: Any) -> Callable[[F], F]:
    return click.argument("file", type=click.Path(path_type=Path), **kwargs)


@main.command()
@_files_arg()
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
    callback=_check_resume,
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

    from . import log
    from .report import pretty

    if fmt == "json":
        log.json_by_default()
    from .runner import RunOptions, compile_workflow, execute
    from .variables import parse_assignments

    parsed = parse_assignments(variables)
    project, plan = compile_workflow(file)
    if resume is not None:
        from .store import find_run_of, runs_db

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
        with _sigterm_interrupts():
            if fmt == "json":
                result = _run_stoppable(execute(project, plan, options))
            else:
                with pretty.RunDisplay(plan, quiet=quiet) as display:
                    result = _run_stoppable(execute(project, plan, options, display))
    except KeyboardInterrupt:
        _interrupted(options.open_stores)
    RUN_FORMATS.get(fmt).write(RunReport(result, plan, quiet), sys.stdout)
    if result.error and fmt == "json":
        click.echo(f"error: task '{result.failed_task}': {result.error}", err=True)
    sys.exit(exit_code_for(result))


def exit_code_for(result: Any) -> int:
    from .results import Status

    if result.status is Status.SUCCEEDED:
        return EXIT_OK
    usage = result.usage
    produced = any(r.status is Status.SUCCEEDED for r in result.results)
    if usage is not None and usage.total.failures and not usage.total.calls and not produced:
        return EXIT_NO_RESULT  # every model call failed and nothing was produced
    return EXIT_FAILED


@main.command()
@click.argument("folder", required=False, default=".", type=click.Path(path_type=Path))
@handle_errors
def init(folder: Path) -> None:
    """Create a small working project in FOLDER (default: here): a database over a CSV, the
    local model, a workflow with a test, and an evaluation suite."""
    from .paths import shown_path
    from .scaffold import scaffold

    for path in scaffold(folder):
        click.echo(f"created {shown_path(path)}")
    where = "" if folder == Path(".") else f"cd {shown_path(folder)}, then "
    click.echo(
        f"next: {where}accord run revenue.workflow.yml; accord test revenue.workflow.yml; "
        "accord eval checks.eval.yml"
    )


@main.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@handle_errors
def validate(files: tuple[Path, ...]) -> None:
    """Check workflow, agent, test, evaluation and config.yml files (a folder: every one in
    it); no model or database is called. Every invalid file's problems are shown."""
    from .errors import AccordError, UnsupportedFeature

    failures = 0
    for path in files:
        checked = 0
        for file in _files_of(path):
            try:
                summary = _validate_one(file, in_folder=file != path)
            except UnsupportedFeature as exc:  # said, and not a failure: the rest still runs
                click.echo(f"unsupported: {exc.text}", err=True)
                checked += 1
                continue
            except AccordError as exc:
                failures += 1
                checked += 1
                click.echo(f"error: {exc.text}", err=True)
                continue
            if summary is None:  # a folder's file no check knows (data, notes): not checked
                continue
            checked += 1
            click.echo(f"ok: {file} ({summary})")
        if path.is_dir() and not checked:
            failures += 1
            click.echo(f"error: {path}: no file accord checks in this folder", err=True)
    if failures:
        sys.exit(EXIT_INVALID)


def _files_of(path: Path) -> list[Path]:
    """A file, or the files of a folder (hidden folders such as `.accord/` left out)."""
    if not path.is_dir():
        return [path]
    return sorted(
        p for p in path.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
    )  # fmt: skip


def _validate_one(file: Path, *, in_folder: bool = False) -> str | None:
    """A workflow is compiled; then every registered check sees the file (agent, test and
    evaluation files, a workflow's `tests:`); config.yml is loaded and checked as a project's.
    None: a file of a folder that no check knows."""
    from .compile import compile_workflow
    from .errors import LoadError
    from .kinds import file_checks
    from .loader import is_workflow_file

    if not file.exists():
        raise LoadError(f"{file}: file not found")
    if file.name == "config.yml":
        from .project import database_notes, load_project

        project = load_project(file)
        for note in database_notes(project):
            click.echo(f"note: {note.render()}", err=True)
        config = project.config
        return f"{len(config.databases)} databases, {len(config.models)} models"
    found: list[str] = []
    if is_workflow_file(file):
        _project, plan = compile_workflow(file, keep_templates=False)
        for note in plan.notes:
            click.echo(f"unsupported: {note.render()}", err=True)
        count = plan.count_nodes()
        found.append(f"{count} task{'' if count == 1 else 's'}")
    for check in file_checks():
        summary = check(file)
        if summary:
            found.append(summary)
    if not found and in_folder:
        return None
    if not found:
        raise LoadError(
            f"{file}: not a file accord checks: give a .workflow.yml (or Oxy's .procedure.yml "
            "/ .automation.yml), an .agent.yml, a .test.yml, an .eval.yml, an AgentV eval file "
            "(tests:), a scenario file (scenarios:), a .view.yml, a .topic.yml, a config.yml "
            "or a folder of them"
        )
    return ", ".join(found)


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
    from .compile import compile_workflow
    from .report import graph as graph_report

    _project, plan = compile_workflow(file, keep_templates=False)
    click.echo(graph_report.render(plan, fmt))


@main.command()
@click.argument("kind", required=False, type=click.Choice(["workflow", "config", "agent", "test"]))
@handle_errors
def schema(kind: str | None) -> None:
    """Print the JSON Schema of a file kind (all kinds without an argument)."""
    import json

    from .report.schema import schemas

    documents = schemas()
    click.echo(json.dumps(documents[kind] if kind else documents, indent=2))


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
    from .store import runs_db_of

    return runs_db_of(folder)


@runs.command("list")
@store_options
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@handle_errors
def runs_list(fmt: str, limit: int, folder: Path) -> None:
    """The newest runs first."""
    from .report import store_report
    from .store import list_runs

    path = store_path(folder)
    runs = list_runs(path, limit)
    click.echo(store_report.render_runs(runs, fmt))
    if not runs and fmt != "json":
        click.echo(_where_runs_are(path), err=True)


def _where_runs_are(path: Path) -> str:
    """Where to look instead: each project keeps its runs in its own .accord/runs.db."""
    from .paths import shown_path

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
    from .report import store_report
    from .store import find_run, run_results

    path = store_path(folder)
    stored = find_run(path, run_id)
    click.echo(store_report.render_run(stored, run_results(path, stored.run_id), fmt))


@main.command()
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--revoke", is_flag=True, help="Stop trusting the files.")
@click.option(
    "--list",
    "listing",
    is_flag=True,
    help="List the files trusted, and whether each is unchanged since.",
)
@handle_errors
def trust(files: tuple[Path, ...], revoke: bool, listing: bool) -> None:
    """Let FILES send keys to the URLs they name and run programs that are not the project's
    own (docs/security.md), as they are now: an edited file must be trusted again."""
    from . import trust as trusting
    from .errors import AccordError

    if listing:
        if files or revoke:
            raise AccordError("accord trust --list takes no files and no --revoke")
        for name, recorded in trusting.granted().items():
            try:
                state = "unchanged" if trusting.digest(Path(name)) == recorded else "changed"
            except OSError:
                state = "missing"
            click.echo(f"{name}  {state}")
        return
    if not files:
        raise AccordError("accord trust: give the files to trust (or --list, --revoke FILE)")
    if revoke:
        gone = set(trusting.revoke(list(files)))
        for file in files:
            click.echo(f"{'no longer trusted' if file in gone else 'was not trusted'}: {file}")
        return
    for file in files:
        if not file.is_file():
            raise AccordError(f"{file}: no such file; give the file to trust")
    for file, digest in trusting.grant(list(files)).items():
        click.echo(f"trusted: {file} (sha256 {digest[:12]}; edit it and it must be trusted again)")

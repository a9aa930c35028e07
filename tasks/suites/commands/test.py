"""The command skeleton of `accord test` and `accord eval`, and `accord test FILE`.

Each command's options are the fields of its dataclass (`TestCommand`, `EvalCommand`), each
declared once; the options both take (format, output, report, tags, cases, quiet, resume,
concurrency, cache) come from the one table of shared options (engine/cli/options), the
executor's and the baseline's are added to both. Both run on the engine's runner
(`core/nodes.execute_plan`), gate through `core/gate`, write their outputs through the one
registry of formats (`write_outputs`) and end with the same exit codes (`exit_code`):

0 every gate passed (`eval` without a gate: no case failed or errored); 1 a gate failed
(`eval` without a gate: a case failed or errored); 2 invalid input (raised as an
`AccordError` before anything runs); 3 nothing produced a result; 130 interrupted. stdout
holds only the formatted result; errors, warnings and gate messages go to stderr.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO, TypeVar

import click
from rich.console import Console

from ....engine.cli import (
    CommandParams,
    FiniteFloatRange,
    OutputFile,
    argument,
    declared_options,
    executor_options,
    handle_errors,
    interruptible,
    option,
    shared,
)
from ....engine.errors import AccordError, LoadError
from ....engine.masking import masked
from ....engine.paths import Output, check_outputs
from ....engine.project import find_root
from ....engine.report.formats import CommandFormats
from ....engine.runner import RunOptions
from ....engine.store import RunStore
from ..compare.gate import apply_baseline, baseline_options
from ..core.gate import GateKind, GateResult
from ..reports.formats import REPORT_FORMATS, ReportRequest
from ..testing.gate import Mode, check
from ..testing.prepared import PreparedSuite, select

EXIT_OK, EXIT_FAILED, EXIT_NO_RESULT = 0, 1, 3
CacheMode = Literal["on", "off", "readonly", "replay"]
F = TypeVar("F", bound=Callable[..., Any])
R = TypeVar("R")

# --- the skeleton -------------------------------------------------------------------------------


def write_outputs(
    formats: CommandFormats[R],
    fmt: str,
    report_for: Callable[[bool], R],
    *,
    output: Path | None,
    report: Path | None = None,
    output_dir: Path | None = None,
) -> None:
    """Write a command's result: `--output-dir`'s set of files, `--report`'s page, then
    `--output` (in the format its suffix claims, else `--format`'s) or stdout. When the
    suffix chose another format, stdout still shows `--format`'s. `report_for(terminal)`
    builds the writers' input (terminal: written on stdout)."""
    if output_dir is not None:
        formats.write_folder(report_for(False), output_dir)
    if report is not None:
        with open_output(report) as handle:
            formats.get("html").write(report_for(False), handle)
    chosen = formats.get(fmt)
    if output is not None:
        into = formats.for_file(output, fmt)
        with open_output(output) as handle:
            into.write(report_for(False), handle)
        if into is chosen:
            return
    chosen.write(report_for(True), sys.stdout)
    sys.stdout.flush()


def open_output(path: Path) -> TextIO:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open("w", encoding="utf-8")
    except OSError as exc:
        raise AccordError(f"{path}: cannot write: {exc.strerror}") from None


def exit_code(
    err: Console, *, nothing: str | None, gate: GateResult | None, failed: str | None = None
) -> int:
    """The exit code, its reasons on stderr: `nothing` (why nothing produced a result) is 3;
    a gate decides 0 or 1; without one, `failed` (what did not pass) is 1."""
    if nothing is not None:
        err.print(f"error: {nothing}", highlight=False)
        return EXIT_NO_RESULT
    if gate is not None:
        if gate.warning is not None:
            err.print(f"warning: {gate.warning}", highlight=False)
        for message in gate.messages:
            err.print(message, highlight=False, markup=False)
        return EXIT_OK if gate.passed else EXIT_FAILED
    if failed is not None:
        err.print(failed, highlight=False)
        return EXIT_FAILED
    return EXIT_OK


def stderr_console() -> Console:
    return Console(file=masked(sys.stderr), soft_wrap=True)


# --- accord test --------------------------------------------------------------------------------


@dataclass(frozen=True)
class TestCommand(CommandParams):
    """The options of `accord test`, each declared once (engine/cli/options)."""

    __test__ = False  # not a pytest test class

    file: Path | None = argument(type=click.Path(path_type=Path), required=False)
    variables: tuple[str, ...] = shared(
        "variables", help="Set a variable of the tested workflow or agent (repeatable)."
    )
    min_accuracy: float | None = option(
        "--min-accuracy", type=FiniteFloatRange(0.0, 1.0), default=None,
        help="Exit 1 when accuracy is below this (0..1).",
    )  # fmt: skip
    threshold_mode: Mode = option(
        "--threshold-mode", type=click.Choice(["average", "all"]), default="average",
        show_default=True, help="average: the mean of the tests' accuracies; all: every test.",
    )  # fmt: skip
    gate: GateKind = shared(
        "gate", help="Compare the accuracy, or the lower bound of its 95% Wilson interval."
    )
    output_json: Path | None = option(
        "--output-json", type=OutputFile(), default=None,
        help="Also write the detailed results (every run, pair and case) as JSON.",
    )  # fmt: skip
    fmt: str = shared("fmt", type=click.Choice(REPORT_FORMATS.choices()))
    output: Path | None = shared("output")
    report: Path | None = shared("report")
    tags: tuple[str, ...] = shared("tags")
    cases: tuple[str, ...] = shared(
        "cases", help="Only this case (its name, prompt or 0-based index) or test (repeatable)."
    )
    quiet: bool = shared("quiet", help="Only the metrics: no failures, no progress.")
    resume: str | None = shared("resume")
    max_concurrency: int | None = shared(
        "max_concurrency",
        help="Work running at once, across all tests (default: config, else 16).",
    )
    cache_mode: CacheMode = shared("cache_mode")


def run_test_command(command: TestCommand) -> int:
    """Run `accord test` and return its exit code."""
    if command.fmt == "json":
        from ....engine import log

        log.json_by_default()
    from ....engine.report.pretty import RunDisplay
    from ....engine.variables import parse_assignments
    from ..frontends.oxy import testfiles
    from ..frontends.oxy.loading import prepare
    from ..testing.plan import build_test_plan, run_tests

    given = parse_assignments(command.variables)
    files = [command.file] if command.file is not None else testfiles.discover(Path.cwd())
    suites = []
    for file in files:
        suite = select(prepare(file), command.tags, command.cases)
        if suite.tests:
            suites.append(testfiles.with_variables(suite, given))
        elif command.file is not None:
            raise LoadError(f"{command.file}: no test or case matches {_filters(command)}")
    if not suites:
        raise LoadError(f"no test or case of {len(files)} test file(s) matches {_filters(command)}")
    check_targets(command)
    quiet = command.quiet or command.fmt != "pretty"
    results = []
    stores: list[RunStore] = []
    again = " ".join(
        ["accord test", *([str(command.file)] if command.file else []), "--resume last"]
    )
    with interruptible(stores, again):
        for suite in suites:
            options = RunOptions(
                max_concurrency=command.max_concurrency,
                cache_mode=command.cache_mode,
                resume=_resumed(suite, command.resume),
                open_stores=stores,
            )
            with RunDisplay(build_test_plan(suite), quiet=quiet) as display:
                results.append(asyncio.run(run_tests(suite, options, display)))
    result = testfiles.merge(results)
    err = stderr_console()
    from ..reports.text import print_problems

    print_problems(result, err)
    gate = None
    if command.min_accuracy is not None:
        gate = check(result.tests, command.min_accuracy, command.threshold_mode, command.gate)

    def report_for(terminal: bool) -> ReportRequest:
        return ReportRequest(result, gate, command.min_accuracy, command.quiet, terminal)

    write_outputs(
        REPORT_FORMATS, command.fmt, report_for, output=command.output, report=command.report
    )
    if command.output_json is not None:
        with open_output(command.output_json) as handle:
            handle.write(testfiles.detailed_json(result, gate) + "\n")
    nothing = None
    if not result.produced:
        nothing = f"no test produced a result ({len(result.tests)} test(s) failed to run)"
    return apply_baseline(exit_code(err, nothing=nothing, gate=gate), result)


def _resumed(suite: PreparedSuite, resume: str | None) -> str | None:
    """The run `--resume` names for this file: an id, or `last`, the newest run of it."""
    if resume is None:
        return None
    from ....engine.store import find_run_of, runs_db

    store = runs_db(suite.project.root)
    return find_run_of(store, resume, f"{suite.name} tests", suite.path).run_id


def _filters(command: TestCommand) -> str:
    given = [f"--tag {t}" for t in command.tags] + [f"--case {c}" for c in command.cases]
    return " ".join(given)


def check_targets(command: TestCommand) -> None:
    """Refuse, before any test runs, an `--output`, `--report` or `--output-json` that could
    not be written or would replace what the project keeps (engine/paths.check_outputs)."""
    given = (
        ("--output", command.output, REPORT_FORMATS.get(command.fmt).file),
        ("--report", command.report, REPORT_FORMATS.get("html").file),
        ("--output-json", command.output_json, "results.json"),
    )
    from ..compare.gate import baseline_file

    tested = command.file if command.file is not None else Path.cwd()
    inputs = {tested: "the tested file"}
    baseline = baseline_file()
    if baseline is not None:
        inputs[baseline] = "the --baseline results file"
    check_outputs(
        [Output(option, path, example=example) for option, path, example in given if path],
        inputs=inputs,
        roots=[find_root(tested)[0]],
        nothing_ran="no test was run",
    )


@click.command("test")
@declared_options(TestCommand)
@executor_options
@handle_errors
@baseline_options
def test_command(**params: Any) -> None:
    """Run the tests of a workflow, an agent or a .test.yml file (none: every .test.yml
    of the project)."""
    sys.exit(run_test_command(TestCommand.from_params(params)))

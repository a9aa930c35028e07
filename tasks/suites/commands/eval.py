"""`accord eval FILE...`: run evaluation suites, report, gate.

Exit codes: 0 every gate held (without a gate: no case failed or errored); 1 a gate failed
(without a gate: a case failed or errored); 2 invalid input, before anything runs; 3 no case
produced a result; 130 interrupted. stdout holds only the formatted result.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click
from rich.console import Console

from ....engine.cli import (
    CommandParams,
    FiniteFloatRange,
    argument,
    declared_options,
    executor_options,
    handle_errors,
    interruptible,
    option,
    shared,
)
from ....engine.clip import clip, kept_in
from ....engine.errors import AccordError, LoadError, ValidationError
from ....engine.masking import masked
from ....engine.runner import RunOptions
from ....engine.scheduler import Observer
from ....engine.store import RunStore
from ..compare.gate import apply_baseline, baseline_options
from ..core.cases import Suite
from ..core.frontend import FilesOption, OptionsCommand, Request
from ..core.gate import GateResult, check_cases
from ..core.verdicts import SuiteRun
from ..reports.formats import EVAL_FORMATS, EvalReport
from .test import EXIT_NO_RESULT, exit_code, stderr_console, write_outputs

if TYPE_CHECKING:
    from ....engine.paths import Output


@dataclass(frozen=True)
class EvalCommand(CommandParams):
    """The options of `accord eval`, each declared once (engine/cli/options); `options`: the
    front-ends' own (core/frontend), by parameter name."""

    files: tuple[Path, ...] = argument(nargs=-1, type=click.Path(path_type=Path))
    output_dir: Path | None = option(
        "--output-dir", type=click.Path(path_type=Path),
        help="Write results.json and report.html in this folder (a scenario suite: its own "
        "page and JSON).",
    )  # fmt: skip
    min_score: float | None = option(
        "--min-score", type=FiniteFloatRange(0.0, 1.0),
        help="Exit 1 when the mean case score is below this.",
    )  # fmt: skip
    min_pass_rate: float | None = option(
        "--min-pass-rate", type=FiniteFloatRange(0.0, 1.0),
        help="Exit 1 when the pass rate is below this.",
    )  # fmt: skip
    gate: Literal["mean", "lower-bound"] = shared("gate")
    repeat: int | None = option(
        "--repeat", type=click.IntRange(1, 1000), help="Run each case N times (pass@k)."
    )
    judge_model: str | None = option(
        "--judge-model", help="The judge model (default: the file's, else config.yml's)."
    )
    # read as --max-concurrency when that is not given (eval_command)
    concurrency: int | None = option(
        "--concurrency", type=click.IntRange(1, 10_000), help="Same as --max-concurrency."
    )
    fmt: str = shared("fmt", type=click.Choice(EVAL_FORMATS.choices()))
    output: Path | None = shared(
        "output",
        help="Write the result here (a promptfoo config: promptfoo's -o file, its form by "
        "suffix: .json, .jsonl, .yaml, .csv, .html).",
    )
    report: Path | None = shared("report")
    tags: tuple[str, ...] = shared("tags")
    cases: tuple[str, ...] = shared("cases", help="Only this case id (repeatable).")
    quiet: bool = shared("quiet", help="Only the figures: no case table, no progress.")
    resume: str | None = shared("resume")
    max_concurrency: int | None = shared(
        "max_concurrency", help="Work running at once (default: config, else 16)."
    )
    cache_mode: str = shared("cache_mode")
    # the front-ends' own options, by parameter name (no field of this command declares them)
    options: Mapping[str, Any] = field(default_factory=dict)


def load_suites(path: Path, command: EvalCommand) -> list[Suite]:
    """The suites a path holds, loaded by the front-end that claims it (frontends)."""
    from ..core import frontend as frontends

    # what the front-ends are given: the command's options of the same names
    request = Request(**{f.name: getattr(command, f.name) for f in fields(Request)})
    return frontends.load(path, request)


def load_all(command: EvalCommand) -> list[Suite]:
    """Every file's suites. An invalid file does not hide the next one's problems: all the
    invalid files' problems are reported in one error (exit 2), naming the valid files as
    not run."""
    from ..core.frontend import combined

    suites: list[Suite] = []
    errors: list[AccordError] = []
    valid: list[Path] = []
    for path in command.files:
        try:
            suites += load_suites(path, command)
        except (ValidationError, LoadError) as exc:
            errors.append(exc)
        else:
            valid.append(path)
    if not errors:
        return suites
    if len(errors) == 1 and not valid:
        raise errors[0]
    error = combined(errors)
    if valid:
        named = ", ".join(str(p) for p in valid)
        error.message += f"\nnot run: {named} (valid; nothing runs until every file is)"
    raise error


def select_cases(suite: Suite, tags: tuple[str, ...], names: tuple[str, ...]) -> Suite:
    from dataclasses import replace

    if not tags and not names:
        return suite
    kept = [
        c for c in suite.cases
        if (not names or c.id in names) and (not tags or set(tags) & set(c.tags))
    ]  # fmt: skip
    return replace(suite, cases=kept)


def gate_result(runs: list[SuiteRun], command: EvalCommand) -> GateResult | None:
    """The gates asked for, over every case of every suite (core/gate.check_cases)."""
    cases = [c for run in runs for c in run.cases]
    return check_cases(cases, command.min_score, command.min_pass_rate, command.gate)


def run_eval_command(command: EvalCommand) -> int:
    if command.fmt == "json":
        from ....engine import log

        log.json_by_default()
    from ....engine.report.pretty import RunDisplay
    from ..core.frontend import by_frontend, output_owner
    from ..core.nodes import plan_size

    suites = [select_cases(suite, command.tags, command.cases) for suite in load_all(command)]
    empty = [s for s in suites if not s.cases]
    if empty:
        raise LoadError(f"{empty[0].path}: no case matches the --tag/--case filters")
    err = Console(file=masked(sys.stderr), soft_wrap=True)
    for note in (n for s in suites for n in s.notes):
        err.print(f"warning: {note}", highlight=False, markup=False)
    kinds = by_frontend(suites, lambda suite: suite)
    own_dirs = [d for f, some in kinds if f.writes is not None for d in f.writes(some)]
    owner = output_owner(kinds, command.output)  # --output as a front-end's own file
    own_files = [
        planned for f, some in kinds if f.files is not None
        for planned in f.files.planned(some, command.output if f is owner else None)
    ]  # fmt: skip
    check_outputs(command, suites, sorted(set(own_dirs)), own_files)
    for frontend, some in kinds:
        if frontend.before_run is not None:
            frontend.before_run(some, err)
    quiet = command.quiet or command.fmt != "pretty"
    stores: list[RunStore] = []
    again = " ".join(["accord eval", *map(str, command.files), "--resume last"])
    runs: list[SuiteRun] = []

    async def run_all() -> None:
        # the runs are kept here, not returned: on its way out asyncio.run formats its SIGINT
        # handler, whose text holds the main task's repr, result included (every case of
        # every suite: a tenth of a second for 1,000 cases)
        runs.extend(await _run_suites(suites, command, display, stores))

    # the loaded suites live to the end: the collector need not walk them again while the
    # plans are built (a full collection over 1,000 loaded cases took 50 ms before the runner
    # freezes the heap itself, engine/runner.py)
    gc.freeze()
    try:
        size = sum(plan_size(suite) for suite in suites)
        with interruptible(stores, again), RunDisplay(quiet=quiet, nodes=size) as display:
            asyncio.run(run_all())
    finally:
        gc.unfreeze()
    gate = gate_result(runs, command)
    _write(command, runs, gate, output=None if owner is not None else command.output)
    for frontend, own_runs in by_frontend(runs, lambda run: run.suite):
        if frontend.files is not None:
            frontend.files.write(own_runs, command.output if frontend is owner else None)
        if frontend.after_run is not None:
            frontend.after_run(own_runs, command.output_dir, err)
    code = apply_baseline(_exit_code(runs, gate), runs)
    # a front-end's own exit code for "no result" (scenario suites': 1), when all are its
    instead = {f.no_result_exit for f, _suites in kinds}
    if code == EXIT_NO_RESULT and len(instead) == 1:
        (own,) = instead
        return own if own is not None else code
    return code


def check_outputs(
    command: EvalCommand, suites: list[Suite], scenario_dirs: list[Path], own_files: list[Output]
) -> None:
    """Refuse, before any case runs, an --output, --report or --output-dir (or the folders
    front-ends write into by default: the scenario reports'; or the files they write
    themselves: `own_files`) that could not be written or would replace what a project keeps:
    its files, an evaluated file, `.accord/` (engine/paths.check_outputs)."""
    from ....engine.paths import Output
    from ....engine.paths import check_outputs as check
    from ....engine.project import find_root
    from ..compare.gate import baseline_file

    inputs: dict[Path, str] = {path: "an evaluated file" for path in command.files}
    inputs.update({s.path: "an evaluated file" for s in suites if s.path is not None})
    baseline = baseline_file()
    if baseline is not None:
        inputs[baseline] = "the --baseline results file"
    roots = {find_root(path)[0] for path in inputs}
    # a suite's project may be named apart from its file (scenario files' --project-root)
    roots.update(s.project.root for s in suites if s.project is not None)
    outputs = []
    if command.output is not None:
        example = EVAL_FORMATS.for_file(command.output, command.fmt).file
        outputs.append(Output("--output", command.output, example=example))
    if command.report is not None:
        outputs.append(Output("--report", command.report, example=EVAL_FORMATS.get("html").file))
    if command.output_dir is not None:
        outputs.append(Output("--output-dir", command.output_dir, EVAL_FORMATS.folder_files))
    else:
        outputs += [Output("the scenario reports' folder", d, ()) for d in scenario_dirs]
    outputs += own_files
    check(outputs, inputs=inputs, roots=sorted(roots), nothing_ran="no case was run")


async def _run_suites(
    suites: list[Suite], command: EvalCommand, display: Observer, stores: list[RunStore]
) -> list[SuiteRun]:
    """Every file's suite at once, each its own run, all under one `--max-concurrency`
    (a suite's own `max_concurrency` still bounds it alone)."""
    from ....engine.project import Project
    from ....engine.runner import DEFAULT_CONCURRENCY
    from ....engine.scheduler import SlotPool
    from ..core.nodes import run_suite

    pool = None
    if len(suites) > 1:
        project = suites[0].project
        configured = project.config.max_concurrency if isinstance(project, Project) else None
        pool = SlotPool(command.max_concurrency or configured or DEFAULT_CONCURRENCY)
    options = RunOptions(
        max_concurrency=command.max_concurrency,
        cache_mode=command.cache_mode,
        resume=command.resume,
        pool=pool,
        open_stores=stores,  # Ctrl-C or SIGTERM records their runs as interrupted
    )
    return list(await asyncio.gather(*(run_suite(s, options, display) for s in suites)))


def _write(
    command: EvalCommand, runs: list[SuiteRun], gate: GateResult | None, output: Path | None
) -> None:
    """The result in every output asked for (command.write_outputs); `output`: --output
    unless a front-end writes it as its own file."""

    def report_for(terminal: bool) -> EvalReport:
        return EvalReport(runs, gate, command.quiet, terminal)

    write_outputs(
        EVAL_FORMATS, command.fmt, report_for, output=output, report=command.report,
        output_dir=command.output_dir,
    )  # fmt: skip


def _exit_code(runs: list[SuiteRun], gate: GateResult | None) -> int:
    err = stderr_console()
    cases = [c for run in runs for c in run.cases]
    for warning in [w for run in runs for w in run.warnings] + [
        w for c in cases for w in c.warnings
    ]:
        err.print(f"warning: {warning}", highlight=False, markup=False)
    for run in runs:
        for case in (c for c in run.cases if c.status == "error"):
            error = clip(case.error or "", kept=kept_in(run.run_id))
            err.print(f"error: case {case.id}: {error}", highlight=False, markup=False)
    nothing = None
    if cases and all(c.status == "error" for c in cases):
        nothing = f"no case produced a result ({len(cases)} errored)"
    bad = [c for c in cases if c.status in ("failed", "error")]
    failed = f"{len(bad)} of {len(cases)} case runs did not pass" if bad else None
    return exit_code(err, nothing=nothing, gate=gate, failed=failed)


@click.command("eval", cls=OptionsCommand)
@declared_options(EvalCommand)
@executor_options
@handle_errors
@baseline_options
def eval_command(**params: Any) -> None:
    """Run evaluation suites (.eval.yml, .test.yml, AgentV eval files, promptfoo configs,
    scenario files or folders of them) and report their cases. `--output x.jsonl` writes
    AgentV's result records; scenario suites write an HTML report and its JSON into
    --output-dir (reports)."""
    ctx = click.get_current_context()
    # a front-end's option that names more files (promptfoo's -c/--config): as if named
    more = [p.name for p in ctx.command.get_params(ctx) if isinstance(p, FilesOption)]
    files = (*params["files"], *(path for name in more for path in params.pop(name) or ()))
    if not files:
        from ..core.frontend import default_file, default_names

        found = default_file(Path.cwd())
        if found is None:
            raise click.UsageError(
                "name a file to evaluate (none was named, and this folder has none of "
                f"{', '.join(default_names())})"
            )
        files = (found,)
    command = EvalCommand.from_params(
        params, files=files, max_concurrency=params["max_concurrency"] or params["concurrency"],
        options=EvalCommand.others(params),
    )  # fmt: skip
    sys.exit(run_eval_command(command))

"""`accord eval FILE...`: run evaluation suites, report, gate.

Exit codes: 0 every gate held (without a gate: no case failed or errored); 1 a gate failed
(without a gate: a case failed or errored); 2 invalid input, before anything runs; 3 no case
produced a result; 130 interrupted. stdout holds only the formatted result.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import click
from rich.console import Console

from accord.engine.cli import FiniteFloatRange, interruptible
from accord.engine.clip import clip, kept_in
from accord.engine.errors import AccordError, LoadError, ValidationError
from accord.engine.masking import masked
from accord.engine.runner import RunOptions
from accord.engine.scheduler import Observer
from accord.engine.store import RunStore
from accord.tasks.suites.command import (
    EXIT_FAILED,
    EXIT_NO_RESULT,
    exit_code,
    shared_options,
    stderr_console,
    write_outputs,
)
from accord.tasks.suites.compare.gate import apply_baseline
from accord.tasks.suites.core.cases import Suite
from accord.tasks.suites.core.gate import GateResult, check_cases
from accord.tasks.suites.core.verdicts import SuiteRun
from accord.tasks.suites.reports.formats import EVAL_FORMATS, EvalReport, scenario_reports


@dataclass(frozen=True)
class EvalCommand:
    files: tuple[Path, ...]
    fmt: str = "pretty"
    output: Path | None = None
    report: Path | None = None
    output_dir: Path | None = None
    min_score: float | None = None
    min_pass_rate: float | None = None
    gate: Literal["mean", "lower-bound"] = "mean"
    tags: tuple[str, ...] = ()
    cases: tuple[str, ...] = ()
    repeat: int | None = None
    judge_model: str | None = None
    max_concurrency: int | None = None
    cache_mode: str = "on"
    resume: str | None = None
    quiet: bool = False
    target: str | None = None
    targets: Path | None = None
    agent_class: str | None = None
    project_root: Path | None = None
    seed: int | None = None
    pass_threshold: float | None = None


def load_suites(path: Path, command: EvalCommand) -> list[Suite]:
    """The suites a path holds: a file's, or a folder's scenario files'."""
    from accord.tasks.suites.scenarios import is_scenario_file

    if path.is_dir() or is_scenario_file(path):
        from accord.tasks.suites.scenarios.runner import load_scenarios, scenario_paths
        from accord.tasks.suites.scenarios.suite import ScenarioOptions

        options = ScenarioOptions(
            seed=command.seed, project_root=command.project_root, agent_class=command.agent_class,
            judge_model=command.judge_model, concurrency=command.max_concurrency,
            pass_threshold=command.pass_threshold,
        )  # fmt: skip
        paths = scenario_paths(path)
        resumed = _resumed_run(command, options.root_for(paths[0]))
        return [load_scenarios(p, options, resume_run=resumed) for p in paths]
    return [load_suite(path, command)]


def _resumed_run(command: EvalCommand, root: Path) -> str | None:
    """The id of the run `--resume` names (a scenario suite's macros are seeded from it)."""
    if command.resume is None:
        return None
    from accord.engine.store import find_run, runs_db

    return find_run(runs_db(root), command.resume).run_id


def load_suite(path: Path, command: EvalCommand) -> Suite:
    """The suite a file holds, by its kind."""
    from accord.tasks.suites.evalfile import is_eval_file, load_eval_file, load_test_file

    if not path.exists():
        raise LoadError(f"{path}: no such file")
    if is_eval_file(path):
        return load_eval_file(path, judge_model=command.judge_model, repeat=command.repeat)
    if path.name.endswith((".test.yml", ".test.yaml")):
        return load_test_file(path, judge_model=command.judge_model, repeat=command.repeat)
    from accord.tasks.suites.agentv.files import is_agentv_file, load_agentv_file

    if is_agentv_file(path):
        return load_agentv_file(
            path, target=command.target, targets_file=command.targets,
            judge_model=command.judge_model, repeat=command.repeat,
        )  # fmt: skip
    raise LoadError(
        f"{path}: not an evaluation file accord knows (an .eval.yml or .test.yml suite, or an "
        "AgentV eval file with 'tests:', or a scenario file with 'scenarios:'); run the tests of "
        "workflows and agents with `accord test`"
    )


def load_all(command: EvalCommand) -> list[Suite]:
    """Every file's suites. An invalid file does not hide the next one's problems: all the
    invalid files' problems are reported in one error (exit 2), naming the valid files as
    not run."""
    suites: list[Suite] = []
    errors: list[tuple[Path, AccordError]] = []
    valid: list[Path] = []
    for path in command.files:
        try:
            suites += load_suites(path, command)
        except (ValidationError, LoadError) as exc:
            errors.append((path, exc))
        else:
            valid.append(path)
    if not errors:
        return suites
    if len(errors) == 1 and not valid:
        raise errors[0][1]
    issues = [i for _path, exc in errors if isinstance(exc, ValidationError) for i in exc.issues]
    # a file that does not parse says where in its own message
    unread = [exc.text for _path, exc in errors if not isinstance(exc, ValidationError)]
    error: AccordError = ValidationError(issues) if issues else LoadError(unread.pop(0))
    lines = [error.message, *unread]
    if valid:
        named = ", ".join(str(p) for p in valid)
        lines.append(f"not run: {named} (valid; nothing runs until every file is)")
    error.message = "\n".join(lines)
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
        from accord.engine import log

        log.json_by_default()
    from accord.engine.report.pretty import RunDisplay
    from accord.tasks.suites.core.nodes import build_plan
    from accord.tasks.suites.scenarios import is_scenario_suite

    suites = [select_cases(suite, command.tags, command.cases) for suite in load_all(command)]
    empty = [s for s in suites if not s.cases]
    if empty:
        raise LoadError(f"{empty[0].path}: no case matches the --tag/--case filters")
    err = Console(file=masked(sys.stderr), soft_wrap=True)
    for note in (n for s in suites for n in s.notes):
        err.print(f"warning: {note}", highlight=False, markup=False)
    scenarios = [s for s in suites if is_scenario_suite(s)]
    if scenarios:
        from accord.tasks.suites.scenarios.runner import report_folder, seed_line
    check_outputs(command, suites, sorted({report_folder(s, None) for s in scenarios}))
    for suite in scenarios:
        err.print(seed_line(suite), highlight=False, markup=False)
    quiet = command.quiet or command.fmt != "pretty"
    plans = [build_plan(suite)[0] for suite in suites]
    stores: list[RunStore] = []
    again = " ".join(["accord eval", *map(str, command.files), "--resume last"])
    with interruptible(stores, again), RunDisplay(*plans, quiet=quiet) as display:
        runs = asyncio.run(_run_suites(suites, command, display, stores))
    gate = gate_result(runs, command)
    _write(command, runs, gate)
    code = apply_baseline(_exit_code(runs, gate), runs)
    if code == EXIT_NO_RESULT and len(scenarios) == len(suites):
        return EXIT_FAILED  # a scenario suite's exit codes are 0, 1 and 130 (seed 003)
    return code


def check_outputs(command: EvalCommand, suites: list[Suite], scenario_dirs: list[Path]) -> None:
    """Refuse, before any case runs, an --output, --report or --output-dir (or the scenario
    reports' default folder) that could not be written or would replace what a project
    keeps: its files, an evaluated file, `.accord/` (engine/paths.check_outputs)."""
    from accord.engine.paths import Output
    from accord.engine.paths import check_outputs as check
    from accord.engine.project import find_root

    inputs: dict[Path, str] = {path: "an evaluated file" for path in command.files}
    inputs.update({s.path: "an evaluated file" for s in suites if s.path is not None})
    roots = {find_root(path)[0] for path in inputs}
    if command.project_root is not None:
        roots.add(command.project_root)
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
    check(outputs, inputs=inputs, roots=sorted(roots), nothing_ran="no case was run")


async def _run_suites(
    suites: list[Suite], command: EvalCommand, display: Observer, stores: list[RunStore]
) -> list[SuiteRun]:
    """Every file's suite at once, each its own run, all under one `--max-concurrency`
    (a suite's own `max_concurrency` still bounds it alone)."""
    from accord.engine.project import Project
    from accord.engine.runner import DEFAULT_CONCURRENCY
    from accord.engine.scheduler import SlotPool
    from accord.tasks.suites.core.nodes import run_suite

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


def _write(command: EvalCommand, runs: list[SuiteRun], gate: GateResult | None) -> None:
    """The result in every output asked for (command.write_outputs); a scenario suite's
    page and JSON go to `reports/` of its project when no --output-dir is given."""

    def report_for(terminal: bool) -> EvalReport:
        return EvalReport(runs, gate, command.quiet, terminal)

    write_outputs(
        EVAL_FORMATS, command.fmt, report_for, output=command.output, report=command.report,
        output_dir=command.output_dir,
    )  # fmt: skip
    if command.output_dir is None:
        scenario_reports(runs, None)


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


@click.command("eval")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--output-dir", type=click.Path(path_type=Path),
              help="Write results.json and report.html in this folder (a scenario suite: its "
              "own page and JSON).")  # fmt: skip
@click.option(
    "--min-score",
    type=FiniteFloatRange(0.0, 1.0),
    help="Exit 1 when the mean case score is below this.",
)
@click.option(
    "--min-pass-rate",
    type=FiniteFloatRange(0.0, 1.0),
    help="Exit 1 when the pass rate is below this.",
)
@click.option("--gate", type=click.Choice(["mean", "lower-bound"]), default="mean", show_default=True,
              help="Gate on the figure, or on the lower bound of its 95% interval.")  # fmt: skip
@click.option("--repeat", type=click.IntRange(1, 1000), help="Run each case N times (pass@k).")
@click.option("--judge-model", help="The judge model (default: the file's, else config.yml's).")
@click.option(
    "--concurrency",
    "concurrency",
    type=click.IntRange(1, 10_000),
    help="Same as --max-concurrency.",
)
@click.option("--target", help="AgentV eval files: the target of tests that name none.")
@click.option("--targets", "targets_file", type=click.Path(path_type=Path),
              help="AgentV eval files: the targets file (default: the nearest .agentv/targets.yaml).")  # fmt: skip
@click.option("--agent-class", help="Scenario files: the agent class (module.Class) of scenarios "
              "that name none.")  # fmt: skip
@click.option("--project-root", type=click.Path(path_type=Path, file_okay=False),
              help="Scenario files: the root their macros' files and agent classes are found "
              "under (default: the file's project: its nearest config.yml's folder, else its "
              "own).")  # fmt: skip
@click.option("--seed", type=int, help="Scenario files: the seed of random macros (default: "
              "the run's; the report shows it).")  # fmt: skip
@click.option("--pass-threshold", type=click.FloatRange(0, 10), help="Scenario files: the mean "
              "metric score a scenario needs (0-10), below the scenario's and the file's "
              "pass_threshold (default 7).")  # fmt: skip
@shared_options(
    "eval",
    cases_help="Only this case id (repeatable).",
    quiet_help="Only the figures: no case table, no progress.",
    concurrency_help="Work running at once (default: config, else 16).",
)
def eval_command(
    files: tuple[Path, ...], fmt: str, output: Path | None, report: Path | None,
    output_dir: Path | None, min_score: float | None, min_pass_rate: float | None,
    gate: Literal["mean", "lower-bound"], tags: tuple[str, ...], cases: tuple[str, ...],
    repeat: int | None, judge_model: str | None, concurrency: int | None, resume: str | None,
    target: str | None, targets_file: Path | None, agent_class: str | None,
    project_root: Path | None, seed: int | None, quiet: bool, max_concurrency: int | None,
    cache_mode: str, pass_threshold: float | None = None,
) -> None:  # fmt: skip
    """Run evaluation suites (.eval.yml, .test.yml, AgentV eval files, scenario files or
    folders of them) and report their cases. `--output x.jsonl` writes AgentV's result
    records; scenario suites write an HTML report and its JSON into --output-dir (reports)."""
    command = EvalCommand(
        files=files, fmt=fmt, output=output, report=report, output_dir=output_dir,
        min_score=min_score, min_pass_rate=min_pass_rate, gate=gate, tags=tags, cases=cases,
        repeat=repeat, judge_model=judge_model, max_concurrency=max_concurrency or concurrency,
        cache_mode=cache_mode, resume=resume, quiet=quiet, target=target, targets=targets_file,
        agent_class=agent_class, project_root=project_root, seed=seed,
        pass_threshold=pass_threshold,
    )  # fmt: skip
    sys.exit(run_eval_command(command))

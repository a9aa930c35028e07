"""The scenario files' front-end: a YAML file with `scenarios:`, or a folder of them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .....engine.errors import Issue
from ...core.frontend import FrontEnd, Request, Source, load_each
from .sources import is_scenario_source

if TYPE_CHECKING:
    from rich.console import Console

    from ...core.cases import Suite
    from ...core.verdicts import SuiteRun

EXIT_FAILED = 1


def load(source: Source, request: Request) -> list[Suite]:
    """The file's suite, or one per scenario file of a folder; seeded from the run resumed."""
    from .runner import load_scenarios, scenario_sources_of
    from .suite import ScenarioOptions

    own = request.options
    options = ScenarioOptions(
        seed=own.get("seed"), project_root=own.get("project_root"),
        agent_class=own.get("agent_class"), judge_model=request.judge_model,
        concurrency=request.max_concurrency, pass_threshold=own.get("pass_threshold"),
    )  # fmt: skip
    sources = scenario_sources_of(source)
    resumed = _resumed_run(request.resume, options.root_for(sources[0].path))
    return load_each(
        sources, lambda s: load_scenarios(s.path, options, resume_run=resumed, text=s.text)
    )


def _resumed_run(resume: str | None, root: Path) -> str | None:
    """The id of the run `--resume` names (a scenario suite's macros are seeded from it)."""
    if resume is None:
        return None
    from .....engine.store import find_run, runs_db

    return find_run(runs_db(root), resume).run_id


def writes(suites: Sequence[Suite]) -> list[Path]:
    """The reports' folders: `reports/` of each suite's project."""
    from .runner import report_folder

    return sorted({report_folder(s, None) for s in suites})


def before_run(suites: Sequence[Suite], err: Console) -> None:
    from .runner import seed_line

    for suite in suites:
        err.print(seed_line(suite), highlight=False, markup=False)


def after_run(runs: Sequence[SuiteRun], output_dir: Path | None, err: Console) -> None:
    from .runner import write_reports

    write_reports(list(runs), output_dir, err)


def problems(suites: Sequence[Suite]) -> list[Issue]:
    """Macros that failed to expand: a run errors their scenario; `accord validate` says so."""
    from .suite import MacroFailure

    issues: dict[tuple[str, int | None], Issue] = {}
    for suite in suites:
        for case in suite.cases:
            target = suite.targets.get(case.target or "")
            if isinstance(target, MacroFailure):
                message = f"{target.message} (a run errors this scenario: fix the macro)"
                issues.setdefault(
                    (str(suite.path), case.line), Issue(suite.path, case.line, None, "", message)
                )
    return list(issues.values())


FRONTEND = FrontEnd(
    name="scenarios",
    describe="a scenario file with 'scenarios:' or a folder of them",
    claims=is_scenario_source,
    load=load,
    options=(
        click.Option(
            ["--agent-class"],
            help="Scenario files: the agent class (module.Class) of scenarios that name none.",
        ),
        click.Option(
            ["--project-root"],
            type=click.Path(path_type=Path, file_okay=False),
            help="Scenario files: the root their macros' files and agent classes are found "
            "under (default: the file's project: its nearest config.yml's folder, else its "
            "own).",
        ),
        click.Option(
            ["--seed"],
            type=int,
            help="Scenario files: the seed of random macros (default: the run's; the report "
            "shows it).",
        ),
        click.Option(
            ["--pass-threshold"],
            type=click.FloatRange(0, 10),
            help="Scenario files: the mean metric score a scenario needs (0-10), below the "
            "scenario's and the file's pass_threshold (default 7).",
        ),
    ),
    folders=True,
    writes=writes,
    before_run=before_run,
    after_run=after_run,
    problems=problems,
    no_result_exit=EXIT_FAILED,  # a scenario suite's exit codes are 0, 1 and 130 (seed 003)
)

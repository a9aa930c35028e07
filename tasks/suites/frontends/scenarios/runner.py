"""Scenario suites from the command line and from Python.

`accord eval scenarios.yaml --agent-class m.C --project-root DIR --judge-model M --output-dir
DIR --concurrency N` and `RegressionRunner(...).run(path)` load the same suites (a file, or
every scenario file of a folder), run them on the engine and write one HTML report and its JSON
per run into the output dir (default: `reports/` of the scenario file's project). Exit 0 when
every scenario passed, 1 when one failed or errored, 130 on Ctrl-C.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from rich.console import Console

from .....engine.errors import LoadError
from ...core.cases import Suite
from ...core.frontend import Source
from ...core.verdicts import SuiteRun
from .sources import scenario_sources
from .suite import ScenarioOptions, load_scenario_file, seed_of

DEFAULT_OUTPUT_DIR = "reports"  # under each suite's project root


def scenario_sources_of(source: Source) -> list[Source]:
    """The scenario files `source` names: itself, or those of a folder (each read once)."""
    if not source.path.exists():
        raise LoadError(f"{source.path}: no such file or folder")
    if source.path.is_dir():
        found = scenario_sources(source.path)
        if not found:
            raise LoadError(
                f"{source.path}: no scenario file (YAML with 'scenarios:') in this folder"
            )
        return found
    return [source]


def load_scenarios(
    path: Path,
    options: ScenarioOptions,
    *,
    resume_run: str | None = None,
    text: str | None = None,
) -> Suite:
    """A scenario file's suite with its run id chosen now: its macros are seeded from the run
    (the given seed, else the id of the run resumed, else the new run's id). `text`: the
    file's, read already."""
    from .....engine.runner import new_run_id

    run_id = new_run_id()
    if options.seed is None:
        options = dataclasses.replace(options, seed=seed_of(resume_run or run_id))
    suite = load_scenario_file(path, options, text=text)
    suite.run_id = run_id
    return suite


def seed_line(suite: Suite) -> str:
    seed = scenario_seed(suite)
    return f"{suite.path}: macros seeded with {seed} (--seed {seed} expands the same inputs)"


def scenario_seed(suite: Suite) -> int | None:
    """The run seed a scenario suite was expanded with (kept on its cases)."""
    for case in suite.cases:
        if "run_seed" in case.metadata:
            seed: int = case.metadata["run_seed"]
            return seed
    return None


def report_folder(suite: Suite, output_dir: Path | None) -> Path:
    """Where a scenario suite's reports go: `output_dir`, else `reports/` of its project."""
    if output_dir is not None:
        return output_dir
    from .....engine.paths import shown_path

    project = suite.project
    # as it opens from the current folder, which is how messages and the report line show it
    return Path(
        shown_path((project.root if project is not None else Path.cwd()) / DEFAULT_OUTPUT_DIR)
    )


def write_reports(runs: list[SuiteRun], output_dir: Path | None, err: Console) -> list[Path]:
    """Each scenario run's HTML report and JSON, named after the suite and the run, in
    `output_dir`, else in `reports/` of the suite's project."""
    from .report import write_scenario_reports

    written: list[Path] = []
    for run in runs:
        folder = report_folder(run.suite, output_dir)
        html, data = write_scenario_reports(run, folder, seed=scenario_seed(run.suite))
        err.print(f"report: {html} (and {data.name})", highlight=False, markup=False)
        written += [html, data]
    return written


class RegressionRunner:
    """Seed 003's runner: `RegressionRunner(agent_class, project_root, judge_model_id,
    output_dir, max_concurrency, macro_functions).run("tests/scenarios.yaml")`.

    `agent_class` is a class or a `module.Class` path (a scenario's or file's own wins);
    `pass_threshold` is below the scenario's and the file's. `run` prints the results and
    writes the reports; then, as the reference's, it exits 1 (`sys.exit`) when a scenario
    failed or errored, so a CI script that ends with it fails. `run(path,
    exit_on_failure=False)` only returns the runs (one per file), for use as a library.
    """

    def __init__(
        self,
        agent_class: type | str | None = None,
        project_root: str | Path | None = None,
        judge_model_id: str | None = None,
        output_dir: str | Path | None = None,
        max_concurrency: int = 1,
        macro_functions: Mapping[str, Callable[..., object]] | None = None,
        *,
        seed: int | None = None,
        cache_mode: str = "on",
        quiet: bool = False,
        pass_threshold: float | None = None,
    ) -> None:
        self.options = ScenarioOptions(
            seed=seed,  # None: each run's own (load_scenarios)
            project_root=Path(project_root) if project_root else None,
            agent_class=agent_class,
            judge_model=judge_model_id,
            concurrency=max_concurrency,
            macro_functions=dict(macro_functions or {}),
            pass_threshold=pass_threshold,
        )
        self.output_dir = Path(output_dir) if output_dir is not None else None
        self.cache_mode = cache_mode
        self.quiet = quiet

    def run(self, path: str | Path, *, exit_on_failure: bool = True) -> list[SuiteRun]:
        """Run the scenarios of `path` (a file or a folder); see the class."""
        if not exit_on_failure:
            return self._run(path)
        try:
            runs = self._run(path)
        except KeyboardInterrupt:
            print("\nExecution interrupted by user.", file=sys.stderr)
            sys.exit(130)
        if not self.passed(runs):
            sys.exit(1)
        return runs

    def _run(self, path: str | Path) -> list[SuiteRun]:
        from .....engine.runner import RunOptions
        from ...core.nodes import run_suite
        from ...reports.evals import print_pretty
        from ..autoblocks.api import _run_in_loop

        suites = [
            load_scenarios(s.path, self.options, text=s.text)
            for s in scenario_sources_of(Source(Path(path)))
        ]
        self._check_output_dir(suites)
        options = RunOptions(max_concurrency=self.options.concurrency, cache_mode=self.cache_mode)

        async def run_all() -> list[SuiteRun]:
            return list(await asyncio.gather(*(run_suite(s, options) for s in suites)))

        runs = _run_in_loop(run_all)
        err = Console(stderr=True, soft_wrap=True)
        if not self.quiet:
            print_pretty(runs, Console(soft_wrap=True), quiet=False)
        write_reports(runs, self.output_dir, err)
        return runs

    def _check_output_dir(self, suites: list[Suite]) -> None:
        """The reports' folder, before any scenario runs (engine/paths.check_outputs)."""
        from .....engine.paths import Output, check_outputs
        from .....engine.project import find_root

        files = [s.path for s in suites if s.path is not None]
        folders = sorted({report_folder(s, self.output_dir) for s in suites})
        check_outputs(
            [Output("output_dir", folder, ()) for folder in folders],
            inputs={file: "a scenario file" for file in files},
            roots=sorted({find_root(file)[0] for file in files}),
            nothing_ran="no scenario was run",
        )

    @staticmethod
    def passed(runs: list[SuiteRun]) -> bool:
        return all(c.status == "passed" for run in runs for c in run.cases)

"""The output formats of `accord test` and `accord eval`, registered in the engine's one
registry of formats (`engine/report/formats.py`), one decorated writer each.

`test` (`REPORT_FORMATS`): `pretty` (Oxy's report, coloured on a terminal), `json`
(`{"accuracy": ...}`), `junit` (XML for CI) and `html` (a self-contained page, also what
`--report` writes).

`eval` (`EVAL_FORMATS`): `pretty`, `json`, `junit`, `html`, and AgentV's result records
(`jsonl`), which an `--output` file ending in `.jsonl` is written in. Its `--output-dir`
writes one set of files: a scenario suite's run its own page and JSON (`<suite>-<run>.html`
and `.json`, seed 003's report), every other suite `results.json` and `report.html`.
A new format is one decorated function.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TextIO

from rich.console import Console

from ....engine.masking import mask, masked
from ....engine.report.formats import CommandFormats, formats_of
from ..core.gate import GateResult
from ..core.verdicts import SuiteRun
from ..testing.outcomes import SuiteResult

# --- accord test ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReportRequest:
    """What a writer is given: the result, the gate (if any) and how to write."""

    result: SuiteResult
    gate: GateResult | None
    threshold: float | None
    quiet: bool
    terminal: bool  # stdout of the command, not a file

    @property
    def gate_line(self) -> str | None:
        """The gate as a report shows it: its rule and whether it passed."""
        return None if self.gate is None else self.gate.line


REPORT_FORMATS: CommandFormats[ReportRequest] = formats_of("test")


def _console(out: TextIO, terminal: bool) -> Console:
    stream = masked(out)  # the other formats mask what they render themselves
    if terminal:
        return Console(file=stream, soft_wrap=True)
    return Console(file=stream, no_color=True, width=120, soft_wrap=True)


@REPORT_FORMATS.register("pretty", file="results.txt")
def _pretty(request: ReportRequest, out: TextIO) -> None:
    from .text import print_pretty

    print_pretty(request.result, _console(out, request.terminal), quiet=request.quiet)


@REPORT_FORMATS.register("json", file="results.json")
def _json(request: ReportRequest, out: TextIO) -> None:
    from .text import render_json

    out.write(render_json(request.result, request.gate) + "\n")


@REPORT_FORMATS.register("junit", file="results.xml")
def _junit(request: ReportRequest, out: TextIO) -> None:
    from .text import render_junit

    out.write(render_junit(request.result, request.gate, request.threshold))


@REPORT_FORMATS.register("html", file="report.html")
def _html(request: ReportRequest, out: TextIO) -> None:
    from .html import render_html

    passed = None if request.gate is None else request.gate.passed
    out.write(render_html(request.result, request.gate_line, gate_passed=passed))


# --- accord eval ------------------------------------------------------------------------------


@dataclass(frozen=True)
class EvalReport:
    """What an `eval` writer is given: every suite's run, the gate, and how to write."""

    runs: list[SuiteRun]
    gate: GateResult | None
    quiet: bool = False
    terminal: bool = False


EVAL_FORMATS: CommandFormats[EvalReport] = formats_of("eval")


@EVAL_FORMATS.register("pretty", file="results.txt")
def _eval_pretty(report: EvalReport, out: TextIO) -> None:
    from .evals import print_pretty

    if report.terminal:
        print_pretty(report.runs, Console(file=masked(out), soft_wrap=True), quiet=report.quiet)
        return
    console = Console(file=None, record=True, width=120, force_terminal=False)
    with console.capture() as capture:
        print_pretty(report.runs, console, quiet=report.quiet)
    out.write(mask(capture.get()))


@EVAL_FORMATS.register("json", file="results.json")
def _eval_json(report: EvalReport, out: TextIO) -> None:
    from .evals import render_json

    out.write(render_json(report.runs, report.gate))


@EVAL_FORMATS.register("junit", file="results.xml")
def _eval_junit(report: EvalReport, out: TextIO) -> None:
    from .evals import render_junit

    out.write(render_junit(report.runs))


@EVAL_FORMATS.register("html", file="report.html")
def _eval_html(report: EvalReport, out: TextIO) -> None:
    from .evals import render_html

    out.write(render_html(report.runs, gate=report.gate))


def _writes_its_own(run: SuiteRun) -> bool:
    """Whether the run's front-end writes its own files after a run (frontends.FrontEnd
    after_run: a scenario suite's page and JSON), in --output-dir as elsewhere."""
    from ..core.frontend import frontends

    return any(f.name == run.suite.frontend and f.after_run is not None for f in frontends())


@EVAL_FORMATS.register_folder("results.json", "report.html")
def _eval_folder(report: EvalReport, folder: Path) -> list[Path]:
    """The one set of files `--output-dir` holds after a run: `results.json` and
    `report.html` of the suites whose front-end writes no files of its own (a scenario
    suite's page and JSON are its front-end's, written after the run)."""
    written: list[Path] = []
    others = [r for r in report.runs if not _writes_its_own(r)]
    if others:
        part = replace(report, runs=others, terminal=False)
        for name in ("json", "html"):
            chosen = EVAL_FORMATS.get(name)
            path = folder / chosen.file
            with path.open("w", encoding="utf-8") as handle:
                chosen.write(part, handle)
            written.append(path)
    return written

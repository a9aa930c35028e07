"""The report formats of `accord test`, one registered writer each: `pretty` (Oxy's report,
coloured on a terminal), `json` (`{"accuracy": ...}`), `junit` (XML for CI) and `html` (a
self-contained page, also what `--report` writes). A new format is one decorated function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from rich.console import Console

from accord.engine.masking import masked
from accord.engine.registry import Registry
from accord.tasks.suites.core.gate import GateResult
from accord.tasks.suites.core.outcomes import SuiteResult


@dataclass(frozen=True)
class ReportRequest:
    """What a writer is given: the result, the gate (if any) and how to write."""

    result: SuiteResult
    gate: GateResult | None
    threshold: float | None
    quiet: bool
    terminal: bool  # stdout of the command, not a file
    gate_rule: str = ""  # `--min-accuracy 0.8, threshold mode all, gate mean`

    @property
    def gate_line(self) -> str | None:
        """The gate as a report shows it: its rule and whether it passed."""
        if self.gate is None:
            return None
        verdict = "passed" if self.gate.passed else "FAILED: " + "; ".join(self.gate.messages)
        return f"{self.gate_rule}: {verdict}"


ReportWriter = Callable[[ReportRequest, TextIO], None]
REPORT_FORMATS: Registry[ReportWriter] = Registry("report format", plugins=False)


@REPORT_FORMATS.register("pretty")
def _pretty(request: ReportRequest, out: TextIO) -> None:
    from accord.tasks.suites.reports.text import print_pretty

    stream = masked(out)  # the other formats mask what they render themselves
    if request.terminal:
        console = Console(file=stream, soft_wrap=True)
    else:
        console = Console(file=stream, no_color=True, width=120, soft_wrap=True)
    print_pretty(request.result, console, quiet=request.quiet)


@REPORT_FORMATS.register("json")
def _json(request: ReportRequest, out: TextIO) -> None:
    from accord.tasks.suites.reports.text import render_json

    out.write(render_json(request.result, request.gate) + "\n")


@REPORT_FORMATS.register("junit")
def _junit(request: ReportRequest, out: TextIO) -> None:
    from accord.tasks.suites.reports.text import render_junit

    out.write(render_junit(request.result, request.gate, request.threshold))


@REPORT_FORMATS.register("html")
def _html(request: ReportRequest, out: TextIO) -> None:
    from accord.tasks.suites.reports.html import render_html

    out.write(render_html(request.result, request.gate_line, gate_passed=_passed(request)))


def _passed(request: ReportRequest) -> bool | None:
    return None if request.gate is None else request.gate.passed

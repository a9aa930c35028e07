"""A comparison as text (pretty), JSON and JUnit XML; html.py renders the page."""

from __future__ import annotations

import io
import json
import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any, TextIO

from ....engine.report.formats import CommandFormats, formats_of
from ....engine.report.terminal import printable
from ....engine.report.xmltext import xml_document
from .comparison import CaseChange, Comparison, Figure, SuiteComparison, describe


def _r(value: float | None) -> float | None:
    """A figure rounded for the report; None for a value JSON has no number for (the
    records hold finite values only: intake.py reads any other as missing, with why)."""
    return None if value is None or not math.isfinite(value) else round(value, 6)


def figure_data(figure: Figure | None, alpha: float) -> dict[str, Any] | None:
    if figure is None:
        return None
    data: dict[str, Any] = {
        "before": _r(figure.before),
        "after": _r(figure.after),
        "delta": _r(figure.delta),
        "paired_cases": figure.n,
        "test": figure.test.test,
        "statistic": _r(figure.test.statistic),
        "p_value": _r(figure.test.p_value),
        "significant": figure.significant(alpha),
    }
    if figure.test.test == "mcnemar-exact":
        data["regressed"], data["improved"] = figure.regressed, figure.improved
    return data


def change_data(change: CaseChange) -> dict[str, Any]:
    return {
        "case": change.id,
        "before": change.before,
        "after": change.after,
        "score_before": _r(change.score_before),
        "score_after": _r(change.score_after),
        "reasons": list(change.reasons),
    }


def suite_data(suite: SuiteComparison, alpha: float) -> dict[str, Any]:
    return {
        "suite": suite.name,
        "paired_cases": suite.paired,
        "repeats": {"baseline": suite.repeats[0], "current": suite.repeats[1]},
        "notes": suite.notes,
        "pass_rate": figure_data(suite.pass_rate, alpha),
        "mean_score": figure_data(suite.score, alpha),
        "evaluators": [
            {"name": name, "pass_rate": figure_data(p, alpha), "mean_score": figure_data(s, alpha)}
            for name, (p, s) in suite.evaluators.items()
        ],
        "flips": [change_data(c) for c in suite.flips],
        "score_changes": [change_data(c) for c in suite.changes if not c.flipped],
        "added": suite.added,
        "removed": suite.removed,
    }


def verdict_data(comparison: Comparison, alpha: float) -> dict[str, Any]:
    reasons = comparison.regressions(alpha)
    return {
        "alpha": alpha,
        "significant_regression": bool(reasons),
        "reasons": reasons,
        "flipped_to_failing": [
            {"suite": suite, **change_data(change)} for suite, change in comparison.to_failing()
        ],
    }


def json_document(comparison: Comparison, alpha: float) -> dict[str, Any]:
    return {
        "baseline": comparison.baseline,
        "current": comparison.current,
        "suites": [suite_data(s, alpha) for s in comparison.suites],
        "suites_only_in_baseline": comparison.only_baseline,
        "suites_only_in_current": comparison.only_current,
        "problems": comparison.problems,
        "verdict": verdict_data(comparison, alpha),
    }


# C1 controls, which JSON leaves raw and a terminal reads as CSI and OSC (U+009B, U+009D)
_C1 = re.compile("[\x7f-\x9f]")


def render_json(comparison: Comparison, alpha: float) -> str:
    """The comparison as JSON: strict (no NaN or Infinity) and with every control character
    escaped, so it is safe to print and every parser reads it."""
    text = json.dumps(json_document(comparison, alpha), ensure_ascii=False, indent=2,
                      allow_nan=False)  # fmt: skip
    return _C1.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def change_line(change: CaseChange) -> str:
    line = f"{change.id}: {change.before} -> {change.after}"
    if change.score_before is not None or change.score_after is not None:
        line += f", score {_score(change.score_before)} -> {_score(change.score_after)}"
    if change.reasons:
        line += f" ({'; '.join(change.reasons)})"
    return line


def render_pretty(comparison: Comparison, alpha: float) -> str:
    """The comparison as text for a terminal: every name, id and reason (from results files
    and the store, anyone's) with its control characters shown as `\\xNN`
    (engine.report.terminal.printable), so no escape sequence reaches the terminal."""
    lines = [f"baseline {comparison.baseline}  ->  current {comparison.current}"]
    if comparison.problems:
        lines.append("values read as missing:")
        lines += [f"  {problem}" for problem in comparison.problems]
    for suite in comparison.suites:
        lines.append("")
        lines.append(
            f"suite {suite.name}: {suite.paired} paired case(s), {len(suite.added)} added, "
            f"{len(suite.removed)} removed"
        )
        lines += [f"  note: {note}" for note in suite.notes]
        for figure in (suite.pass_rate, suite.score):
            if figure is not None:
                lines.append(f"  {describe(figure)}")
        for name, figures in suite.evaluators.items():
            shown = [describe(f) for f in figures if f is not None]
            if shown:
                lines.append(f"  evaluator {name}:")
                lines += [f"    {text}" for text in shown]
        if suite.flips:
            lines.append("  flips:")
            lines += [f"    {change_line(c)}" for c in suite.flips]
        scores = [c for c in suite.changes if not c.flipped]
        if scores:
            lines.append("  score changes:")
            lines += [f"    {change_line(c)}" for c in scores]
        if suite.added:
            lines.append(f"  added: {', '.join(suite.added)}")
        if suite.removed:
            lines.append(f"  removed: {', '.join(suite.removed)}")
    for label, names in (
        ("suites only in the baseline", comparison.only_baseline),
        ("suites only in the current run", comparison.only_current),
    ):
        if names:
            lines.append(f"{label}: {', '.join(names)}")
    lines.append("")
    reasons = comparison.regressions(alpha)
    if reasons:
        lines.append(f"significant regression (alpha {alpha:g}):")
        lines += [f"  {r}" for r in reasons]
    else:
        lines.append(f"no significant regression (alpha {alpha:g})")
    return "\n".join(printable(line.replace("\n", "\\n")) for line in lines) + "\n"


def render_junit(comparison: Comparison, alpha: float) -> str:
    """A testsuite per suite: a testcase per paired case (a failure when it flipped to
    failing) and one for each figure (a failure when it regressed significantly)."""
    root = ET.Element("testsuites", name=f"{comparison.baseline} -> {comparison.current}")
    for suite in comparison.suites:
        element = ET.SubElement(root, "testsuite", name=suite.name)
        failures = 0
        tests = 0
        flips = {c.id: c for c in suite.flips}
        for figure in (suite.pass_rate, suite.score):
            if figure is None:
                continue
            tests += 1
            case = ET.SubElement(element, "testcase", classname=suite.name, name=figure.name)
            if figure.delta < 0 and figure.significant(alpha):
                failures += 1
                ET.SubElement(case, "failure", message=describe(figure))
        for change in suite.changes:
            tests += 1
            case = ET.SubElement(element, "testcase", classname=suite.name, name=change.id)
            if change.id in flips and change.to_failing:
                failures += 1
                ET.SubElement(case, "failure", message=change_line(change))
            else:
                ET.SubElement(case, "system-out").text = change_line(change)
        element.set("tests", str(tests))
        element.set("failures", str(failures))
        if comparison.problems:
            ET.SubElement(element, "system-err").text = "values read as missing:\n" + "\n".join(
                comparison.problems
            )
    return xml_document(root)


@dataclass(frozen=True)
class CompareReport:
    """What a format of `accord runs compare` writes: the comparison at its level `alpha`."""

    comparison: Comparison
    alpha: float


# the comparison's formats, in the registry of every command's formats (engine/report/formats)
COMPARE_FORMATS: CommandFormats[CompareReport] = formats_of("compare")


@COMPARE_FORMATS.register("pretty", file="comparison.txt")
def _pretty(report: CompareReport, out: TextIO) -> None:
    out.write(render_pretty(report.comparison, report.alpha))


@COMPARE_FORMATS.register("json", file="comparison.json")
def _json(report: CompareReport, out: TextIO) -> None:
    out.write(render_json(report.comparison, report.alpha))


@COMPARE_FORMATS.register("junit", file="comparison.xml")
def _junit(report: CompareReport, out: TextIO) -> None:
    out.write(render_junit(report.comparison, report.alpha))


@COMPARE_FORMATS.register("html", file="comparison.html")
def _html(report: CompareReport, out: TextIO) -> None:
    from .html import render_page

    out.write(render_page(report.comparison, report.alpha))


def render(comparison: Comparison, fmt: str, alpha: float) -> str:
    buffer = io.StringIO()
    COMPARE_FORMATS.get(fmt).write(CompareReport(comparison, alpha), buffer)
    return buffer.getvalue()

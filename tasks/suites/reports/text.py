"""`accord test` output: pretty (seed 000's texts), json (its shapes), and JUnit XML.

json: `{"accuracy": 0.855, "recall": 0.723}` for one test, arrays per metric (file order)
for several. Pair counts, intervals and per-test detail go under extra keys; errors never do
(they go to stderr).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

from rich.console import Console

from ....engine.clip import SHOWN_IN_FILES, clip, kept_in
from ....engine.masking import mask, mask_data
from ....engine.report.terminal import shown as escape
from ....engine.report.xmltext import xml_document
from ..core.gate import GateResult
from ..core.reducers import Metric
from ..testing.outcomes import PairRecord, SuiteResult, TestOutcome

METRIC_ORDER = ("accuracy", "recall", "similarity", "correctness")
EXCERPT = 240


def _r(value: float) -> float:
    return round(value, 6)


def metric_names(tests: list[TestOutcome]) -> list[str]:
    """Every metric present, accuracy first, then recall, then the others."""
    names = {name for t in tests for name in t.metrics}
    return sorted(names, key=lambda n: (METRIC_ORDER.index(n) if n in METRIC_ORDER else 99, n))


# --- json --------------------------------------------------------------------------------------


def json_document(result: SuiteResult, gate: GateResult | None = None) -> dict[str, Any]:
    """Seed 000's shapes, plus `<metric>_n`, `<metric>_ci95` and per-test detail."""
    tests = result.tests
    several = len(tests) > 1
    doc: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for name in metric_names(tests):
        metrics = [t.metrics[name] for t in tests if name in t.metrics]
        values: list[Any] = [_r(m.value) for m in metrics]
        counts: list[Any] = [m.n for m in metrics]
        doc[name] = values if several else values[0]
        extra[f"{name}_n"] = counts if several else counts[0]
        intervals = [_interval(m) for m in metrics]
        if any(i is not None for i in intervals):
            extra[f"{name}_ci95"] = intervals if several else intervals[0]
    doc.update(extra)
    doc["tests"] = [_test_detail(t) for t in tests]
    doc["summary"] = _summary(result)
    if gate is not None:
        doc["gate"] = {"passed": gate.passed}
    return doc


def _interval(metric: Metric) -> list[float] | None:
    interval = metric.interval
    return [_r(interval[0]), _r(interval[1])] if interval is not None else None


def _test_detail(test: TestOutcome) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for name, metric in test.metrics.items():
        entry: dict[str, Any] = {"value": _r(metric.value), "n": metric.n, "unit": metric.unit}
        if (interval := _interval(metric)) is not None:
            entry["ci95"] = interval
        metrics[name] = entry
    detail: dict[str, Any] = {
        "test": test.index,
        "name": test.name,
        "type": test.kind,
        "target": test.target,
        "status": "error" if test.error else "ok",
        "n": test.n,
        "metrics": metrics,
        "judge_calls": test.judge_calls,
        "seconds": _r(test.seconds),
    }
    if test.runs:
        detail["runs_failed"] = len(test.failed_runs)
    if test.pairs:
        detail["pairs"] = {
            "total": len(test.pairs),
            "consistent": sum(p.consistent for p in test.pairs),
            "without_verdict": sum(p.verdict is None for p in test.pairs),
        }
    if test.cases:
        detail["cases"] = {
            "total": len(test.cases),
            "passed": sum(c.passed is True for c in test.cases),
            "failed": sum(c.passed is False for c in test.cases),
            "errors": sum(c.error is not None for c in test.cases),
        }
    return detail


def _summary(result: SuiteResult) -> dict[str, Any]:
    usage = result.usage
    return {
        "seconds": _r(result.seconds),
        "tests": len(result.tests),
        "errors": sum(t.error is not None for t in result.tests),
        "model_calls": usage.total.calls if usage is not None else 0,
        "cached_calls": usage.total.cached if usage is not None else 0,
        "judge_calls": sum(t.judge_calls for t in result.tests),
        "judge_calls_saved": result.stats.get("judge_calls_saved", 0),
    }


def render_json(result: SuiteResult, gate: GateResult | None = None) -> str:
    return json.dumps(mask_data(json_document(result, gate)), ensure_ascii=False)


# --- pretty ------------------------------------------------------------------------------------


def metric_line(metric: Metric) -> str:
    """`Accuracy: 85.50% (45 pairs, 95% CI 72.10%-93.02%)`."""
    label = "Accuracy" if metric.name == "accuracy" else metric.name.replace("_", " ").title()
    head = f"{label}: {metric.value * 100:.2f}%"
    interval = metric.interval
    if interval is None:
        return f"{head} ({metric.n} {metric.unit})"
    low, high = interval
    return f"{head} ({metric.n} {metric.unit}, 95% CI {low * 100:.2f}%-{high * 100:.2f}%)"


def print_pretty(result: SuiteResult, out: Console, *, quiet: bool) -> None:
    """Each test: its title, its failures (unless quiet), then seed 000's metric block."""
    for test in result.tests:
        out.print(f"[bold]{escape(test.title)}[/] ({escape(test.target)}, n={test.n})")
        if test.error is not None:
            out.print("[red]❌ no result[/] (the cause is on stderr)")
            continue
        if not quiet:
            _print_failures(test, out)
        out.print("✅Eval finished with metrics:")
        for name in metric_names([test]):
            out.print(metric_line(test.metrics[name]), highlight=False)
    _print_totals(result, out)


def disagreements(test: TestOutcome) -> list[tuple[list[int], list[int], PairRecord]]:
    """The pairs judged inconsistent, grouped by the two answers they compare: identical
    answers disagree with the same answers for the same reason, so each group shows once."""
    texts = {r.index: r.output or "" for r in test.runs}
    groups: dict[tuple[str, str], tuple[list[int], list[int], PairRecord]] = {}
    for pair in (p for p in test.pairs if p.verdict == "B"):
        first, second = pair.runs
        key = (texts[first], texts[second])
        if key[0] > key[1]:
            key, first, second = (key[1], key[0]), second, first
        left, right, _ = groups.setdefault(key, ([], [], pair))
        left.append(first)
        right.append(second)
    out = []
    for a, b, pair in groups.values():
        left, right = sorted(set(a)), sorted(set(b))
        out.append((left, right, pair) if left[0] < right[0] else (right, left, pair))
    return sorted(out, key=lambda group: (group[0][0], group[1][0]))


def _runs(indexes: list[int]) -> str:
    return f"run{'s' if len(indexes) > 1 else ''} {', '.join(map(str, indexes))}"


def _print_failures(test: TestOutcome, out: Console) -> None:
    texts = {r.index: r.output or "" for r in test.runs}
    for left, right, pair in disagreements(test):
        out.print(f"  [red]✗[/] {_runs(left)} and {_runs(right)} disagree ({pair.source}):")
        for indexes in (left, right):
            out.print(f"      {_runs(indexes)}: {escape(_excerpt(texts[indexes[0]]))}")
        out.print(f"      judge: {escape(_excerpt(pair.reasoning, 600))}")
    for run in (r for r in test.runs if r.passed is False):
        out.print(f"  [red]✗[/] run {run.index}: {escape(_excerpt(run.output or ''))}")
        out.print(f"      {escape(_excerpt(run.reasoning, 600))}")
    for case in test.cases:
        if case.passed is not False and (case.recall is None or case.recall >= 0.5):
            continue
        label = test.case_label(case)
        out.print(f"  [red]✗[/] {escape(label)}: {escape(_excerpt(case.prompt, 120))}")
        out.print(f"      expected: {escape(_excerpt(case.expected or ''))}")
        out.print(f"      answer:   {escape(_excerpt(case.output or ''))}")
        if case.recall is not None:
            out.print(f"      context recall: {case.recall * 100:.2f}%")
        if case.reasoning:
            out.print(f"      judge: {escape(_excerpt(case.reasoning, 600))}")


def _print_totals(result: SuiteResult, out: Console) -> None:
    scored = [t.accuracy.value for t in result.tests if t.accuracy is not None]
    if len(result.tests) > 1 and scored:
        mean = sum(scored) / len(scored)
        out.print(f"Average accuracy: {mean * 100:.2f}% over {len(scored)} test(s)")
    summary = _summary(result)
    out.print(
        f"[dim]{summary['tests']} test(s) in {result.seconds:.2f} s; model calls "
        f"{summary['model_calls']} ({summary['cached_calls']} cached); judge calls "
        f"{summary['judge_calls']} ({summary['judge_calls_saved']} saved)[/]",
        highlight=False,
    )


KEPT = kept_in(None)  # `accord test` reports have no run id; the store keeps every text


def _excerpt(text: str, limit: int = EXCERPT) -> str:
    return clip(" ".join(text.split()), limit, kept=KEPT)


def _whole(text: str) -> str:
    return clip(text, SHOWN_IN_FILES, kept=KEPT)


def print_problems(result: SuiteResult, err: Console) -> None:
    """Execution errors and warnings, on stderr only."""
    for test in result.tests:
        for warning in test.warnings:
            err.print(f"warning: {escape(test.title)}: {escape(warning)}", highlight=False)
        if test.error is not None:
            err.print(f"error: {escape(test.title)}: {escape(test.error)}", highlight=False)


# --- junit -------------------------------------------------------------------------------------


def render_junit(result: SuiteResult, gate: GateResult | None, threshold: float | None) -> str:
    """JUnit XML: one testcase per test, one per case, and one for an average-mode gate."""
    suite = ET.Element("testsuite", name=result.name, time=f"{result.seconds:.3f}")
    failing = set(gate.failing) if gate is not None else set()
    for test in result.tests:
        below = test.index in failing and test.error is None
        _junit_test(suite, result.name, test, threshold if below else None)
        for case in test.cases:
            _junit_case(suite, result.name, test, case)
    if gate is not None and threshold is not None and not gate.passed and not gate.failing:
        average = ET.SubElement(
            suite, "testcase", name=f"min-accuracy {threshold:.4f}", classname=result.name, time="0"
        )
        message = "; ".join(gate.messages)
        ET.SubElement(average, "failure", message=message).text = message
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(c.find("failure") is not None for c in cases)))
    suite.set("errors", str(sum(c.find("error") is not None for c in cases)))
    root = ET.Element("testsuites", name="accord test")
    for key in ("tests", "failures", "errors", "time"):
        root.set(key, suite.get(key, "0"))
    root.append(suite)
    return mask(xml_document(root))  # a control character in a name or an answer is no XML


def _junit_test(parent: ET.Element, suite: str, test: TestOutcome, below: float | None) -> None:
    """The test's own testcase; `below` is the threshold it failed (`--threshold-mode all`)."""
    case = ET.SubElement(
        parent,
        "testcase",
        name=test.title,
        classname=f"{suite}.{test.kind}",
        time=f"{test.seconds:.3f}",
    )
    properties = ET.SubElement(case, "properties")
    for name, metric in test.metrics.items():
        ET.SubElement(properties, "property", name=name, value=f"{metric.value:.6f}")
        ET.SubElement(properties, "property", name=f"{name}_n", value=str(metric.n))
    if test.error is not None:
        ET.SubElement(case, "error", message=_excerpt(test.error, 500)).text = _whole(test.error)
    elif below is not None:
        accuracy = test.accuracy
        value = f"{accuracy.value:.4f}" if accuracy is not None else "none"
        message = f"accuracy {value} below threshold {below:.4f}"
        ET.SubElement(case, "failure", message=message).text = message
    lines = [metric_line(m) for m in test.metrics.values()] + test.warnings
    ET.SubElement(case, "system-out").text = "\n".join(lines)


def _junit_case(parent: ET.Element, suite: str, test: TestOutcome, record: Any) -> None:
    case = ET.SubElement(
        parent,
        "testcase",
        name=test.case_label(record),
        classname=f"{suite}.{test.title}",
        time="0",
    )
    if record.error is not None:
        message = _excerpt(record.error, 500)
        ET.SubElement(case, "error", message=message).text = _whole(record.error)
    elif record.passed is False:
        message = f"expected {_excerpt(record.expected or '', 120)!r}"
        failure = ET.SubElement(case, "failure", message=message)
        answer, reasoning = _whole(record.output or ""), _whole(record.reasoning or "")
        failure.text = f"answer: {answer}\n\njudge: {reasoning}"
    out = [f"answer: {_whole(record.output)}"] if record.output is not None else []
    if record.recall is not None:
        out.append(f"context recall: {record.recall:.4f}")
    ET.SubElement(case, "system-out").text = "\n".join(out)

"""Reports of evaluation runs (`accord eval`, `run_test_suite`): pretty, json, junit, html.

Every format reads the same `SuiteRun`s. A case with no result is an error in every format,
never a pass.
"""

from __future__ import annotations

import html
import json
import xml.etree.ElementTree as ET
from typing import Any

from rich.console import Console
from rich.table import Table

from ....engine.clip import SHOWN_IN_FILES, clip, clip_lines, kept_in
from ....engine.masking import mask, mask_data
from ....engine.report.terminal import shown as escape
from ....engine.report.xmltext import xml_safe
from ..core.cases import CaseResult
from ..core.gate import GateResult
from ..core.reducers import Metric
from ..core.verdicts import SuiteRun

MARKS = {
    "passed": "[green]✔[/]",
    "failed": "[red]✘[/]",
    "error": "[yellow]![/]",
    "recorded": "[dim]·[/]",
}


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def metric_text(metric: Metric | None) -> str:
    if metric is None:
        return "n/a"
    text = f"{metric.value:.2%}"
    if metric.successes is not None:
        low, high = metric.interval or (0.0, 1.0)
        text += f" ({metric.successes}/{metric.n} {metric.unit}, 95% CI {low:.2%}-{high:.2%})"
    else:
        text += f" over {metric.n} {metric.unit}"
    return text


def metric_data(metric: Metric | None) -> dict[str, Any] | None:
    if metric is None:
        return None
    out: dict[str, Any] = {"value": _r(metric.value), "n": metric.n}
    if metric.successes is not None:
        out["successes"] = metric.successes
        out["interval"] = [_r(v) for v in (metric.interval or (0.0, 1.0))]
    return out


def _finding_data(case: CaseResult) -> list[dict[str, Any]]:
    return [
        {
            "name": f.name,
            "check": f.check,
            "score": _r(f.score),
            "passed": f.passed,
            "reason": f.reason,
            "error": f.error,
            "skipped": f.skipped,
            "weight": f.weight,
            "required": f.required,
            "threshold": f.threshold,
            "scoring": f.scoring,
            "judge_calls": f.judge_calls,
            "metadata": f.metadata,
        }
        for f in case.findings
    ]


def suite_data(run: SuiteRun) -> dict[str, Any]:
    pass_at, pass_all = run.pass_at_k()
    interval = run.score_interval()
    mean = run.mean_score()
    return {
        "suite": run.id,
        "file": str(run.suite.path) if run.suite.path else None,
        "run_id": run.run_id,
        "counts": run.counts(),
        "pass_rate": metric_data(run.pass_rate()),
        "mean_score": None
        if mean is None
        else {
            "value": _r(mean.value),
            "n": mean.n,
            "interval": None if interval is None else [_r(v) for v in interval],
        },
        "pass_at_k": metric_data(pass_at),
        "pass_all_k": metric_data(pass_all),
        "repeat": run.suite.repeat,
        "evaluators": [
            {
                "name": e.name,
                "pass_rate": metric_data(e.pass_rate),
                "mean": metric_data(e.mean),
                "errors": e.errors,
                "skipped": e.skipped,
                "judge_calls": e.judge_calls,
                "scoring": e.scoring,
            }
            for e in run.evaluators()
        ],
        "judge_calls": run.judge_calls,
        "judge_calls_saved": run.judge_calls_saved,
        "model_calls": run.usage.total.calls if run.usage is not None else 0,
        "cached_calls": run.usage.total.cached if run.usage is not None else 0,
        "seconds": round(run.seconds, 3),
        "cases": [
            {
                "id": c.id,
                "repeat": c.repeat,
                "status": c.status,
                "verdict": c.verdict,
                "score": _r(c.score),
                "input": c.input,
                "expected": c.expected,
                "output": c.output,
                "error": c.error,
                "tags": c.tags,
                "seconds": round(c.seconds, 4),
                "evaluations": _finding_data(c),
            }
            for c in run.cases
        ],
    }


def json_document(runs: list[SuiteRun], gate: GateResult | None) -> dict[str, Any]:
    return {"suites": [suite_data(r) for r in runs], "gate": gate.data() if gate else None}


def render_json(runs: list[SuiteRun], gate: GateResult | None) -> str:
    document = mask_data(json_document(runs, gate))
    return json.dumps(document, ensure_ascii=False, indent=2, default=str) + "\n"


def _why(case: CaseResult) -> str:
    if case.error:
        return case.error
    bad = [f for f in case.findings if f.passed is False or f.error]
    parts = []
    for f in bad:
        detail = f.error or f.veto or f.reason or "; ".join(f.misses[:2])
        parts.append(f"{f.name}: {detail}" if detail else f.name)
    return "; ".join(parts)


def print_pretty(runs: list[SuiteRun], out: Console, *, quiet: bool) -> None:
    for run in runs:
        out.print(
            f"[bold]{escape(run.id)}[/]"
            + (f"  [dim]{escape(str(run.suite.path))}[/]" if run.suite.path else "")
        )
        if not quiet:
            table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
            for column in ("", "case", "score", "why"):
                table.add_column(column, overflow="fold")
            for case in run.cases:
                label = case.id if run.suite.repeat == 1 else f"{case.id} (run {case.repeat + 1})"
                score = "" if case.score is None else f"{case.score:.2f}"
                why = "" if case.status == "passed" else _why(case)
                mark = MARKS[case.status]
                if case.verdict == "borderline":
                    mark, why = "[yellow]~[/]", f"borderline; {why}" if why else "borderline"
                why = clip(why, 300, kept=kept_in(run.run_id))
                table.add_row(mark, escape(label), score, escape(why))
            out.print(table)
        counts = run.counts()
        out.print(
            f"  Pass rate: {metric_text(run.pass_rate())}  "
            f"[dim]{counts['passed']} passed, {counts['failed']} failed, {counts['error']} errors"
            + (f", {counts['recorded']} without verdict" if counts["recorded"] else "")
            + "[/]",
            highlight=False,
        )
        mean, interval = run.mean_score(), run.score_interval()
        if mean is not None:
            ci = f", 95% CI {interval[0]:.3f}-{interval[1]:.3f}" if interval else ""
            out.print(f"  Mean score: {mean.value:.3f} (n={mean.n}{ci})", highlight=False)
        pass_at, pass_all = run.pass_at_k()
        if pass_at is not None:
            out.print(
                f"  {pass_at.name}: {metric_text(pass_at)}  {pass_all.name if pass_all else ''}: {metric_text(pass_all)}",
                highlight=False,
            )
        for figures in run.evaluators():
            extra = []
            if figures.errors:
                extra.append(f"{figures.errors} errors")
            if figures.skipped:
                extra.append(f"{figures.skipped} skipped")
            if figures.scoring:
                extra.append("scoring: " + ", ".join(figures.scoring))
            rate = (
                metric_text(figures.pass_rate)
                if figures.pass_rate
                else f"mean {metric_text(figures.mean)}"
            )
            out.print(
                f"    {escape(figures.name)}: {rate}"
                + (f" [dim]({'; '.join(extra)})[/]" if extra else ""),
                highlight=False,
            )
        saved = run.judge_calls_saved
        out.print(
            f"  [dim]{len(run.cases)} case runs in {run.seconds:.2f} s; judge calls {run.judge_calls}"
            + (f", saved {saved}" if saved else "")
            + f"; model calls {_calls(run)}[/]",
            highlight=False,
        )


def _calls(run: SuiteRun) -> str:
    """`12 (10 cached)`: every model call of the run, the target's and the judges'."""
    total = run.usage.total if run.usage is not None else None
    calls = total.calls if total is not None else 0
    cached = total.cached if total is not None else 0
    return f"{calls} ({cached} cached)"


def render_junit(runs: list[SuiteRun]) -> str:
    root = ET.Element("testsuites")
    for run in runs:
        counts = run.counts()
        suite = ET.SubElement(
            root, "testsuite", name=run.id, tests=str(len(run.cases)),
            failures=str(counts["failed"]), errors=str(counts["error"]), time=f"{run.seconds:.3f}",
        )  # fmt: skip
        for case in run.cases:
            name = case.id if run.suite.repeat == 1 else f"{case.id} (run {case.repeat + 1})"
            element = ET.SubElement(
                suite, "testcase", classname=run.id, name=name, time=f"{case.seconds:.3f}"
            )
            kept = kept_in(run.run_id)
            if case.status in ("failed", "error"):
                why = _why(case)
                ET.SubElement(
                    element, "failure" if case.status == "failed" else "error",
                    message=clip(why, 500, kept=kept),
                ).text = clip_lines(why, SHOWN_IN_FILES, kept=kept)  # fmt: skip
            elif case.status == "recorded":
                ET.SubElement(element, "skipped", message="no evaluator gates this case")
            score = "" if case.score is None else f"score {case.score:.3f}\n"
            output = clip(case.output or "", SHOWN_IN_FILES, kept=kept)
            ET.SubElement(element, "system-out").text = score + output
    ET.indent(xml_safe(root))  # a control character in a name or an output is no XML
    return mask(
        '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
    )


def _e(value: Any) -> str:
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, default=str)
    return html.escape(mask(value), quote=True)  # every value of the page passes here


STYLE = """body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;
width:100%;margin:1em 0}td,th{border:1px solid #ddd;padding:4px 8px;vertical-align:top;text-align:left}
pre{white-space:pre-wrap;margin:0;max-height:12em;overflow:auto}.passed{color:#197a32}.failed{color:#b3261e}
.error{color:#a15c00}.recorded{color:#666}.bar{fill:#4a7bd0}"""


def render_html(
    runs: list[SuiteRun], title: str = "accord eval report", *, gate: GateResult | None = None
) -> str:
    """One self-contained page: no script, no external resource; every value escaped. The
    gate, when one was asked for, with its rule and outcome."""
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title)}</title>"
             f"<style>{STYLE}</style></head><body><h1>{_e(title)}</h1>"]  # fmt: skip
    if gate is None:
        parts.append("<p class='gate'>Gate: none (no --min-pass-rate or --min-score given)</p>")
    else:
        parts.append(f"<p class='gate'>Gate: {_e(gate.line)}</p>")
    for run in runs:
        parts.append(f"<h2 id='{_e(run.id)}'>{_e(run.id)}</h2>")
        parts.append(f"<p>Pass rate: <b>{_e(metric_text(run.pass_rate()))}</b>")
        mean = run.mean_score()
        if mean is not None:
            parts.append(f" &middot; mean score {mean.value:.3f} (n={mean.n})")
        parts.append(f" &middot; judge calls {run.judge_calls}")
        parts.append(f" &middot; model calls {_e(_calls(run))}</p>")
        parts.append(_chart(run))
        parts.append(
            "<table><tr><th>case</th><th>status</th><th>score</th><th>input</th><th>output</th><th>evaluations</th></tr>"
        )
        for case in run.cases:
            label = case.id if run.suite.repeat == 1 else f"{case.id} (run {case.repeat + 1})"
            rows = "".join(
                f"<li><b>{_e(f.name)}</b>: {'' if f.score is None else f'{f.score:.3f}'} "
                f"{'' if f.passed is None else ('pass' if f.passed else 'fail')} {_e(f.error or f.skipped or f.reason)}</li>"
                for f in case.findings
            )
            parts.append(
                f"<tr><td>{_e(label)}</td><td class='{_e(case.status)}'>{_e(case.status)}</td>"
                f"<td>{'' if case.score is None else f'{case.score:.3f}'}</td><td><pre>{_e(case.input)}</pre></td>"
                f"<td><pre>{_e(case.output if case.error is None else case.error)}</pre></td><td><ul>{rows}</ul></td></tr>"
            )
        parts.append("</table>")
    parts.append("</body></html>\n")
    return "".join(parts)


def _chart(run: SuiteRun) -> str:
    figures = [f for f in run.evaluators() if (f.pass_rate or f.mean) is not None]
    if not figures:
        return ""
    height = 22 * len(figures) + 10
    bars = []
    for i, f in enumerate(figures):
        metric = f.pass_rate or f.mean
        assert metric is not None
        width = max(0.0, min(1.0, metric.value)) * 300
        y = 5 + 22 * i
        bars.append(
            f"<text x='0' y='{y + 14}'>{_e(f.name[:24])}</text><rect class='bar' x='180' y='{y}' "
            f"width='{width:.1f}' height='16'/><text x='{185 + width:.1f}' y='{y + 14}'>{metric.value:.0%}</text>"
        )
    return (
        f"<svg width='560' height='{height}' role='img' aria-label='scores'>{''.join(bars)}</svg>"
    )

"""`--report FILE.html`: one self-contained page (inline CSS, inline SVG, a few lines of JS).

No server, no CDN, no external URL: the file opens from disk or as a CI artifact. It shows
every test with its metrics and interval, every run or case with its output, every judged
pair with the judge's reasoning, and a chart of the scores. Every text from a model or a
file is escaped.
"""

from __future__ import annotations

import datetime as dt
from html import escape

from ....engine.masking import mask
from ..core.reducers import Metric
from ..testing.outcomes import CaseRecord, PairRecord, RunRecord, SuiteResult, TestOutcome
from .text import metric_names

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1200px;
       padding: 16px 24px; color: #1d232a; background: #fafbfc; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 0 0 6px; }
h3 { font-size: 15px; margin: 14px 0 6px; }
.meta { color: #57606a; margin: 2px 0 10px; }
.question { white-space: pre-wrap; }
section.test { background: #fff; border: 1px solid #d0d7de; border-radius: 8px;
               padding: 14px 18px; margin: 16px 0; }
section.test.error { border-color: #cf222e; }
table { border-collapse: collapse; width: 100%; margin: 4px 0; }
th, td { border-top: 1px solid #e4e8ec; padding: 5px 8px; text-align: left;
         vertical-align: top; }
th { background: #f3f5f7; font-weight: 600; }
pre { white-space: pre-wrap; word-break: break-word; margin: 0; font-size: 12.5px;
      max-height: 18em; overflow: auto; }
.ok { color: #1a7f37; } .bad { color: #cf222e; } .unknown { color: #9a6700; }
p.error { color: #cf222e; font-weight: 600; }
.chart text { font-size: 12px; fill: #1d232a; }
body.only-failing tr.pass { display: none; }
body.only-failing section.test.passing { display: none; }
"""

SCRIPT = """
document.getElementById("only-failing").addEventListener("change", function (event) {
  document.body.classList.toggle("only-failing", event.target.checked);
});
"""


def _e(text: object) -> str:
    return escape(mask(str(text)), quote=True)  # every value of the page passes here


def _pct(value: float) -> str:
    return f"{value * 100:.2f}%"


def render_html(
    result: SuiteResult, gate_line: str | None = None, *, gate_passed: bool | None = None
) -> str:
    """The whole report as one HTML document (with the gate's rule and outcome, if any)."""
    when = dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    usage = result.usage
    calls = usage.total.calls if usage is not None else 0
    judge_calls = sum(t.judge_calls for t in result.tests)
    head = (
        f"<header><h1>accord test: {_e(result.name)}</h1>"
        f'<p class="meta">{_e(result.file)} · {_e(when)} · {len(result.tests)} test(s) · '
        f"{result.seconds:.2f} s · model calls {calls} · judge calls {judge_calls}</p>"
        + (
            f'<p class="gate {"ok" if gate_passed else "bad"}">Gate: {_e(gate_line)}</p>'
            if gate_line
            else '<p class="gate">Gate: none (no --min-accuracy given)</p>'
        )
        + '<label><input type="checkbox" id="only-failing"> show only failures</label></header>'
    )
    body = "".join(_test_section(t) for t in result.tests)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>accord test: {_e(result.name)}</title><style>{STYLE}</style></head>"
        f'<body>{head}<section id="chart"><h2>Scores</h2>{score_chart(result.tests)}</section>'
        f"{body}<script>{SCRIPT}</script></body></html>\n"
    )


# --- the chart ---------------------------------------------------------------------------------

ROW, LABEL_W, BAR_W = 26, 260, 520
COLOURS = {"accuracy": "#2f81f7", "recall": "#8250df"}


def score_chart(tests: list[TestOutcome]) -> str:
    """Horizontal bars of each test's metrics, with the 95% interval as a whisker."""
    rows: list[str] = []
    y = 0
    for test in tests:
        names = [n for n in metric_names([test]) if n in COLOURS] or [""]
        for name in names:
            rows.append(_chart_row(test, name, y))
            y += ROW
    width = LABEL_W + BAR_W + 90
    axis = "".join(
        f'<line x1="{LABEL_W + BAR_W * t / 4:.0f}" y1="0" x2="{LABEL_W + BAR_W * t / 4:.0f}" '
        f'y2="{y}" stroke="#e4e8ec"/>'
        f'<text x="{LABEL_W + BAR_W * t / 4:.0f}" y="{y + 14}" text-anchor="middle">'
        f"{25 * t}%</text>"
        for t in range(5)
    )
    return (
        f'<svg class="chart" role="img" aria-label="scores per test" width="{width}" '
        f'height="{y + 20}" viewBox="0 0 {width} {y + 20}">{axis}{"".join(rows)}</svg>'
    )


def _chart_row(test: TestOutcome, name: str, y: int) -> str:
    label = f"{test.label} {name}".strip()
    text = f'<text x="0" y="{y + 17}">{_e(label)}</text>'
    metric = test.metrics.get(name)
    if metric is None:
        return f'{text}<text x="{LABEL_W}" y="{y + 17}" class="bad">{_e("no result")}</text>'
    bar = BAR_W * metric.value
    out = (
        f'{text}<rect x="{LABEL_W}" y="{y + 5}" width="{bar:.1f}" height="{ROW - 10}" '
        f'fill="{COLOURS[name]}"><title>{_e(label)}: {_pct(metric.value)}</title></rect>'
    )
    interval = metric.interval
    if interval is not None:
        low, high = (LABEL_W + BAR_W * v for v in interval)
        mid = y + ROW / 2
        out += (
            f'<line x1="{low:.1f}" y1="{mid}" x2="{high:.1f}" y2="{mid}" stroke="#1d232a"/>'
            f'<line x1="{low:.1f}" y1="{mid - 5}" x2="{low:.1f}" y2="{mid + 5}" stroke="#1d232a"/>'
            f'<line x1="{high:.1f}" y1="{mid - 5}" x2="{high:.1f}" y2="{mid + 5}" '
            'stroke="#1d232a"/>'
        )
    return out + f'<text x="{LABEL_W + BAR_W + 8}" y="{y + 17}">{_pct(metric.value)}</text>'


# --- a test ------------------------------------------------------------------------------------


def _test_section(test: TestOutcome) -> str:
    passing = test.error is None and not any(p.verdict == "B" for p in test.pairs)
    passing = passing and not any(c.failed or c.error for c in test.cases)
    classes = "test" + (" error" if test.error else "") + (" passing" if passing else "")
    parts = [
        f'<section class="{classes}" id="test-{test.index}">',
        f"<h2>{_e(test.title)}</h2>",
        f'<p class="meta">{_e(test.kind)} · {_e(test.target)} · n = {test.n} · '
        f"judge calls {test.judge_calls} · {test.seconds:.2f} s</p>",
    ]
    if test.task_description:
        parts.append(f'<p class="meta question">Question: {_e(test.task_description)}</p>')
    if test.error is not None:
        parts.append(f'<p class="error">Error: {_e(test.error)}</p>')
    parts.extend(f'<p class="unknown">Warning: {_e(w)}</p>' for w in test.warnings)
    if test.metrics:
        parts.append(_metrics_table(list(test.metrics.values())))
    if test.runs:
        parts.append(_runs_table(test.runs))
    if test.pairs:
        parts.append(_pairs_table(test.pairs))
    if test.cases:
        parts.append(_cases_table(test, test.cases))
    parts.append("</section>")
    return "".join(parts)


def _metrics_table(metrics: list[Metric]) -> str:
    rows = []
    for metric in metrics:
        interval = metric.interval
        ci = f"{_pct(interval[0])} – {_pct(interval[1])}" if interval else "–"
        rows.append(
            f"<tr><td>{_e(metric.name)}</td><td><b>{_pct(metric.value)}</b></td>"
            f"<td>{metric.n} {_e(metric.unit)}</td><td>{ci}</td></tr>"
        )
    head = "<tr><th>Metric</th><th>Score</th><th>Over</th><th>95% interval (Wilson)</th></tr>"
    return f'<table class="metrics">{head}{"".join(rows)}</table>'


def _runs_table(runs: list[RunRecord]) -> str:
    rows = []
    evaluated = any(run.checks for run in runs)
    for run in runs:
        score = "–" if run.score is None else _pct(run.score)
        body = (
            f'<span class="bad">{_e(run.error)}</span>'
            if run.error
            else f"<pre>{_e(run.output)}</pre>"
        )
        kind = "fail" if run.error or run.passed is False else "pass"
        checks = f"<td>{_marks(run.checks, run.scores)}</td>" if evaluated else ""
        rows.append(
            f'<tr class="{kind}"><td>{run.index}</td><td>{score}</td><td>{body}</td>{checks}</tr>'
        )
    more = "<th>Evaluators</th>" if evaluated else ""
    head = f"<tr><th>Run</th><th>Consistency score</th><th>Output</th>{more}</tr>"
    return f'<h3>Runs</h3><table class="runs">{head}{"".join(rows)}</table>'


def _verdict(verdict: str | None) -> str:
    if verdict == "A":
        return '<span class="ok">consistent (A)</span>'
    if verdict == "B":
        return '<span class="bad">disagree (B)</span>'
    return '<span class="unknown">no verdict</span>'


def _pairs_table(pairs: list[PairRecord]) -> str:
    rows = []
    for pair in pairs:
        kind = "pass" if pair.verdict == "A" else "fail"
        rows.append(
            f'<tr class="{kind}"><td>{pair.runs[0]} · {pair.runs[1]}</td>'
            f"<td>{_verdict(pair.verdict)}</td><td>{_e(pair.source)}</td>"
            f"<td><pre>{_e(pair.reasoning)}</pre></td></tr>"
        )
    head = "<tr><th>Runs</th><th>Verdict</th><th>Decided by</th><th>Judge reasoning</th></tr>"
    return f'<h3>Pairs</h3><table class="pairs">{head}{"".join(rows)}</table>'


def _grade(case: CaseRecord) -> str:
    if case.error is not None:
        return f'<span class="bad">error: {_e(case.error)}</span>'
    return _marks(case.checks, case.scores)


def _marks(checks: dict[str, bool | None], scores: dict[str, float]) -> str:
    """Each verdict (PASS, FAIL, none), each score without one (context recall, ...)."""
    marks = []
    for name, verdict in checks.items():
        css, word = ("unknown", "no verdict")
        if verdict is not None:
            css, word = ("ok", "PASS") if verdict else ("bad", "FAIL")
        score = f" ({_pct(scores[name])})" if name in scores else ""
        marks.append(f'<span class="{css}">{_e(name)}: {word}{score}</span>')
    for name, value in scores.items():
        if name not in checks:
            label = "context recall" if name == "context_recall" else name
            marks.append(f"{_e(label)}: {_pct(value)}")
    return "<br>".join(marks) or "–"


def _cases_table(test: TestOutcome, cases: list[CaseRecord]) -> str:
    rows = []
    for case in cases:
        kind = "fail" if case.failed or case.error else "pass"
        rows.append(
            f'<tr class="{kind}"><td>{_e(test.case_label(case))}</td>'
            f"<td><pre>{_e(case.prompt)}</pre></td><td><pre>{_e(case.expected or '')}</pre></td>"
            f"<td><pre>{_e(case.output or '')}</pre></td><td>{_grade(case)}</td>"
            f"<td><pre>{_e(case.reasoning)}</pre></td></tr>"
        )
    head = (
        "<tr><th>Case</th><th>Prompt</th><th>Expected</th><th>Answer</th><th>Score</th>"
        "<th>Judge reasoning</th></tr>"
    )
    return f'<h3>Cases</h3><table class="cases">{head}{"".join(rows)}</table>'

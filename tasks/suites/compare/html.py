"""Self-contained HTML: the comparison page (`runs compare --format html`) and the shell every
`accord view` page shares. No script, no external resource; every value is escaped."""

from __future__ import annotations

from html import escape

from .comparison import Comparison, Figure, SuiteComparison, describe
from .render import change_line

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:.5em 0;width:100%}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#f4f4f4} .passed{color:#17803d} .failed{color:#b42318} .error{color:#b54708}
.bad{background:#fdecea} .good{background:#e9f7ef} pre{white-space:pre-wrap;margin:0}
nav a{margin-right:1em} form{margin:.6em 0} .muted{color:#777}
del{background:#ffd7d5;text-decoration:line-through} ins{background:#ccffd8;text-decoration:none}
details.judge{margin:.3em 0} details.judge summary{cursor:pointer;color:#0969da}
.pager{margin:.4em 0} svg{max-width:100%;height:auto} label{margin-right:.6em}
h3.change{margin-top:1.4em} table.sides td{width:45%} h1{font-size:1.5em;word-break:break-all}
"""


def e(value: object) -> str:
    """Any value as escaped text (quotes too: values land in attributes)."""
    return escape("" if value is None else str(value), quote=True)


def page(title: str, body: str, nav: str = "") -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{e(title)}</title><style>{STYLE}</style></head><body>"
        f"{nav}<h1>{e(title)}</h1>{body}</body></html>\n"
    )


def _figure_row(label: str, figure: Figure | None, alpha: float) -> str:
    if figure is None:
        return ""
    worse = figure.delta < 0 and figure.significant(alpha)
    css = ' class="bad"' if worse else ""
    return f"<tr{css}><th>{e(label)}</th><td>{e(describe(figure))}</td></tr>"


def suite_section(suite: SuiteComparison, alpha: float) -> str:
    parts = [
        f"<h2>suite {e(suite.name)}</h2>",
        f"<p>{suite.paired} paired case(s), {len(suite.added)} added, "
        f"{len(suite.removed)} removed</p>",
    ]
    parts += [f'<p class="muted">{e(note)}</p>' for note in suite.notes]
    rows = _figure_row("pass rate", suite.pass_rate, alpha) + _figure_row(
        "mean score", suite.score, alpha
    )
    for name, (passing, score) in suite.evaluators.items():
        rows += _figure_row(f"{name}: pass rate", passing, alpha)
        rows += _figure_row(f"{name}: mean score", score, alpha)
    parts.append(f'<table class="figures">{rows}</table>')
    if suite.changes:
        body = "".join(
            f'<tr class="{"bad" if c.to_failing else "good" if c.after == "passed" else ""}">'
            f'<td>{e(c.id)}</td><td class="{e(c.before)}">{e(c.before)}</td>'
            f'<td class="{e(c.after)}">{e(c.after)}</td><td><pre>{e(change_line(c))}</pre></td>'
            "</tr>"
            for c in suite.changes
        )
        parts.append(
            '<table class="changes"><tr><th>case</th><th>baseline</th><th>current</th>'
            f"<th>change</th></tr>{body}</table>"
        )
    if suite.added:
        parts.append(f"<p>added: {e(', '.join(suite.added))}</p>")
    if suite.removed:
        parts.append(f"<p>removed: {e(', '.join(suite.removed))}</p>")
    return "".join(parts)


def comparison_body(comparison: Comparison, alpha: float) -> str:
    reasons = comparison.regressions(alpha)
    verdict = (
        '<p class="failed" id="verdict">significant regression: '
        + "; ".join(e(r) for r in reasons)
        + "</p>"
        if reasons
        else f'<p class="passed" id="verdict">no significant regression (alpha {alpha:g})</p>'
    )
    parts = [
        f"<p>baseline <b>{e(comparison.baseline)}</b> &rarr; current "
        f"<b>{e(comparison.current)}</b></p>",
        verdict,
    ]
    if comparison.problems:
        items = "".join(f"<li>{e(p)}</li>" for p in comparison.problems)
        parts.append(
            f'<div id="problems" class="bad"><p>values read as missing:</p><ul>{items}</ul></div>'
        )
    parts += [suite_section(s, alpha) for s in comparison.suites]
    if comparison.only_baseline:
        parts.append(
            f"<p>suites only in the baseline: {e(', '.join(comparison.only_baseline))}</p>"
        )
    if comparison.only_current:
        parts.append(
            f"<p>suites only in the current run: {e(', '.join(comparison.only_current))}</p>"
        )
    return "".join(parts)


def render_page(comparison: Comparison, alpha: float) -> str:
    return page("Run comparison", comparison_body(comparison, alpha))

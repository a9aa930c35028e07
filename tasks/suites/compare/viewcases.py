"""`accord view`'s pages of one run: its cases with filters, and one case in full."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from .convert import outcome_tests
from .html import e, page
from .intake import Intake
from .records import RunRecord
from .storeview import RunRow, case_base

STATUSES = ("passed", "failed", "error", "recorded")
NAV = '<nav><a href="/">runs</a></nav>'
Node = tuple[str, str, str, "str | None", Any]  # key, type, status, error, decoded output


@dataclass
class ViewCase:
    """One sample of a case as the run page lists it."""

    id: str
    link: str | None  # the case page's `case=` (None: no page, an `accord test` case)
    repeat: int
    status: str
    score: float | None
    tags: list[str] = field(default_factory=list)
    input: Any = None
    output: str | None = None
    evaluations: list[tuple[str, bool | None, float | None, str, str | None]] = field(
        default_factory=list
    )
    error: str | None = None

    def text(self) -> str:
        parts = [self.id, _plain(self.input), self.output or "", self.error or ""]
        parts += [f"{n} {r} {x or ''}" for n, _p, _s, r, x in self.evaluations]
        return "\n".join(parts).lower()

    def failing(self, evaluator: str) -> bool:
        return any(n == evaluator and (p is False or x) for n, p, _s, _r, x in self.evaluations)


def _plain(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def view_cases(nodes: list[Node], intake: Intake) -> list[ViewCase]:
    """The samples of a stored run, their scores and statuses checked (a bad one shows as
    missing, and `intake` keeps why)."""
    out: list[ViewCase] = []
    verdicts = {k.rsplit(".", 1)[0] for k, kind, _s, _e, v in nodes if kind == "eval_verdict" and v}
    for key, kind, status, error, value in nodes:
        base = key.rsplit(".", 1)[0]
        if kind == "eval_verdict" and value is not None:
            findings = getattr(value, "findings", None) or []
            out.append(
                ViewCase(
                    id=str(value.id), link=case_base(key)[0], repeat=int(value.repeat),
                    status=intake.status(value.status, f"case {value.id!r}"),
                    score=intake.score(value.score, f"case {value.id!r}: score"),
                    tags=list(value.tags or []),
                    input=value.input, output=value.output, error=value.error,
                    evaluations=[(f.name, f.passed, f.score, f.reason or "", f.error)
                                 for f in findings],
                )
            )  # fmt: skip
        elif kind == "eval_target" and status != "succeeded" and base not in verdicts:
            case_id, repeat = case_base(key)
            out.append(ViewCase(case_id, case_id, repeat, "error", None, error=error or status))
        elif kind == "accord_test":
            for test in outcome_tests(value, error):
                for case_id, sample in intake.test_cases(test, "a stored test"):
                    out.append(
                        ViewCase(
                            id=f"{test.get('name')}: {case_id}", link=None, repeat=0,
                            status=sample.status, score=sample.score, tags=list(sample.tags),
                            error=sample.error,
                            evaluations=[(x.name, x.passed, x.score, x.reason, x.error)
                                         for x in sample.evaluations],
                        )
                    )  # fmt: skip
    return out


def _select(name: str, label: str, choices: list[str], chosen: str) -> str:
    options = ['<option value="">any</option>'] + [
        f'<option value="{e(c)}"{" selected" if c == chosen else ""}>{e(c)}</option>'
        for c in choices
    ]
    return f'<label>{e(label)} <select name="{name}">{"".join(options)}</select></label> '


def problems_note(problems: list[str]) -> str:
    """The values of a run read as missing, and why (a tampered store)."""
    if not problems:
        return ""
    items = "".join(f"<li>{e(p)}</li>" for p in problems)
    return f'<div id="problems" class="bad"><p>values read as missing:</p><ul>{items}</ul></div>'


def cases_page(row: RunRow, nodes: list[Node], query: dict[str, str]) -> str:
    intake = Intake(f"run {row.run_id}")
    cases = view_cases(nodes, intake)
    status, tag = query.get("status", ""), query.get("tag", "")
    evaluator, text = query.get("evaluator", ""), query.get("q", "")
    tags = sorted({t for c in cases for t in c.tags})
    evaluators = list(dict.fromkeys(n for c in cases for n, *_ in c.evaluations))
    shown = [
        c for c in cases
        if (not status or c.status == status) and (not tag or tag in c.tags)
        and (not evaluator or c.failing(evaluator)) and (not text or text.lower() in c.text())
    ]  # fmt: skip
    form = (
        f'<form action="/run" method="get" id="filters"><input type="hidden" name="id" '
        f'value="{e(row.run_id)}">'
        + _select("status", "status", list(STATUSES), status)
        + _select("tag", "tag", tags, tag)
        + _select("evaluator", "failed by evaluator", evaluators, evaluator)
        + f'<label>text <input type="search" name="q" value="{e(text)}"></label> '
        '<button type="submit">filter</button></form>'
    )
    rows = "".join(_case_row(row, c) for c in shown)
    table = (
        '<table id="cases"><tr><th>case</th><th>repeat</th><th>status</th><th>score</th>'
        f"<th>tags</th><th>evaluators</th><th>output</th></tr>{rows}</table>"
    )
    summary = f'<p id="shown">{len(shown)} of {len(cases)} case result(s)</p>'
    links = (
        f'<p><a href="/suite?name={quote(row.suite, safe="")}">suite {e(row.suite)}</a> '
        f"&middot; status {e(row.status)}</p>"
    )
    problems = intake.into(RunRecord(row.run_id)).problems
    if row.started is None:
        problems.insert(0, f"run {row.run_id}: its start time is not a time; shown as unknown")
    return page(
        f"Run {row.run_id}",
        problems_note(problems) + links + form + summary + table,
        '<nav><a href="/">runs</a></nav>',
    )


def _case_row(row: RunRow, case: ViewCase) -> str:
    name = e(case.id)
    if case.link is not None:
        href = f"/case?run={quote(row.run_id, safe='')}&case={quote(case.link, safe='')}"
        name = f'<a href="{e(href)}">{name}</a>'
    verdicts = ", ".join(
        f"{n}: {'error' if x else 'pass' if p else 'fail' if p is False else '-'}"
        for n, p, _s, _r, x in case.evaluations
    )
    output = (case.output or case.error or "")[:200]
    score = "-" if case.score is None else f"{case.score:.3f}"
    return (
        f'<tr class="case {e(case.status)}"><td>{name}</td><td>{case.repeat + 1}</td>'
        f'<td class="{e(case.status)}">{e(case.status)}</td><td>{score}</td>'
        f"<td>{e(', '.join(case.tags))}</td><td>{e(verdicts)}</td><td><pre>{e(output)}</pre></td>"
        "</tr>"
    )


def _pre(value: Any) -> str:
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, indent=2, default=str)
    )
    return f"<pre>{e(text)}</pre>"


def case_page(row: RunRow, name: str, nodes: list[Node]) -> str:
    """Every repeat of one case: input, expected, output, evaluations with their reasons,
    tool calls, usage, cost and time."""
    if not nodes:
        from ....engine.errors import ConfigError

        raise ConfigError(f"run {row.run_id} has no case {name}")
    parts = []
    targets = {
        k.rsplit(".", 1)[0]: (s, err, v) for k, kind, s, err, v in nodes if kind == "eval_target"
    }
    for key, kind, _status, _error, value in nodes:
        if kind != "eval_verdict" or value is None:
            continue
        base = key.rsplit(".", 1)[0]
        target = targets.get(base, (None, None, None))[2]
        parts.append(f"<h2>repeat {int(value.repeat) + 1}: "
                     f'<span class="{e(value.status)}">{e(value.status)}</span></h2>')  # fmt: skip
        rows = [("case", e(value.id)), ("input", _pre(value.input)),
                ("expected", _pre(value.expected)), ("output", _pre(value.output)),
                ("score", e("-" if value.score is None else f"{value.score:.4f}"))]  # fmt: skip
        if value.error:
            rows.append(("error", _pre(value.error)))
        if target is not None:
            rows += [
                ("tool calls", _pre(getattr(target, "tool_calls", None) or [])),
                ("usage", _pre(getattr(target, "usage", None) or value.usage or {})),
                ("cost (USD)", e(getattr(target, "cost", None) or "-")),
                ("seconds", e(f"{getattr(target, 'seconds', 0.0):.3f}")),
            ]
        parts.append(
            '<table class="case">'
            + "".join(f"<tr><th>{e(k)}</th><td>{v}</td></tr>" for k, v in rows)
            + "</table>"
        )
        findings = "".join(
            f"<tr><td>{e(f.name)}</td><td>{e(f.passed)}</td>"
            f"<td>{e('-' if f.score is None else f'{f.score:.4f}')}</td>"
            f"<td>{_pre(f.reason)}</td><td>{e(f.error or '')}</td><td>{f.judge_calls}</td></tr>"
            for f in value.findings
        )
        parts.append(
            '<table class="evaluations"><tr><th>evaluator</th><th>passed</th><th>score</th>'
            f"<th>reason</th><th>error</th><th>judge calls</th></tr>{findings}</table>"
        )
    for base, (status, error, _value) in targets.items():
        if status != "succeeded" and not any(k.startswith(base + ".verdict") for k, *_ in nodes):
            parts.append(f"<h2>{e(base)}: error</h2>{_pre(error or status)}")
    back = f'<p><a href="/run?id={quote(row.run_id, safe="")}">run {e(row.run_id)}</a></p>'
    return page(f"Case {name}", back + "".join(parts), NAV)

"""`accord view`'s pages of one evaluation run: its cases as a table (filtered and paged on
the server) and one case in full (input, expected, answer, each evaluator's score, threshold
and reason, a judge's prompt and reply, tool calls, repeats, tokens, cost and time)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from .convert import outcome_tests
from .html import e, page
from .intake import STATUSES, Intake
from .storequery import Filters, Index, Listed, decoded, filtered, natural, pass_rate
from .storeview import RunRow, stored_results

NAV = '<nav><a href="/">runs</a></nav>'
PAGE_SIZE = 100
ANSWER_CHARS = 160
Node = tuple[str, str, str, "str | None", Any]  # key, type, status, error, decoded output


def q(value: str) -> str:
    return quote(value, safe="")


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def score_text(value: Any, places: int = 3) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-"
    return f"{value:.{places}f}"


def plain(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def pre(value: Any) -> str:
    text = (
        value
        if isinstance(value, str)
        else json.dumps(value, ensure_ascii=False, indent=2, default=str)
    )
    return f"<pre>{e(text)}</pre>"


def problems_note(problems: list[str]) -> str:
    """The values of a run read as missing, and why (a tampered store)."""
    if not problems:
        return ""
    items = "".join(f"<li>{e(p)}</li>" for p in problems)
    return f'<div id="problems" class="bad"><p>values read as missing:</p><ul>{items}</ul></div>'


def select(name: str, label: str, choices: list[str], chosen: str) -> str:
    options = ['<option value="">any</option>'] + [
        f'<option value="{e(c)}"{" selected" if c == chosen else ""}>{e(c)}</option>'
        for c in choices
    ]
    return f'<label>{e(label)} <select name="{name}">{"".join(options)}</select></label> '


def figures_line(counts: dict[str, int], cases: int) -> str:
    """A run's figures in one unit, said: samples (a sample is one repeat of one case)."""
    total = sum(counts.values())
    return (
        f'<p id="figures">{cases} case(s), {total} sample(s) (a sample: one repeat of one '
        f"case): {counts['passed']} passed, {counts['failed']} failed, {counts['error']} "
        f"error(s), {counts['recorded']} recorded; pass rate {percent(pass_rate(counts))} "
        "of judged samples</p>"
    )


def pager(base: dict[str, str], page_no: int, pages: int, path: str = "/run") -> str:
    def link(n: int, text: str) -> str:
        return f'<a href="{e(path + "?" + urlencode({**base, "page": str(n)}))}">{text}</a>'

    parts = []
    if page_no > 1:
        parts += [link(1, "&laquo; first"), link(page_no - 1, "&lsaquo; previous")]
    parts.append(f"page {page_no} of {pages}")
    if page_no < pages:
        parts += [link(page_no + 1, "next &rsaquo;"), link(pages, "last &raquo;")]
    return f'<p class="pager">{" &middot; ".join(parts)}</p>'


def page_number(query: dict[str, str], pages: int) -> int:
    try:
        wanted = int(query.get("page", "1"))
    except ValueError:
        wanted = 1
    return min(max(wanted, 1), max(pages, 1))


def eval_run_page(
    store: Path, row: RunRow, index: Index, query: dict[str, str], header: str
) -> str:
    """An evaluation run's samples: filters (GET), one page of the table, the pager."""
    filters = Filters.of(query)
    kept = filtered(store, row.run_id, index, filters)
    pages = max(1, -(-len(kept) // PAGE_SIZE))
    page_no = page_number(query, pages)
    shown = kept[(page_no - 1) * PAGE_SIZE : page_no * PAGE_SIZE]
    values = decoded(store, row.run_id, [s.key for s in shown if s.error is None])
    intake = Intake(f"run {row.run_id}")
    evaluators = index.evaluators
    rows = "".join(_eval_row(row, s, values.get(s.key), evaluators, intake) for s in shown)
    form = _filter_form(row, filters, index.tags, evaluators)
    base = {"id": row.run_id, **_filter_args(filters)}
    heads = "".join(f"<th>{e(n)}</th>" for n in evaluators)
    table = (
        '<table id="cases"><tr><th>case</th><th>repeat</th><th>status</th><th>score</th>'
        f"{heads}<th>tags</th><th>answer</th></tr>{rows}</table>"
    )
    first = (page_no - 1) * PAGE_SIZE + 1 if shown else 0
    last = first + len(shown) - 1 if shown else 0
    summary = (
        f'<p id="shown">{len(kept)} of {len(index.samples)} case result(s)</p>'
        f'<p class="muted">showing {first}-{last}, {PAGE_SIZE} a page</p>'
    )
    problems = [*intake.problems, *index.problems]
    if index.unreadable:
        problems.append(f"{index.unreadable} stored case result(s) are not readable JSON")
    body = (
        header
        + problems_note(problems)
        + figures_line(index.counts(), index.cases)
        + form
        + summary
        + pager(base, page_no, pages)
        + table
        + (pager(base, page_no, pages) if len(shown) > 20 else "")
    )
    return page(f"Run {row.run_id}", body, NAV)


def _filter_args(filters: Filters) -> dict[str, str]:
    args = {"status": filters.status, "tag": filters.tag, "evaluator": filters.evaluator}
    args["q"] = filters.text
    return {k: v for k, v in args.items() if v}


def _filter_form(row: RunRow, filters: Filters, tags: list[str], evaluators: list[str]) -> str:
    return (
        '<form action="/run" method="get" id="filters"><input type="hidden" name="id" '
        f'value="{e(row.run_id)}">'
        + select("status", "status", list(STATUSES), filters.status)
        + select("evaluator", "failed by evaluator", evaluators, filters.evaluator)
        + select("tag", "tag", tags, filters.tag)
        + f'<label>text <input type="search" name="q" value="{e(filters.text)}"></label> '
        '<button type="submit">filter</button></form>'
    )


def case_href(run_id: str, case_id: str) -> str:
    return f"/case?run={q(run_id)}&case={q(case_id)}"


def _mark(passed: Any, error: Any, score: Any) -> tuple[str, str]:
    if error:
        return "error", "error"
    label = {True: "pass", False: "fail"}.get(passed, "-") if isinstance(passed, bool) else "-"
    css = {"pass": "passed", "fail": "failed"}.get(label, "")
    return f"{label} {score_text(score, 2)}".strip(), css


def _eval_row(
    row: RunRow, sample: Listed, value: Any, evaluators: list[str], intake: Intake
) -> str:
    findings = {getattr(f, "name", None): f for f in getattr(value, "findings", None) or []}
    cells = []
    for name in evaluators:
        found = findings.get(name)
        if found is None:
            cells.append("<td></td>")
            continue
        text, css = _mark(found.passed, found.error, intake.score(found.score, name))
        title = (found.error or found.reason or "")[:300]
        cells.append(f'<td class="{css}" title="{e(title)}">{e(text)}</td>')
    answer = getattr(value, "output", None) if value is not None else sample.error
    answer = plain(answer)
    clipped = answer[:ANSWER_CHARS] + ("…" if len(answer) > ANSWER_CHARS else "")
    link = f'<a href="{e(case_href(row.run_id, sample.id))}">{e(sample.id)}</a>'
    return (
        f'<tr class="case {e(sample.status)}"><td>{link}</td><td>{sample.repeat + 1}</td>'
        f'<td class="{e(sample.status)}">{e(sample.status)}</td>'
        f"<td>{score_text(sample.score)}</td>{''.join(cells)}"
        f"<td>{e(', '.join(sample.tags))}</td><td><pre>{e(clipped)}</pre></td></tr>"
    )


# --- an `accord test` run: its tests' cases, read whole (a test run holds few) ---------------


@dataclass
class ViewCase:
    """One sample of a test's case as the run page lists it."""

    id: str
    status: str
    score: float | None
    tags: list[str] = field(default_factory=list)
    evaluations: list[tuple[str, bool | None, float | None, str, str | None]] = field(
        default_factory=list
    )
    error: str | None = None

    def text(self) -> str:
        parts = [self.id, self.error or ""]
        parts += [f"{n} {r} {x or ''}" for n, _p, _s, r, x in self.evaluations]
        return "\n".join(parts).casefold()

    def failing(self, evaluator: str) -> bool:
        return any(n == evaluator and (p is False or x) for n, p, _s, _r, x in self.evaluations)


def test_cases(nodes: list[Node], intake: Intake) -> list[ViewCase]:
    out = []
    for _key, kind, _status, error, value in nodes:
        if kind != "accord_test":
            continue
        for test in outcome_tests(value, error):
            for case_id, sample in intake.test_cases(test, "a stored test"):
                out.append(
                    ViewCase(
                        id=f"{test.get('name')}: {case_id}", status=sample.status,
                        score=sample.score, tags=list(sample.tags), error=sample.error,
                        evaluations=[(x.name, x.passed, x.score, x.reason, x.error)
                                     for x in sample.evaluations],
                    )
                )  # fmt: skip
    return out


def test_run_page(store: Path, row: RunRow, query: dict[str, str], header: str) -> str:
    intake = Intake(f"run {row.run_id}")
    cases = test_cases(stored_results(store, row.run_id), intake)
    filters = Filters.of(query)
    tags = sorted({t for c in cases for t in c.tags}, key=natural)
    evaluators = list(dict.fromkeys(n for c in cases for n, *_ in c.evaluations))
    text = filters.text.casefold()
    kept = [
        c for c in cases
        if (not filters.status or c.status == filters.status)
        and (not filters.tag or filters.tag in c.tags)
        and (not filters.evaluator or c.failing(filters.evaluator))
        and (not text or text in c.text())
    ]  # fmt: skip
    pages = max(1, -(-len(kept) // PAGE_SIZE))
    page_no = page_number(query, pages)
    shown = kept[(page_no - 1) * PAGE_SIZE : page_no * PAGE_SIZE]
    counts = dict.fromkeys(STATUSES, 0)
    for case in cases:
        counts[case.status] += 1
    rows = "".join(_test_row(c, evaluators) for c in shown)
    heads = "".join(f"<th>{e(n)}</th>" for n in evaluators)
    table = (
        '<table id="cases"><tr><th>case</th><th>status</th><th>score</th>'
        f"{heads}<th>tags</th><th>error</th></tr>{rows}</table>"
    )
    base = {"id": row.run_id, **_filter_args(filters)}
    summary = f'<p id="shown">{len(kept)} of {len(cases)} case result(s)</p>'
    body = (
        header
        + problems_note(intake.problems)
        + figures_line(counts, len({c.id for c in cases}))
        + _filter_form(row, filters, tags, evaluators)
        + summary
        + pager(base, page_no, pages)
        + table
    )
    return page(f"Run {row.run_id}", body, NAV)


def _test_row(case: ViewCase, evaluators: list[str]) -> str:
    found = {n: (p, s, r, x) for n, p, s, r, x in case.evaluations}
    cells = []
    for name in evaluators:
        if name not in found:
            cells.append("<td></td>")
            continue
        passed, score, reason, error = found[name]
        text, css = _mark(passed, error, score)
        cells.append(f'<td class="{css}" title="{e((error or reason)[:300])}">{e(text)}</td>')
    return (
        f'<tr class="case {e(case.status)}"><td>{e(case.id)}</td>'
        f'<td class="{e(case.status)}">{e(case.status)}</td><td>{score_text(case.score)}</td>'
        f"{''.join(cells)}<td>{e(', '.join(case.tags))}</td><td><pre>{e(case.error or '')}</pre>"
        "</td></tr>"
    )


# --- one case -------------------------------------------------------------------------------


def case_page(store: Path, row: RunRow, name: str, index: Index) -> str:
    """Every repeat of one case: input, expected, answer, evaluations with their thresholds
    and reasons, each judge call's prompt and reply, tool calls, usage, cost and time."""
    samples = [s for s in index.samples if s.id == name]
    if not samples:
        from ....engine.errors import ConfigError

        raise ConfigError(f"run {row.run_id} has no case {name}")
    keys = [s.key for s in samples if s.error is None]
    keys += [s.key.rsplit(".", 1)[0] + ".target" for s in samples if s.error is None]
    values = decoded(store, row.run_id, keys)
    intake = Intake(f"run {row.run_id}")
    parts = [
        f'<p><a href="/run?id={q(row.run_id)}">run {e(row.run_id)}</a> &middot; '
        f"{len(samples)} repeat(s)</p>"
    ]
    for sample in samples:
        parts.append(
            f'<h2 id="repeat-{sample.repeat + 1}">repeat {sample.repeat + 1}: '
            f'<span class="{e(sample.status)}">{e(sample.status)}</span></h2>'
        )
        if sample.error is not None:
            parts.append(pre(sample.error))
            continue
        value = values.get(sample.key)
        target = values.get(sample.key.rsplit(".", 1)[0] + ".target")
        if value is None:
            parts.append('<p class="bad">this result could not be read from the store</p>')
            continue
        parts.append(_sample_table(value, target, intake))
        parts.append(_findings_table(getattr(value, "findings", None) or [], intake))
    return page(f"Case {name}", problems_note(intake.problems) + "".join(parts), NAV)


def _sample_table(value: Any, target: Any, intake: Intake) -> str:
    score = intake.score(getattr(value, "score", None), "score")
    rows = [
        ("case", e(value.id)),
        ("input", pre(value.input)),
        ("expected", pre(value.expected)),
        ("answer", pre(value.output)),
        ("score", e(score_text(score, 4))),
    ]
    if value.verdict:
        rows.append(("verdict", e(value.verdict)))
    if value.error:
        rows.append(("error", pre(value.error)))
    if value.tags:
        rows.append(("tags", e(", ".join(map(str, value.tags)))))
    if value.target:
        rows.append(("target", e(value.target)))
    usage = getattr(target, "usage", None) or value.usage
    cost = getattr(target, "cost", None) if target is not None else None
    cost = cost if cost is not None else value.cost
    seconds = getattr(target, "seconds", None) or value.seconds
    rows.append(("tokens", e(_tokens(usage))))
    rows.append(("cost (USD)", e("-" if cost is None else f"{cost:.6f}")))
    rows.append(("seconds (answer)", e(score_text(seconds))))
    calls = getattr(target, "tool_calls", None) or []
    rows.append(("tool calls", pre(calls) if calls else "none"))
    messages = getattr(target, "messages", None)
    if messages:
        rows.append(("messages", f"<details><summary>{len(messages)} message(s)</summary>"
                                 f"{pre(messages)}</details>"))  # fmt: skip
    if value.warnings:
        rows.append(("warnings", pre("\n".join(map(str, value.warnings)))))
    if value.metadata:
        rows.append(("metadata", pre(value.metadata)))
    return (
        '<table class="case">'
        + "".join(f"<tr><th>{e(k)}</th><td>{v}</td></tr>" for k, v in rows)
        + "</table>"
    )


def _tokens(usage: Any) -> str:
    if not isinstance(usage, dict) or not usage:
        return "-"
    return ", ".join(f"{k} {v}" for k, v in usage.items())


def _findings_table(findings: list[Any], intake: Intake) -> str:
    rows = []
    for f in findings:
        text, css = _mark(f.passed, f.error, intake.score(f.score, f"{f.name}: score"))
        reason = f.reason or ""
        if f.hits or f.misses:
            reason += "".join(f"\n+ {h}" for h in f.hits) + "".join(f"\n- {m}" for m in f.misses)
        judge = "".join(
            '<details class="judge" open><summary>judge call '
            f"{i + 1}{' (failed)' if x.get('error') else ''}</summary>"
            f"<p>prompt</p>{pre(x.get('prompt', ''))}<p>reply</p>"
            f"{pre(x.get('error') or x.get('reply', ''))}</details>"
            for i, x in enumerate(getattr(f, "exchanges", None) or [])
            if isinstance(x, dict)
        )
        rows.append(
            f'<tr><td>{e(f.name)}</td><td class="{css}">{e(text)}</td>'
            f"<td>{e(f.threshold or 'none (recorded)')}</td><td>{e(f.weight)}</td>"
            f"<td>{pre(reason)}{pre(f.error) if f.error else ''}"
            f"{pre('skipped: ' + f.skipped) if f.skipped else ''}</td>"
            f"<td>{f.judge_calls}{judge}</td></tr>"
        )
    return (
        '<table class="evaluations"><tr><th>evaluator</th><th>verdict, score</th>'
        "<th>threshold</th><th>weight</th><th>reason</th><th>judge calls: prompt and reply</th>"
        f"</tr>{''.join(rows)}</table>"
    )

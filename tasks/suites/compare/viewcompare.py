"""`accord view`'s comparison of two runs: the paired figures and verdict of
`accord runs compare` (html.comparison_body), then each changed case with both runs'
answers, a word-level diff of them and both runs' reasons."""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Any

from .comparison import Comparison
from .html import comparison_body, e, page
from .records import RunRecord
from .storequery import verdicts_of
from .storeview import RunRow
from .viewcases import NAV, case_href, plain, score_text

CHANGES_SHOWN = 200
DIFF_CHARS = 20_000  # each answer's part a diff compares
_WORDS = re.compile(r"\s+|[^\s]+")


def word_diff(before: str, after: str) -> str:
    """Both answers as one text, words only in the baseline struck (`<del>`), words only in
    the current run marked (`<ins>`); whitespace kept."""
    a, b = _WORDS.findall(before[:DIFF_CHARS]), _WORDS.findall(after[:DIFF_CHARS])
    out = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            out.append(e("".join(a[i1:i2])))
            continue
        if i2 > i1:
            out.append(f"<del>{e(''.join(a[i1:i2]))}</del>")
        if j2 > j1:
            out.append(f"<ins>{e(''.join(b[j1:j2]))}</ins>")
    return f'<pre class="diff">{"".join(out)}</pre>'


def compare_page(
    store: Path,
    rows: tuple[RunRow, RunRow],
    records: tuple[RunRecord, RunRecord],
    comparison: Comparison,
    alpha: float,
    form: str,
) -> str:
    before, after = rows
    parts = [form, comparison_body(comparison, alpha)]
    changed = [(s, c) for s in comparison.suites for c in s.changes]
    if changed:
        parts.append(f'<h2 id="changed">changed cases ({len(changed)})</h2>')
    ids = list(dict.fromkeys(c.id for _s, c in changed[:CHANGES_SHOWN]))
    answers = (verdicts_of(store, before.run_id, ids), verdicts_of(store, after.run_id, ids))
    for suite, change in changed[:CHANGES_SHOWN]:
        old = records[0].suites.get(suite.name)
        new = records[1].suites.get(suite.name)
        reasons = (
            old.cases[change.id].failing_reasons() if old and change.id in old.cases else [],
            new.cases[change.id].failing_reasons() if new and change.id in new.cases else [],
        )
        parts.append(_change(before, after, change, answers, reasons))
    if len(changed) > CHANGES_SHOWN:
        parts.append(f"<p>the first {CHANGES_SHOWN} of {len(changed)} changed cases are shown</p>")
    title = f"Compare {before.run_id} with {after.run_id}"
    return page(title, "".join(parts), NAV)


def _answer(values: list[Any]) -> str:
    """A case's answer in one run; each repeat's, numbered, when it repeated."""
    texts = [plain(getattr(v, "output", None)) for v in values]
    if len(texts) == 1:
        return texts[0]
    return "\n".join(f"[repeat {i + 1}] {t}" for i, t in enumerate(texts))


def _change(
    before: RunRow,
    after: RunRow,
    change: Any,
    answers: tuple[dict[str, list[Any]], dict[str, list[Any]]],
    reasons: tuple[list[str], list[str]],
) -> str:
    css = "bad" if change.to_failing else "good" if change.after == "passed" else ""
    old, new = answers[0].get(change.id, []), answers[1].get(change.id, [])
    text_a, text_b = _answer(old), _answer(new)
    links = (
        f'<a href="{e(case_href(before.run_id, change.id))}">baseline</a> &middot; '
        f'<a href="{e(case_href(after.run_id, change.id))}">current</a>'
    )
    head = (
        f'<h3 class="change {css}" id="case-{e(change.id)}">{e(change.id)}: '
        f'<span class="{e(change.before)}">{e(change.before)}</span> &rarr; '
        f'<span class="{e(change.after)}">{e(change.after)}</span>, score '
        f"{score_text(change.score_before, 4)} &rarr; {score_text(change.score_after, 4)} "
        f"<small>{links}</small></h3>"
    )

    def listed(items: list[str]) -> str:
        if not items:
            return '<span class="muted">none (passed)</span>'
        return "<ul>" + "".join(f"<li>{e(r)}</li>" for r in items) + "</ul>"

    answers_row = (
        f"<tr><th>answer</th><td><pre>{e(text_a)}</pre></td><td><pre>{e(text_b)}</pre></td></tr>"
        if old or new
        else ""
    )
    diff = (
        f'<tr><th>word diff</th><td colspan="2">{word_diff(text_a, text_b)}</td></tr>'
        if (old or new) and text_a != text_b
        else ""
    )
    return (
        head + '<table class="sides"><tr><th></th><th>baseline '
        f"{e(before.run_id)}</th><th>current {e(after.run_id)}</th></tr>"
        + answers_row
        + diff
        + f"<tr><th>reasons</th><td>{listed(reasons[0])}</td><td>{listed(reasons[1])}</td></tr>"
        + "</table>"
    )

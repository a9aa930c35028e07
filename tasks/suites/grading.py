"""The correctness judge: does an answer state the facts of the expected answer? PASS/FAIL.

Like the consistency judge, it runs at temperature 0 with a fixed seed, scans the reply for
a verdict from the last line up, asks once more when there is none, and reports a reply
without a verdict as an error (never as a FAIL).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.errors import AccordError
from engine.render import render
from tasks.consistency import JUDGE_SEED

if TYPE_CHECKING:
    from engine.context import TaskContext

CORRECTNESS_PROMPT = """\
You grade an answer that a data-analysis assistant gave, against the expected answer.

Question:
{{ question }}

Expected answer:
{{ expected }}

Answer given:
{{ answer }}

The answer PASSES when it states the facts of the expected answer: the same numbers (a
rounding difference under 0.1%, or under $1, is fine; so is any number formatting), the same
categories and names, the same direction of change. Extra detail that does not contradict the
expected answer is fine; wording does not matter.
The answer FAILS when a fact of the expected answer is missing, different or contradicted.

First explain your reasoning in a few sentences. Then write PASS or FAIL alone on the last
line.
"""

_LABELLED = re.compile(
    r"(?:final\s+)?(?:answer|verdict|grade|result)\s*[:=]\s*[*_]*\s*(PASS|FAIL)[*_]*\.?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Grade:
    """The judge's verdict (None when it gave none), its reasoning, and any error."""

    passed: bool | None
    reasoning: str
    error: str | None = None


def _json_grade(text: str) -> bool | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict):
        return None
    value = str(data.get("verdict", data.get("grade", ""))).strip().upper()
    return {"PASS": True, "FAIL": False}.get(value)


def parse_grade(reply: str) -> bool | None:
    """PASS -> True, FAIL -> False, none -> None; from the last line up.

    Accepts a line that is exactly `PASS`/`FAIL` (also in bold), `Verdict: PASS`, or JSON
    `{"verdict": "PASS"}`.
    """
    whole = reply.strip()
    if whole.startswith("{") and (found := _json_grade(whole)) is not None:
        return found
    for line in reversed(whole.splitlines()):
        text = line.strip().strip("`").strip()
        if not text:
            continue
        if text.startswith("{") and (found := _json_grade(text)) is not None:
            return found
        bare = text.strip("*_ ").rstrip(".").upper()
        if bare in ("PASS", "FAIL"):
            return bare == "PASS"
        labelled = _LABELLED.fullmatch(text.strip("*_ "))
        if labelled:
            return labelled.group(1).upper() == "PASS"
    return None


async def grade_answer(
    ctx: TaskContext,
    *,
    question: str,
    expected: str,
    answer: str,
    prompt: str | None,
    model: str | None,
) -> Grade:
    """Ask the correctness judge once (and once more when its reply has no verdict)."""
    context = {"question": question, "expected": expected, "answer": answer}
    messages = [{"role": "user", "content": render(prompt or CORRECTNESS_PROMPT, context)}]
    client = ctx.run.models()
    reply = ""
    for attempt in range(2):
        try:
            completion = await client.complete(
                model, messages, task=ctx.key, temperature=0, seed=JUDGE_SEED, sample=attempt
            )
        except AccordError as exc:
            return Grade(None, "", f"judge call failed: {exc.message}")
        reply = completion.text
        verdict = parse_grade(reply)
        if verdict is not None:
            return Grade(verdict, reply.strip())
    return Grade(None, reply.strip(), f"no PASS/FAIL in the judge's reply: {reply[-200:]!r}")

"""The correctness judge: does an answer state the facts of the expected answer? PASS/FAIL.

It is asked like the consistency judge (`ask_judge`): at temperature 0 with a fixed seed, once
more when the reply, scanned from the last line up, has no verdict; a reply without a verdict
is reported as an error (never as a FAIL).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from accord.engine.render import render
from accord.tasks.consistency.judge import ask_judge

if TYPE_CHECKING:
    from accord.engine.context import TaskContext

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
    text = render(prompt or CORRECTNESS_PROMPT, context)
    return Grade(*await ask_judge(ctx, text, model, parse_grade, missing="PASS/FAIL"))

"""The pairwise judge: its default prompt (or the workflow's `consistency_prompt`), asking it,
and reading its verdict.

A judge is asked at temperature 0 with a fixed seed, and once more when its reply carries no
verdict; a failed call is an error, never a verdict. Consistency selection (tasks/consistency)
asks through `ask_judge`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

from pydantic import Field

from ...engine.asking import Reading, ask_until_parsed
from ...engine.errors import AccordError
from ...engine.kinds import register_section
from ...engine.render import TemplateError, referenced_names, render

if TYPE_CHECKING:
    from ...engine.context import TaskContext
    from ...engine.plan import Plan
    from ...engine.yamlmarks import Loc

Verdict = Literal["A", "B"]
VerdictT = TypeVar("VerdictT")
JUDGE_SEED = 20240115


def _renders(prompt: str | None, plan: Plan) -> list[tuple[Loc, str]]:
    """The prompt renders only after a task's n model calls: its template is checked when the
    workflow compiles."""
    if not prompt:
        return []
    try:
        referenced_names(prompt)
    except TemplateError as exc:
        return [(("consistency_prompt",), exc.message)]
    return []


# the judge prompt of a workflow's consistency tasks (a task's own `consistency_prompt` wins)
register_section("consistency_prompt", str | None, Field(None), check=_renders)

DEFAULT_PROMPT = """\
You compare two answers that a data-analysis assistant gave to the same question, and decide
whether they agree on the facts.

Question:
{{ task_description }}

Answer 1:
{{ submission_1 }}

Answer 2:
{{ submission_2 }}

Treat these as CONSISTENT (they agree):
- Numbers that differ only by rounding: less than 0.1% apart, or less than $1 apart
  ("$1,081,396" and "$1,081,395.67"; "42.67%" and "42.7%").
- Different formatting of the same value: "1000" and "1,000", "2024-01-15" and
  "January 15, 2024", extra spaces or line breaks, Markdown versus plain text.
- Different wording of the same statement: grammar, contractions, synonyms ("fell" and
  "decreased"), a different order of the same facts.
- One answer giving more detail than the other, as long as nothing in it contradicts the other.

Treat these as a DISAGREEMENT:
- A different categorical fact: another top product, region, customer, category or name.
- Opposite directions: increased versus decreased, higher versus lower, positive versus
  negative.
- Conclusions that cannot both be true.
- A material numeric difference: more than 10% apart and, for money, more than $10 apart.

First explain your reasoning in a few sentences, comparing the facts one by one.
Then write the verdict alone on the last line: A if the answers are consistent, B if they
disagree.
"""


_LABELLED = re.compile(
    r"(?:final\s+)?(?:answer|verdict)\s*[:=]\s*[*_]*\s*\(?([AB])\)?\s*[*_]*\.?", re.IGNORECASE
)


def _json_verdict(text: str) -> Verdict | None:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    if isinstance(data, dict):
        value = str(data.get("verdict", "")).strip().upper()
        if value in ("A", "B"):
            return "A" if value == "A" else "B"
    return None


def parse_verdict(reply: str) -> Verdict | None:
    """The verdict of a judge reply, scanning from the last line up.

    Accepts a line that is exactly `A` or `B`, `Answer: A`, `**A**`, or JSON
    `{"verdict": "A"}`; a reply with none of these has no verdict.
    """
    whole = reply.strip()
    if whole.startswith("{"):
        found = _json_verdict(whole)
        if found is not None:
            return found
    for line in reversed(whole.splitlines()):
        text = line.strip().strip("`").strip()
        if not text:
            continue
        if text.startswith("{"):
            found = _json_verdict(text)
            if found is not None:
                return found
        bare = text.strip("*_ ").rstrip(".").strip("()")
        if bare in ("A", "B"):
            return "A" if bare == "A" else "B"
        labelled = _LABELLED.fullmatch(text.strip("*_ "))
        if labelled:
            return "A" if labelled.group(1).upper() == "A" else "B"
    return None


@dataclass(frozen=True)
class JudgeOutcome:
    """A judged pair: its verdict (None when the judge gave none) and the reasoning."""

    verdict: Verdict | None
    reasoning: str
    error: str | None = None


async def judge_pair(
    ctx: TaskContext,
    first: str,
    second: str,
    *,
    task_description: str,
    prompt: str,
    model: str | None,
) -> JudgeOutcome:
    """Ask the judge once (and once more if its reply has no verdict)."""
    context = {"submission_1": first, "submission_2": second, "task_description": task_description}
    asked: tuple[Verdict | None, str, str | None]  # declared, or mypy widens the verdict to str
    asked = await ask_judge(ctx, render(prompt, context), model, parse_verdict)
    return JudgeOutcome(*asked)


async def ask_judge(
    ctx: TaskContext,
    text: str,
    model: str | None,
    parse: Callable[[str], VerdictT | None],
    missing: str = "verdict",
) -> tuple[VerdictT | None, str, str | None]:
    """(verdict, reasoning, error) of a judge asked `text` at temperature 0 with the fixed seed,
    asked once more when `parse` finds no verdict in its reply; `missing` names the verdict in
    the error then. A failed call is an error, never a verdict."""
    messages = [{"role": "user", "content": text}]
    client = ctx.run.models()
    try:
        asked = await ask_until_parsed(
            lambda attempt: client.complete(
                model, messages, task=ctx.key, temperature=0, seed=JUDGE_SEED, sample=attempt
            ),
            lambda completion: Reading(parse(completion.text)),
        )
    except AccordError as exc:
        return None, "", f"judge call failed: {exc.message}"
    reply = asked.text
    if asked.value is None:
        return None, reply.strip(), f"no {missing} in the judge's reply: {reply[-200:]!r}"
    return asked.value, reply.strip(), None

"""What an evaluator sees while it runs, and the two ways it asks a judge.

Every judge call goes through the run's models door (cache, rate limits, retries, usage) at
temperature 0 with a fixed seed, from the evaluator's own node. A reply without a verdict is
asked once more (the models door's one loop, `engine.asking.ask_until_parsed`); a second one
is an error on that evaluation, never a score.

- `ask`: a free-text reply parsed by the evaluator (`parse` returns None when it finds none).
- `choose`: one of named choices. Models that take tools answer by the forced tool call
  `select_answer(reason, answer)` with `answer` an enum of the choice names; the others are
  asked to end their reply with `Answer: <choice>`, read from the last line up.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ...engine.asking import Reading, ask_until_parsed, read_forced_choice
from ...engine.errors import AccordError
from ..consistency.judge import JUDGE_SEED
from .base import EvaluatorFailure

if TYPE_CHECKING:
    from ...engine.context import TaskContext
    from ...engine.project import Project
    from ...engine.usage import Completion

T = TypeVar("T")
SELECT_ANSWER = "select_answer"
CHOOSE_SYSTEM = "Answer the following question by selecting an answer. Always give a reason."


class SuiteView(Protocol):
    """What an evaluation reads of its suite (a `Suite` of tasks/suites/core)."""

    @property
    def id(self) -> str: ...

    @property
    def judge_model(self) -> str | None: ...

    @property
    def trials(self) -> str | None: ...

    @property
    def project(self) -> Project | None: ...


@dataclass
class EvalContext:
    """One evaluation's view of the run: its node, its suite and its repeat; `calls` counts
    the judge calls it made."""

    task: TaskContext
    suite: SuiteView
    repeat: int = 0
    calls: int = 0
    judge: str | None = None
    # each judge call's prompt and reply, as `accord view` shows them (Finding.exchanges)
    exchanges: list[dict[str, str]] = field(default_factory=list)

    @property
    def judge_model(self) -> str | None:
        return self.judge or self.suite.judge_model

    def model_for(self, model: str | None) -> str | None:
        return model or self.judge_model

    async def complete(self, messages: list[dict[str, Any]], model: str | None, **kw: Any) -> Any:
        """One judge call through the models door; a failed call is an `EvaluatorFailure`."""
        self.calls += 1
        self.task.run.count("judge_calls")
        if self.suite.trials and self.repeat:
            # each trial is a fresh judgement, as AgentV runs trials without its cache: a
            # trial's calls are samples of their own (their own cache keys and seeds)
            kw["sample"] = kw.get("sample", 0) + 2 * self.repeat
        try:
            completion = await self.task.run.models().complete(
                self.model_for(model),
                messages,
                task=self.task.key,
                temperature=0,
                seed=JUDGE_SEED,
                **kw,
            )
        except AccordError as exc:
            failed = {"prompt": prompt_text(messages), "reply": "", "error": exc.message}
            self.exchanges.append(failed)
            raise EvaluatorFailure(f"judge call failed: {exc.message}") from None
        self.exchanges.append({"prompt": prompt_text(messages), "reply": reply_text(completion)})
        return completion

    async def ask(
        self,
        prompt: str,
        parse: Callable[[str], T | None],
        *,
        model: str | None = None,
        system: str | None = None,
        missing: str = "verdict",
    ) -> tuple[T, str]:
        """(parsed verdict, whole reply); asked twice at most."""
        messages = [{"role": "user", "content": prompt}]
        if system:
            messages.insert(0, {"role": "system", "content": system})
        asked = await ask_until_parsed(
            lambda attempt: self.complete(messages, model, sample=attempt),
            lambda completion: Reading(parse(completion.text or "")),
        )
        if asked.value is None:
            raise EvaluatorFailure(
                f"no {missing} in the judge's reply: {asked.text.strip()[-200:]!r}"
            )
        return asked.value, asked.text.strip()

    async def choose(
        self, prompt: str, choices: Sequence[str], *, model: str | None = None
    ) -> tuple[str, str]:
        """(choice name, reason) of a judge asked to pick one of `choices`."""
        resolved = self.task.run.models().catalog.resolve(self.model_for(model))
        if resolved.tools:
            return await self._choose_by_tool(prompt, choices, model)
        listing = "\n".join(f"- {c}" for c in choices)
        text = (
            f"{prompt}\n\nChoose one of:\n{listing}\n\nGive your reason first, then end with "
            "a last line of the form `Answer: <choice>`, the choice written exactly as listed."
        )
        found, reply = await self.ask(
            text, lambda r: parse_choice(r, choices), model=model, system=CHOOSE_SYSTEM,
            missing=f"answer among {list(choices)}",
        )  # fmt: skip
        return found, reason_of(reply, choices)

    async def _choose_by_tool(
        self, prompt: str, choices: Sequence[str], model: str | None
    ) -> tuple[str, str]:
        tool = select_answer_tool(choices)
        messages = [
            {"role": "system", "content": CHOOSE_SYSTEM},
            {"role": "user", "content": prompt},
        ]
        forced = {"type": "function", "function": {"name": SELECT_ANSWER}}
        asked = await ask_until_parsed(
            lambda attempt: self.complete(
                messages, model, tools=[tool], tool_choice=forced, sample=attempt
            ),
            lambda completion: _tool_choice(completion, choices),
        )
        if asked.value is None:
            raise EvaluatorFailure(f"the judge's select_answer call had {asked.problem}")
        return asked.value

    async def structured(
        self,
        prompt: str,
        system: str,
        schema: dict[str, Any],
        check: Callable[[Any], T | None],
        *,
        model: str | None = None,
        what: str = "answer",
    ) -> T:
        """A JSON object the judge gives for `prompt`, accepted when `check` returns a value.
        Models that take tools answer by a forced `submit_evaluation(...)` call whose
        parameters are `schema` (a provider that ignores the tool but writes the JSON in text
        is read too); the others write the JSON in their reply. Asked twice at most."""
        resolved = self.task.run.models().catalog.resolve(self.model_for(model))
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        extra: dict[str, Any] = {}
        if resolved.tools:
            tool = {
                "type": "function",
                "function": {
                    "name": SUBMIT_EVALUATION,
                    "description": "Submit the evaluation",
                    "parameters": schema,
                },
            }
            forced = {"type": "function", "function": {"name": SUBMIT_EVALUATION}}
            extra = {"tools": [tool], "tool_choice": forced}

        def read(completion: Completion) -> Reading[T]:
            calls = [c for c in completion.tool_calls if c.name == SUBMIT_EVALUATION]
            reply = calls[0].arguments if calls else (completion.text or "")
            return Reading(check(json_object(reply)), reply)  # unread: the reply is quoted

        asked = await ask_until_parsed(
            lambda attempt: self.complete(messages, model, sample=attempt, **extra), read
        )
        if asked.value is None:
            raise EvaluatorFailure(
                f"no {what} in the judge's reply: {asked.problem.strip()[-300:]!r}"
            )
        return asked.value


SUBMIT_EVALUATION = "submit_evaluation"


def json_object(text: str) -> Any:
    """The JSON object in a reply: the whole text, a fenced block, or the span from the
    first `{` to the last `}`; None when there is none."""
    text = (text or "").strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    candidates = [text]
    if fenced:
        candidates.append(fenced.group(1).strip())
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        candidates.append(text[start : end + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def select_answer_tool(choices: Sequence[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": SELECT_ANSWER,
            "description": "Call this function to select an answer",
            "parameters": {
                "type": "object",
                "properties": {
                    "reason": {"type": "string", "description": "The reason for the answer"},
                    "answer": {
                        "type": "string",
                        "description": "The answer to select",
                        "enum": list(choices),
                    },
                },
                "required": ["reason", "answer"],
            },
        },
    }


def _tool_choice(completion: Completion, choices: Sequence[str]) -> Reading[tuple[str, str]]:
    choice = read_forced_choice(completion, SELECT_ANSWER, "answer", choices, parse_choice)
    if choice.name is not None:
        return Reading((choice.name, choice.reason))
    if not choice.called:
        return Reading(None, f"no call (reply: {choice.raw[-200:]!r})")
    if not choice.json:
        return Reading(None, f"arguments that are not JSON: {choice.raw[:200]!r}")
    return Reading(None, f"an answer {choice.given!r} that is none of {list(choices)}")


def reason_of(reply: str, choices: Sequence[str]) -> str:
    """A judge's reply without its closing `Answer: <choice>` line: its reason."""
    lines = reply.strip().splitlines()
    for index in range(len(lines) - 1, -1, -1):
        if parse_choice(lines[index], choices) is not None:
            kept = lines[:index] + lines[index + 1 :]
            return "\n".join(kept).strip() or reply.strip()
    return reply.strip()


EXCHANGE_CHARS = 20_000  # what a finding keeps of one judge prompt or reply


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """A judge call's messages as text: each message's role, then its content."""
    parts = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False, default=str)
        parts.append(f"[{message.get('role', '?')}]\n{content}")
    return _clipped("\n\n".join(parts))


def reply_text(completion: Any) -> str:
    """A judge's reply as text: its words, then each tool call it made."""
    text = getattr(completion, "text", None) or ""
    for call in getattr(completion, "tool_calls", None) or ():
        text += f"\n[tool call {call.name}] {call.arguments}"
    return _clipped(text.strip())


def _clipped(text: str) -> str:
    if len(text) <= EXCHANGE_CHARS:
        return text
    return text[:EXCHANGE_CHARS] + f"... ({len(text) - EXCHANGE_CHARS:,} more characters)"


def parse_choice(reply: str, choices: Sequence[str]) -> str | None:
    """The choice named on the last line that names one (`Answer: X`, or X alone)."""
    by_text = {c.strip().lower(): c for c in choices}
    for line in reversed(reply.strip().splitlines()):
        text = line.strip().strip("`*_ ").strip()
        if not text:
            continue
        match = re.match(r"(?i)^(?:final\s+)?(?:answer|choice|verdict)\s*[:=]\s*(.+)$", text)
        candidate = (match.group(1) if match else text).strip().strip("`*_\"' .").lower()
        if candidate in by_text:
            return by_text[candidate]
    return None

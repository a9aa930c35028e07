"""What an evaluator is given: a case (what the target was asked and what is expected of it)
and the output its target produced.

Every front-end (eval files, `.test.yml`, AgentV files, scenario suites, conversations, the
Python API) builds its cases in this one shape; `accord.tasks.suites.core` runs them and
every evaluator reads them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from ...engine import codec
from .base import EvaluatorSpec, Finding


def text_of(value: Any) -> str:
    """A value as the text evaluators compare: strings as they are, the last user message
    of a message list, the text of a list of content blocks, anything else as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(m, dict) for m in value):
        if not any("role" in m or "content" in m for m in value):
            # content blocks (`[{"type": "text", "text": ...}]`), not messages
            return content_text(value)
        contents = [m.get("content") for m in value if m.get("role", "user") == "user"]
        if not contents:
            contents = [m.get("content") for m in value]
        return content_text(contents[-1])
    return json.dumps(value, ensure_ascii=False, default=str)


def content_text(content: Any) -> str:
    """The text of a message's content: a string, or the text blocks of a block list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("value", b.get("text", "")) for b in content if isinstance(b, dict)]
        return "\n".join(str(p) for p in parts if p)
    return "" if content is None else json.dumps(content, ensure_ascii=False, default=str)


@dataclass(frozen=True, slots=True)
class Case:
    """One case: what the target is given and what evaluators compare its output with.

    `obj` is the user's own test case object (Python API); `contexts` are reference
    contexts (RAG metrics); `baseline` is a manual battle's baseline; `judge_model` the
    judge of this case when it is not the suite's (an eval file's target's judge);
    `pass_score` this case's own bar on its weighted score, in place of the suite's (a
    promptfoo test's `threshold`: each test of a config may have its own, or none).
    """

    id: str
    input: Any
    expected: Any = None
    criteria: str | None = None
    rubrics: tuple[Any, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    sidecar: Any = None
    tags: tuple[str, ...] = ()
    target: str | None = None
    evaluators: tuple[EvaluatorSpec, ...] = ()
    contexts: tuple[str, ...] = ()
    baseline: str | None = None
    line: int | None = None
    obj: Any = None
    digest: str = ""
    judge_model: str | None = None
    pass_score: float | None = None

    @property
    def prompt(self) -> str:
        return text_of(self.input)

    @property
    def expected_text(self) -> str | None:
        return None if self.expected is None else text_of(self.expected)

    def data(self) -> dict[str, Any]:
        """The case as plain data (what a command target reads on stdin)."""
        return {
            "id": self.id,
            "input": self.input,
            "expected": self.expected,
            "criteria": self.criteria,
            "metadata": self.metadata,
            "tags": list(self.tags),
        }


def case_digest(case: Case) -> str:
    """What identifies a case's content (resume reuses outputs only for the same content)."""
    data: dict[str, Any] = {
        **case.data(),
        "rubrics": case.rubrics,
        "contexts": case.contexts,
        "baseline": case.baseline,
        "evaluators": [e.model_dump(mode="json") for e in case.evaluators],
    }
    if case.obj is not None:
        hashed = getattr(case.obj, "hash", None)
        data["obj"] = hashed() if callable(hashed) else repr(case.obj)
    text = json.dumps(data, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Output:
    """What a target produced for one case: its text, the value behind it (a Python
    target's return value), the contexts it retrieved and the tool calls it made.

    A target may also report what it spent: `usage` (`input`, `output`, `cached` tokens),
    `cost` (USD), `duration_ms` (its own measure; else `seconds`, measured around it), and
    its whole reply as `messages` (assistant messages with their tool calls). `workspace`
    is the folder a case's workspace hooks prepared.
    """

    text: str = ""
    value: Any = None
    contexts: list[str] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    seconds: float = 0.0
    usage: dict[str, int] | None = None
    cost: float | None = None
    duration_ms: float | None = None
    messages: list[dict[str, Any]] | None = None
    workspace: str | None = None

    @property
    def subject(self) -> Any:
        """What Python evaluators receive: the value when there is one, else the text."""
        return self.text if self.value is None else self.value


for _name, _cls in (("eval_finding", Finding), ("eval_output", Output)):
    codec.register_dataclass(_name, _cls)

"""The one shape every evaluation front-end compiles into: a suite of cases, their outputs,
and what was found.

A `Suite` holds `Case`s, the targets that answer them and the evaluators that check the
answers. The core (`core.nodes`) turns it into target, evaluator and verdict nodes of one
plan; every front-end (eval files, `.test.yml`, scenario suites, conversations, the Python
API) builds a `Suite`, and every report reads the `SuiteRun` it produces.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accord.engine import codec
from accord.tasks.evaluators.base import EvaluatorSpec, Finding

if TYPE_CHECKING:
    from accord.engine.project import Project
    from accord.tasks.suites.core.targets import Target


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


@dataclass(frozen=True)
class Case:
    """One case: what the target is given and what evaluators compare its output with.

    `obj` is the user's own test case object (Python API); `contexts` are reference
    contexts (RAG metrics); `baseline` is a manual battle's baseline; `judge_model` the
    judge of this case when it is not the suite's (an eval file's target's judge).
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


@dataclass
class CaseResult:
    """A case's verdict for one repeat: its output, findings, score and status.

    `status` is `passed`, `failed`, `error` (the target failed, or an evaluator errored with
    nothing else failing) or `recorded` (no evaluator gates it). `verdict` is the label of a
    suite with score bands (AgentV's `pass`, `borderline`, `fail`).
    """

    id: str
    repeat: int
    status: str
    input: Any = None
    expected: Any = None
    output: str | None = None
    score: float | None = None
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None
    tags: list[str] = field(default_factory=list)
    seconds: float = 0.0
    metadata: dict[str, Any] = field(default_factory=dict)
    verdict: str | None = None
    warnings: list[str] = field(default_factory=list)
    target: str | None = None
    usage: dict[str, int] | None = None
    cost: float | None = None  # what the target reported its answer cost (USD)

    @property
    def passed(self) -> bool | None:
        return {"passed": True, "failed": False}.get(self.status)

    @property
    def judge_calls(self) -> int:
        return sum(f.judge_calls for f in self.findings)


for _name, _cls in (("eval_finding", Finding), ("eval_output", Output), ("eval_case", CaseResult)):
    codec.register_dataclass(_name, _cls)


class Lifecycle:
    """Hooks around a suite's run and around each case (all optional).

    `before_case` runs in the case's target node before the target answers: an exception
    errors the case with its message; what it returns is the case's workspace folder.
    `after_case` runs in the verdict node after every evaluator and returns warnings.
    """

    async def before_all(self, suite: Suite) -> None:
        return None

    async def after_all(self, suite: Suite) -> list[str]:
        return []

    async def before_case(self, case: Case, repeat: int, run_id: str) -> str | None:
        return None

    async def after_case(
        self, case: Case, repeat: int, run_id: str, workspace: str | None
    ) -> list[str]:
        return []


@dataclass
class Suite:
    """A suite ready to run: cases, targets by name, suite-wide evaluators and settings.

    `default_target` answers cases that name none. `repeat` runs each case that many times
    (pass@k). `short_circuit` keeps judges from cases a deterministic evaluator failed.
    `pass_score` (optional) makes a case pass on its weighted score instead of on every
    gating evaluator. `bands` (pass, borderline) label each case's score as AgentV does.
    `trials` makes the repeats trials of one case under a strategy (`pass_at_k`: a trial
    runs only while none before it passed; `mean`; `confidence_interval`). `lifecycle`
    runs hooks around the suite and each case (an eval file's workspace scripts).
    """

    id: str
    cases: Sequence[Case]
    targets: dict[str, Target]
    evaluators: tuple[EvaluatorSpec, ...] = ()
    default_target: str | None = None
    repeat: int = 1
    short_circuit: bool = False
    pass_score: float | None = None
    judge_model: str | None = None
    path: Path | None = None
    project: Project | None = None
    max_concurrency: int | None = None
    target_concurrency: int | None = None
    timeout: float | None = None
    on_case: Callable[[CaseResult], None] | None = None
    bands: tuple[float, float] | None = None
    trials: str | None = None
    trial_cost_limit: float | None = None  # no further trial once the trials cost this (USD)
    lifecycle: Lifecycle | None = None
    notes: tuple[str, ...] = ()
    run_id: str | None = None  # chosen before the run (a scenario suite's macros are seeded by it)
    frontend: str = ""  # the front-end that loaded it (suites/frontends.py); "": built in Python

    def target_for(self, case: Case) -> Target:
        name = case.target or self.default_target
        if name is None or name not in self.targets:
            raise KeyError(name)
        return self.targets[name]

    def evaluators_for(self, case: Case) -> tuple[EvaluatorSpec, ...]:
        """The suite's evaluators then the case's own; a case's evaluator replaces a suite
        evaluator of the same id."""
        from accord.tasks.evaluators.parsing import merge_evaluators

        return merge_evaluators(self.evaluators, case.evaluators)

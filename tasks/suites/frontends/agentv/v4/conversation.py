"""AgentV 4's conversations (`mode: conversation` with `turns`), as its orchestrator.ts
runs them (runConversationMode):

- The history starts with the test's own messages (its prompt). Each turn appends its
  `input` as a user message, sends the history (with `window_size`: the system messages
  and the last `window_size` user/assistant pairs) to the target, and appends the answer.
- Each turn is graded on its answer as soon as it is given (before the next turn is
  asked, as AgentV does): its rubrics written as text gathered into one checklist (ids
  `criterion-N`, not required, weight 1: buildTurnAssertions), its other assertions as
  written; the judge's question is the history up to that answer (`role: content`,
  blank-line separated). A turn with no assertion scores 1. The turn's score is AgentV's
  test score of its assertions.
- A turn's `expected_output` (text, or one message or object; its strings filled from the
  vars) is what its graders read as the expected output: AgentV's `[{content: text}]` or
  `[object]`; a turn without one has none (not the test's `expected_output` var), nor has
  the transcript. The judge's reference answer stays the test's (empty: judge.py).
  A turn with an `expected_output` and no assertion is not graded and scores 1.
- A target that fails on a turn (an error reply, a failed call) scores that turn 0 with
  the reason `Provider error: ...`; its user message stays in the history, with no answer
  after it, and the conversation goes on: the test is scored, not errored.
- `on_turn_failure: stop`: after a turn scoring below the threshold, or one the target
  failed, the later turns are not asked; each scores 0 ("Skipped due to previous turn
  failure") and adds nothing to the history.
- The test's own `assert` (and the inherited one) grade the whole transcript
  (`role: content` of every message) as one more score.
- The test's score is the `aggregation` (`mean`, the default; `min`; `max`) of the turn
  scores and the transcript's; it passes at the threshold (0.8, or the file's).

So the turns are played and graded by the target (ConversationTarget, which asks the
judge through the case's ConversationGrade), and the ConversationGrade then grades the
transcript and aggregates.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from ......engine.errors import AccordError, ModelError
from .....evaluators.base import EvaluatorFailure, EvaluatorSpec, Finding
from .....evaluators.cases import Case, Output
from ....core.targets import Target, TargetFailure
from .interpolation import vars_interpolated

if TYPE_CHECKING:
    from ......engine.context import TaskContext
    from .....evaluators.judging import EvalContext
    from ...promptfoo.form import _Loader, _Test

AGGREGATIONS = ("mean", "min", "max")


def windowed(history: list[dict[str, Any]], window: int | None) -> list[dict[str, Any]]:
    """buildWindowedHistory: the system messages and the last `window` pairs."""
    if not window:
        return list(history)
    rest = [m for m in history if m["role"] != "system"]
    return [m for m in history if m["role"] == "system"] + rest[-window * 2 :]


def transcript(history: list[dict[str, Any]]) -> str:
    """buildConversationContext: `role: content` of each message, a blank line between."""

    def text(content: Any) -> str:
        return content if isinstance(content, str) else json.dumps(content)

    return "\n\n".join(f"{m['role']}: {text(m['content'])}" for m in history)


@dataclasses.dataclass(frozen=True)
class Plan:
    """A conversation case's turns (the user's inputs), as its `obj`."""

    turns: tuple[str, ...]
    window: int | None = None


class ConversationTarget(Target):
    """Plays a conversation's turns to the provider's own target (`inner`)."""

    type: Literal["agentv-conversation"] = "agentv-conversation"
    inner: Any = Field(None, exclude=True, description="The provider's target.")
    system: str | None = None  # sent first when the history has no system message

    def describe(self) -> str:
        assert isinstance(self.inner, Target)
        return f"a conversation with {self.inner.describe()}"

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        from .....evaluators.judging import EvalContext

        inner = self.inner
        assert isinstance(inner, Target)
        grade = next(e for e in case.evaluators if isinstance(e, ConversationGrade))
        # the turns are judged here, between the turns, as AgentV judges them: with `stop`
        # a failed turn ends the asking
        suite = getattr(tctx.task.spec, "suite_ref", None)  # the eval_target node's suite
        assert suite is not None
        ev = EvalContext(tctx, suite, repeat, judge=case.judge_model)
        given = case.input
        history: list[dict[str, Any]] = (
            [dict(m) for m in given]
            if isinstance(given, list)
            else [{"role": "user", "content": str(given)}]
        )
        plan = case.obj
        assert isinstance(plan, Plan)
        turns: list[Finding] = []
        stopped = False
        for number, text in enumerate(plan.turns, 1):
            name = f"turn-{number}"
            if stopped:
                turns.append(Finding(name, score=0.0, passed=False, reason=SKIPPED))
                continue
            history.append({"role": "user", "content": text})
            sent = windowed(history, plan.window)
            if self.system and not any(m["role"] == "system" for m in sent):
                sent = [{"role": "system", "content": self.system}, *sent]
            try:
                found = await inner.produce(tctx, dataclasses.replace(case, input=sent), repeat)
                failure = found.error
            except (TargetFailure, ModelError) as exc:
                # AgentV catches the provider's failure (after its own retries) as the
                # turn's; accord's models door has retried the call by then
                failure = str(exc)
            if failure:
                turns.append(Finding(name, score=0.0, passed=False,
                                     reason=f"Provider error: {failure}"))  # fmt: skip
                stopped = grade.stop
                continue
            history.append({"role": "assistant", "content": found.text})
            try:
                finding = await grade.grade_turn(ev, case, number, history, found.text)
            except Exception as exc:  # a grader's own failure: the evaluation's error, as
                # evaluate_one (core/nodes.py) records it, not the target's
                finding = Finding(name, error=f"{type(exc).__name__}: {exc}")
            turns.append(finding)
            if finding.error is not None:
                break  # the grade errors: no use asking further
            stopped = grade.stop and (finding.score or 0.0) < grade.pass_at
        # extractLastAssistantContent: the last answer given
        last = next((m["content"] for m in reversed(history) if m["role"] == "assistant"), "")
        value = {"turns": turns, "history": history, "judge_calls": ev.calls}
        return Output(text=str(last), value=value, messages=history)


SKIPPED = "Skipped due to previous turn failure"


class ConversationGrade(EvaluatorSpec):
    """Every turn's assertions, the transcript's, and their aggregation."""

    family: ClassVar[str] = "agentv4"

    type: str = "agentv-conversation"
    deterministic: ClassVar[bool] = False
    turn_specs: tuple[tuple[Any, ...], ...] = ()
    # each turn's expected messages, as AgentV's graders read them (empty: none)
    turn_expected: tuple[tuple[Any, ...], ...] = ()
    transcript_specs: tuple[Any, ...] = ()
    aggregation: str = "mean"
    stop: bool = False
    window: int | None = None
    pass_at: float = 0.8  # the test's threshold

    def calls_model(self, judge_model: str | None) -> bool:
        return True

    async def _graded(
        self,
        ev: EvalContext,
        case: Case,
        specs: tuple[Any, ...],
        question: str,
        answer: str,
        expected: tuple[Any, ...] = (),
    ) -> Finding:
        from .checks.build import combine_agentv
        from .checks.script import EXPECTED

        meta = {**case.metadata, EXPECTED: list(expected)}
        asked = dataclasses.replace(case, prompt_text=question, metadata=meta)  # type: ignore[call-arg]
        findings = []
        for spec in specs:
            try:
                findings.append(await spec.evaluate(ev, asked, Output(text=answer)))
            except EvaluatorFailure as exc:
                findings.append(Finding(spec.id, error=str(exc)))
        return combine_agentv(findings, specs, threshold=self.pass_at)

    async def grade_turn(
        self, ev: EvalContext, case: Case, number: int, history: list[Any], answer: str
    ) -> Finding:
        """A turn's finding, its answer the last of `history`."""
        name = f"turn-{number}"
        specs = self.turn_specs[number - 1]
        expected = self.turn_expected[number - 1] if self.turn_expected else ()
        if not specs:
            # evaluateCandidate with an expected_output and no assertion grades nothing
            reason = "No assertions declared; grading skipped" if expected else "no assertions"
            return Finding(name, score=1.0, passed=True, reason=reason)
        context = transcript(windowed(history, self.window))
        found = await self._graded(ev, case, specs, context, answer, expected)
        if found.error is not None:
            return Finding(name, error=found.error)
        score = found.score or 0.0
        return Finding(name, score=score, passed=score >= self.pass_at, reason=found.reason,
                       children=found.children)  # fmt: skip

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        value = output.value if isinstance(output.value, dict) else {}
        history = value.get("history") or []
        # the turns, played and graded by the ConversationTarget
        children: list[Finding] = list(value.get("turns") or [])
        turn_calls = int(value.get("judge_calls") or 0)
        for child in children:
            if child.error is not None:
                return Finding(self.id, error=f"{child.name}: {child.error}",
                               children=children, judge_calls=turn_calls)  # fmt: skip
        if self.transcript_specs:
            whole = transcript(history)
            found = await self._graded(ev, case, self.transcript_specs, whole, whole)
            if found.error is not None:
                return Finding(self.id, error=f"conversation: {found.error}", children=children)
            score = found.score or 0.0
            children.append(Finding("conversation", score=score, passed=score >= self.pass_at,
                                    reason=found.reason, children=found.children))  # fmt: skip
        scores = [c.score or 0.0 for c in children]
        if not scores:
            final = 1.0
        elif self.aggregation == "min":
            final = min(scores)
        elif self.aggregation == "max":
            final = max(scores)
        else:
            final = sum(scores) / len(scores)
        passed = final >= self.pass_at
        reason = f"{self.aggregation} of {len(scores)} scores: {final:.3f}"
        # each turn's score and the transcript's, as AgentV lists them (its scores)
        parts = [{"name": c.name, "score": c.score, "passed": c.passed, "reason": c.reason}
                 for c in children]  # fmt: skip
        return Finding(self.id, score=final, passed=passed, reason=reason, children=children,
                       judge_calls=turn_calls + ev.calls,
                       metadata={"components": parts})  # fmt: skip


TEST_KEYS = ("mode", "turns", "aggregation", "on_turn_failure", "window_size")
TURN_KEYS = ("input", "expected_output", "assert")


def conversation(
    loader: _Loader,
    item: _Test,
    test: dict[str, Any],
    variables: dict[str, Any],
    transcript_specs: tuple[EvaluatorSpec, ...],
) -> tuple[Plan, ConversationGrade] | None:
    """A test's conversation (None, with the problem noted, when it is not one accord
    runs): its plan and its grader."""
    from .checks.build import PASS

    where: dict[str, Any] = {"file": item.file, "line": item.line} if item.file else {}
    loc = item.loc

    def issue(at: tuple[Any, ...], message: str) -> None:
        loader.issue((*loc, *at), message, **where)

    turns, mode = test.get("turns"), test.get("mode")
    if mode != "conversation":
        issue(("mode",) if "mode" in test else ("turns",), "a conversation is 'mode: "
              "conversation' with 'turns' (AgentV runs 'turns' only in that mode): write "
              "both")  # fmt: skip
        return None
    if not isinstance(turns, list) or not turns:
        issue(("turns",), "'turns' is a list of {input, assert}")
        return None
    aggregation = test.get("aggregation", "mean")
    if aggregation not in AGGREGATIONS:
        issue(("aggregation",), "aggregation is one of mean, min, max")
        return None
    failure = test.get("on_turn_failure", "continue")
    if failure not in ("continue", "stop"):
        issue(("on_turn_failure",), "on_turn_failure is continue or stop")
        return None
    window = test.get("window_size")
    if window is not None and (isinstance(window, bool) or not isinstance(window, int)
                               or window < 1):  # fmt: skip
        issue(("window_size",), "window_size is a whole number, 1 or more")
        return None
    texts: list[str] = []
    specs: list[tuple[Any, ...]] = []
    expected: list[tuple[Any, ...]] = []
    for number, turn in enumerate(turns):
        found = _turn(loader, issue, number, turn, variables)
        if found is None:
            return None
        texts.append(found[0])
        specs.append(found[1])
        expected.append(found[2])
    threshold = test.get("threshold")
    grade = ConversationGrade(
        turn_specs=tuple(specs), turn_expected=tuple(expected),
        transcript_specs=transcript_specs, aggregation=aggregation,
        stop=failure == "stop", window=window,
        pass_at=float(threshold) if isinstance(threshold, int | float) else PASS,
    )  # fmt: skip
    return Plan(tuple(texts), window), grade


def _turn_checklist(rubrics: tuple[str, ...]) -> EvaluatorSpec:
    from .checks.judge import AgentVChecklist

    return AgentVChecklist(
        type="turn-llm-rubric", base_type="llm-rubric", name="turn-llm-rubric", rubrics=rubrics,
        rubric_id="criterion", required_rubrics=False, templated=False,
    )  # fmt: skip


def _turn(
    loader: _Loader, issue: Any, number: int, turn: Any, variables: dict[str, Any]
) -> tuple[str, tuple[Any, ...], tuple[Any, ...]] | None:
    """A turn's input (rendered over the test's vars), its assertions and its expected
    messages."""
    from ...promptfoo.asserts.base import render_text
    from .checks.build import build_agentv_assertion

    at = ("turns", number)
    if not isinstance(turn, dict):
        issue(at, "a turn is a mapping with 'input', 'assert' and 'expected_output'")
        return None
    unknown = [k for k in turn if k not in TURN_KEYS]
    if unknown:
        issue((*at, unknown[0]), f"'{unknown[0]}' of a turn is not supported by accord "
              "(it reads input, expected_output and assert): remove it")  # fmt: skip
        return None
    text = turn.get("input")
    if not isinstance(text, str):
        issue((*at, "input"), "a turn's input is the user's message as text")
        return None
    want = turn.get("expected_output")
    if isinstance(want, list):
        # AgentV would nest the list as the one expected message: no grader reads that
        issue((*at, "expected_output"), "a turn's expected_output is text or one message "
              "(a mapping), not a list: AgentV reads it as the turn's one expected "
              "message")  # fmt: skip
        return None
    try:
        want = vars_interpolated(want, variables)
    except EvaluatorFailure as exc:
        issue((*at, "expected_output"), str(exc))
        return None
    # runConversationMode: none when it is falsy (as JavaScript reads it), text is
    # `{content: text}`, anything else stays as it is
    falsy = want is None or (not want and not isinstance(want, dict))
    expected: tuple[Any, ...] = (
        () if falsy else ({"content": want} if isinstance(want, str) else want,)
    )
    entries = turn.get("assert") or []
    if not isinstance(entries, list):
        issue((*at, "assert"), "a turn's 'assert' is a list")
        return None
    rubrics = tuple(render_text(e, variables).strip() for e in entries
                    if isinstance(e, str) and e.strip())  # fmt: skip
    built: list[Any] = [_turn_checklist(rubrics)] if rubrics else []
    for index, entry in enumerate(entries):
        if isinstance(entry, str):
            continue
        try:
            built.append(build_agentv_assertion(
                entry, base_dir=loader.base, where=f"turn {number + 1}",
                name=f"turn{number + 1}.{index}", root=loader.root,
            ))  # fmt: skip
        except (ValueError, AccordError) as exc:
            issue((*at, "assert", index), getattr(exc, "message", None) or str(exc))
            return None
    return render_text(text, variables), tuple(built), expected

"""`ConversationRunner`: a scripted conversation played against an agent on the evaluation
core. The conversation is one case of a suite: its target node plays every user turn to the
agent with the history of what the agent actually said and did; its evaluator node checks each
agent turn (judge calls of different turns at once, through the models door: cache, rate
limits, retries, usage); its verdict node passes it only when every turn matched.

Every agent turn is played even after one failed to match, so a failure report shows the
whole conversation; the failure names the first turn that did not match.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from .....engine.clip import clip_lines, kept_in
from .....engine.errors import AccordError
from ....evaluators.base import EvaluatorFailure, EvaluatorSpec, Finding
from ....evaluators.cases import Case, Output
from ...core.cases import Suite
from ...core.targets import Target, TargetFailure
from .agents import Agent, Messages, Reply, agent_of
from .matching import Mismatch, Verdict, match_text, tool_call_mismatches
from .turns import ToolCall, Turn, check_script

if TYPE_CHECKING:
    from .....engine.context import TaskContext
    from ....evaluators.judging import EvalContext
    from ...core.verdicts import SuiteRun

NEEDS_JUDGE = "needs_judge"
STATEMENT = """Does the text below satisfy this statement?

Statement: {statement}

Text: {text}

Answer yes when the text contains or expresses what the statement describes, else no."""
SAME_MEANING = """Do these two texts have the same meaning?

Expected: {expected}

Actual: {actual}

Paraphrases and synonyms mean the same. Ignore filler such as "Okay", "Now", "Got it", "Thank \
you", "Sounds good". "Yes", "correct" and "that is correct" agree. Numbers written in words \
equal the same numbers in digits ("one two three" is "123"), and spacing inside numbers or \
codes does not matter. Answer yes when they mean the same, else no."""


class JudgeNeeded(AccordError):
    """A turn needs the judge (a statement, or texts not equal) and no judge model is set."""


class ConversationFailed(AssertionError):
    """An agent turn did not match: the message names the turn, the expected and the actual,
    the rule that failed and the judge's reason."""


class ModelJudge:
    """The yes-or-no judge of a conversation check: one model call per question through the
    run's models door, at temperature 0; a reply that is neither yes nor no is asked once more,
    then it is an error."""

    def __init__(self, ev: EvalContext) -> None:
        self.ev = ev

    async def _ask(self, prompt: str) -> Verdict:
        if self.ev.judge_model is None:
            raise JudgeNeeded(
                "this turn needs a judge model (a <statement>, or texts that are not equal): "
                "pass --accord-judge-model (pytest) or judge_model=..., or set "
                "defaults.judge_model in config.yml"
            )
        answer, reason = await self.ev.choose(prompt, ["yes", "no"])
        return Verdict(answer == "yes", reason.strip())

    async def statement(self, statement: str, text: str) -> Verdict:
        return await self._ask(STATEMENT.format(statement=statement, text=text))

    async def same_meaning(self, expected: str, actual: str) -> Verdict:
        return await self._ask(SAME_MEANING.format(expected=expected, actual=actual))


class ConversationTarget(Target):
    """Plays the case's script (`case.obj`) to the agent, turn by turn."""

    type: Literal["conversation"] = "conversation"
    agent: Any = Field(None, exclude=True, description="The Agent the script is played to.")
    agent_name: str = ""
    initial_agent_message: str | None = None
    turn_timeout: float = 60.0

    def describe(self) -> str:
        assert isinstance(self.agent, Agent)
        return self.agent.describe()

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        agent = self.agent
        assert isinstance(agent, Agent)
        script: list[Turn] = case.obj
        history: Messages = []
        played: list[dict[str, Any]] = []
        for number, turn in enumerate(script, 1):
            if not turn.is_agent:
                history.append({"role": "user", "content": turn.text})
                continue
            if number == 1:
                reply = self._opening(turn)
            else:
                reply = await self._turn(agent, history, tctx, number)
            history += reply.messages(number)
            played.append({"turn": number, **reply.data()})
        last = played[-1]["text"] if played else ""
        calls = [c for p in played for c in p["tool_calls"]]
        return Output(text=last, value={"turns": played}, tool_calls=calls, messages=history)

    def _opening(self, turn: Turn) -> Reply:
        """The agent's opening message: the one given, else the script's own."""
        if self.initial_agent_message is not None:
            return Reply(text=self.initial_agent_message)
        text = turn.text if isinstance(turn.text, str) else turn.text[0]
        return Reply(text=text, tool_calls=list(turn.tool_calls))

    async def _turn(self, agent: Agent, history: Messages, tctx: TaskContext, number: int) -> Reply:
        try:
            return await asyncio.wait_for(agent.reply(list(history), tctx), self.turn_timeout)
        except TimeoutError:
            raise TargetFailure(
                f"turn {number}: the agent did not answer within {self.turn_timeout:g} s"
            ) from None
        except (TargetFailure, asyncio.CancelledError):
            raise
        except AccordError as exc:
            raise TargetFailure(f"turn {number}: {exc.message}") from None
        except Exception as exc:
            raise TargetFailure(
                f"turn {number}: the agent raised {type(exc).__name__}: {exc}"
            ) from None


class ConversationCheck(EvaluatorSpec):
    """Every agent turn of the script against the turn the agent actually took."""

    type: str = "conversation"
    deterministic: ClassVar[bool] = False

    def calls_model(self, judge_model: str | None) -> bool:
        return True

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        script: list[Turn] = case.obj
        played = {t["turn"]: t for t in (output.value or {}).get("turns", [])}
        judge = ModelJudge(ev)
        numbers = [n for n, t in enumerate(script, 1) if t.is_agent]
        try:
            found = await asyncio.gather(
                *(_check_turn(script[n - 1], played[n], judge) for n in numbers)
            )
        except JudgeNeeded as exc:
            return Finding("conversation", error=exc.message, kind=NEEDS_JUDGE)
        children = [
            Finding(f"turn {n}", score=0.0 if m else 1.0, passed=not m,
                    reason="\n".join(x.text() for x in m) if m else "matched")
            for n, m in zip(numbers, found, strict=True)
        ]  # fmt: skip
        failed = [(n, m) for n, m in zip(numbers, found, strict=True) if m]
        reason = "every agent turn matched"
        if failed:
            reason = failure_text(script, played, *failed[0])
            if len(failed) > 1:
                others = ", ".join(str(n) for n, _ in failed[1:])
                reason += f"\n  (turns {others} did not match either)"
        matched = len(numbers) - len(failed)
        return Finding("conversation", score=matched / len(numbers), reason=reason,
                       children=children, judge_calls=ev.calls)  # fmt: skip


async def _check_turn(expected: Turn, actual: dict[str, Any], judge: ModelJudge) -> list[Mismatch]:
    """Every way the turn does not match: its text, and each tool call (a wrong argument
    behind a failed statement is named too)."""
    from .agents import reply_of

    reply = reply_of(actual)
    out: list[Mismatch] = []
    try:
        if expected.text != "" or reply.text:
            found = await match_text(expected.text, reply.text, judge)
            if found is not None:
                out.append(found.inside("text"))
        out += await tool_call_mismatches(list(expected.tool_calls), reply.tool_calls, judge)
    except EvaluatorFailure as exc:
        raise EvaluatorFailure(f"turn {actual['turn']}: {exc}") from None
    return out


def failure_text(
    script: Sequence[Turn],
    played: dict[int, dict[str, Any]],
    number: int,
    found: Sequence[Mismatch],
) -> str:
    """What a developer reads when a turn fails: the turn, what the user said, the expected
    and the actual turn, every rule that failed and the judge's reasons."""
    said = script[number - 2].text if number > 1 else "(the agent's opening message)"
    expected = script[number - 1]
    actual = played[number]
    calls = [ToolCall(c["name"], c.get("arguments"), c.get("result")) for c in actual["tool_calls"]]
    rules = "".join(f"\n  rule:      {m.text()}" for m in found)
    return (
        f"turn {number} did not match\n"
        f"  user said: {said}\n"
        f"  expected:  {_turn_text(expected.text, expected.tool_calls)}\n"
        f"  actual:    {_turn_text(actual['text'], calls)}" + rules
    )


def _turn_text(text: str | list[str], calls: Sequence[ToolCall]) -> str:
    shown = json.dumps(text, ensure_ascii=False)
    if calls:
        listing = ", ".join(
            f"{c.name}({json.dumps(c.arguments, ensure_ascii=False, default=str)})"
            + (f" -> {json.dumps(c.result, ensure_ascii=False, default=str)}"
               if c.result is not None else "")
            for c in calls
        )  # fmt: skip
        shown += f" + tool calls {listing}"
    return shown


@dataclass
class ConversationResult:
    """A conversation that matched: the turns the agent took and what judging cost."""

    name: str
    turns: int = 0
    judge_calls: int = 0
    run_id: str | None = None
    seconds: float = 0.0


class ConversationRunner:
    """Plays `expected` (UserTurn, AgentTurn, ...) to `agent` and checks every agent turn.

    `await runner.run()` (or `runner.run_sync()`) returns a `ConversationResult` when every
    turn matched; raises `ConversationFailed` (an AssertionError) when one did not or the agent
    failed, and `JudgeNeeded` when a turn needs a judge and none is set. `judge_model` is a
    name from config.yml or a litellm model string (default: config.yml's
    `defaults.judge_model`; never the project's default model, which is no judge).
    """

    def __init__(
        self,
        agent: Any,
        expected: Sequence[Turn],
        *,
        judge_model: str | None = None,
        initial_agent_message: str | None = None,
        test_note: str | None = None,
        name: str | None = None,
        turn_timeout: float = 60.0,
        project_root: str | Path | None = None,
        cache_mode: str = "on",
    ) -> None:
        self.expected = list(expected)
        check_script(self.expected)
        self.agent = agent_of(agent)
        self.judge_model = judge_model
        self.initial_agent_message = initial_agent_message
        self.test_note = test_note
        self.turn_timeout = turn_timeout
        self.project_root = Path(project_root) if project_root else Path.cwd()
        self.cache_mode = cache_mode
        self.name = name or f"conversation-{self.digest()}"

    def digest(self) -> str:
        text = json.dumps([t.data() for t in self.expected], sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def suite(self) -> Suite:
        from .....engine.project import load_project

        project = load_project(self.project_root)
        target = ConversationTarget.model_construct(
            type="conversation", agent=self.agent, agent_name=self.agent.describe(), timeout=None,
            initial_agent_message=self.initial_agent_message, turn_timeout=self.turn_timeout,
        )  # fmt: skip
        case = Case(id=self.name, input=[t.data() for t in self.expected], obj=self.expected,
                    digest=self.digest())  # fmt: skip
        return Suite(
            id=self.name, cases=[case], targets={"agent": target}, default_target="agent",
            evaluators=(ConversationCheck(type="conversation"),), project=project,
            judge_model=self.judge_model or project.config.defaults.judge_model,
        )  # fmt: skip

    async def run(self) -> ConversationResult:
        __tracebackhide__ = True  # pytest shows the failure, not these frames
        from .....engine.runner import RunOptions
        from ...core.nodes import run_suite

        run = await run_suite(self.suite(), RunOptions(cache_mode=self.cache_mode))
        return self._result(run)

    def run_sync(self) -> ConversationResult:
        __tracebackhide__ = True  # pytest shows the failure, not these frames
        from ..autoblocks.api import _run_in_loop

        return _run_in_loop(self.run)

    def _result(self, run: SuiteRun) -> ConversationResult:
        __tracebackhide__ = True  # pytest shows the failure, not these frames
        case = run.cases[0]
        note = f"\n  note: {self.test_note}" if self.test_note else ""
        finding = next((f for f in case.findings if f.kind == NEEDS_JUDGE), None)
        if finding is not None:
            raise JudgeNeeded(finding.error or "a judge model is needed")
        if not case.findings:
            failure = case.error or "the agent did not run"
        elif case.findings[0].error is not None:
            failure = case.findings[0].error or ""
        elif case.status != "passed":
            failure = case.findings[0].reason
        else:
            return ConversationResult(
                name=self.name, turns=len(case.findings[0].children),
                judge_calls=case.judge_calls, run_id=run.run_id, seconds=case.seconds,
            )  # fmt: skip
        # an answer or a judge's reason may run to megabytes: pytest shows the start of each
        shown = clip_lines(f"{self.name}: {failure}{note}", kept=kept_in(run.run_id))
        raise ConversationFailed(shown)

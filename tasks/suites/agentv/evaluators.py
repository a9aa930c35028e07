"""AgentV's evaluators, as evaluators of the core (one evaluator node each).

They form their own registry (`AGENTV`): AgentV's `llm_judge` is not accord's (it returns
`{score, hits, misses, reasoning}` instead of picking a choice). Each has `name`, `weight`,
`required` (true: its score must reach 0.8, AgentV's pass; a number: that score) and
`negate`. A judge reply that does not parse is asked once more, then an error on that
evaluator; so is a code judge that exits non-zero or prints no JSON score.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from accord.engine.registry import Registry
from accord.engine.specbase import Spec
from accord.tasks.evaluators.base import EvaluatorFailure, EvaluatorSpec, Finding, ThresholdSpec
from accord.tasks.suites.agentv.cases import AgentVCase
from accord.tasks.suites.core.targets import TargetFailure, run_program

if TYPE_CHECKING:
    from accord.tasks.suites.core.cases import Case, Output
    from accord.tasks.suites.core.judging import EvalContext

PASS = 0.8
BORDERLINE = 0.6
AGENTV: Registry[type[AgentVEvaluator]] = Registry("AgentV evaluator")


def agentv(name: str) -> Any:
    def decorate(cls: type[AgentVEvaluator]) -> type[AgentVEvaluator]:
        return AGENTV.add(name, cls)

    return decorate


def verdict_of(score: float) -> str:
    return "pass" if score >= PASS else "borderline" if score >= BORDERLINE else "fail"


class AgentVEvaluator(EvaluatorSpec):
    """What every AgentV evaluator has."""

    required: bool | float = Field(  # type: ignore[assignment]
        False, description="true: the score must reach 0.8; a number: that score."
    )
    default_threshold: ClassVar[ThresholdSpec | None] = ThresholdSpec(gte=PASS)

    @field_validator("required")
    @classmethod
    def _required_range(cls, value: bool | float) -> bool | float:
        if not isinstance(value, bool) and not 0 <= value <= 1:
            raise ValueError("a required score is between 0 and 1")
        return value

    def gate(self) -> ThresholdSpec | None:
        """Pass at AgentV's 0.8, or at the score `required` gives (no `threshold`: the
        latency evaluator's is its budget)."""
        if not isinstance(self.required, bool):
            return ThresholdSpec(gte=self.required)
        return self.default_threshold

    def scored(
        self, score: float, hits: list[str], misses: list[str], reason: str = "", **extra: Any
    ) -> Finding:
        return Finding(self.id, score=score, reason=reason, hits=hits, misses=misses, **extra)


def agentv_case(case: Case) -> AgentVCase:
    if not isinstance(case, AgentVCase):
        raise EvaluatorFailure("this evaluator reads AgentV test cases only")
    return case


# --- judges ---------------------------------------------------------------------------------

JUDGE_TEMPLATE = """You are an expert evaluator. Grade the candidate_answer by how well it \
meets the criteria of the original task. Treat the reference_answer, when there is one, as an \
example of a high-quality answer: the candidate need not match it word for word but should \
cover its key points. Be brief and specific.

[[ ## criteria ## ]]
{{criteria}}

[[ ## question ## ]]
{{question}}

[[ ## reference_answer ## ]]
{{reference_answer}}

[[ ## candidate_answer ## ]]
{{candidate_answer}}"""

SCORE_SYSTEM = """Reply with one JSON object and nothing else:
{"score": <number from 0.0 to 1.0>, "hits": [<up to 4 short strings: what the answer got \
right>], "misses": [<up to 4 short strings: what it got wrong or left out>], "reasoning": \
"<one or two sentences>"}"""

SCORE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "hits": {"type": "array", "items": {"type": "string"}},
        "misses": {"type": "array", "items": {"type": "string"}},
        "reasoning": {"type": "string"},
    },
    "required": ["score", "hits", "misses", "reasoning"],
}

_VARIABLE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def substitute(template: str, values: dict[str, str]) -> str:
    """`{{ name }}` replaced by its value; names it does not know are left as written."""
    return _VARIABLE.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def template_values(case: AgentVCase, output: Output) -> dict[str, str]:
    def dump(value: Any) -> str:
        return json.dumps(value, indent=2, ensure_ascii=False, default=str)

    return {
        "candidate_answer": output.text.strip(),
        "reference_answer": case.reference_answer.strip(),
        "criteria": (case.criteria or "").strip(),
        "question": case.question.strip(),
        "input_messages": dump(list(case.raw_input)),
        "expected_messages": dump(list(case.expected_messages)),
        "output_messages": dump(output.messages or [{"role": "assistant", "content": output.text}]),
    }


def check_score(data: Any) -> dict[str, Any] | None:
    """A judge's `{score, hits, misses, reasoning}`, or None when it is not one."""
    if not isinstance(data, dict):
        return None
    score = data.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        return None
    lists = {}
    for key in ("hits", "misses"):
        value = data.get(key, [])
        if not isinstance(value, list):
            return None
        lists[key] = [str(v) for v in value if str(v).strip()][:4]
    reasoning = data.get("reasoning", "")
    return {"score": float(score), **lists, "reasoning": str(reasoning or "")}


async def ask_score(ev: EvalContext, prompt: str, model: str | None) -> dict[str, Any]:
    return await ev.structured(
        prompt, SCORE_SYSTEM, SCORE_SCHEMA, check_score, model=model,
        what="{score, hits, misses, reasoning} object",
    )  # fmt: skip


class ScoreRange(Spec):
    score_range: tuple[int, int]
    outcome: str = Field(min_length=1)

    @field_validator("score_range")
    @classmethod
    def _in_range(cls, value: tuple[int, int]) -> tuple[int, int]:
        low, high = value
        if not (0 <= low <= high <= 10):
            raise ValueError("a score_range is [low, high] with 0 <= low <= high <= 10")
        return value


class RubricItem(Spec):
    """One rubric item: a checklist outcome, or a criterion scored by `score_ranges`."""

    id: str | None = None
    outcome: str | None = None
    weight: float = Field(1.0, ge=0, allow_inf_nan=False)
    required: bool | None = None
    required_min_score: int | None = Field(None, ge=0, le=10)
    score_ranges: list[ScoreRange] | dict[int, str] | None = None

    @model_validator(mode="after")
    def _has_outcome(self) -> RubricItem:
        if self.score_ranges is None and not (self.outcome or "").strip():
            raise ValueError("a rubric item needs an 'outcome' (or 'score_ranges')")
        return self

    def ranges(self) -> list[ScoreRange]:
        if isinstance(self.score_ranges, dict):
            bounds = sorted(self.score_ranges)
            return [
                ScoreRange(
                    score_range=(low, bounds[i + 1] - 1 if i + 1 < len(bounds) else 10),
                    outcome=self.score_ranges[low],
                )
                for i, low in enumerate(bounds)
            ]
        return list(self.score_ranges or [])


def rubric_items(raw: list[Any]) -> list[RubricItem]:
    """Rubric items from strings and mappings, numbered `rubric-N` where they have no id;
    a checklist item is required unless it says otherwise."""
    items = []
    for index, entry in enumerate(raw):
        item = RubricItem(outcome=entry) if isinstance(entry, str) else RubricItem(**entry)
        update: dict[str, Any] = {"id": item.id or f"rubric-{index + 1}"}
        if item.score_ranges is None and item.required is None:
            update["required"] = True
        items.append(item.model_copy(update=update))
    return items


def _validate_ranges(item: RubricItem) -> None:
    covered: list[int] = []
    for entry in item.ranges():
        low, high = entry.score_range
        covered.extend(range(low, high + 1))
    if sorted(covered) != list(range(11)):
        raise ValueError(
            f"score_ranges of rubric '{item.id}' must cover 0 to 10 once each "
            "(no gaps, no overlaps)"
        )


class _Rubrics(AgentVEvaluator):
    rubrics: list[Any] = Field(default_factory=list)

    @field_validator("rubrics")
    @classmethod
    def _items(cls, value: list[Any]) -> list[Any]:
        for item in rubric_items(value):
            if item.score_ranges is not None:
                _validate_ranges(item)
        return value

    async def rubric_finding(self, ev: EvalContext, case: AgentVCase, output: Output) -> Finding:
        items = rubric_items(self.rubrics)
        if any(i.score_ranges is not None for i in items):
            return await self._score_ranges(ev, case, output, items)
        lines = [
            f"- [{i.id}]{' (REQUIRED)' if i.required else ''}"
            f"{f' (weight: {i.weight:g})' if i.weight != 1 else ''}: {i.outcome}"
            for i in items
        ]
        prompt = _rubric_prompt(case, output, "[[ ## rubrics ## ]]", lines)
        ids = {str(i.id) for i in items}
        schema = _checks_schema({"satisfied": {"type": "boolean"}})
        data = await ev.structured(
            prompt, RUBRIC_SYSTEM, schema, lambda d: _checks(d, ids, "satisfied", bool),
            model=getattr(self, "model", None), what="rubric checks",
        )  # fmt: skip
        by_id = {c["id"]: c for c in data["checks"]}
        hits: list[str] = []
        misses: list[str] = []
        vetoes: list[str] = []
        total = earned = 0.0
        for item in items:
            check = by_id[str(item.id)]
            line = f"[{item.id}] {item.outcome}: {check.get('reasoning', '')}".rstrip(": ")
            total += item.weight
            if check["satisfied"]:
                earned += item.weight
                hits.append(line)
            else:
                misses.append(line)
                if item.required:
                    vetoes.append(str(item.id))
        score = earned / total if total else 0.0
        veto = f"required rubric item not met: {', '.join(vetoes)}" if vetoes else None
        return self.scored(score, hits, misses, data.get("overall_reasoning", ""), veto=veto)

    async def _score_ranges(
        self, ev: EvalContext, case: AgentVCase, output: Output, items: list[RubricItem]
    ) -> Finding:
        lines = []
        for item in items:
            label = f"### Criterion: {item.id}"
            if item.weight != 1:
                label += f" (weight: {item.weight:g})"
            if item.required_min_score is not None:
                label += f" [REQUIRED: min score {item.required_min_score}]"
            lines.append(label)
            if item.outcome:
                lines.append(f"Description: {item.outcome}")
            for entry in item.ranges():
                low, high = entry.score_range
                lines.append(
                    f"  - Score {low if low == high else f'{low}-{high}'}: {entry.outcome}"
                )
        prompt = _rubric_prompt(case, output, "[[ ## scoring_criteria ## ]]", lines)
        ids = {str(i.id) for i in items}
        schema = _checks_schema({"score": {"type": "integer", "minimum": 0, "maximum": 10}})
        data = await ev.structured(
            prompt, RANGES_SYSTEM, schema, lambda d: _checks(d, ids, "score", int),
            model=getattr(self, "model", None), what="criterion scores",
        )  # fmt: skip
        by_id = {c["id"]: c for c in data["checks"]}
        hits: list[str] = []
        misses: list[str] = []
        vetoes: list[str] = []
        total = weighted = 0.0
        for item in items:
            raw = by_id[str(item.id)]["score"]
            total += item.weight
            weighted += item.weight * raw / 10
            minimum = item.required_min_score
            if minimum is None and item.required:
                minimum = 10
            line = f"[{item.id}] {item.outcome or item.id} - Score: {raw}/10"
            reason = by_id[str(item.id)].get("reasoning")
            line += f": {reason}" if reason else ""
            if minimum is not None and raw < minimum:
                vetoes.append(f"{item.id} ({raw} < {minimum})")
                misses.append(line)
            else:
                (hits if raw >= 7 else misses).append(line)
        score = weighted / total if total else 0.0
        veto = f"required criteria below their minimum: {', '.join(vetoes)}" if vetoes else None
        return self.scored(score, hits, misses, data.get("overall_reasoning", ""), veto=veto)


RUBRIC_SYSTEM = """Check the candidate answer against each rubric item. Reply with one JSON \
object and nothing else: {"checks": [{"id": "<rubric id>", "satisfied": true or false, \
"reasoning": "<one sentence>"}, ...one per rubric item], "overall_reasoning": "<summary>"}"""

RANGES_SYSTEM = """Score the candidate answer on each criterion with a whole number from 0 to \
10 inside one of its score ranges. Reply with one JSON object and nothing else: {"checks": \
[{"id": "<criterion id>", "score": <0-10>, "reasoning": "<one sentence>"}, ...one per \
criterion], "overall_reasoning": "<summary>"}"""


def _checks_schema(verdict: dict[str, Any]) -> dict[str, Any]:
    key = next(iter(verdict))
    return {
        "type": "object",
        "properties": {
            "checks": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        **verdict,
                        "reasoning": {"type": "string"},
                    },
                    "required": ["id", key, "reasoning"],
                },
            },
            "overall_reasoning": {"type": "string"},
        },
        "required": ["checks", "overall_reasoning"],
    }


def _checks(data: Any, ids: set[str], key: str, kind: type) -> dict[str, Any] | None:
    """The judge's checks when there is exactly one well-formed check per rubric id."""
    if not isinstance(data, dict) or not isinstance(data.get("checks"), list):
        return None
    seen: dict[str, dict[str, Any]] = {}
    for check in data["checks"]:
        if not isinstance(check, dict) or str(check.get("id")) not in ids:
            return None
        value = check.get(key)
        if kind is bool and not isinstance(value, bool):
            return None
        if kind is int:
            if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
                return None
            if not 0 <= value <= 10:
                return None
            check = {**check, key: int(value)}
        seen[str(check["id"])] = check
    if set(seen) != ids:
        return None
    return {
        "checks": list(seen.values()),
        "overall_reasoning": str(data.get("overall_reasoning", "")),
    }


def _rubric_prompt(case: AgentVCase, output: Output, heading: str, lines: list[str]) -> str:
    parts = ["[[ ## question ## ]]", case.question, "", "[[ ## criteria ## ]]", case.criteria or ""]
    if case.reference_answer.strip():
        parts += ["", "[[ ## reference_answer ## ]]", case.reference_answer]
    parts += ["", "[[ ## candidate_answer ## ]]", output.text, "", heading, *lines]
    return "\n".join(parts)


@agentv("llm_judge")
class LlmJudge(_Rubrics):
    """A judge's `{score, hits, misses, reasoning}` for the answer, asked with `prompt` (a
    file or inline text, `{{ candidate_answer }}` and friends filled in) or AgentV's
    default grading prompt; with `rubrics`, a rubric check."""

    model_config = ConfigDict(extra="allow")
    type: Literal["llm_judge"] = "llm_judge"
    prompt: str | None = Field(None, description="A prompt file (.md), or the prompt itself.")
    model: str | None = Field(None, description="The judge (default: the target's judge).")
    template: str | None = Field(None, exclude=True, description="The prompt file's text.")
    deterministic: ClassVar[bool] = False

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        test = agentv_case(case)
        if self.rubrics:
            return await self.rubric_finding(ev, test, output)
        template = self.template or self.prompt or JUDGE_TEMPLATE
        prompt = substitute(template, template_values(test, output))
        data = await ask_score(ev, prompt, self.model)
        return self.scored(data["score"], data["hits"], data["misses"], data["reasoning"])


@agentv("rubric")
class Rubric(_Rubrics):
    """The case's `rubrics` (or its own) checked by the judge: checklist items (satisfied
    weight / total weight; a required item not met fails the case) or criteria scored 0-10
    by `score_ranges` (weighted, divided by 10; `required_min_score`)."""

    type: Literal["rubric"] = "rubric"
    model: str | None = None
    deterministic: ClassVar[bool] = False

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        test = agentv_case(case)
        if not self.rubrics:
            raise EvaluatorFailure("no rubrics to check")
        return await self.rubric_finding(ev, test, output)


# --- code judges ------------------------------------------------------------------------------


def script_argv(script: str | list[str]) -> list[str]:
    """A script as argv: a list as it is, a string run by the shell."""
    return ["/bin/sh", "-c", script] if isinstance(script, str) else list(script)


async def run_script(
    argv: list[str], payload: dict[str, Any], cwd: Path, timeout: float, env: dict[str, str]
) -> dict[str, Any]:
    """A judge script's JSON answer: exits 0 and prints an object with a numeric score."""
    stdin = json.dumps(payload, ensure_ascii=False, default=str).encode()
    try:
        stdout, stderr, code = await run_program(argv, stdin, cwd, timeout, env)
    except TargetFailure as exc:
        raise EvaluatorFailure(str(exc)) from None
    shown = " ".join(argv[-2:]) if argv[:2] == ["/bin/sh", "-c"] else " ".join(argv)
    if code != 0:
        tail = stderr.decode(errors="replace").strip()[-1000:]
        raise EvaluatorFailure(f"`{shown}` exited with {code}: {tail or '(no stderr)'}")
    from accord.tasks.suites.core.judging import json_object

    text = stdout.decode(errors="replace")
    data = json_object(text)
    score = data.get("score") if isinstance(data, dict) else None
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        raise EvaluatorFailure(
            f"`{shown}` printed no JSON object with a score from 0 to 1: {text.strip()[-300:]!r}"
        )
    assert isinstance(data, dict)
    return data


@agentv("code_judge")
class CodeJudge(AgentVEvaluator):
    """A program judging the answer: the case as snake_case JSON on stdin (`question`,
    `criteria`, `candidate_answer`, `reference_answer`, `expected_messages`,
    `input_messages`, `output_messages`, `input_files`, `metadata`, ...), printing
    `{score, hits, misses, reasoning}`. Keys it does not know reach it as `config`."""

    model_config = ConfigDict(extra="allow")
    type: Literal["code_judge"] = "code_judge"
    script: str | list[str] = Field(description="argv, or a command line for the shell.")
    cwd: str | None = Field(None, description="Working folder (default: the eval file's).")
    timeout_ms: float = Field(60_000, gt=0, allow_inf_nan=False)
    base: str = Field("", exclude=True)

    @field_validator("script")
    @classmethod
    def _not_empty(cls, value: str | list[str]) -> str | list[str]:
        if not (value.strip() if isinstance(value, str) else value and all(value)):
            raise ValueError("the script is empty")
        return value

    def config(self) -> dict[str, Any] | None:
        return dict(self.model_extra or {}) or None

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        test = agentv_case(case)
        payload = judge_payload(test, output, self.config())
        env = {"AGENTV_WORKSPACE_PATH": output.workspace} if output.workspace else {}
        cwd = Path(self.base) / (self.cwd or ".")
        data = await run_script(script_argv(self.script), payload, cwd, self.timeout_ms / 1000, env)
        return self.scored(
            float(data["score"]), _strings(data.get("hits")), _strings(data.get("misses")),
            str(data.get("reasoning") or ""), metadata=_details(data),
        )  # fmt: skip


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value if str(v).strip()] if isinstance(value, list) else []


def _details(data: dict[str, Any]) -> dict[str, Any]:
    details = data.get("details")
    return {"details": details} if isinstance(details, dict) else {}


def judge_payload(
    case: AgentVCase, output: Output, config: dict[str, Any] | None
) -> dict[str, Any]:
    return {
        "question": case.question,
        "criteria": case.criteria or "",
        "candidate_answer": output.text,
        "reference_answer": case.reference_answer,
        "expected_messages": list(case.expected_messages),
        "input_messages": list(case.raw_input),
        "output_messages": output.messages or [{"role": "assistant", "content": output.text}],
        "input_files": list(case.input_files),
        "guideline_files": list(case.guideline_files),
        "metadata": case.metadata or None,
        "sidecar": case.sidecar,
        "workspace_path": output.workspace,
        "config": config,
    }


# --- composite --------------------------------------------------------------------------------


class Aggregator(Spec):
    """How a composite turns its members' results into one."""

    type: Literal["weighted_average", "code_judge", "llm_judge"]
    weights: dict[str, float] = Field(default_factory=dict)
    path: str | list[str] | None = Field(None, description="code_judge: the script.")
    script: str | list[str] | None = Field(None, description="code_judge: same as path.")
    cwd: str | None = None
    prompt: str | None = Field(None, description="llm_judge: a prompt file or the prompt.")
    template: str | None = Field(None, exclude=True)

    @model_validator(mode="after")
    def _complete(self) -> Aggregator:
        if self.type == "code_judge" and not (self.path or self.script):
            raise ValueError("a code_judge aggregator needs 'path' (the script to run)")
        return self


COMPOSITE_PROMPT = """Review the results of these evaluators:
{{EVALUATOR_RESULTS_JSON}}

Decide the final score from all of them."""


@agentv("composite")
class Composite(AgentVEvaluator):
    """Member evaluators run together, their results combined by `aggregator`:
    `weighted_average` (by `weights`, default 1 each), `code_judge` (a script given
    `{results: {name: {score, verdict, hits, misses, reasoning}}}`) or `llm_judge`."""

    type: Literal["composite"] = "composite"
    evaluators: list[Any] = Field(min_length=1)
    aggregator: Aggregator
    members: list[Any] = Field(default_factory=list, exclude=True)
    base: str = Field("", exclude=True)

    def calls_model(self, judge_model: str | None) -> bool:
        judged = any(m.calls_model(judge_model) for m in self.members)
        return judged or self.aggregator.type == "llm_judge"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        from accord.tasks.suites.core.nodes import evaluate_one

        results = await asyncio.gather(*(evaluate_one(ev, m, case, output) for m in self.members))
        failed = [f for f in results if f.error is not None or f.score is None]
        if failed:
            errors = "; ".join(f"{f.name}: {f.error or f.skipped}" for f in failed)
            raise EvaluatorFailure(f"member evaluator without a score: {errors}")
        for member in results:
            member.weight = self.aggregator.weights.get(member.name, 1.0)
        kind = self.aggregator.type
        if kind == "weighted_average":
            total = sum(f.weight for f in results)
            score = sum(f.weight * (f.score or 0) for f in results) / total if total else 0.0
            hits = [f"[{f.name}] {h}" for f in results for h in f.hits]
            misses = [f"[{f.name}] {m}" for f in results for m in f.misses]
            reason = "; ".join(f"{f.name}: {f.reason}" for f in results if f.reason)
            return self.scored(score, hits, misses, reason, children=list(results))
        summary = {
            f.name: {
                "score": f.score, "verdict": verdict_of(f.score or 0), "hits": f.hits,
                "misses": f.misses, "reasoning": f.reason,
            }
            for f in results
        }  # fmt: skip
        if kind == "code_judge":
            script = self.aggregator.script or self.aggregator.path
            assert script is not None
            cwd = Path(self.base) / (self.aggregator.cwd or ".")
            data = await run_script(script_argv(script), {"results": summary}, cwd, 60.0, {})
            return self.scored(
                float(data["score"]), _strings(data.get("hits")), _strings(data.get("misses")),
                str(data.get("reasoning") or ""), children=list(results),
            )  # fmt: skip
        template = self.aggregator.template or self.aggregator.prompt or COMPOSITE_PROMPT
        results_json = json.dumps(summary, indent=2, ensure_ascii=False)
        values = {
            **template_values(agentv_case(case), output),
            "EVALUATOR_RESULTS_JSON": results_json,
        }
        data = await ask_score(ev, substitute(template, values), None)
        return self.scored(
            data["score"], data["hits"], data["misses"], data["reasoning"], children=list(results)
        )


# --- traces -----------------------------------------------------------------------------------


class ExpectedTool(Spec):
    tool: str = Field(min_length=1)
    args: dict[str, Any] | Literal["any"] | None = None
    max_duration_ms: float | None = Field(None, ge=0, allow_inf_nan=False)


def _args_match(expected: dict[str, Any] | str | None, actual: Any) -> bool:
    if expected is None or expected == "any":
        return True
    if not isinstance(actual, dict) or not isinstance(expected, dict):
        return False
    return all(key in actual and actual[key] == value for key, value in expected.items())


@agentv("tool_trajectory")
class ToolTrajectory(AgentVEvaluator):
    """The tool calls the target made: `any_order` (each tool of `minimums` called at least
    that often), `in_order` (the `expected` calls appear in order, others may come between)
    or `exact` (exactly the `expected` calls). `args` match the keys given (`any`: not
    checked); `max_duration_ms` checks a call's duration when the trace reports it.
    Score: assertions met / assertions checked."""

    type: Literal["tool_trajectory"] = "tool_trajectory"
    mode: Literal["any_order", "in_order", "exact"]
    minimums: dict[str, int] | None = None
    expected: list[ExpectedTool] | None = None

    @model_validator(mode="after")
    def _complete(self) -> ToolTrajectory:
        if self.mode == "any_order" and self.minimums is None:
            raise ValueError("mode any_order needs 'minimums' (tool: least number of calls)")
        if self.mode != "any_order" and self.expected is None:
            raise ValueError(f"mode {self.mode} needs 'expected' (the tool calls in order)")
        return self

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        calls = output.tool_calls
        if self.mode == "any_order":
            counts: dict[str, int] = {}
            for call in calls:
                counts[call.get("name", "")] = counts.get(call.get("name", ""), 0) + 1
            hits: list[str] = []
            misses: list[str] = []
            for tool, least in (self.minimums or {}).items():
                made = counts.get(tool, 0)
                line = f"{tool}: called {made} times (required >= {least})"
                (hits if made >= least else misses).append(line)
            total = len(hits) + len(misses)
            return self.scored(len(hits) / total if total else 1.0, hits, misses)
        return self._sequence(calls, self.expected or [])

    def _sequence(self, calls: list[dict[str, Any]], expected: list[ExpectedTool]) -> Finding:
        hits: list[str] = []
        misses: list[str] = []
        checked = met = 0
        exact = self.mode == "exact"
        position = 0
        for index, item in enumerate(expected):
            checked += 1
            matched: dict[str, Any] | None = None
            if exact:
                call = calls[index] if index < len(calls) else None
                if call is None:
                    misses.append(f"position {index}: expected {item.tool}, got nothing")
                elif call.get("name") != item.tool:
                    misses.append(f"position {index}: expected {item.tool}, got {call.get('name')}")
                elif not _args_match(item.args, call.get("arguments")):
                    misses.append(f"position {index}: {item.tool} with other arguments")
                else:
                    matched = call
                    hits.append(f"position {index}: {item.tool}")
            else:
                while position < len(calls) and calls[position].get("name") != item.tool:
                    position += 1
                if position >= len(calls):
                    misses.append(
                        f"{item.tool} (expected #{index + 1}) not found after the calls before it"
                    )
                elif not _args_match(item.args, calls[position].get("arguments")):
                    misses.append(f"{item.tool} at position {position}: other arguments")
                    position += 1
                else:
                    matched = calls[position]
                    hits.append(f"found {item.tool} at position {position}")
                    position += 1
            met += matched is not None
            if item.max_duration_ms is not None:
                duration = matched.get("duration_ms") if matched is not None else None
                if matched is None:
                    checked += 1
                    misses.append(f"{item.tool}: no call to time (max {item.max_duration_ms:g} ms)")
                elif duration is not None:
                    checked += 1
                    line = f"{item.tool} took {duration:g} ms (max {item.max_duration_ms:g} ms)"
                    if duration <= item.max_duration_ms:
                        met += 1
                        hits.append(line)
                    else:
                        misses.append(line)
                else:
                    hits.append(f"{item.tool}: no duration in the trace, latency not checked")
        if exact and len(calls) > len(expected):
            extra = [c.get("name", "") for c in calls[len(expected) :]]
            checked += len(extra)
            misses.append(f"{len(extra)} calls more than expected: {', '.join(extra)}")
        return self.scored(met / checked if checked else 1.0, hits, misses)


# --- structured answers, spend ----------------------------------------------------------------


class FieldSpec(Spec):
    path: str = Field(min_length=1, description="Dotted path; list items by number (a.0.b).")
    match: Literal["exact", "numeric_tolerance", "date"]
    required: bool = True
    weight: float = Field(1.0, ge=0, allow_inf_nan=False)
    tolerance: float = Field(0.0, ge=0, allow_inf_nan=False)
    relative: bool = False
    formats: list[str] | None = None


_MISSING = object()
DATE_FORMATS = (
    "YYYY-MM-DDTHH:mm:ssZ", "YYYY-MM-DDTHH:mm:ss", "YYYY-MM-DD", "DD-MMM-YYYY", "MM/DD/YYYY",
    "DD/MM/YYYY", "MM-DD-YYYY", "DD-MM-YYYY",
)  # fmt: skip
_TOKENS = (("YYYY", "%Y"), ("MMM", "%b"), ("MM", "%m"), ("DD", "%d"), ("HH", "%H"),
           ("mm", "%M"), ("ss", "%S"), ("Z", "%z"))  # fmt: skip


def _strptime_format(fmt: str) -> str:
    out = ""
    i = 0
    while i < len(fmt):
        for token, code in _TOKENS:
            if fmt.startswith(token, i):
                out += code
                i += len(token)
                break
        else:
            out += fmt[i].replace("%", "%%")
            i += 1
    return out


def parse_date(text: str, formats: list[str]) -> datetime | None:
    for fmt in formats:
        try:
            return datetime.strptime(text.strip(), _strptime_format(fmt))
        except ValueError:
            continue
    return None


def value_at(data: Any, path: str) -> Any:
    for part in path.split("."):
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return _MISSING
    return data


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).replace(",", "").strip())
    except ValueError:
        return None


@agentv("field_accuracy")
class FieldAccuracy(AgentVEvaluator):
    """Fields of a JSON answer against the expected object: `exact`, `numeric_tolerance`
    (absolute, or `relative`), `date` (same day in any of `formats`); scored by
    `weighted_average` of the fields or `all_or_nothing`."""

    type: Literal["field_accuracy"] = "field_accuracy"
    fields: list[FieldSpec] = Field(min_length=1)
    aggregation: Literal["weighted_average", "all_or_nothing"] = "weighted_average"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        from accord.tasks.suites.core.judging import json_object

        test = agentv_case(case)
        expected = _expected_object(test)
        if expected is None:
            raise EvaluatorFailure("the case's expected_output holds no JSON object to compare")
        answer = output.value if isinstance(output.value, dict) else json_object(output.text)
        if not isinstance(answer, dict):
            return self.scored(0.0, [], ["the answer is not a JSON object"])
        hits: list[str] = []
        misses: list[str] = []
        total = earned = 0.0
        for spec in self.fields:
            want, got = value_at(expected, spec.path), value_at(answer, spec.path)
            if want is _MISSING:
                hits.append(f"{spec.path}: nothing expected")
                continue
            if got is _MISSING:
                if spec.required:
                    total += spec.weight
                    misses.append(f"{spec.path}: missing")
                continue
            ok, why = _compare(spec, want, got)
            total += spec.weight
            earned += spec.weight if ok else 0.0
            (hits if ok else misses).append(f"{spec.path}{': ' + why if why else ''}")
        if self.aggregation == "all_or_nothing":
            score = 0.0 if misses else 1.0
        else:
            score = earned / total if total else 1.0
        return self.scored(score, hits, misses, f"{len(hits)}/{len(self.fields)} fields matched")


def _compare(spec: FieldSpec, want: Any, got: Any) -> tuple[bool, str]:
    if spec.match == "exact":
        return (True, "") if want == got else (False, f"expected {want!r}, got {got!r}")
    if spec.match == "numeric_tolerance":
        a, b = _number(got), _number(want)
        if a is None or b is None:
            return False, f"not a number: {got!r}"
        diff = abs(a - b)
        allowed = spec.tolerance * abs(b) if spec.relative and b else spec.tolerance
        return diff <= allowed, f"difference {diff:g} (tolerance {allowed:g})"
    formats = spec.formats or list(DATE_FORMATS)
    a_date, b_date = parse_date(str(got), formats), parse_date(str(want), formats)
    if a_date is None:
        return False, f"not a date: {got!r}"
    if b_date is None:
        return False, f"expected value is not a date: {want!r}"
    same = a_date.date() == b_date.date()
    return same, "" if same else f"{a_date.date()} is not {b_date.date()}"


def _expected_object(case: AgentVCase) -> dict[str, Any] | None:
    from accord.tasks.suites.core.judging import json_object

    for message in reversed(case.expected_messages):
        content = message.get("content")
        if isinstance(content, dict):
            return content
        if isinstance(content, str):
            found = json_object(content)
            if isinstance(found, dict):
                return found
    return None


@agentv("latency")
class Latency(AgentVEvaluator):
    """The target answered within `threshold` milliseconds (its reported duration, else the
    time measured around it)."""

    type: Literal["latency"] = "latency"
    threshold: float = Field(  # type: ignore[assignment]
        ge=0, allow_inf_nan=False, description="Milliseconds."
    )

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        took = output.duration_ms if output.duration_ms is not None else output.seconds * 1000
        line = f"took {took:.0f} ms (threshold {self.threshold:g} ms)"
        ok = took <= self.threshold
        return self.scored(1.0 if ok else 0.0, [line] if ok else [], [] if ok else [line])


@agentv("cost")
class Cost(AgentVEvaluator):
    """The target's cost in USD within `budget` (an error when it reports none)."""

    type: Literal["cost"] = "cost"
    budget: float = Field(ge=0, allow_inf_nan=False)

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        if output.cost is None:
            raise EvaluatorFailure("the target reported no cost (cost_usd), so no budget to check")
        line = f"cost ${output.cost:.4f} (budget ${self.budget:.4f})"
        ok = output.cost <= self.budget
        return self.scored(1.0 if ok else 0.0, [line] if ok else [], [] if ok else [line])


@agentv("token_usage")
class TokenUsage(AgentVEvaluator):
    """The target's tokens within `max_input`, `max_output`, `max_total` (an error when it
    reports no usage)."""

    type: Literal["token_usage"] = "token_usage"
    max_total: int | None = Field(None, ge=0)
    max_input: int | None = Field(None, ge=0)
    max_output: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _some_limit(self) -> TokenUsage:
        if self.max_total is None and self.max_input is None and self.max_output is None:
            raise ValueError("give at least one of max_total, max_input, max_output")
        return self

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        usage = output.usage
        if not usage:
            raise EvaluatorFailure("the target reported no token usage (token_usage)")
        used = {
            "input": usage.get("input", 0),
            "output": usage.get("output", 0),
        }
        used["total"] = used["input"] + used["output"] + usage.get("cached", 0)
        hits: list[str] = []
        misses: list[str] = []
        for key, limit in (("input", self.max_input), ("output", self.max_output),
                           ("total", self.max_total)):  # fmt: skip
            if limit is not None:
                line = f"{key} tokens {used[key]} (max {limit})"
                (hits if used[key] <= limit else misses).append(line)
        return self.scored(0.0 if misses else 1.0, hits, misses)


# --- text checks ------------------------------------------------------------------------------


class _TextCheck(AgentVEvaluator):
    value: str | list[str] | None = Field(None, description="Text, or texts (any/all).")
    fold: ClassVar[bool] = False

    def values(self, case: Case) -> list[str]:
        if self.value is None:
            expected = case.expected_text
            if expected is None:
                raise EvaluatorFailure(
                    f"{self.type} has no 'value' and the case no expected output"
                )
            return [expected]
        return [self.value] if isinstance(self.value, str) else list(self.value)

    def norm(self, text: str) -> str:
        return text.casefold() if self.fold else text

    def found(self, case: Case, output: Output) -> tuple[list[str], list[str]]:
        text = self.norm(output.text)
        values = self.values(case)
        present = [v for v in values if self.norm(v) in text]
        return present, [v for v in values if v not in present]


class _Substrings(_TextCheck):
    need: ClassVar[str] = "all"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        present, missing = self.found(case, output)
        ok = bool(present) if self.need == "any" else not missing
        hits = [f"contains {v!r}" for v in present]
        misses = [f"does not contain {v!r}" for v in missing]
        return self.scored(1.0 if ok else 0.0, hits, misses)


@agentv("contains")
class Contains(_Substrings):
    """Every `value` appears in the answer."""

    type: Literal["contains"] = "contains"


@agentv("contains_all")
class ContainsAll(_Substrings):
    """Every `value` appears in the answer."""

    type: Literal["contains_all"] = "contains_all"


@agentv("contains_any")
class ContainsAny(_Substrings):
    """At least one `value` appears in the answer."""

    type: Literal["contains_any"] = "contains_any"
    need: ClassVar[str] = "any"


@agentv("icontains")
class IContains(_Substrings):
    """Every `value` appears in the answer, letter case ignored."""

    type: Literal["icontains"] = "icontains"
    fold: ClassVar[bool] = True


@agentv("icontains_all")
class IContainsAll(_Substrings):
    """Every `value` appears in the answer, letter case ignored."""

    type: Literal["icontains_all"] = "icontains_all"
    fold: ClassVar[bool] = True


@agentv("icontains_any")
class IContainsAny(_Substrings):
    """At least one `value` appears in the answer, letter case ignored."""

    type: Literal["icontains_any"] = "icontains_any"
    fold: ClassVar[bool] = True
    need: ClassVar[str] = "any"


@agentv("starts_with")
class StartsWith(_TextCheck):
    """The answer starts with `value` (leading whitespace ignored)."""

    type: Literal["starts_with"] = "starts_with"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        (value,) = self.values(case)[:1]
        ok = output.text.lstrip().startswith(value)
        line = f"{'starts' if ok else 'does not start'} with {value!r}"
        return self.scored(1.0 if ok else 0.0, [line] if ok else [], [] if ok else [line])


@agentv("ends_with")
class EndsWith(_TextCheck):
    """The answer ends with `value` (trailing whitespace ignored)."""

    type: Literal["ends_with"] = "ends_with"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        (value,) = self.values(case)[:1]
        ok = output.text.rstrip().endswith(value)
        line = f"{'ends' if ok else 'does not end'} with {value!r}"
        return self.scored(1.0 if ok else 0.0, [line] if ok else [], [] if ok else [line])


@agentv("equals")
class Equals(_TextCheck):
    """The answer equals `value` (default: the expected output), surrounding whitespace
    ignored."""

    type: Literal["equals"] = "equals"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        (value,) = self.values(case)[:1]
        ok = output.text.strip() == value.strip()
        line = "equals the expected text" if ok else f"differs from {value[:80]!r}"
        return self.scored(1.0 if ok else 0.0, [line] if ok else [], [] if ok else [line])


@agentv("regex")
class Regex(AgentVEvaluator):
    """The answer matches the regular expression `value` (searched anywhere)."""

    type: Literal["regex"] = "regex"
    value: str = Field(description="The pattern (Python syntax).")
    flags: str = Field("", description="i: ignore case, m: multiline, s: dot matches newline.")

    @field_validator("value")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
        return value

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        flags = 0
        for letter, flag in (("i", re.I), ("m", re.M), ("s", re.S)):
            flags |= flag if letter in self.flags else 0
        match = re.search(self.value, output.text, flags)
        line = f"matches /{self.value}/" if match else f"does not match /{self.value}/"
        return self.scored(1.0 if match else 0.0, [line] if match else [], [] if match else [line])


@agentv("is_json")
class IsJson(AgentVEvaluator):
    """The answer is valid JSON."""

    type: Literal["is_json"] = "is_json"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        try:
            json.loads(output.text)
        except ValueError as exc:
            return self.scored(0.0, [], [f"not valid JSON: {exc}"])
        return self.scored(1.0, ["valid JSON"], [])


ALIASES = {name.replace("_", "-"): name for name in AGENTV}

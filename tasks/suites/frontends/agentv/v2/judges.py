"""AgentV's judges: `llm_judge` and `rubric` (a model), `code_judge` (a program) and
`composite` (members combined by a weighted average, a program or a model).

A judge reply that does not parse is asked once more, then an error on that evaluator; so
is a code judge that exits non-zero or prints no JSON score.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from ......engine.specbase import Spec
from .....evaluators.base import EvaluatorFailure, Finding
from ....core import scoring_rules
from ....core.targets import TargetFailure, run_program
from ..common.judging import substitute
from ..common.proxy import DEFAULT_MAX_CALLS, target_proxy
from ..common.targets import AGENTV_PREFIX
from ..common.wire import judge_payload
from .cases import AgentVCase
from .evaluators import AgentVEvaluator, agentv, agentv_case, verdict_of

if TYPE_CHECKING:
    from .....evaluators.cases import Case, Output
    from .....evaluators.judging import EvalContext

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
        checked = []
        for item in items:
            check = by_id[str(item.id)]
            line = f"[{item.id}] {item.outcome}: {check.get('reasoning', '')}".rstrip(": ")
            checked.append((item, bool(check["satisfied"]), line))
        score, hits, misses, veto = rubric_outcome(checked)
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


def rubric_outcome(
    checked: list[tuple[Any, bool, str]],
) -> tuple[float, list[str], list[str], str | None]:
    """Rubric items as checked, `(item, satisfied, line)` each: the weighted share satisfied,
    the lines of items met and of items missed, and the veto naming required items missed."""
    hits: list[str] = []
    misses: list[str] = []
    vetoes: list[str] = []
    total = earned = 0.0
    for item, satisfied, line in checked:
        total += item.weight
        if satisfied:
            earned += item.weight
            hits.append(line)
        else:
            misses.append(line)
            if item.required:
                vetoes.append(str(item.id))
    score = earned / total if total else 0.0
    veto = f"required rubric item not met: {', '.join(vetoes)}" if vetoes else None
    return score, hits, misses, veto


def _rubric_prompt(case: AgentVCase, output: Output, heading: str, lines: list[str]) -> str:
    parts = ["[[ ## question ## ]]", case.question, "", "[[ ## criteria ## ]]", case.criteria or ""]
    if case.reference_answer.strip():
        parts += ["", "[[ ## reference_answer ## ]]", case.reference_answer]
    parts += ["", "[[ ## candidate_answer ## ]]", output.text, "", heading, *lines]
    return "\n".join(parts)


class PromptScript(Spec):
    """An executable prompt template (AgentV's executePromptTemplate): the script gets the
    code judge's JSON on stdin (with `config`) and prints the judge's prompt."""

    script: list[str] = Field(min_length=1, description="argv; the last item is the script.")
    config: dict[str, Any] | None = None
    timeout_ms: float = Field(60_000, gt=0, allow_inf_nan=False)

    async def run(self, case: AgentVCase, output: Output, base: Path) -> str:
        from ..common.wire import judge_payload

        script = base / self.script[-1]
        argv = [*self.script[:-1], str(script)]
        payload = judge_payload(case, output, self.config)
        # AgentV runs it in the script's own folder
        stdin = json.dumps(payload, ensure_ascii=False, default=str).encode()
        try:
            stdout, stderr, code = await run_program(
                argv, stdin, script.parent, self.timeout_ms / 1000, {}
            )
        except TargetFailure as exc:
            raise EvaluatorFailure(f"prompt template: {exc}") from None
        if code != 0:
            tail = stderr.decode(errors="replace").strip()[-1000:]
            raise EvaluatorFailure(f"prompt template `{' '.join(argv)}` exited with {code}: {tail}")
        text = stdout.decode(errors="replace").strip()
        if not text:
            raise EvaluatorFailure(f"prompt template `{' '.join(argv)}` printed no prompt")
        return text


@agentv("llm_judge")
class LlmJudge(_Rubrics):
    """A judge's `{score, hits, misses, reasoning}` for the answer, asked with `prompt` (a
    file or inline text, `{{ candidate_answer }}` and friends filled in) or AgentV's
    default grading prompt; with `rubrics`, a rubric check."""

    model_config = ConfigDict(extra="allow")
    type: Literal["llm_judge"] = "llm_judge"
    prompt: str | PromptScript | None = Field(
        None, description="A prompt file (.md), the prompt itself, or {script, config}."
    )
    model: str | None = Field(None, description="The judge (default: the target's judge).")
    template: str | None = Field(None, exclude=True, description="The prompt file's text.")
    base: str = Field("", exclude=True)
    deterministic: ClassVar[bool] = False

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        test = agentv_case(case)
        if self.rubrics:
            return await self.rubric_finding(ev, test, output)
        if isinstance(self.prompt, PromptScript):
            template = await self.prompt.run(test, output, Path(self.base))
        else:
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
        # a judge may explain itself on stdout (a validation error printed by AgentV's SDK)
        said = [
            f"{name}: {text}"
            for name, raw in (("stderr", stderr), ("stdout", stdout))
            if (text := raw.decode(errors="replace").strip()[-1000:])
        ]
        raise EvaluatorFailure(f"`{shown}` exited with {code}: {'; '.join(said) or '(no output)'}")
    from .....evaluators.judging import json_object

    text = stdout.decode(errors="replace")
    data = json_object(text)
    score = data.get("score") if isinstance(data, dict) else None
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        raise EvaluatorFailure(
            f"`{shown}` printed no JSON object with a score from 0 to 1: {text.strip()[-300:]!r}"
        )
    assert isinstance(data, dict)
    return data


AGENTV_CODE_JUDGE_KEYS = frozenset({"name", "type", "script", "cwd", "weight", "target"})
# accord's own keys on a code judge (they reach the script in `config` too, as in AgentV)
ACCORD_KEYS = frozenset({"required", "negate", "timeout_ms"})


@agentv("code_judge")
class CodeJudge(AgentVEvaluator):
    """A program judging the answer: the case as snake_case JSON on stdin (`question`,
    `criteria`, `candidate_answer`, `reference_answer`, `expected_messages`,
    `input_messages`, `output_messages`, `input_files`, `trace_summary`, `metadata`, ...),
    printing `{score, hits, misses, reasoning}`. Every key but AgentV's own (`name`, `type`,
    `script`, `cwd`, `weight`, `target`) reaches it as `config`, as AgentV's evaluator-parser
    passes them (`threshold: 0.8` is the script's to read). `target: {max_calls}` gives it
    the target proxy (target_proxy.py)."""

    type: Literal["code_judge"] = "code_judge"
    script: str | list[str] = Field(description="argv, or a command line for the shell.")
    cwd: str | None = Field(None, description="Working folder (default: the eval file's).")
    timeout_ms: float = Field(60_000, gt=0, allow_inf_nan=False)
    target: dict[str, Any] | bool | None = Field(
        None, description="{max_calls: N} (or true): the script may call the case's target."
    )
    base: str = Field("", exclude=True)
    passed_config: dict[str, Any] = Field(default_factory=dict, exclude=True)
    # the targets of targets.yaml a proxied request may name (files.py proxy_targets)
    proxy_targets: dict[str, tuple[str, str]] = Field(default_factory=dict, exclude=True)
    proxy_programs: dict[str, Any] = Field(default_factory=dict, exclude=True)
    own_threshold: ClassVar[bool] = True

    @model_validator(mode="before")
    @classmethod
    def _split_config(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        config = {k: v for k, v in data.items() if k not in AGENTV_CODE_JUDGE_KEYS}
        # keys accord reads itself besides AgentV's: the rest (threshold, any other) is only
        # the script's configuration, never a gate or an error
        kept = {k: v for k, v in data.items() if k in AGENTV_CODE_JUDGE_KEYS | ACCORD_KEYS}
        return {**kept, "passed_config": config}

    @field_validator("script")
    @classmethod
    def _not_empty(cls, value: str | list[str]) -> str | list[str]:
        if not (value.strip() if isinstance(value, str) else value and all(value)):
            raise ValueError("the script is empty")
        return value

    def config(self) -> dict[str, Any] | None:
        return dict(self.passed_config) or None

    def max_calls(self) -> int:
        limit = self.target.get("max_calls") if isinstance(self.target, dict) else None
        return int(limit) if isinstance(limit, int | float) else DEFAULT_MAX_CALLS

    @field_validator("target")
    @classmethod
    def _target_budget(cls, value: dict[str, Any] | bool | None) -> dict[str, Any] | bool | None:
        if isinstance(value, dict):
            unknown = sorted(set(value) - {"max_calls"})
            if unknown:
                raise ValueError(f"unknown key '{unknown[0]}' in target (it takes max_calls)")
            limit = value.get("max_calls")
            if limit is not None and (
                isinstance(limit, bool) or not isinstance(limit, int) or limit < 0
            ):
                raise ValueError("target.max_calls is a whole number of calls, 0 or more")
        return value

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        test = agentv_case(case)
        payload = judge_payload(test, output, self.config())
        env = {"AGENTV_WORKSPACE_PATH": output.workspace} if output.workspace else {}
        cwd = Path(self.base) / (self.cwd or ".")
        argv, timeout = script_argv(self.script), self.timeout_ms / 1000
        if self.target is None or self.target is False:
            data = await run_script(argv, payload, cwd, timeout, env)
        else:
            name = (ev.judge_model or "judge").removeprefix(AGENTV_PREFIX)
            # AgentV's proxy lists the case's target, then every target of targets.yaml,
            # and answers a request naming any of them (orchestrator.ts availableTargets)
            labels = list(dict.fromkeys([name, test.target or name, *self.proxy_targets]))
            others = {
                k: _named_asker(ev, v, self.proxy_programs.get(k), case.id)
                for k, v in self.proxy_targets.items()
            }
            async with target_proxy(name, _asker(ev), self.max_calls(), labels, others) as proxy:
                data = await run_script(argv, payload, cwd, timeout, {**env, **proxy})
        return self.scored(
            float(data["score"]), _strings(data.get("hits")), _strings(data.get("misses")),
            str(data.get("reasoning") or ""), metadata=_details(data),
        )  # fmt: skip


def _asker(ev: EvalContext, model: str | None = None) -> Any:
    """The proxy's way to the judge (or to `model`): a question (and a system prompt) to its
    text."""

    async def ask(question: str, system: str | None) -> str:
        messages = [{"role": "user", "content": question}]
        if system:
            messages.insert(0, {"role": "system", "content": system})
        completion = await ev.complete(messages, model)
        return str(completion.text or "")

    return ask


def _named_asker(ev: EvalContext, found: tuple[str, str], program: Any, case_id: str) -> Any:
    """The way to a target a proxied request names: its model, a mock's answer, a program
    target given the question as its prompt (AgentV invokes the provider with it), or the
    reason it cannot be asked (the request fails, as AgentV's does, not the judge)."""
    kind, value = found
    if kind == "model":
        return _asker(ev, value)

    async def answer(question: str, system: str | None) -> str:
        if kind == "reply":
            return value
        if kind == "program" and program is not None:
            from .....evaluators.cases import Case

            try:  # the question is its PROMPT (a cli target's {PROMPT})
                output = await program.produce(ev.task, Case(id=case_id, input=question), 0)
            except TargetFailure as exc:
                raise RuntimeError(str(exc)) from None
            return str(output.text or "")
        raise RuntimeError(value)

    return answer


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value if str(v).strip()] if isinstance(value, list) else []


def _details(data: dict[str, Any]) -> dict[str, Any]:
    details = data.get("details")
    return {"details": details} if isinstance(details, dict) else {}


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
        from ....core.nodes import evaluate_one

        results = await asyncio.gather(*(evaluate_one(ev, m, case, output) for m in self.members))
        failed = [f for f in results if f.error is not None or f.score is None]
        if failed:
            errors = "; ".join(f"{f.name}: {f.error or f.skipped}" for f in failed)
            raise EvaluatorFailure(f"member evaluator without a score: {errors}")
        for member in results:
            member.weight = self.aggregator.weights.get(member.name, 1.0)
        kind = self.aggregator.type
        if kind == "weighted_average":
            score = scoring_rules.agentv().composite(results)
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

"""AgentV 4's judge: the prompts AgentV sends for rubrics and the replies it reads, as its
`packages/core/src/evaluation` writes them (commit 58f316c).

- Rubrics written as text (`- The answer greets the user`): loaders/grader-parser.ts
  (parseGraderList) gathers the text entries of one list into a single `llm-rubric` at the
  first one's place, weighted by their number; a test's own list and the inherited one
  (`default_test.assert` then the file's `assert`) are gathered apart. Each text becomes a
  rubric `rubric-N`, required. `AgentVChecklist` asks as llm-grader.ts's
  `evaluateWithRubrics` asks (buildRubricPrompt, buildRubricOutputSchema) and reads the
  reply as it reads it: a promptfoo-style result (`pass`, `reason`, or `checks` without
  `overall_reasoning`) by normalizePromptfooGradingResult, else `checks` of
  `{id, satisfied, reasoning}` with `overall_reasoning`, scored by calculateRubricScore
  (the satisfied rubrics' share of the weight).
- `llm-rubric` with a text `value` and no `prompt`: `AgentVFreeform`, as `evaluateFreeform`
  asks (DEFAULT_GRADER_TEMPLATE with the value as `{{ criteria }}`, the system prompt
  buildPromptfooRubricOutputSchema) and reads: a promptfoo-style result, else a `score`
  in [0, 1] (pass at 0.8).
- The question (`{{ input }}`, `[[ ## question ## ]]`) is formatting/prompt-builder.ts's
  buildPromptInputs: one message's text as it is; several messages (or any assistant or
  tool message) each as `@[Role]:` and its text, separated by a blank line; a file content
  part as its text in `<file path="PATH">` tags (formatSegment, mode 'lm').
- The reference answer (`{{ expected_output }}`, `[[ ## reference_answer ## ]]`) and the
  criteria are a test file row's `expected_output` and `criteria` (rows.py); a test
  without them has none (`vars.expected_output` is a var only, which an assertion's value
  may name).
- A reply that does not read is asked again up to three times, then once more with
  AgentV's repair prompt; after that the assertion is an error (AgentV skips the grader:
  it never scores it).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict

from ......evaluators.base import EvaluatorFailure
from ......evaluators.base import clip as clamp
from .....core.scoring_rules import AGENTV_PASS as PASS
from ....promptfoo.asserts.base import case_prompt, case_vars, output_string, render_text
from ....promptfoo.asserts.graded import Graded
from ...common.jsvalues import js_string
from ...common.judging import RUBRIC_FORMAT, V4_NAMES, substitute

if TYPE_CHECKING:
    from collections.abc import Callable

    from ......evaluators.base import Finding
    from ......evaluators.cases import Case, Output
    from ......evaluators.judging import EvalContext


# buildRubricOutputSchema
RUBRIC_SYSTEM = "\n".join(
    [
        "You are an expert grader. Evaluate the candidate answer against each rubric item.",
        "Be skeptical: mark a rubric satisfied only when concrete evidence supports it, and "
        "cite paths, diffs, tool calls, or answer excerpts in reasoning when available.",
        RUBRIC_FORMAT,
    ]
)
# buildPromptfooRubricOutputSchema
PROMPTFOO_SYSTEM = "\n".join(
    [
        "You must respond with a single JSON object matching this schema:",
        "",
        "{",
        '  "reason": "<brief explanation for the grading decision>",',
        '  "pass": <boolean>,',
        '  "score": <number between 0.0 and 1.0>,',
        '  "checks": [',
        "    {",
        '      "id": "<optional rubric id>",',
        '      "text": "<optional description of what was checked>",',
        '      "pass": <boolean>,',
        '      "score": <optional number between 0.0 and 1.0>,',
        '      "reason": "<brief explanation for this check>",',
        '      "evidence": "<optional supporting observation distinct from reason>"',
        "    }",
        "  ]",
        "}",
        "",
        'The "checks" array is optional. Return only JSON.',
    ]
)
DEFAULT_TEMPLATE = """You are an expert grader. Your goal is to grade the answer based on \
how well it achieves the criteria for the original task.

Use the reference_answer as a gold standard for a high-quality response (if provided). The \
reference_answer may be a simple text response, or it may contain a sequence of expected \
agent messages including tool calls. When it contains multiple messages, the last message \
represents the final expected answer. The answer does not need to match it verbatim, but \
should capture the key points and follow the same spirit.

Be skeptical. Award credit only for behavior supported by the answer, file_changes, \
tool_calls, or referenced workspace paths. When evaluating repo or file work, cite concrete \
paths, diffs, tool calls, or answer excerpts in each assertion's evidence whenever they are \
available. Do not infer hidden work from intent or plausible next steps.

Be concise and focused in your evaluation. Provide succinct, specific feedback rather than \
verbose explanations.

[[ ## criteria ## ]]
{{criteria}}

[[ ## question ## ]]
{{input}}

[[ ## reference_answer ## ]]
{{expected_output}}

[[ ## answer ## ]]
{{output}}"""
# template-variables.ts: the names a grader template may use
TEMPLATE_VARIABLES = frozenset({
    "input", "output", "expected_output", "criteria", "rubric", "metadata", "metadata_json",
    "rubrics", "rubrics_json", "file_changes", "tool_calls",
})  # fmt: skip
_TRUE = re.compile(r"(?i)true|yes|pass|y")
_PASSED = re.compile(r'("passed"\s*:\s*)(?:"([^"]+)"|([A-Za-z_][A-Za-z0-9_-]*))', re.IGNORECASE)


def has_variables(text: str) -> bool:
    """containsTemplateVariables (prompt-resolution.ts)."""
    return any(m.group(1) in TEMPLATE_VARIABLES for m in V4_NAMES.finditer(text))


def question(case: Case) -> str:
    """buildPromptInputs (mode 'lm'): the question as AgentV's grader quotes it, a file
    content part as its `<file>`-tagged text."""
    from ....promptfoo.cases import chat_messages
    from ..files import flat_question, joined, role_marked, segments, visible

    text = case_prompt(case)
    messages = chat_messages(text) or [{"role": "user", "content": text}]
    if not role_marked(messages):
        return flat_question(messages)
    marked = []
    for message in messages:
        parts = segments(message.get("content"))
        body = joined(parts)
        if visible(parts) and body:
            role = str(message["role"])
            marked.append(f"@[{role[:1].upper()}{role[1:]}]:\n{body}")
    return "\n\n".join(marked)


def variables(case: Case, output: Output, criteria: str) -> dict[str, str]:
    """buildTemplateVariables for an AgentV 4 test (no rubric list, metadata or trace)."""
    from ..rows import reference_answer

    meta = case.metadata.get("metadata") if isinstance(case.metadata, dict) else None
    return {
        "input": question(case).strip(),
        "output": output_string(output).strip(),
        "expected_output": reference_answer(case).strip(),
        "criteria": criteria.strip(),
        "rubric": criteria.strip(),
        "metadata": "" if not meta else json.dumps(meta, indent=2, ensure_ascii=False),
        "metadata_json": "" if not meta else json.dumps(meta, separators=(",", ":")),
        "rubrics": "",
        "rubrics_json": "",
        "file_changes": "",
        "tool_calls": "",
    }


def parse_json(reply: str) -> Any:
    """parseJsonFromText: fences dropped, the span from the first `{` to the last `}`,
    a `"passed"` that is no boolean read as one; ValueError when it is no JSON."""
    cleaned = re.sub(r"```json\n?|```", "", reply).strip()
    found = re.search(r"\{[\s\S]*\}", cleaned)
    blob = found.group(0) if found else cleaned

    def boolean(m: re.Match[str]) -> str:
        word = (m.group(2) or m.group(3) or "").strip().lower()
        return f"{m.group(1)}{'true' if word == 'true' else 'false'}"

    return json.loads(_PASSED.sub(boolean, blob))


def aggregate(value: Any) -> bool:
    """hasPromptfooAggregateFields: the reply is a promptfoo-style grading result."""
    return isinstance(value, dict) and (
        "pass" in value
        or "reason" in value
        or ("checks" in value and "overall_reasoning" not in value and "assertions" not in value)
    )


def _pass(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return True if value is None else _TRUE.fullmatch(str(value)) is not None


def _number(value: Any, passed: bool) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return clamp(float(value))
    if isinstance(value, bool):
        return float(value)
    try:
        number = float(str(value).strip() or "0") if value is not None else float("nan")
    except ValueError:
        number = float("nan")
    return clamp(number if number == number and abs(number) != float("inf") else float(passed))


def _check_pass(check: dict[str, Any]) -> bool:
    for key in ("pass", "passed", "satisfied"):
        if check.get(key) is not None:
            return _pass(check[key])
    if check.get("score") is not None:
        return _number(check["score"], False) >= PASS
    return False


def promptfoo_result(data: dict[str, Any], threshold: float | None) -> tuple[bool, float, str]:
    """normalizePromptfooGradingResult: (pass, score, reason)."""
    checks = data.get("checks")
    if checks is not None and not (
        isinstance(checks, list) and all(isinstance(c, dict) for c in checks)
    ):
        raise ValueError("'checks' is a list of objects")
    checks = checks or []
    passes = [_check_pass(c) for c in checks]
    if data.get("pass") is not None:
        raw_pass = _pass(data["pass"])
    else:
        raw_pass = all(passes) if checks else True
    if data.get("score") is not None:
        score = _number(data["score"], raw_pass)
    elif checks:
        score = sum(
            _number(c["score"], p) if c.get("score") is not None else float(p)
            for c, p in zip(checks, passes, strict=True)
        ) / len(checks)
    else:
        score = float(raw_pass)
    passed = raw_pass and score >= threshold if threshold is not None else raw_pass
    reason = str(data.get("reason") or "").strip()
    if not reason:
        if passed:
            reason = "Grading passed"
        elif threshold is not None and score < threshold:
            reason = f"Score {score:g} below threshold {threshold:g}"
        else:
            reason = "Grading failed"
    return passed, score, reason


def freeform_result(data: Any) -> tuple[bool, float, str]:
    """freeformEvaluationSchema: a `score` from 0 to 1 (pass at 0.8)."""
    score = data.get("score") if isinstance(data, dict) else None
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        raise ValueError("the reply needs 'score', a number from 0 to 1")
    listed = data.get("assertions")
    reason = json.dumps(listed[:8]) if isinstance(listed, list) else ""
    return score >= PASS, float(score), reason


def repair_prompt(error: str, reply: str) -> str:
    """buildStructureRepairPrompt."""
    return "\n".join([
        "The following evaluation response has useful grading content but invalid JSON "
        "structure.",
        "Repair it to satisfy the schema in the system prompt.",
        "Preserve the evaluation meaning, do not re-grade the answer, and return only a "
        "single JSON object.",
        "",
        "Validation error:",
        error,
        "",
        "Invalid response:",
        reply,
    ])  # fmt: skip


class AgentVJudged(Graded):
    """What AgentV's model-graded assertions share: asking, and reading the reply."""

    family: ClassVar[str] = "agentv4"

    async def ask_agentv(
        self,
        ev: EvalContext,
        case: Case,
        system: str,
        user: str,
        read: Callable[[Any], tuple[bool, float, str]],
    ) -> tuple[bool, float, str]:
        """runWithRetry: three asks, then one with the repair prompt; then an error."""
        model = self.judge(ev, case)
        error, reply = "no reply", ""
        for attempt in range(4):
            prompt = user if attempt < 3 else repair_prompt(error, reply)
            if attempt == 3 and not reply.strip():
                break
            # llm-providers.ts buildChatPrompt: both messages trimmed
            messages = [
                {"role": "system", "content": system.strip()},
                {"role": "user", "content": prompt.strip()},
            ]
            completion = await ev.complete(messages, model, sample=attempt)
            text = completion.text or ""
            try:
                return read(parse_json(text))
            except (ValueError, TypeError, KeyError) as exc:
                error = str(exc)
                if text.strip():
                    reply = text
        raise EvaluatorFailure(
            f"the grader's reply does not read as AgentV's verdict ({error}): "
            f"{reply.strip()[-300:]!r}"
        )


class Rubric(BaseModel):
    """One of AgentV's rubric items (types.ts RubricItem): a checklist item (`outcome`,
    `required`) or a criterion scored 0-10 by `score_ranges` ((low, high, outcome) each,
    its pass gated by `min_score`, 0-1); `operator` tells the judge how to read it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    outcome: str | None = None
    weight: float = 1.0
    required: bool = True
    min_score: float | None = None
    operator: str | None = None
    score_ranges: tuple[tuple[int, int, str], ...] | None = None

    def filled(self, variables: dict[str, Any]) -> Rubric:
        """Its texts with the test's vars filled in, as AgentV renders a test's whole
        `assert` over its vars before it reads the rubrics (yaml-parser.ts
        interpolateRawEvalCase)."""
        context = {"vars": variables, **variables}
        ranges = self.score_ranges and tuple(
            (low, high, render_text(text, context)) for low, high, text in self.score_ranges
        )
        return self.model_copy(update={
            "outcome": None if self.outcome is None else render_text(self.outcome, context),
            "score_ranges": ranges,
        })  # fmt: skip


# rubric-operators.ts: what the judge is told of each operator the rubrics use
OPERATOR_GUIDANCE = {
    "correctness": "Correctness: mark satisfied only when the answer positively supports or "
    "fulfills the outcome. Omission or contradiction should not satisfy it.",
    "contradiction": "Contradiction guard: mark satisfied when the answer does not make a claim "
    "that contradicts the outcome. Do not require the answer to mention the outcome; mark "
    "unsatisfied only for incompatible claims.",
}


def operator_guidance(items: tuple[Rubric, ...]) -> list[str]:
    """formatRubricOperatorGuidance: the guidance of each operator used, in first use order."""
    used = dict.fromkeys(i.operator for i in items if i.operator)
    return [OPERATOR_GUIDANCE[o] for o in used]


def weight_label(item: Rubric) -> str:
    """` (weight: W)` for a weight other than 1, W as JavaScript prints the number."""
    return f" (weight: {js_string(item.weight)})" if item.weight != 1 else ""


def graded_sections(case: Case, output: Output, criteria: str) -> list[str]:
    """What AgentV's rubric and score-range prompts both give the judge (llm-grader.ts
    buildRubricPrompt, buildScoreRangePrompt): the question, the criteria, the test's
    reference answer when it has one (rows.py), the answer."""
    from .. import rows as agentv_rows

    reference = agentv_rows.reference_answer(case)
    return [
        "[[ ## question ## ]]", question(case), "",
        "[[ ## criteria ## ]]", criteria, "",
        *(["[[ ## reference_answer ## ]]", reference, ""] if reference.strip() else []),
        "[[ ## answer ## ]]", output_string(output), "",
    ]  # fmt: skip


class AgentVChecklist(AgentVJudged):
    """Rubrics written as text, gathered into one llm-rubric (its `value` the list)."""

    rubrics: tuple[str, ...] = ()
    rubric_id: str = "rubric"  # AgentV names a conversation turn's `criterion-N`
    required_rubrics: bool = True  # a conversation turn's are not
    # AgentV's structured rubrics (id, outcome, weight, required, operator), when given as
    # objects (rubrics.py)
    items: tuple[Rubric, ...] = ()
    # the texts hold the test's templates still (a conversation's turns come rendered)
    templated: bool = True

    def listed(self, case: Case | None = None) -> tuple[Rubric, ...]:
        """Each rubric, its texts filled from the case's vars when `case` is given."""
        items = self.items or tuple(
            Rubric(id=f"{self.rubric_id}-{i}", outcome=text, required=self.required_rubrics)
            for i, text in enumerate(self.rubrics, 1)
        )
        if case is None or not self.templated:
            return items
        variables = case_vars(case)
        return tuple(i.filled(variables) for i in items)

    def prompt(self, case: Case, output: Output) -> str:
        """buildRubricPrompt (no file changes or tool calls)."""
        from .. import rows as agentv_rows

        listed = self.listed(case)
        parts = [
            "You are an expert grader. Evaluate the candidate answer against each rubric item "
            "below.",
            "Be skeptical: mark a rubric satisfied only when the answer, file changes, tool "
            "calls, or concrete workspace paths support it.",
            "Cite paths, diffs, tool calls, or answer excerpts in reasoning whenever they are "
            "available.",
            "",
            *graded_sections(case, output, agentv_rows.criteria(case)),
            "[[ ## rubrics ## ]]",
        ]
        guidance = operator_guidance(listed)
        if guidance:
            parts += ["", "Operator guidance:", *(f"- {g}" for g in guidance), ""]
        parts += [
            f"- [{i.id}]{' (REQUIRED)' if i.required else ''}{weight_label(i)}"
            f"{f' (operator: {i.operator})' if i.operator else ''}: {i.outcome}"
            for i in listed
        ]
        parts += ["", "For each rubric, determine if it is satisfied and provide brief reasoning."]
        return "\n".join(parts)

    def read(self, data: Any) -> tuple[bool, float, str]:
        if aggregate(data):
            return promptfoo_result(data, None)
        if not isinstance(data, dict) or not isinstance(data.get("overall_reasoning"), str):
            raise ValueError("the reply needs 'checks' and 'overall_reasoning'")
        checks = data.get("checks")
        if not isinstance(checks, list) or not all(
            isinstance(c, dict)
            and isinstance(c.get("id"), str)
            and isinstance(c.get("satisfied"), bool)
            and isinstance(c.get("reasoning"), str)
            for c in checks
        ):
            raise ValueError("each check needs 'id', 'satisfied' (true/false) and 'reasoning'")
        # calculateRubricScore: the satisfied rubrics' share of the weight of those answered
        rubrics = {i.id: i for i in self.listed()}
        known = [c for c in checks if c["id"] in rubrics]
        total = sum(rubrics[c["id"]].weight for c in known)
        earned = sum(rubrics[c["id"]].weight for c in known if c["satisfied"])
        score = clamp(earned / total) if total > 0 else 0.0
        failed = any(rubrics[c["id"]].required and not c["satisfied"] for c in known)
        return not failed and score >= PASS, score, data["overall_reasoning"]

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        passed, score, reason = await self.ask_agentv(
            ev, case, RUBRIC_SYSTEM, self.prompt(case, output), self.read
        )
        return self.result(passed, score, reason)


class AgentVFreeform(AgentVJudged):
    """`llm-rubric` with a value (the criteria) and no prompt of its own; or with a prompt
    (`template`: a grader template, or bare text that becomes the criteria)."""

    template: str | None = None
    from_file: bool = False  # a prompt file: always the whole template
    own_threshold: float | None = None  # the entry's `threshold` (AgentV: config.threshold)

    def read(self, data: Any) -> tuple[bool, float, str]:
        if aggregate(data):
            limit = self.own_threshold if self.own_threshold is not None else self.min_score
            return promptfoo_result(data, limit)
        return freeform_result(data)

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        from .. import rows as agentv_rows

        value = self.rendered(case)
        criteria = (
            agentv_rows.criteria(case) if value is None  # the test's own (rows.py)
            else value if isinstance(value, str)
            else json.dumps(value, indent=2, ensure_ascii=False)
        )  # fmt: skip
        template = self.template
        if template is not None and not self.from_file and not has_variables(template):
            criteria, template = template, None  # bare text: the criteria (#982)
        # substituteVariables
        user = substitute(template or DEFAULT_TEMPLATE, variables(case, output, criteria),
                          V4_NAMES)  # fmt: skip
        passed, score, reason = await self.ask_agentv(ev, case, PROMPTFOO_SYSTEM, user, self.read)
        return self.result(passed, score, reason)

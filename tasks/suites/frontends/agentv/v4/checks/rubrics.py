"""AgentV 4's structured rubrics: an `llm-rubric` whose `value` lists rubric items, as
loaders/grader-parser.ts reads them and graders/llm-grader.ts grades them (commit 58f316c).

Reading (normalizeStructuredRubricValue, normalizeRubricCriteria, parseRubricItems):

- a list with at least one text or rubric object: each text a required item `rubric-N`,
  each object an item (`id`, default `rubric-N`; `outcome` or `criteria`; `weight`, default
  1; `required`, default true; `min_score`, in (0, 1]; `operator`, `correctness` or
  `contradiction`; `score_ranges`). A list of anything else is no rubric list: the value is
  the criteria of the free-form judge, as AgentV takes it;
- one rubric object (`outcome`, or `score_ranges`, or `criteria` text beside an `id`,
  `weight`, `required`, `min_score` or `operator`) as a list of one; its `criteria` text
  (or `rubrics` list) beside other keys is read as AgentV reads it, the object's `weight`,
  `required`, `min_score`, `score_ranges` and `operator` going to the nested items (the
  object's own `id` is not kept: the item is `rubric-1`);
- a text value beside the assertion's own `score_ranges`: one criterion `rubric-1` with
  that text, the assertion's `weight`, `min_score` and `operator`.

`score_ranges` is a list of `{score_range: [low, high], outcome}` or a map from each
band's lowest score to its outcome (`{0: Poor, 5: Good}`: 0-4 and 5-10); together the bands
cover 0 to 10 once each. A rubric's `required_min_score` is refused, as AgentV refuses it.
Where AgentV skips an item with a warning (an object with no outcome, an operator it does not
know) or passes over a key (`required` on a criterion with score ranges), accord refuses
the file at the assertion's line, saying what to write.

Grading: when any item has score ranges, every item is a criterion the judge scores 0 to
10 (`AgentVScoreRanges`: buildScoreRangePrompt, buildScoreRangeOutputSchema), read as
scoreRangeEvaluationSchema (`checks` of `{id, score: an integer 0-10, reasoning?}`) and
scored by calculateScoreRangeResult: the weighted mean of score/10 over the criteria
answered; a criterion below its `min_score` fails the grader. Otherwise the items are a
checklist (agentv_judge.AgentVChecklist). Operators only change what the judge is told: a
label on the item and AgentV's guidance for each operator used. A reply that does not read
is asked again as for every AgentV judge, then is an error, never a score.
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

from .......engine.errors import ConfigError
from ......evaluators.base import clip as clamp
from .....core.scoring_rules import AGENTV_PASS as PASS
from ....promptfoo.asserts.base import case_vars
from ...common.jsvalues import js_string
from .judge import (
    OPERATOR_GUIDANCE,
    AgentVJudged,
    Rubric,
    graded_sections,
    operator_guidance,
    weight_label,
)

if TYPE_CHECKING:
    from ......evaluators.base import Finding
    from ......evaluators.cases import Case, Output
    from ......evaluators.judging import EvalContext

ITEM_KEYS = ("id", "outcome", "criteria", "weight", "required", "min_score", "operator",
             "score_ranges")  # fmt: skip
_NESTED = ("criteria", "rubrics", "rubric_item", "rubricItem")


def _is_rubric_object(value: Any) -> bool:
    """isStructuredRubricObject."""
    if not isinstance(value, dict):
        return False
    if isinstance(value.get("outcome"), str) or value.get("score_ranges") is not None:
        return True
    return isinstance(value.get("criteria"), str) and any(
        value.get(k) is not None for k in ("id", "weight", "required", "min_score", "operator")
    )


def structured(value: Any, entry: dict[str, Any], where: str) -> tuple[Rubric, ...] | None:
    """The rubric items an llm-rubric's `value` lists (with the assertion `entry`'s
    `score_ranges` beside a text value), or None when the value lists none."""
    raw: list[Any] | None = None
    if isinstance(value, list):
        if value and any(isinstance(v, str) or _is_rubric_object(v) for v in value):
            raw = _normalized(value, None)
    elif isinstance(value, str):
        if entry.get("score_ranges") is not None:
            raw = _normalized(value, entry)
    elif _is_rubric_object(value):
        raw = _normalized(value, entry)
    if raw is None:
        return None
    return tuple(_item(r, i, where) for i, r in enumerate(raw, 1))


def _normalized(raw: Any, fallback: dict[str, Any] | None) -> list[Any] | None:
    """normalizeRubricCriteria: the raw items, texts made objects."""
    fallback = fallback or {}
    if isinstance(raw, str):
        item: dict[str, Any] = {"id": "rubric-1", "outcome": raw}
        for key in ("weight", "required", "min_score", "score_ranges", "operator"):
            # the assertion's `required` is its own gate; an item with score ranges keeps
            # none (parseRubricItems)
            if fallback.get(key) is not None and not (
                key == "required" and fallback.get("score_ranges") is not None
            ):
                item[key] = fallback[key]
        return [item]
    if isinstance(raw, list):
        return [
            {"id": f"rubric-{i}", "outcome": r, "weight": 1.0, "required": True}
            if isinstance(r, str)
            else r
            for i, r in enumerate(raw, 1)
        ]
    if isinstance(raw, dict):
        nested = next((raw[k] for k in _NESTED if raw.get(k) is not None), None)
        return [raw] if nested is None else _normalized(nested, raw)
    if fallback.get("score_ranges") is not None:
        outcome = next((fallback[k] for k in ("criteria", "value", "outcome")
                        if isinstance(fallback.get(k), str)), None)  # fmt: skip
        item = {"id": fallback.get("id") or "rubric-1", "score_ranges": fallback["score_ranges"]}
        for key in ("weight", "min_score", "operator"):
            if fallback.get(key) is not None:
                item[key] = fallback[key]
        return [item] if outcome is None else [{**item, "outcome": outcome}]
    return None


def _item(raw: Any, index: int, where: str) -> Rubric:
    """parseRubricItems, for one item."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: rubric {index} is neither text nor a mapping with an "
                          "'outcome' (AgentV skips it): write it as text, or remove "
                          "it")  # fmt: skip
    rid = raw.get("id")
    rid = rid if isinstance(rid, str) else f"rubric-{index}"
    at = f"{where}: rubric '{rid}'"
    if "required_min_score" in raw:
        raise ConfigError(f"{at}: 'required_min_score' was removed from AgentV: use 'min_score' "
                          "(0-1 scale) instead")  # fmt: skip
    extra = sorted(set(raw) - set(ITEM_KEYS))
    if extra:
        raise ConfigError(f"{at}: unknown key '{extra[0]}': a rubric's keys are "
                          f"{', '.join(ITEM_KEYS)}")  # fmt: skip
    outcome = next((raw[k] for k in ("outcome", "criteria") if isinstance(raw.get(k), str)), "")
    weight = raw.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, int | float):
        raise ConfigError(f"{at}: 'weight' is a number")
    minimum = raw.get("min_score")
    if minimum is not None and (
        isinstance(minimum, bool) or not isinstance(minimum, int | float) or not 0 < minimum <= 1
    ):
        raise ConfigError(f"{at}: 'min_score' is a number in (0, 1] (score/10 must reach it), "
                          f"not {minimum!r}")  # fmt: skip
    required = raw.get("required")
    if required is not None and not isinstance(required, bool):
        raise ConfigError(f"{at}: 'required' is true or false")
    operator = raw.get("operator")
    if operator is not None and operator not in OPERATOR_GUIDANCE:
        raise ConfigError(f"{at}: 'operator' is one of {', '.join(OPERATOR_GUIDANCE)} "
                          f"(AgentV ignores {operator!r} with a warning): fix or remove "
                          "it")  # fmt: skip
    common: dict[str, Any] = {
        "id": rid, "weight": float(weight), "operator": operator,
        "min_score": None if minimum is None else float(minimum),
    }  # fmt: skip
    if raw.get("score_ranges") is not None:
        if required is not None:
            # AgentV keeps no `required` on a criterion with score ranges
            raise ConfigError(f"{at}: a rubric with score_ranges passes by 'min_score' (0-1), "
                              "not 'required' (AgentV ignores it): use min_score")  # fmt: skip
        ranges = score_ranges(raw["score_ranges"], at)
        return Rubric(**common, outcome=outcome or None, score_ranges=ranges)
    if not outcome:
        raise ConfigError(f"{at}: a rubric needs an 'outcome' (AgentV skips one without): "
                          "write it, or remove the rubric")  # fmt: skip
    return Rubric(**common, outcome=outcome, required=True if required is None else required)


def score_ranges(raw: Any, at: str) -> tuple[tuple[int, int, str], ...]:
    """normalizeScoreRangesShorthand and parseScoreRanges: the bands, as written (a
    shorthand map in the order of its scores), covering 0 to 10 once each."""
    if isinstance(raw, dict):
        raw = _shorthand(raw, at)
    if not isinstance(raw, list):
        raise ConfigError(f"{at}: score_ranges is a list of {{score_range: [low, high], "
                          "outcome}, or a map from each band's lowest score to its "
                          "outcome")  # fmt: skip
    bands: list[tuple[int, int, str]] = []
    for index, entry in enumerate(raw):
        span = entry.get("score_range") if isinstance(entry, dict) else None
        if not (
            isinstance(span, list)
            and len(span) == 2
            and all(isinstance(v, int | float) and not isinstance(v, bool) for v in span)
        ):
            raise ConfigError(f"{at}: score_ranges[{index}] needs 'score_range': [low, high], "
                              "two numbers")  # fmt: skip
        low, high = span
        if not (float(low).is_integer() and float(high).is_integer()):
            raise ConfigError(f"{at}: score_ranges[{index}]: the scores are whole numbers")
        if not (0 <= low <= 10 and 0 <= high <= 10) or low > high:
            raise ConfigError(f"{at}: score_ranges[{index}]: [low, high] with "
                              "0 <= low <= high <= 10")  # fmt: skip
        outcome = entry.get("outcome")
        if not isinstance(outcome, str) or not outcome:
            raise ConfigError(f"{at}: score_ranges[{index}] needs an 'outcome'")
        bands.append((int(low), int(high), outcome))
    ordered = sorted(bands)
    for before, after in itertools.pairwise(ordered):
        if after[0] <= before[1]:
            raise ConfigError(f"{at}: score_ranges [{before[0]}, {before[1]}] and "
                              f"[{after[0]}, {after[1]}] overlap")  # fmt: skip
    covered = {s for low, high, _o in bands for s in range(low, high + 1)}
    missing = [str(s) for s in range(11) if s not in covered]
    if missing:
        raise ConfigError(f"{at}: score_ranges cover no band for {', '.join(missing)}: they "
                          "must cover every score from 0 to 10")  # fmt: skip
    return tuple(bands)


def _shorthand(raw: dict[Any, Any], at: str) -> list[dict[str, Any]] | dict[Any, Any]:
    """`{0: Poor, 5: Good}` as bands: each key the lowest score of its band, the band
    running to the next key (the last to 10). A map of other keys stays as it is (and is
    refused by the caller)."""
    lows: list[int] = []
    for key, text in raw.items():
        number = key if isinstance(key, int) and not isinstance(key, bool) else None
        if isinstance(key, str) and key.strip().lstrip("-").isdigit():
            number = int(key)
        if number is None or not 0 <= number <= 10 or not isinstance(text, str) or not text:
            return raw
        lows.append(number)
    if not lows:
        return raw
    lows.sort()
    if lows[0] != 0:
        raise ConfigError(f"{at}: a score_ranges map starts at 0 (its lowest key is {lows[0]})")
    texts = {(k if isinstance(k, int) else int(k)): v for k, v in raw.items()}
    return [
        {"score_range": [low, lows[i + 1] - 1 if i + 1 < len(lows) else 10], "outcome": texts[low]}
        for i, low in enumerate(lows)
    ]


# buildScoreRangeFormatInstructions and buildScoreRangeOutputSchema
SCORE_RANGE_FORMAT = """You must return a valid JSON object matching this schema:
{
  "checks": [
    {
      "id": "string (criterion id)",
      "score": integer (0-10),
      "reasoning": "string (brief explanation for score)"
    }
  ],
  "overall_reasoning": "string (summary, optional)"
}

Important: The "score" must be an integer from 0 to 10 that falls within one of the defined \
score ranges for that criterion."""
SCORE_RANGE_SYSTEM = "\n".join([
    "You are an expert grader. Score the candidate answer on each criterion.",
    "Be skeptical: award credit only for concrete evidence, and cite paths, diffs, tool calls, "
    "or answer excerpts in reasoning when available.",
    SCORE_RANGE_FORMAT,
])  # fmt: skip


class AgentVScoreRanges(AgentVJudged):
    """Rubric items of which at least one has score ranges: each scored 0-10 by the judge;
    `value`, when it is text, is what the prompt gives as the criteria."""

    items: tuple[Rubric, ...] = ()

    def prompt(self, case: Case, output: Output) -> str:
        """buildScoreRangePrompt (no file changes or tool calls)."""
        from .. import rows as agentv_rows

        variables = case_vars(case)
        items = tuple(i.filled(variables) for i in self.items)
        # a text value is the case's criteria (builtin-graders.ts llmGraderFactory), else
        # the test's own (rows.py)
        criteria = (
            self.rendered(case) if isinstance(self.value, str) else agentv_rows.criteria(case)
        )
        parts = [
            "You are an expert grader. Score the candidate answer on each criterion below "
            "using the provided score ranges.",
            "For each criterion, output an integer score from 0 to 10 based on which score "
            "range best matches the answer.",
            "Be skeptical: award credit only for evidence supported by the answer, file "
            "changes, tool calls, or concrete workspace paths.",
            "Cite paths, diffs, tool calls, or answer excerpts in reasoning whenever they are "
            "available.",
            "",
            *graded_sections(case, output, criteria),
            "[[ ## scoring_criteria ## ]]",
        ]
        for item in items:
            floor = item.min_score
            gate = "" if floor is None else f" [REQUIRED: min score {js_string(floor)}]"
            parts += ["", f"### Criterion: {item.id}{weight_label(item)}{gate}"]
            if item.operator:
                parts.append(f"Operator: {item.operator}")
            if item.outcome:
                parts.append(f"Description: {item.outcome}")
            if item.score_ranges:
                parts.append("Score ranges:")
                parts += [
                    f"  - Score {low if low == high else f'{low}-{high}'}: {text}"
                    for low, high, text in item.score_ranges
                ]
        guidance = operator_guidance(items)
        if guidance:
            parts += ["", *guidance]
        parts += ["", "For each criterion, provide an integer score 0-10 that matches one of "
                  "its defined score ranges."]  # fmt: skip
        return "\n".join(parts)

    def read(self, data: Any) -> tuple[bool, float, str]:
        """scoreRangeEvaluationSchema, then calculateScoreRangeResult."""
        if not isinstance(data, dict) or not isinstance(data.get("checks"), list):
            raise ValueError("the reply needs 'checks': a list of {id, score, reasoning}")
        overall = data.get("overall_reasoning")
        if "overall_reasoning" in data and not isinstance(overall, str):
            raise ValueError("'overall_reasoning' is text")
        for check in data["checks"]:
            score = check.get("score") if isinstance(check, dict) else None
            if not (
                isinstance(check, dict)
                and isinstance(check.get("id"), str)
                and isinstance(score, int | float)
                and not isinstance(score, bool)
                and float(score).is_integer()
                and 0 <= score <= 10
                and isinstance(check.get("reasoning", ""), str)
            ):
                raise ValueError(
                    "each check needs 'id', 'score' (a whole number from 0 to 10) and "
                    f"'reasoning' (text): {json.dumps(check)[:200]}"
                )
        rubrics = {i.id: i for i in self.items}
        total = weighted = 0.0
        failed = False
        lines = []
        for check in data["checks"]:
            item = rubrics.get(check["id"])
            if item is None:
                continue  # AgentV passes over a check of no criterion
            raw = int(check["score"])
            total += item.weight
            weighted += item.weight * raw / 10
            below = item.min_score is not None and raw / 10 < item.min_score
            failed = failed or below
            band = next((t for low, high, t in item.score_ranges or () if low <= raw <= high), "")
            line = f"[{item.id}] {item.outcome or item.id} - Score: {raw}/10 ({band})"
            reasoning = check.get("reasoning")
            lines.append(f"{line}: {reasoning}" if reasoning else line)
        score = clamp(weighted / total) if total > 0 else 0.0
        reason = "; ".join([*lines, *([overall] if overall else [])])
        return not failed and score >= PASS, score, reason

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        passed, score, reason = await self.ask_agentv(
            ev, case, SCORE_RANGE_SYSTEM, self.prompt(case, output), self.read
        )
        return self.result(passed, score, reason)

"""AgentV's checks that need no judge: tool trajectories, fields of a JSON answer, what the
target spent (latency, cost, tokens) and text checks."""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from ......engine.specbase import Spec
from .....evaluators.base import EvaluatorFailure, Finding
from .....evaluators.deterministic import regex_pattern
from ..common.jsvalues import js_equal, js_string, parse_date
from .cases import AgentVCase
from .evaluators import AgentVEvaluator, agentv, agentv_case

if TYPE_CHECKING:
    from .....evaluators.cases import Case, Output
    from .....evaluators.judging import EvalContext

# --- traces -----------------------------------------------------------------------------------


class ExpectedTool(Spec):
    """An expected call: AgentV reads `tool` and `args` and ignores the rest of the item
    (`input:`, `output:` in its examples), so accord does too."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)
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
        if exact and len(calls) != len(expected):
            # AgentV's evaluateExact notes the count but scores the expected positions only
            misses.insert(0, f"expected {len(expected)} tool calls, got {len(calls)}")
        return self.scored(met / checked if checked else 1.0, hits, misses)


# --- structured answers, spend ----------------------------------------------------------------


class FieldSpec(Spec):
    path: str = Field(min_length=1, description="Dotted path; list items a.0.b or a[0].b.")
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


def value_at(data: Any, path: str) -> Any:
    """The value at a dotted path with list items by number, `a.0.b` or `a[0].b` (AgentV's
    resolvePath); `_MISSING` when there is none."""
    for part in (p for p in re.split(r"[.\[\]]", path) if p):
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return _MISSING
    return data


_FLOAT_PREFIX = re.compile(r"\s*([+-]?(?:Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?))")


def _number(value: Any) -> float | None:
    """A number as AgentV's toNumber reads it: numbers as they are, text by JavaScript's
    parseFloat (its leading number: `"12.5 USD"` is 12.5, `"1,234"` is 1), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        return None
    match = _FLOAT_PREFIX.match(value)
    return float(match.group(1).replace("Infinity", "inf")) if match else None


@agentv("field_accuracy")
class FieldAccuracy(AgentVEvaluator):
    """Fields of a JSON answer against the expected object: `exact`, `numeric_tolerance`
    (absolute, or `relative`), `date` (the same calendar day, read as AgentV's parseDate reads
    it: jsvalues.py; `formats` only tell month-first from day-first); scored by
    `weighted_average` of the fields or `all_or_nothing`."""

    type: Literal["field_accuracy"] = "field_accuracy"
    fields: list[FieldSpec] = Field(min_length=1)
    aggregation: Literal["weighted_average", "all_or_nothing"] = "weighted_average"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        from .....evaluators.judging import json_object

        test = agentv_case(case)
        answer = output.value if isinstance(output.value, dict) else json_object(output.text)
        if not isinstance(answer, dict):
            return self.scored(0.0, [], ["the answer is not a JSON object"])
        expected = _expected_object(test)
        if expected is None:
            raise EvaluatorFailure("the case's expected_output holds no JSON object to compare")
        # AgentV's FieldAccuracyEvaluator: a field with nothing expected scores 1 at its
        # weight; a missing optional one weighs 0; a missing required one scores 0
        results: list[tuple[float, float, bool, str]] = []
        for spec in self.fields:
            want, got = value_at(expected, spec.path), value_at(answer, spec.path)
            if want is _MISSING:
                results.append((1.0, spec.weight, True, f"{spec.path}: no expected value"))
            elif got is _MISSING:
                if spec.required:
                    results.append((0.0, spec.weight, False, f"{spec.path}: missing (required)"))
                else:
                    results.append((1.0, 0.0, True, f"{spec.path}: optional field missing"))
            else:
                ok, why = _compare(spec, want, got)
                line = f"{spec.path}{': ' + why if why else ''}"
                results.append((1.0 if ok else 0.0, spec.weight, ok, line))
        hits = [line for _s, _w, ok, line in results if ok]
        misses = [line for _s, _w, ok, line in results if not ok]
        total = sum(weight for _s, weight, _ok, _line in results)
        if self.aggregation == "all_or_nothing":
            score = 0.0 if misses else 1.0
        elif total == 0:
            score = 0.0 if results else 1.0
        else:
            score = sum(s * weight for s, weight, _ok, _line in results) / total
        return self.scored(score, hits, misses, f"{len(hits)}/{len(results)} fields matched")


def _compare(spec: FieldSpec, want: Any, got: Any) -> tuple[bool, str]:
    if spec.match == "exact":  # AgentV's deepEqual: `true` is not `1`
        return (True, "") if js_equal(want, got) else (False, f"expected {want!r}, got {got!r}")
    if spec.match == "numeric_tolerance":
        a, b = _number(got), _number(want)
        if a is None or b is None:
            return False, f"not a number: {got!r}"
        if not (math.isfinite(a) and math.isfinite(b)):
            return False, f"not a finite number: {got!r}"
        diff = abs(a - b)
        # AgentV: |actual - expected| / |expected| <= tolerance, the plain difference at 0
        measured = diff / abs(b) if spec.relative and b != 0 else diff
        ok = measured <= spec.tolerance
        return ok, f"difference {diff:.2f} (tolerance {spec.tolerance:g})"
    # AgentV: `fieldConfig.formats ?? DEFAULT_DATE_FORMATS` (an empty list stays empty), and
    # each value through JavaScript's String()
    formats = spec.formats if spec.formats is not None else list(DATE_FORMATS)
    a_date, b_date = parse_date(js_string(got), formats), parse_date(js_string(want), formats)
    if a_date is None:
        return False, f"not a date: {got!r}"
    if b_date is None:
        return False, f"expected value is not a date: {want!r}"
    same = a_date == b_date
    return same, "" if same else f"{a_date} is not {b_date}"


def _expected_object(case: AgentVCase) -> dict[str, Any] | None:
    from .....evaluators.judging import json_object

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
    own_threshold: ClassVar[bool] = True
    threshold: float = Field(  # type: ignore[assignment]
        ge=0, allow_inf_nan=False, description="Milliseconds."
    )

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        took = output.duration_ms if output.duration_ms is not None else output.seconds * 1000
        line = f"took {took:.0f} ms (threshold {self.threshold:g} ms)"
        ok = took <= self.threshold
        return self.checked(ok, line)


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
        return self.checked(ok, line)


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
        return self.checked(ok, line)


@agentv("ends_with")
class EndsWith(_TextCheck):
    """The answer ends with `value` (trailing whitespace ignored)."""

    type: Literal["ends_with"] = "ends_with"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        (value,) = self.values(case)[:1]
        ok = output.text.rstrip().endswith(value)
        line = f"{'ends' if ok else 'does not end'} with {value!r}"
        return self.checked(ok, line)


@agentv("equals")
class Equals(_TextCheck):
    """The answer equals `value` (default: the expected output), surrounding whitespace
    ignored."""

    type: Literal["equals"] = "equals"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        (value,) = self.values(case)[:1]
        ok = output.text.strip() == value.strip()
        line = "equals the expected text" if ok else f"differs from {value[:80]!r}"
        return self.checked(ok, line)


@agentv("regex")
class Regex(AgentVEvaluator):
    """The answer matches the regular expression `value` (searched anywhere)."""

    type: Literal["regex"] = "regex"
    value: str = Field(description="The pattern (Python syntax).")
    flags: str = Field("", description="i: ignore case, m: multiline, s: dot matches newline.")

    @field_validator("value")
    @classmethod
    def _compiles(cls, value: str) -> str:
        return regex_pattern(value)

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        flags = 0
        for letter, flag in (("i", re.I), ("m", re.M), ("s", re.S)):
            flags |= flag if letter in self.flags else 0
        match = re.search(self.value, output.text, flags)
        line = f"matches /{self.value}/" if match else f"does not match /{self.value}/"
        return self.checked(match is not None, line)


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

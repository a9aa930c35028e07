"""Evaluators that never call a model: string, JSON, number and tool-call checks.

Each scores 1 or 0 (`tool_calls`: the share of expected calls made) with the default
threshold `gte: 1`. Where a value to compare with is not written on the evaluator, it comes
from the case's `expected`.
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, field_validator, model_validator

from ...engine.specbase import Spec
from .base import EvaluatorFailure, EvaluatorSpec, Finding, evaluator

if TYPE_CHECKING:
    from .cases import Case, Output
    from .judging import EvalContext


def _expected_text(case: Case, what: str) -> str:
    text = case.expected_text
    if text is None:
        raise EvaluatorFailure(f"no {what} to compare with: give 'value' or the case's 'expected'")
    return text


def _expected_list(case: Case, what: str) -> list[str]:
    if isinstance(case.expected, list) and all(isinstance(v, str) for v in case.expected):
        return list(case.expected)
    if isinstance(case.expected, str):
        return [case.expected]
    raise EvaluatorFailure(
        f"no {what} to look for: give 'values' or a case 'expected' that is a list of strings"
    )


def _fold(text: str, case_sensitive: bool) -> str:
    return text if case_sensitive else text.casefold()


@evaluator("equals")
class Equals(EvaluatorSpec):
    """The output equals `value` (default: the case's expected output), case-sensitive."""

    portable: ClassVar[bool] = True

    type: Literal["equals"] = "equals"
    value: str | None = Field(None, description="The exact expected output.")
    strip: bool = Field(False, description="Ignore leading and trailing whitespace.")

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        expected = self.value if self.value is not None else _expected_text(case, "expected output")
        actual = output.text
        if self.strip:
            expected, actual = expected.strip(), actual.strip()
        if actual == expected:
            return self.finding(1.0, "equal")
        return self.finding(
            0.0,
            "not equal",
            metadata={"expected_output": expected, "actual_output": actual},
        )


@evaluator("is_json")
class IsJson(EvaluatorSpec):
    """The output is valid JSON."""

    portable: ClassVar[bool] = True

    type: Literal["is_json"] = "is_json"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        try:
            json.loads(output.text)
        except ValueError as exc:
            return self.finding(0.0, f"not valid JSON: {exc}", metadata={"error": str(exc)})
        return self.finding(1.0, "valid JSON")


class _Substrings(EvaluatorSpec):
    values: list[str] | None = Field(None, description="Substrings (default: the case's expected).")
    case_sensitive: bool = Field(True, description="Compare letter case too.")

    def _found(self, case: Case, output: Output) -> tuple[list[str], list[str]]:
        values = self.values if self.values is not None else _expected_list(case, "substrings")
        text = _fold(output.text, self.case_sensitive)
        present = [v for v in values if _fold(v, self.case_sensitive) in text]
        return present, [v for v in values if v not in present]


@evaluator("contains_all")
class ContainsAll(_Substrings):
    """Every substring appears in the output; the missing ones are named."""

    portable: ClassVar[bool] = True

    type: Literal["contains_all"] = "contains_all"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        _present, missing = self._found(case, output)
        reason = f"missing: {', '.join(map(repr, missing))}" if missing else "all present"
        return self.finding(
            0.0 if missing else 1.0, reason, metadata={"missing_substrings": missing}
        )


@evaluator("contains_any")
class ContainsAny(_Substrings):
    """At least one substring appears in the output."""

    type: Literal["contains_any"] = "contains_any"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        present, _missing = self._found(case, output)
        reason = f"found {present[0]!r}" if present else "none of them appears"
        return self.finding(1.0 if present else 0.0, reason)


@evaluator("contains")
class Contains(EvaluatorSpec):
    """`value` (default: the case's expected output) appears in the output."""

    portable: ClassVar[bool] = True

    type: Literal["contains"] = "contains"
    value: str | None = Field(None, description="The substring.")
    case_sensitive: bool = Field(True, description="Compare letter case too.")

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        value = self.value if self.value is not None else _expected_text(case, "substring")
        found = _fold(value, self.case_sensitive) in _fold(output.text, self.case_sensitive)
        return self.finding(1.0 if found else 0.0, f"{value!r} {'found' if found else 'not found'}")


@evaluator("not_contains")
class NotContains(_Substrings):
    """None of the substrings appears in the output."""

    type: Literal["not_contains"] = "not_contains"
    value: str | None = Field(None, description="One substring (or give 'values').")

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        if self.value is not None:
            values = [self.value, *(self.values or [])]
            spec = self.model_copy(update={"values": values})
            present, _ = spec._found(case, output)
        else:
            present, _ = self._found(case, output)
        reason = f"found {', '.join(map(repr, present))}" if present else "none found"
        return self.finding(0.0 if present else 1.0, reason)


def regex_pattern(value: str) -> str:
    """A pattern that compiles, else the ValueError a validator reports at its line."""
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression: {exc}") from None
    return value


@evaluator("regex")
class Regex(EvaluatorSpec):
    """The output matches `pattern` (Python syntax, searched anywhere)."""

    portable: ClassVar[bool] = True

    type: Literal["regex"] = "regex"
    pattern: str = Field(description="The regular expression.")
    ignore_case: bool = False
    full: bool = Field(False, description="The whole output must match.")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        return regex_pattern(value)

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        flags = re.IGNORECASE if self.ignore_case else 0
        search = re.fullmatch if self.full else re.search
        match = search(self.pattern, output.text, flags)
        reason = f"matched {match.group(0)[:80]!r}" if match else f"no match for /{self.pattern}/"
        return self.finding(1.0 if match else 0.0, reason)


@evaluator("json_schema")
class JsonSchema(EvaluatorSpec):
    """The output is JSON valid against `schema` (JSON Schema)."""

    portable: ClassVar[bool] = True

    type: Literal["json_schema"] = "json_schema"
    json_schema: dict[str, Any] = Field(alias="schema", description="The JSON Schema.")

    @field_validator("json_schema")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        import jsonschema

        try:
            jsonschema.validators.validator_for(value).check_schema(value)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"not a valid JSON Schema: {exc.message}") from None
        return value

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        import jsonschema

        try:
            data = json.loads(output.text)
        except ValueError as exc:
            return self.finding(0.0, f"not valid JSON: {exc}")
        validator = jsonschema.validators.validator_for(self.json_schema)(self.json_schema)
        errors = sorted(validator.iter_errors(data), key=lambda e: list(e.path))
        if not errors:
            return self.finding(1.0, "matches the schema")
        first = errors[0]
        where = "/".join(str(p) for p in first.path) or "(root)"
        return self.finding(0.0, f"{where}: {first.message}", metadata={"errors": len(errors)})


_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")


def first_number(text: str) -> float | None:
    match = _NUMBER.search(text)
    return None if match is None else float(match.group(0).replace(",", ""))


@evaluator("numeric")
class Numeric(EvaluatorSpec):
    """The first number in the output is within a tolerance of `value` (default: the
    case's expected): `tolerance` absolute, or `relative` (a fraction of the value)."""

    portable: ClassVar[bool] = True

    type: Literal["numeric"] = "numeric"
    value: float | None = Field(None, allow_inf_nan=False, description="The expected number.")
    tolerance: float = Field(0.0, ge=0, allow_inf_nan=False, description="Absolute tolerance.")
    relative: float | None = Field(
        None, ge=0, allow_inf_nan=False, description="Relative tolerance (0.01 = 1%)."
    )

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        expected = self.value
        if expected is None:
            found = first_number(_expected_text(case, "expected number"))
            if found is None:
                raise EvaluatorFailure("the case's expected output holds no number")
            expected = found
        actual = first_number(output.text)
        if actual is None:
            return self.finding(0.0, "no number in the output")
        allowed = max(self.tolerance, abs(expected) * (self.relative or 0.0))
        ok = math.isclose(actual, expected, rel_tol=0.0, abs_tol=allowed) or actual == expected
        return self.finding(
            1.0 if ok else 0.0,
            f"{actual:g} vs {expected:g} (tolerance {allowed:g})",
            metadata={"actual": actual, "expected": expected},
        )


class ExpectedCall(Spec):
    """A tool call the target must make: its name, and arguments it must include."""

    name: str
    arguments: dict[str, Any] | None = Field(
        None, description="Arguments that must be present with these values (others may be)."
    )


@evaluator("tool_calls")
class ToolCalls(EvaluatorSpec):
    """The target made the expected tool calls (each once, in any order unless `ordered`);
    the score is the share made."""

    portable: ClassVar[bool] = True

    type: Literal["tool_calls"] = "tool_calls"
    calls: list[ExpectedCall] = Field(min_length=1, description="The expected calls.")
    ordered: bool = False

    @model_validator(mode="before")
    @classmethod
    def _names(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("calls"), list):
            data = {
                **data,
                "calls": [{"name": c} if isinstance(c, str) else c for c in data["calls"]],
            }
        return data

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        made = list(output.tool_calls)
        matched: list[str] = []
        missing: list[str] = []
        start = 0
        for expected in self.calls:
            pool = range(start, len(made)) if self.ordered else range(len(made))
            hit = next(
                (i for i in pool if made[i] is not None and _call_matches(expected, made[i])), None
            )
            if hit is None:
                missing.append(expected.name)
                continue
            matched.append(expected.name)
            made[hit] = None  # type: ignore[call-overload]
            start = hit + 1
        score = len(matched) / len(self.calls)
        reason = f"missing: {', '.join(missing)}" if missing else "every expected call made"
        return self.finding(
            score, reason, metadata={"made": [c.get("name") for c in output.tool_calls]}
        )


def _call_matches(expected: ExpectedCall, made: dict[str, Any]) -> bool:
    if made.get("name") != expected.name:
        return False
    if not expected.arguments:
        return True
    arguments = made.get("arguments") or {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return False
    return isinstance(arguments, dict) and all(
        arguments.get(k) == v for k, v in expected.arguments.items()
    )


class AssertionSpec(Spec):
    """One criterion: a check on the output (default: the criterion appears in it)."""

    criterion: str
    required: bool = True
    contains: str | None = None
    not_contains: str | None = None
    regex: str | None = None

    def check(self, text: str) -> bool:
        if self.regex is not None:
            return re.search(self.regex, text) is not None
        if self.not_contains is not None:
            return self.not_contains not in text
        return (self.contains if self.contains is not None else self.criterion) in text


@evaluator("assertions")
class Assertions(EvaluatorSpec):
    """Criteria with `required`: 1 only when every required one passes; no assertions (here
    or in the case's metadata `assertions`) -> no score."""

    type: Literal["assertions"] = "assertions"
    assertions: list[AssertionSpec] = Field(default_factory=list)

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        listed = list(self.assertions)
        extra = case.metadata.get("assertions") if isinstance(case.metadata, dict) else None
        if isinstance(extra, list):
            listed += [AssertionSpec.model_validate(a) for a in extra]
        if not listed:
            return self.finding(None, "no assertions", skipped="no assertions for this case")
        results = [
            {"criterion": a.criterion, "passed": a.check(output.text), "required": a.required}
            for a in listed
        ]
        return assertions_finding(self, results)


def assertions_finding(spec: EvaluatorSpec, results: list[dict[str, Any]]) -> Finding:
    """The score of a list of assertion results (`criterion`, `passed`, `required`)."""
    passed = all(r["passed"] for r in results if r["required"])
    failed = [r["criterion"] for r in results if not r["passed"]]
    reason = "failed: " + "; ".join(failed) if failed else "every assertion passed"
    return spec.finding(1.0 if passed else 0.0, reason, metadata={"assertions": results})

"""promptfoo's text assertions: equals, the contains family, starts-with, regex.

Each is promptfoo's handler of the same name (0.118, `src/assertions/equals.ts`,
`contains.ts`, `startsWith.ts`, `regex.ts`): pass is the check XOR `not-`, score 1 or 0
with the pass.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from .....evaluators.base import EvaluatorFailure, Finding
from .base import PromptfooAssertion, js_json, output_string

if TYPE_CHECKING:
    from .....evaluators.cases import Case, Output


def _not(inverse: bool) -> str:
    return "not " if inverse else ""


class Equals(PromptfooAssertion):
    """The output equals the value; a structured value (object, list) is compared with the
    output read as JSON, deeply."""

    async def evaluate(self, ev: Any, case: Case, output: Output) -> Finding:
        expected = self.rendered(case)
        actual = output_string(output)
        if isinstance(expected, dict | list):
            try:
                same = _deep_equal(expected, json.loads(actual))
            except ValueError:
                return self.result(False, reason=self._reason(actual, js_json(expected)))
            ok = same != self.inverse
            shown = js_json(expected)
        else:
            shown = _js_string(expected)
            ok = (shown == actual) != self.inverse
        return self.result(ok, reason="" if ok else self._reason(actual, shown))

    def _reason(self, actual: str, expected: str) -> str:
        return f'Expected output "{actual}" to {_not(self.inverse)}equal "{expected}"'


def _deep_equal(a: Any, b: Any) -> bool:
    """Node's `isDeepStrictEqual` on JSON values: 1 and 1.0 are one number, true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_deep_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def _js_string(value: Any) -> str:
    """JavaScript's `String(value)` of a YAML scalar."""
    if value is None:
        return "undefined"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _scalar(assertion: PromptfooAssertion, case: Case) -> str:
    """The one string or number a contains-type assertion looks for."""
    value = assertion.rendered(case)
    if isinstance(value, bool) or not isinstance(value, str | int | float) or value in ("", 0):
        raise EvaluatorFailure(
            f'"{assertion.base_type}" assertion type must have a string or number value'
        )
    return _js_string(value)


class Contains(PromptfooAssertion):
    """The output contains the value (`icontains`: ignoring letter case)."""

    async def evaluate(self, ev: Any, case: Case, output: Output) -> Finding:
        value = _scalar(self, case)
        text = output_string(output)
        fold = self.base_type == "icontains"
        found = value.lower() in text.lower() if fold else value in text
        ok = found != self.inverse
        reason = "" if ok else f'Expected output to {_not(self.inverse)}contain "{value}"'
        return self.result(ok, reason=reason)


_QUOTED_ITEM = re.compile(r'(".*?"|[^,]+)(?=\s*,|\s*$)')


def _items(assertion: PromptfooAssertion, case: Case) -> list[str]:
    """The strings of a contains-any/all value: a list, or a comma-separated string
    (`contains-any` alone reads double-quoted items holding commas, as promptfoo does)."""
    value = assertion.rendered(case)
    if value in (None, "", []):
        raise EvaluatorFailure(f'"{assertion.base_type}" assertion type must have a value')
    if isinstance(value, str):
        if assertion.base_type == "contains-any":
            value = [
                m.strip().removeprefix('"').removesuffix('"') for m in _QUOTED_ITEM.findall(value)
            ]
        else:
            value = [v.strip() for v in value.split(",")]
    if not isinstance(value, list):
        raise EvaluatorFailure(f'"{assertion.base_type}" assertion type must have an array value')
    return [_js_string(v) for v in value]


class ContainsSome(PromptfooAssertion):
    """Any (`-any`) or every (`-all`) item appears in the output (`i`: ignoring case)."""

    async def evaluate(self, ev: Any, case: Case, output: Output) -> Finding:
        items = _items(self, case)
        text = output_string(output)
        fold = self.base_type.startswith("i")
        seen = text.lower() if fold else text
        present = [v in seen if not fold else v.lower() in seen for v in items]
        listed = ", ".join(items)
        if self.base_type.endswith("-any"):
            ok = any(present) != self.inverse
            reason = f'Expected output to {_not(self.inverse)}contain one of "{listed}"'
        else:
            missing = ", ".join(v for v, p in zip(items, present, strict=True) if not p)
            ok = all(present) != self.inverse
            reason = (
                f"Expected output to {_not(self.inverse)}contain all of [{listed}]. "
                f"Missing: [{missing}]"
            )
        return self.result(ok, reason="" if ok else reason)


class StartsWith(PromptfooAssertion):
    async def evaluate(self, ev: Any, case: Case, output: Output) -> Finding:
        value = self.text_value(case)
        ok = output_string(output).startswith(value) != self.inverse
        reason = "" if ok else f'Expected output to {_not(self.inverse)}start with "{value}"'
        return self.result(ok, reason=reason)


def js_regex(pattern: str) -> re.Pattern[str]:
    """A JavaScript `new RegExp(pattern)` as Python's: named groups are written `(?<n>...)`
    there and `(?P<n>...)` here; the rest of the common syntax is shared."""
    return re.compile(re.sub(r"\(\?<(?![=!])", "(?P<", pattern))


class Regex(PromptfooAssertion):
    """The output matches the pattern anywhere (regex.ts: an invalid pattern fails the
    assertion with its reason, it is no error)."""

    async def evaluate(self, ev: Any, case: Case, output: Output) -> Finding:
        pattern = self.text_value(case)
        try:
            compiled = js_regex(pattern)
        except re.error as exc:
            return self.result(False, reason=f"Invalid regex pattern: {exc}")
        ok = (compiled.search(output_string(output)) is not None) != self.inverse
        reason = "" if ok else f'Expected output to {_not(self.inverse)}match regex "{pattern}"'
        return self.result(ok, reason=reason)

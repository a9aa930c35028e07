"""How an agent's actual turn is matched with the expected one.

Text: `"*"` matches anything; `"<statement>"` asks the judge whether the text satisfies the
statement; a list matches when any alternative does; any other string matches when equal
after case and whitespace normalisation, else when the judge finds the same meaning. An
expected `""` matches only an empty reply (write `"*"` for "anything").

Dicts compare recursively: string values by the text rules, nested dicts by these rules,
other values by equality; a key whose EXPECTED value is None is not checked (it may be
absent); a key missing from the actual dict, or one the expected dict does not have, is a
mismatch. Tool calls: the same number; each expected call is paired with an unused actual
call of the same name whose arguments match (repeated calls of one tool are all kept), and
its expected `result`, when given, is matched like a dict value.

Exact and wildcard matches never ask the judge.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

from .turns import ToolCall


@dataclass(frozen=True)
class Verdict:
    """A judge's answer: whether it matches, and why."""

    ok: bool
    reason: str = ""


class Judge(Protocol):
    """What matching asks when the text rules cannot decide."""

    async def statement(self, statement: str, text: str) -> Verdict: ...

    async def same_meaning(self, expected: str, actual: str) -> Verdict: ...


@dataclass(frozen=True)
class Mismatch:
    """Why an actual value does not match the expected one: the rule that failed, the two
    values, and the judge's reason when it was asked."""

    rule: str
    expected: Any
    actual: Any
    reason: str = ""
    where: str = ""

    def inside(self, where: str, rule: str | None = None) -> Mismatch:
        """The same mismatch seen from the value holding it (`where` its key or name)."""
        joint = "." if self.where and not self.where.startswith("[") else ""
        return Mismatch(
            rule or self.rule, self.expected, self.actual, self.reason, where + joint + self.where
        )

    def text(self) -> str:
        place = f" at {self.where}" if self.where else ""
        said = f": {self.reason}" if self.reason else ""
        return (
            f"{self.rule}{place}{said}\n    expected: {_shown(self.expected)}"
            f"\n    actual:   {_shown(self.actual)}"
        )


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)


def normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def is_statement(text: str) -> bool:
    stripped = text.strip()
    return len(stripped) > 2 and stripped.startswith("<") and stripped.endswith(">")


async def match_text(expected: str | list[str], actual: str, judge: Judge) -> Mismatch | None:
    """None when `actual` matches `expected` (a string, or a list of alternatives)."""
    if isinstance(expected, list):
        reasons = []
        for alternative in expected:
            found = await match_text(alternative, actual, judge)
            if found is None:
                return None
            reasons.append(f"{alternative!r}: {found.reason or found.rule}")
        return Mismatch("no alternative matched", expected, actual, "; ".join(reasons))
    if expected.strip() == "*":
        return None
    if is_statement(expected):
        verdict = await judge.statement(expected.strip()[1:-1].strip(), actual)
        return None if verdict.ok else Mismatch("statement", expected, actual, verdict.reason)
    if normalised(expected) == normalised(actual):
        return None
    if not expected.strip() or not actual.strip():
        return Mismatch("equal text", expected, actual, "one side is empty")
    verdict = await judge.same_meaning(expected, actual)
    return None if verdict.ok else Mismatch("same meaning", expected, actual, verdict.reason)


async def match_value(expected: Any, actual: Any, judge: Judge) -> Mismatch | None:
    """A dict value, a tool argument or a tool result: strings by the text rules, dicts
    recursively, anything else by equality."""
    if isinstance(expected, str) and isinstance(actual, str):
        return await match_text(expected, actual, judge)
    if isinstance(expected, dict) and isinstance(actual, dict):
        return await match_dict(expected, actual, judge)
    if isinstance(expected, str) and expected.strip() == "*":
        return None
    if isinstance(expected, bool) or isinstance(actual, bool):
        same = expected is actual  # True == 1 in Python; not here
    else:
        same = expected == actual
    return None if same else Mismatch("equal value", expected, actual)


async def match_dict(
    expected: dict[str, Any], actual: dict[str, Any], judge: Judge
) -> Mismatch | None:
    found = await dict_mismatches(expected, actual, judge)
    return found[0] if found else None


async def dict_mismatches(
    expected: dict[str, Any], actual: dict[str, Any], judge: Judge
) -> list[Mismatch]:
    """Every key that does not match (keys missing or unexpected: that one mismatch)."""
    missing = [k for k, v in expected.items() if v is not None and k not in actual]
    extra = [k for k in actual if k not in expected]
    if missing or extra:
        parts = [f"missing keys {missing}"] if missing else []
        parts += [f"unexpected keys {extra}"] if extra else []
        return [Mismatch("same keys", expected, actual, ", ".join(parts))]
    out: list[Mismatch] = []
    for key, value in expected.items():
        if value is None:
            continue
        found = await match_value(value, actual[key], judge)
        if found is not None:
            out.append(found.inside(f"[{key!r}]" if not key.isidentifier() else key))
    return out


async def match_tool_calls(
    expected: list[ToolCall], actual: list[ToolCall], judge: Judge
) -> Mismatch | None:
    found = await tool_call_mismatches(expected, actual, judge)
    return found[0] if found else None


async def tool_call_mismatches(
    expected: list[ToolCall], actual: list[ToolCall], judge: Judge
) -> list[Mismatch]:
    """Every expected call that no actual call matches, with all of its mismatches."""
    names = [c.name for c in actual]
    if len(expected) != len(actual):
        return [
            Mismatch(
                "tool call count",
                [c.name for c in expected],
                names,
                f"expected {len(expected)} tool call(s), the agent made {len(actual)}",
            )
        ]
    unused = list(range(len(actual)))
    out: list[Mismatch] = []
    for number, call in enumerate(expected, 1):
        candidates = [i for i in unused if actual[i].name == call.name]
        if not candidates:
            out.append(
                Mismatch(
                    "tool name", call.name, names, f"no unmatched call of '{call.name}' was made"
                )
            )
            continue
        first: list[Mismatch] | None = None
        for index in candidates:
            found = await _call_mismatches(call, actual[index], judge)
            if not found:
                unused.remove(index)
                break
            first = first or found
        else:
            assert first is not None
            out += [m.inside(f"tool call {number} ({call.name})") for m in first]
    return out


async def _call_mismatches(expected: ToolCall, actual: ToolCall, judge: Judge) -> list[Mismatch]:
    found = await dict_mismatches(expected.arguments, actual.arguments, judge)
    out = [m.inside("arguments", f"tool arguments ({m.rule})") for m in found]
    if expected.result is not None:
        result = await match_value(expected.result, actual.result, judge)
        if result is not None:
            out.append(result.inside("result", f"tool result ({result.rule})"))
    return out

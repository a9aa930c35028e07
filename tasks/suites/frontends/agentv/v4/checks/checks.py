"""AgentV 4's own checks of what an agent did, read from AgentV's
`packages/core/src/evaluation/graders` (`trajectory.ts`, `skill-used.ts`):

- `trajectory:tool-used`, `trajectory:tool-sequence`, `trajectory:tool-args-match` (and their
  `not-` forms) over the tool calls the target made. Tools named `shell`, `exec_command` or
  `local_shell` with a command are command steps, not tool steps, as AgentV classifies them.
- `skill-used` / `not-skill-used`: the skills the target reports using (`skill_calls` in its
  structured output, or in its `metadata`).
- `ends-with`.

Each scores 1 or 0 with AgentV's reason.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, ClassVar

from .......engine.registry import Namespace
from ......evaluators.base import CHECKS, EvaluatorFailure, Finding
from ....promptfoo.asserts.base import PromptfooAssertion, output_string, output_value

if TYPE_CHECKING:
    from ......evaluators.cases import Case, Output
    from ......evaluators.judging import EvalContext

COMMAND_TOOLS = {"exec_command", "local_shell", "shell"}
AGENTV4: Namespace[type[AgentVAssertion]] = Namespace(
    CHECKS, "agentv4", "AgentV assertion", plugins=False
)


class AgentVAssertion(PromptfooAssertion):
    """An assertion of AgentV's own: a verdict with score 1 or 0 and AgentV's reason."""

    family: ClassVar[str] = "agentv4"

    def scored(self, ok: bool, reason: str) -> Finding:
        return self.result(ok, 1.0 if ok else 0.0, reason)


def agentv4(*names: str) -> Any:
    def decorate(cls: type[AgentVAssertion]) -> type[AgentVAssertion]:
        for name in names:
            AGENTV4.add(name, cls)
        return cls

    return decorate


def glob_match(value: str, pattern: str) -> bool:
    """AgentV's `matchesPattern`: `*` and `?` wildcards, the whole name, any letter case."""
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value, re.IGNORECASE) is not None


# --- tool steps --------------------------------------------------------------------------------


def _arguments(value: Any) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return text
    return value


def tool_steps(output: Output) -> list[dict[str, Any]]:
    """The tool steps of the target's calls, in order: `name`, `aliases`, `args`."""
    steps = []
    for call in output.tool_calls:
        name = str(call.get("name", ""))
        args = _arguments(call.get("arguments"))
        command = None
        if name.lower() in COMMAND_TOOLS and isinstance(args, dict):
            raw = args.get("cmd", args.get("command", args.get("commands")))
            command = " ".join(map(str, raw)) if isinstance(raw, list) else raw
        if isinstance(command, str) and command.strip():
            continue  # a command step: not among the tool steps AgentV checks
        steps.append({"name": name, "aliases": [name], "args": args})
    return steps


def _matcher(item: Any) -> dict[str, Any]:
    if isinstance(item, str):
        return {"pattern": item}
    if isinstance(item, dict):
        return item
    raise EvaluatorFailure(f"a tool matcher is a name or an object, not {item!r}")


def _label(matcher: dict[str, Any]) -> str:
    return str(matcher.get("pattern") or matcher.get("name") or "*")


def _matches(step: dict[str, Any], matcher: dict[str, Any]) -> bool:
    kinds = matcher.get("type")
    if kinds is not None and "tool" not in ([kinds] if isinstance(kinds, str) else kinds):
        return False
    pattern = matcher.get("pattern") or matcher.get("name")
    return not pattern or any(glob_match(a, str(pattern)) for a in step["aliases"])


def _named(matcher: dict[str, Any], kind: str, index: int | None = None) -> None:
    if not (matcher.get("pattern") or matcher.get("name")):
        label = "object" if index is None else f"step {index + 1}"
        raise EvaluatorFailure(f"{kind} assertion {label} must include a name or pattern property")


def _listed(steps: list[dict[str, Any]]) -> str:
    return ", ".join(f"tool:{s['name']}" for s in steps) or "(none)"


@agentv4("trajectory:tool-used")
class ToolUsed(AgentVAssertion):
    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        steps = tool_steps(output)
        value = self.rendered(case)
        actual = _listed(steps)
        if isinstance(value, str | list):
            matchers = [_matcher(v) for v in (value if isinstance(value, list) else [value])]
            if not matchers:
                raise EvaluatorFailure(
                    "trajectory:tool-used assertion requires at least one expected tool"
                )
            found = [m for m in matchers if any(_matches(s, m) for s in steps)]
            missing = [m for m in matchers if m not in found]
            names = ", ".join(_label(m) for m in matchers)
            if self.inverse:
                ok = not found
                used = ", ".join(_label(m) for m in found)
                reason = (
                    f"Forbidden tool(s) were not used: {names}"
                    if ok
                    else f"Forbidden tool(s) were used: {used}. Actual tools: {actual}"
                )
                return self.scored(ok, reason)
            ok = not missing
            lost = ", ".join(_label(m) for m in missing)
            reason = (
                f"Observed required tool(s): {names}. Actual tools: {actual}"
                if ok
                else f"Missing required tool(s): {lost}. Actual tools: {actual}"
            )
            return self.scored(ok, reason)
        if not isinstance(value, dict):
            raise EvaluatorFailure(
                "trajectory:tool-used assertion must have a string, string array, or object value"
            )
        matcher = _matcher(value)
        _named(matcher, "trajectory:tool-used")
        low, high = value.get("min", 1), value.get("max")
        hits = [s for s in steps if _matches(s, matcher)]
        count = len(hits)
        within = count >= low and (high is None or count <= high)
        label = _label(matcher)
        if self.inverse:
            reason = (
                f'Tool "{label}" matched {count} time(s), which violates the inverse assertion'
                if within
                else f'Tool "{label}" did not satisfy the forbidden match condition'
            )
            return self.scored(not within, reason)
        bounds = f"(expected at least {low})" if high is None else f"(expected {low}-{high})"
        reason = f'Matched tool "{label}" {count} time(s) {bounds}'
        if hits:
            reason += f". Matches: {_listed(hits)}"
        return self.scored(within, reason)


@agentv4("trajectory:tool-sequence")
class ToolSequence(AgentVAssertion):
    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        steps = tool_steps(output)
        value = self.rendered(case)
        items: list[Any] = []
        if isinstance(value, list):
            mode, items = "in_order", value
        elif isinstance(value, dict):
            mode = "exact" if value.get("mode") == "exact" else "in_order"
            steps_given = value.get("steps")
            items = steps_given if isinstance(steps_given, list) else []
        else:
            raise EvaluatorFailure(
                "trajectory:tool-sequence assertion must have an array or object value"
            )
        expected = [_matcher(i) for i in items]
        for index, matcher in enumerate(expected):
            _named(matcher, "trajectory:tool-sequence", index)
        if not expected:
            raise EvaluatorFailure(
                "trajectory:tool-sequence assertion requires at least one expected step"
            )
        actual = _listed(steps)
        if mode == "exact":
            ok = len(steps) == len(expected) and all(
                _matches(s, m) for s, m in zip(steps, expected, strict=True)
            )
            names = ", ".join(_label(m) for m in expected)
            reason = (
                f"Observed exact tool sequence: {actual}"
                if ok
                else f"Expected exact tool sequence of {names}, but actual tools were {actual}"
            )
        else:
            position, matched = 0, []
            for step in steps:
                if position < len(expected) and _matches(step, expected[position]):
                    matched.append(step)
                    position += 1
            ok = position == len(expected)
            reason = (
                f"Observed tool sequence in order: {_listed(matched)}. Actual tools: {actual}"
                if ok
                else f'Expected tool "{_label(expected[position])}" was not observed in order. '
                f"Actual tools: {actual}"
            )
        if self.inverse:
            reason = (
                f"Forbidden tool sequence was observed. Actual tools: {actual}"
                if ok
                else "Forbidden tool sequence was not observed"
            )
            return self.scored(not ok, reason)
        return self.scored(ok, reason)


def _partial(actual: Any, expected: Any) -> bool:
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(_partial(a, e) for a, e in zip(actual, expected, strict=True))
        )
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and _partial(actual[k], v) for k, v in expected.items()
        )
    return _same(actual, expected)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def _strip(value: Any, drop: Any) -> Any:
    if not isinstance(value, dict):
        return value
    return {k: v for k, v in value.items() if not drop(k, v)}


@agentv4("trajectory:tool-args-match")
class ToolArgsMatch(AgentVAssertion):
    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        value = self.rendered(case)
        if not isinstance(value, dict):
            raise EvaluatorFailure("trajectory:tool-args-match assertion must have an object value")
        matcher = _matcher(value)
        _named(matcher, "trajectory:tool-args-match")
        expected = value["args"] if "args" in value else value.get("arguments")
        if expected is None:
            raise EvaluatorFailure(
                "trajectory:tool-args-match assertion must include an args or arguments property"
            )
        mode = value.get("mode", "partial")
        defaults = value.get("defaults") or {}
        raw_ignore = value.get("ignore", [])
        ignore = raw_ignore if isinstance(raw_ignore, list) else [raw_ignore]

        def ignored(key: str, _v: Any) -> bool:
            return any(glob_match(key, i) if re.search(r"[*?]", i) else i == key for i in ignore)

        def defaulted(key: str, v: Any) -> bool:
            return key in defaults and _same(v, defaults[key])

        def agrees(actual: Any) -> bool:
            cleaned = _strip(_strip(actual, ignored), defaulted)
            wanted = _strip(expected, ignored)
            return _same(cleaned, wanted) if mode == "exact" else _partial(cleaned, wanted)

        steps = [s for s in tool_steps(output) if _matches(s, matcher)]
        with_args = [s for s in steps if s["args"] is not None]
        hit = next((s for s in with_args if agrees(s["args"])), None)
        label = _label(matcher)
        ok = hit is not None
        if self.inverse:
            return self.scored(not ok, f'Forbidden argument match for tool "{label}"' + (
                " was observed" if ok else " was not observed"))  # fmt: skip
        if ok and hit is not None:
            args = json.dumps(hit["args"], separators=(",", ":"))
            return self.scored(
                True,
                f'Tool "{label}" matched expected arguments ({mode}) on tool:{hit["name"]}. '
                f"Args: {args}",
            )
        if not steps:
            return self.scored(False, f'No call to tool "{label}" was observed')
        shown = ", ".join(json.dumps(s["args"], separators=(",", ":")) for s in with_args)
        return self.scored(
            False,
            f'No call to tool "{label}" matched expected arguments ({mode}): '
            f"{json.dumps(expected, separators=(',', ':'))}. Observed args: {shown or '(none)'}",
        )


# --- skills and text -----------------------------------------------------------------------------


def skill_calls(output: Output) -> list[dict[str, Any]]:
    """The skills the target reports using (`skill_calls` of its structured output, or of
    its `metadata`), failed ones left out as AgentV leaves them out."""
    value = output_value(output)
    found: Any = None
    if isinstance(value, dict):
        meta = value.get("metadata")
        found = value.get("skill_calls", value.get("skillCalls"))
        if found is None and isinstance(meta, dict):
            found = meta.get("skill_calls", meta.get("skillCalls"))
    if not isinstance(found, list):
        return []
    return [
        c
        for c in found
        if isinstance(c, dict)
        and isinstance(c.get("name"), str)
        and c["name"].strip()
        and c.get("isError") is not True
        and c.get("is_error") is not True
    ]


@agentv4("skill-used")
class SkillUsed(AgentVAssertion):
    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        calls = skill_calls(output)
        actual = ", ".join(c["name"] for c in calls) or "(none)"
        value = self.rendered(case)
        if isinstance(value, str) and value.strip():
            value = [value]
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            names = [v.strip() for v in value]
            used = [n for n in names if any(c["name"] == n for c in calls)]
            missing = [n for n in names if n not in used]
            if self.inverse:
                ok = not used
                reason = (
                    f"Forbidden skill(s) were not used: {', '.join(names)}"
                    if ok
                    else f"Forbidden skill(s) were used: {', '.join(used)}. Actual skills: {actual}"
                )
            else:
                ok = not missing
                reason = (
                    f"Observed required skill(s): {', '.join(names)}. Actual skills: {actual}"
                    if ok
                    else f"Missing required skill(s): {', '.join(missing)}. Actual skills: {actual}"
                )
            return self.scored(ok, reason)
        if not isinstance(value, dict):
            raise EvaluatorFailure(
                "skill-used assertion must have a string, string array, or object value"
            )
        name, pattern = value.get("name"), value.get("pattern")
        if not name and not pattern:
            raise EvaluatorFailure(
                "skill-used assertion object must include a name or pattern property"
            )
        hits = [
            c
            for c in calls
            if (not name or c["name"] == name) and (not pattern or glob_match(c["name"], pattern))
        ]
        label = pattern or name
        if self.inverse:
            if "min" in value or value.get("max", 0) != 0:
                raise EvaluatorFailure(
                    "not-skill-used object assertions only support name/pattern with no count "
                    "bounds, or max: 0"
                )
            ok = not hits
            reason = (
                f'Forbidden skill "{label}" was not used. Actual skills: {actual}'
                if ok
                else f'Forbidden skill "{label}" was used {len(hits)} time(s)'
            )
            return self.scored(ok, reason)
        high = value.get("max")
        low = value.get("min", 0 if high is not None else 1)
        ok = len(hits) >= low and (high is None or len(hits) <= high)
        bounds = f"(expected at least {low})" if high is None else f"(expected {low}-{high})"
        return self.scored(ok, f'Matched skill "{label}" {len(hits)} time(s) {bounds}')


@agentv4("ends-with")
class EndsWith(AgentVAssertion):
    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        value = self.text_value(case)
        ok = output_string(output).endswith(value) != self.inverse
        shown = "not " if self.inverse else ""
        return self.scored(ok, "" if ok else f'Expected output to {shown}end with "{value}"')

"""AgentV 4's assertions: promptfoo's form plus AgentV's own additions, read from AgentV's
`packages/core/src/evaluation` (`graders/trajectory.ts`, `graders/skill-used.ts`,
`orchestrator.ts` for the test's score).

- An entry may be a plain string: a rubric the judge checks (promptfoo's llm-rubric with
  the string as its value; AgentV clamps its score into [0, 1]).
- Any entry may say `required: true` (or a number, its `min_score`).
- `ends-with`; `skill-used` / `not-skill-used` (the skills the target reports using:
  `skill_calls` in its structured output); `trajectory:tool-used`,
  `trajectory:tool-sequence`, `trajectory:tool-args-match` (and their `not-` forms) over
  the tool calls the target made. Tools named `shell`, `exec_command` or `local_shell`
  with a command are command steps, not tool steps, as AgentV classifies them.
- A test's score (`combine_agentv`): 0 when a required assertion scored below its minimum
  (default the pass threshold 0.8), else the weighted mean; pass when the score reaches the
  test's threshold (default 0.8).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from accord.engine.errors import ConfigError
from accord.engine.registry import Registry
from accord.tasks.evaluators.base import EvaluatorFailure, Finding
from accord.tasks.suites.promptfoo.asserts.base import (
    PromptfooAssertion,
    case_prompt,
    case_vars,
    output_string,
    output_value,
)
from accord.tasks.suites.promptfoo.asserts.building import build_assertion
from accord.tasks.suites.promptfoo.asserts.graded import LlmRubric

if TYPE_CHECKING:
    from accord.tasks.suites.core.cases import Case, Output
    from accord.tasks.suites.core.judging import EvalContext

PASS = 0.8  # AgentV's DEFAULT_THRESHOLD
COMMAND_TOOLS = {"exec_command", "local_shell", "shell"}
AGENTV4: Registry[type[AgentVAssertion]] = Registry("AgentV assertion", plugins=False)


class AgentVAssertion(PromptfooAssertion):
    """An assertion of AgentV's own: a verdict with score 1 or 0 and AgentV's reason."""

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


GRADER_SYSTEM = (
    "You grade an answer against the instructions that follow. Reply with one JSON object "
    'and nothing else: {"score": <a number from 0.0 to 1.0>, "assertions": [{"text": '
    '"<what you checked>", "passed": <true or false>}]}.'
)


class AgentVRubric(LlmRubric):
    """A plain-string entry (the string is the rubric), or an llm-rubric with AgentV's
    `prompt:` (a grader template file: `{{ output }}`, `{{ input }}`, `{{ criteria }}`,
    `{{ expected_output }}` filled in); AgentV keeps scores in [0, 1]."""

    prompt_template: str | None = None

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        if self.prompt_template is None:
            found = await super().evaluate(ev, case, output)
        else:
            found = await self._templated(ev, case, output)
        if found.score is not None:
            found.score = min(1.0, max(0.0, found.score))
        return found

    async def _templated(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        from accord.tasks.suites.promptfoo.asserts.graded import fill

        variables = case_vars(case)
        values = {
            **variables,
            "output": output_string(output),
            "input": case_prompt(case),
            "criteria": self.rendered(case) or "",
            "expected_output": variables.get("expected_output", ""),
        }
        messages = [
            {"role": "system", "content": GRADER_SYSTEM},
            {"role": "user", "content": fill(self.prompt_template or "", values)},
        ]
        verdict, _ = await self.ask(ev, case, messages, _scored_object, "score")
        score = float(verdict["score"])
        return self.result(score >= PASS, score, json.dumps(verdict.get("assertions", [])))


def _scored_object(reply: str) -> dict[str, Any] | None:
    from accord.tasks.suites.promptfoo.asserts.graded import _first_object

    found = _first_object(reply)
    score = found.get("score") if found else None
    if isinstance(score, bool) or not isinstance(score, int | float):
        return None
    return found


# --- script graders ------------------------------------------------------------------------------

SCRIPT_TIMEOUT = 300.0


class Script(AgentVAssertion):
    """AgentV's `type: script`: a command (argv, or a line the shell runs) in the eval's
    folder, given AgentV's grader payload as JSON on stdin (output, input, criteria,
    expected_output, metadata, token_usage, cost_usd, duration_ms, config: the entry's other
    keys); it prints `{pass?, score?, reason?, checks?}`. The score: `score` (kept in [0, 1]),
    else the mean of the checks (each its score, else pass as 1 or 0), else pass as 1 or 0;
    pass: `pass`, else score >= 0.8 (graders/script-grader.ts)."""

    command: list[str] = Field(default_factory=list)
    cwd: str = ""
    settings: dict[str, Any] = Field(default_factory=dict)

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        from accord.tasks.suites.core.targets import TargetFailure, run_program

        variables = case_vars(case)
        payload = {
            "criteria": self.rendered(case) or "",
            "expected_output": variables.get("expected_output"),
            "output": output_string(output),
            "messages": output.messages or [],
            "input": case_prompt(case),
            "metadata": case.metadata.get("metadata") if isinstance(case.metadata, dict) else None,
            "token_usage": output.usage,
            "cost_usd": output.cost,
            "duration_ms": output.duration_ms,
            "workspace_path": output.workspace,
            "config": self.settings or None,
        }
        stdin = json.dumps(payload, ensure_ascii=False, default=str).encode()
        try:
            stdout, stderr, code = await run_program(
                self.command, stdin, Path(self.cwd), SCRIPT_TIMEOUT, {}
            )
        except TargetFailure as exc:
            raise EvaluatorFailure(f"script grader: {exc}") from None
        shown = " ".join(self.command)
        if code != 0:
            tail = stderr.decode(errors="replace").strip()[-800:]
            raise EvaluatorFailure(f"script grader `{shown}` exited with {code}: {tail}")
        from accord.tasks.suites.core.judging import json_object

        answer = json_object(stdout.decode(errors="replace"))
        if not isinstance(answer, dict):
            raise EvaluatorFailure(f"script grader `{shown}` printed no JSON object")
        return self._read(answer, shown)

    def _read(self, answer: dict[str, Any], shown: str) -> Finding:
        checks = [
            c
            for c in answer.get("checks") or []
            if isinstance(c, dict)
            and isinstance(c.get("text"), str)
            and isinstance(c.get("pass"), bool)
            and isinstance(c.get("reason"), str)
        ]
        raw = answer.get("score")
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            score = min(1.0, max(0.0, float(raw)))
        elif checks:
            parts = [
                min(1.0, max(0.0, float(c["score"])))
                if isinstance(c.get("score"), int | float) and not isinstance(c["score"], bool)
                else float(c["pass"])
                for c in checks
            ]
            score = sum(parts) / len(parts)
        elif isinstance(answer.get("pass"), bool):
            score = float(answer["pass"])
        else:
            raise EvaluatorFailure(
                f"script grader `{shown}`: its JSON must include pass, score, or checks[]"
            )
        passed = answer["pass"] if isinstance(answer.get("pass"), bool) else score >= PASS
        reason = answer.get("reason") if isinstance(answer.get("reason"), str) else ""
        return self.result(passed, score, reason or ("passed" if passed else "failed"))


def _script(
    entry: dict[str, Any], base_dir: Path, root: Path, where: str, name: str | None
) -> PromptfooAssertion:
    command = entry.get("command")
    if isinstance(command, str) and command.strip():
        argv = ["/bin/sh", "-c", command]
    elif isinstance(command, list) and command and all(isinstance(c, str) for c in command):
        argv = list(command)
    else:
        raise ConfigError(f"{where}: a script grader needs 'command': argv or a command line")
    folder = (base_dir / str(entry.get("cwd", "."))).resolve()
    if not folder.is_relative_to(root.resolve()):
        raise ConfigError(f"{where}: the script grader's cwd leads outside the project root")
    own = {"type", "command", "cwd", "metric", "weight", "value"}
    return Script(
        type="script", base_type="script", value=entry.get("value"), command=argv,
        cwd=str(folder), name=name or entry.get("metric") or "script",
        metric=entry.get("metric"), weight=float(entry.get("weight", 1.0)),
        settings={k: v for k, v in entry.items() if k not in own},
    )  # fmt: skip


# --- building and the test's score -------------------------------------------------------------

AGENTV_KEYS = frozenset({"required", "min_score", "negate", "id", "name", "description"})


def build_agentv_assertion(
    entry: Any, *, base_dir: Path, where: str, name: str | None = None, root: Path | None = None
) -> PromptfooAssertion:
    """An entry of an AgentV 4 `assert:` list: a plain string (a rubric), one of AgentV's
    own types, or a promptfoo type (with AgentV's `required`, `min_score`, `negate`, `id` or
    `name`, `description`). `root` is the folder files must lie in (the project's root;
    default `base_dir`): AgentV's files name prompts beside the eval's folder."""
    if isinstance(entry, str):
        if not entry.strip():
            raise ConfigError(f"{where}: an assertion written as text needs the rubric's text")
        return AgentVRubric(
            type="rubric", base_type="llm-rubric", value=entry, name=name or "rubric"
        )
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: an assertion is text (a rubric) or a mapping with a 'type'")
    agentv_fields = {k: entry[k] for k in AGENTV_KEYS if k in entry}
    rest = {k: v for k, v in entry.items() if k not in AGENTV_KEYS}
    kind = str(rest.get("type", ""))
    given = agentv_fields.get("name") or agentv_fields.get("id")
    name = name or (str(given) if given else None)
    inverse = kind.startswith("not-") != bool(agentv_fields.get("negate"))
    base = kind[4:] if kind.startswith("not-") else kind
    spec: PromptfooAssertion
    if base == "llm-rubric" and "prompt" in rest:
        spec = _templated_rubric(rest, base_dir, root or base_dir, where, name)
    elif base == "script":
        spec = _script(rest, base_dir, root or base_dir, where, name)
    elif base == "assert-set":
        spec = _agentv_set(rest, base_dir, root or base_dir, where, name)
    elif base in AGENTV4:
        extra = sorted(set(rest) - {"type", "value", "metric", "weight"})
        if extra:
            raise ConfigError(f"{where}: '{extra[0]}' is no key of a {kind} assertion")
        spec = AGENTV4.get(base).model_validate(
            {"type": kind, "base_type": base, "inverse": inverse, "value": rest.get("value"),
             "name": name or rest.get("metric") or kind, "metric": rest.get("metric"),
             "weight": float(rest.get("weight", 1.0))}
        )  # fmt: skip
    else:
        spec = build_assertion(rest, base_dir=base_dir, where=where, name=name)
        if agentv_fields.get("negate"):
            spec = spec.model_copy(update={"inverse": not spec.inverse})
    required = agentv_fields.get("required", False)
    minimum = agentv_fields.get("min_score")
    if not isinstance(required, bool | int | float) or (
        minimum is not None and not isinstance(minimum, int | float)
    ):
        raise ConfigError(f"{where}: 'required' is true/false or a score, 'min_score' a score")
    if required is not False:
        floor = minimum if minimum is not None else (required if required is not True else PASS)
        spec = spec.model_copy(update={"required": True, "min_score": float(floor)})
    return spec


def _agentv_set(
    entry: dict[str, Any], base_dir: Path, root: Path, where: str, name: str | None
) -> PromptfooAssertion:
    """An assert-set whose members are AgentV entries (strings, AgentV's types)."""
    members = entry.get("assert")
    if not isinstance(members, list) or not members:
        raise ConfigError(f"{where}: an assert-set needs 'assert': a list of assertions")
    # the set's own keys checked as promptfoo's, with one member standing in for the rest
    shell = build_assertion(
        {**entry, "assert": [{"type": "contains", "value": "x"}]},
        base_dir=base_dir, where=where, name=name,
    )  # fmt: skip
    built = [
        build_agentv_assertion(
            item,
            base_dir=base_dir,
            where=f"{where} (assert[{i}])",
            name=f"{shell.id}.{i}",
            root=root,
        )
        for i, item in enumerate(members)
    ]
    return shell.model_copy(update={"asserts": built})


def _templated_rubric(
    entry: dict[str, Any], base_dir: Path, root: Path, where: str, name: str | None
) -> PromptfooAssertion:
    prompt = entry["prompt"]
    extra = sorted(set(entry) - {"type", "value", "metric", "weight", "prompt", "threshold"})
    if extra:
        raise ConfigError(f"{where}: '{extra[0]}' is no key of an llm-rubric assertion")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ConfigError(f"{where}: 'prompt' is a grader template or a file:// path to one")
    if prompt.startswith("file://"):
        prompt = read_inside(base_dir, root, prompt[len("file://") :], where)
    return AgentVRubric(
        type="llm-rubric", base_type="llm-rubric", value=entry.get("value"),
        name=name or entry.get("metric") or "llm-rubric", metric=entry.get("metric"),
        weight=float(entry.get("weight", 1.0)), prompt_template=prompt,
    )  # fmt: skip


def read_inside(base_dir: Path, root: Path, relative: str, where: str) -> str:
    """A file named relative to `base_dir`, refused unless it lies inside `root`."""
    target = (base_dir / relative).resolve()
    if not target.is_relative_to(root.resolve()):
        raise ConfigError(f"{where}: '{relative}' leads outside the project root {root}")
    try:
        return target.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read '{relative}': {exc.strerror or exc}") from None


def combine_agentv(
    findings: Sequence[Finding],
    assertions: Sequence[PromptfooAssertion],
    *,
    threshold: float | None = None,
    name: str = "assertions",
) -> Finding:
    """AgentV's test result: 0 when a required assertion scored below its minimum, else
    the weighted mean of the scores; pass at `threshold` (default 0.8)."""
    errors = [f for f in findings if f.error is not None]
    if errors:
        return Finding(name, error=f"{errors[0].name}: {errors[0].error}", children=list(findings))
    limit = PASS if threshold is None else threshold
    failed_required = [
        f.name
        for f, spec in zip(findings, assertions, strict=True)
        if spec.required
        and (f.score or 0.0) < (spec.min_score if spec.min_score is not None else limit)
    ]
    weights = sum(spec.weight for spec in assertions)
    total = sum((f.score or 0.0) * s.weight for f, s in zip(findings, assertions, strict=True))
    score = 0.0 if failed_required or weights <= 0 else total / weights
    passed = score >= limit
    reason = (
        f"required assertion(s) failed: {', '.join(failed_required)}"
        if failed_required
        else f"score {score:.3f} {'>=' if passed else '<'} {limit:g}"
    )
    return Finding(name, score=score, passed=passed, reason=reason, children=list(findings))

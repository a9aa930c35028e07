"""promptfoo's assertions on the shape of an output: is-json, contains-json (each with an
optional JSON schema) and is-valid-openai-tools-call (0.118, `src/assertions/json.ts`,
`openai.ts`, `src/util/json.ts` `extractJsonObjects`, `src/providers/openai/util.ts`
`validateFunctionCall`).

Schemas are checked with `jsonschema` (promptfoo uses ajv): verdicts agree, the wording of a
schema error differs.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import yaml

from .....evaluators.base import EvaluatorFailure, Finding
from .base import (
    PromptfooAssertion,
    PromptfooCase,
    case_vars,
    js_json,
    output_string,
    output_value,
    render_value,
)

if TYPE_CHECKING:
    from .....evaluators.cases import Case, Output

MAX_JSON = 100_000  # promptfoo looks no further than this past an opening brace


def _validator(assertion: PromptfooAssertion, value: Any) -> Any:
    """A validator of the schema a value gives: an object, or YAML/JSON text of one."""
    schema = yaml.safe_load(value) if isinstance(value, str) else value
    if not isinstance(schema, dict):
        raise EvaluatorFailure(
            f"{assertion.base_type} assertion must have a string or object value (a JSON schema)"
        )
    import jsonschema  # imported when a schema is checked: 30 ms of every run's start otherwise

    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise EvaluatorFailure(f"the JSON schema is not valid: {exc.message}") from None
    return cls(schema)


def _schema_errors(validator: Any, instance: Any) -> str:
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    return ", ".join(f"data{''.join(f'/{p}' for p in e.absolute_path)} {e.message}" for e in errors)


class IsJson(PromptfooAssertion):
    """The output is JSON (and, with a value, valid under that schema). A schema failure
    reads as a failure even under `not-`, as in promptfoo."""

    async def evaluate(self, ev: Any, case: Case, output: Output) -> Finding:
        text = output_string(output)
        try:
            parsed = json.loads(text)
            ok = not self.inverse
        except ValueError:
            ok = self.inverse
            parsed = None
        value = self.rendered(case)
        if ok and value not in (None, "", 0, False):
            validator = _validator(self, value)
            errors = _schema_errors(validator, parsed)
            if errors:
                return self.result(
                    False,
                    reason=f"JSON does not conform to the provided schema. Errors: {errors}",
                )
        return self.result(ok, reason="" if ok else "Expected output to be valid JSON")


def json_objects(text: str) -> list[Any]:
    """The JSON objects found in a text, as promptfoo finds them: from each `{`, the span to
    its balancing `}` (or the text's end, closed with the braces missing) read as JSON (or
    YAML's flow form, which promptfoo's parser accepts too); the search goes on after each
    object found."""
    found: list[Any] = []
    i = 0
    while i < len(text):
        if text[i] != "{":
            i += 1
            continue
        opened, closed, j = 1, 0, i + 1
        end = min(i + MAX_JSON, len(text))
        next_i = i + 1
        while j < end and opened > closed:
            if text[j] == "{":
                opened += 1
            elif text[j] == "}":
                closed += 1
            j += 1
            if opened == closed or j == len(text) or j == i + MAX_JSON:
                candidate = text[i:j] + "}" * max(0, opened - closed)
                parsed = _parsed(candidate)
                if isinstance(parsed, dict | list):
                    found.append(parsed)
                    next_i = j
                    break
                if opened == closed:
                    break
        i = next_i
    return found


def _parsed(candidate: str) -> Any:
    try:
        return json.loads(candidate)
    except ValueError:
        pass
    try:
        return yaml.safe_load(candidate)
    except yaml.YAMLError:
        return None


class ContainsJson(PromptfooAssertion):
    """Some JSON object appears in the output (with a value: one valid under that schema)."""

    async def evaluate(self, ev: Any, case: Case, output: Output) -> Finding:
        objects = json_objects(output_string(output))
        ok = not objects if self.inverse else bool(objects)
        reason = "Expected output to contain valid JSON"
        value = self.rendered(case)
        if value not in (None, "", 0, False):
            validator = _validator(self, value) if objects else None
            for obj in objects:
                errors = _schema_errors(validator, obj)
                ok = not errors
                if ok:
                    break
                reason = f"JSON does not conform to the provided schema. Errors: {errors}"
        return self.result(ok, reason="" if ok else reason)


def _tool_calls(output: Output) -> Any:
    """The output as OpenAI's `tool_calls` list: a structured output as given (its
    `tool_calls` when it is an object holding them), else the calls the target reported."""
    value = output_value(output)
    if isinstance(value, dict) and "tool_calls" in value:
        return value["tool_calls"]
    if not isinstance(value, str) or not output.tool_calls:
        return value
    return [
        {
            "type": "function",
            "function": {
                "name": call.get("name"),
                "arguments": call["arguments"]
                if isinstance(call.get("arguments"), str)
                else json.dumps(call.get("arguments", {})),
            },
        }
        for call in output.tool_calls
    ]


def _provider_tools(case: Case) -> Any:
    if isinstance(case, PromptfooCase):
        return case.provider_config.get("tools")
    meta = case.metadata if isinstance(case.metadata, dict) else {}
    config = meta.get("provider_config")
    return config.get("tools") if isinstance(config, dict) else None


class ToolsCall(PromptfooAssertion):
    """Every tool call in the output names a function of the provider's `tools` and its
    arguments are valid under that function's parameters schema. `not-` changes nothing
    (promptfoo's handler ignores it)."""

    async def evaluate(self, ev: Any, case: Case, output: Output) -> Finding:
        calls = _tool_calls(output)
        if (
            not isinstance(calls, list)
            or not calls
            or not isinstance(calls[0], dict)
            or not isinstance(calls[0].get("function"), dict)
            or not isinstance(calls[0]["function"].get("name"), str)
            or not isinstance(calls[0]["function"].get("arguments"), str)
        ):
            return self.result(
                False,
                reason=f"OpenAI did not return a valid-looking tools response: {js_json(calls)}",
            )
        tools = _provider_tools(case)
        if not isinstance(tools, list):
            raise EvaluatorFailure(
                "Tools are expected to be an array of objects with a function property. "
                f"Got: {js_json(tools)}"
            )
        functions = [
            t["function"]
            for t in render_value(tools, case_vars(case))
            if isinstance(t, dict) and t.get("type") == "function" and "function" in t
        ]
        for call in calls:
            problem = _call_problem(
                call.get("function") if isinstance(call, dict) else None, functions
            )
            if problem:
                return self.result(False, reason=problem)
        return self.result(True)


def _call_problem(call: Any, functions: list[Any]) -> str | None:
    if (
        not isinstance(call, dict)
        or not isinstance(call.get("name"), str)
        or not isinstance(call.get("arguments"), str)
    ):
        return f"OpenAI did not return a valid-looking function call: {js_json(call)}"
    try:
        arguments = json.loads(call["arguments"])
    except ValueError as exc:
        return f"the arguments of {call['name']} are not JSON: {exc}"
    schema = next(
        (
            f.get("parameters")
            for f in functions
            if isinstance(f, dict) and f.get("name") == call["name"]
        ),
        None,
    )
    if not schema:
        return f'Called "{call["name"]}", but there is no function with that name'
    import jsonschema

    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = [e.message for e in validator.iter_errors(arguments)]
    if errors:
        return f'Call to "{call["name"]}" does not match schema: {"; ".join(errors)}'
    return None

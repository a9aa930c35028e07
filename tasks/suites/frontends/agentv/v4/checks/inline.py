"""AgentV 4's `python` and `javascript` assertions (packages/core/src/evaluation/graders/
promptfoo-assertions.ts at 58f316ca2), which are not promptfoo's: same names, another
context and other result rules.

- The value is code: one line is the returned expression, several lines a function body
  (python: `main(output, context)`, buildPythonProgram; javascript: `new Function('output',
  'context', body)`, buildFunctionBody adding `return` to one statement). A `file://`
  value is code to AgentV too, and fails there: accord refuses it at load.
- `context` (buildAssertionContext) holds what AgentV gives every grader, not promptfoo's
  `vars`/`prompt`/`test`: `criteria`, `expected_output` (a conversation turn's expected
  messages; none for a test, whose `expected_output` var is a var only), `input`
  (messages), `metadata` (the test's), `trace`, `token_usage`, `cost_usd`, `duration_ms`,
  `file_changes`, `workspace_path`, `dependency_results`, and `config` when the entry has
  one. Python reads these names in snake_case, javascript in camelCase (`expectedOutput`).
  `trace` is accord's summary of the target's tool calls (event_count, tool_calls,
  error_count), without AgentV's messages and events.
- The result (normalizeScriptResult): true/false score 1/0; a number is the score (clamped
  into [0, 1]), passing at `threshold` (default: above 0); an object's `score`, else 1 for
  `pass: true`, else 0; anything else (a list, text, null) scores 0. Code that raises, a
  non-zero exit, output that is no JSON, or a program that cannot run, scores 0 with
  "Python assertion failed: ..." (javascript: "Javascript assertion failed: ..."), as AgentV
  scores them.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .......engine.errors import ConfigError
from ......evaluators.base import Finding
from .....core.targets import TargetFailure, run_program
from ....promptfoo.asserts.base import PromptfooAssertion

if TYPE_CHECKING:
    from ......evaluators.cases import Case, Output
    from ......evaluators.judging import EvalContext

TIMEOUT = 300.0  # seconds the code may run
KEYS = frozenset({"type", "value", "threshold", "weight", "metric", "config"})
NO_CALLS = {"event_count": 0, "tool_calls": {}, "error_count": 0}  # a trace with no tool call
# the node program running a javascript assertion as AgentV runs it in its own process
_NODE = """\
const chunks = [];
process.stdin.on('data', (c) => chunks.push(c));
process.stdin.on('end', async () => {
  const { body, output, context } = JSON.parse(Buffer.concat(chunks).toString());
  try {
    const result = await new Function('output', 'context', body)(output, context);
    const found = result === undefined ? null : result;
    process.stdout.write(JSON.stringify({ ok: true, result: found }));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stdout.write(JSON.stringify({ ok: false, error: message }));
  }
});
"""


def build_inline(
    entry: dict[str, Any], *, root: Path, where: str, name: str, inverse: bool
) -> AgentVInline:
    kind = str(entry["type"])
    code = entry.get("value")
    if isinstance(code, str) and code.strip().startswith("file://"):
        raise ConfigError(
            f"{where}: AgentV runs a {kind} assertion's value as code, so a 'file://' "
            "reference fails there: put the code in 'value', or run the file as a script "
            "grader (type: script, command: [python3, FILE])"
        )
    from ....promptfoo.asserts.scripts import node_path

    if kind == "javascript" and node_path() is None:
        raise ConfigError(f"{where}: a javascript assertion needs node on the PATH; install "
                          "Node.js, or write the check as a python assertion")  # fmt: skip
    extra = sorted(set(entry) - KEYS)
    if extra:
        raise ConfigError(f"{where}: '{extra[0]}' is no key of an AgentV {kind} assertion")
    threshold = entry.get("threshold")
    # grader-parser.ts: a threshold counts when it is a number from 0 to 1
    bar: float | None = None
    if isinstance(threshold, int | float) and not isinstance(threshold, bool):
        bar = float(threshold) if 0 <= threshold <= 1 else None
    config = entry.get("config")
    weight = entry.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
        raise ConfigError(f"{where}: 'weight' is a number, 0 or more")
    return AgentVInline(
        type=kind, base_type=kind, name=name, metric=entry.get("metric"), weight=float(weight),
        value=code, inverse=inverse, folder=str(root), bar=bar,
        config=config if isinstance(config, dict) else None,
    )  # fmt: skip


def python_program(code: str) -> str:
    """buildPythonProgram: the code as the body of `main(output, context)`."""
    body = (
        "\n".join(f"    {line}" for line in code.split("\n"))
        if "\n" in code
        else f"    return {code}"
    )
    return (
        "import json\nimport sys\n\npayload = json.load(sys.stdin)\n\n"
        f"def main(output, context):\n{body}\n\n"
        'result = main(payload.get("output", ""), payload.get("context", {}))\n'
        "print(json.dumps(result))\n"
    )


def function_body(code: str) -> str:
    """buildFunctionBody: one statement without `return` returns its value."""
    trimmed = re.sub(r";+\s*$", "", code.strip())
    if "\n" in trimmed or re.search(r"\breturn\b", trimmed):
        return trimmed
    last = trimmed.rfind(";")
    if re.match(r"^(const|let|var)\s", trimmed) and last >= 0:
        return f"{trimmed[: last + 1]} return {trimmed[last + 1 :].strip()}"
    return f"return {trimmed}"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _clamp(value: float) -> float:
    return 0.0 if math.isnan(value) or math.isinf(value) else min(1.0, max(0.0, value))


class AgentVInline(PromptfooAssertion):
    family: ClassVar[str] = "agentv4"
    folder: str
    bar: float | None = None  # the entry's threshold

    deterministic: ClassVar[bool] = True

    def context(self, case: Case, output: Output) -> dict[str, Any]:
        from .script import payload

        given = payload(case, output, None)
        found = {
            "criteria": given["criteria"],
            "expected_output": given["expected_output"],
            "input": given["input"],
            "metadata": given["metadata"],
            "trace": given["trace_summary"] or dict(NO_CALLS),
            "token_usage": given["token_usage"],
            "cost_usd": given["cost_usd"],
            "duration_ms": None if given["duration_ms"] is None else round(given["duration_ms"]),
            "file_changes": None,
            "workspace_path": given["workspace_path"],
            "dependency_results": None,
        }
        if self.config is not None:
            found["config"] = self.config
        if self.type == "javascript":
            return {_camel(k): v for k, v in found.items()}
        return found

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        label = "Python" if self.type == "python" else "Javascript"
        context = self.context(case, output)
        code = str(self.value)
        if self.type == "python":
            argv = ["python3", "-c", python_program(code)]
            stdin = {"output": output.text, "context": context}
        else:
            argv = ["node", "-e", _NODE]
            stdin = {"body": function_body(code), "output": output.text, "context": context}
        text = json.dumps(stdin, ensure_ascii=False, default=str).encode()
        try:
            raw_out, raw_err, code_ = await run_program(argv, text, Path(self.folder), TIMEOUT, {})
        except TargetFailure as exc:
            return self._found(0.0, False, f"{label} assertion failed: {exc}")
        stdout, stderr = raw_out.decode(errors="replace").strip(), raw_err.decode(errors="replace")
        if code_ != 0:
            why = stderr.strip() or f"{self.type} exited with code {code_}"
            return self._found(0.0, False, f"{label} assertion failed: {why}")
        try:
            result = json.loads(stdout)
        except ValueError as exc:
            return self._found(0.0, False, f"{label} assertion failed: {exc}")
        if self.type == "javascript":
            if not isinstance(result, dict) or not result.get("ok"):
                error = result.get("error") if isinstance(result, dict) else stdout
                return self._found(0.0, False, f"{label} assertion failed: {error}")
            result = result.get("result")
        return self._normalized(result, f"{label} assertion returned a failing result", label)

    def _normalized(self, result: Any, failing: str, label: str) -> Finding:
        """normalizeScriptResult."""
        bar = self.bar if self.bar is not None else 5e-324  # Number.EPSILON's role: above 0
        if isinstance(result, bool):
            return self._found(float(result), result, "Assertion passed" if result else failing)
        if isinstance(result, int | float):
            score = _clamp(float(result))
            ok = score >= bar
            return self._found(score, ok, "Assertion passed" if ok else failing)
        if result is None:  # reading `.score` of null throws: the grader fails
            return self._found(0.0, False, f"{label} assertion failed: the result is null")
        given = result if isinstance(result, dict) else {}
        number = given.get("score")
        if isinstance(number, int | float) and not isinstance(number, bool):
            score = _clamp(float(number))
        else:
            score = 1.0 if given.get("pass") is True else 0.0
        verdict = given.get("pass")
        ok = bool(verdict) if verdict is not None else score >= bar
        reason = given.get("reason")
        text = reason if isinstance(reason, str) else ("Assertion passed" if ok else failing)
        return self._found(score, ok, text)

    def _found(self, score: float, ok: bool, reason: str) -> Finding:
        if self.inverse:  # AgentV's negate: 1 - score, the verdict swapped
            score, ok = _clamp(1.0 - score), not ok
        return self.result(ok, score, reason)

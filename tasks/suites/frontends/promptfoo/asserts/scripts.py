"""promptfoo's `python` and `javascript` assertions (0.118, `src/assertions/python.ts`,
`javascript.ts`), each run in a subprocess under accord's rules for programs
(`engine/programs.py`: a time limit, its process group killed, output capped).

The code is the assertion's value: an expression (`output.lower() == 'yes'`), a body of
several lines (its `return` gives the result), or `file://path.py[:function]` (default
function `get_assert`) / `file://path.js[:function]`. A file must lie inside the config's
folder. The function gets the output (text, or the structured value) and promptfoo's
context (`prompt`, `vars`, `test`, `config`, `provider`).

What the result means, as in promptfoo:
- python: true/false (or 'true'/'false') pass or fail with score 1/0; a number is the score,
  passing above 0 (or at `threshold`); an object `{pass, score, reason}` is the result
  (failing below `threshold`); JSON text of one likewise. `not-` is ignored.
- javascript: a boolean XOR `not-`; a number as for python; an object as it is.
An exception in the assertion's code fails it with score 0 and the error as its reason (so
promptfoo scores it); an interpreter that cannot start, a timeout or a result of the wrong
kind is an error on the assertion.

The interpreter: `PROMPTFOO_PYTHON`, else the one running accord; `node` on the PATH (a
javascript assertion is refused at load when there is none).
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ......engine.errors import ConfigError
from ......engine.paths import inside
from .....evaluators.base import EvaluatorFailure, Finding
from ....core.targets import TargetFailure, run_program
from .base import (
    FILE,
    PromptfooAssertion,
    case_options,
    case_prompt,
    case_vars,
    output_value,
)
from .runners import NODE_MARKER, NODE_RUNNER, PYTHON_MARKER, PYTHON_RUNNER

if TYPE_CHECKING:
    from .....evaluators.cases import Case, Output
    from .....evaluators.judging import EvalContext

TIMEOUT = 300.0  # seconds an assertion's code may run
PYTHON_SUFFIXES = (".py",)
NODE_SUFFIXES = (".js", ".cjs", ".mjs")


def split_reference(reference: str) -> tuple[str, str | None]:
    """`file://path.py:function` as (path, function)."""
    body = reference[len(FILE) :]
    match = re.fullmatch(r"(.+?\.[A-Za-z]+)(?::([A-Za-z_$][\w$]*))?", body)
    if match is None:
        return body, None
    return match.group(1), match.group(2)


class Script(PromptfooAssertion):
    """What both script assertions share: the code or file, and running it."""

    deterministic: ClassVar[bool] = True
    suffixes: ClassVar[tuple[str, ...]] = ()
    default_function: ClassVar[str | None] = None
    language: ClassVar[str] = ""
    file: str | None = None
    function: str | None = None
    folder: str | None = None

    def prepared(self, base_dir: Path) -> PromptfooAssertion:
        value = self.value
        if not isinstance(value, str):
            raise ConfigError(f"a {self.base_type} assertion's value is its code (a string)")
        if not value.startswith(FILE):
            return self
        relative, function = split_reference(value)
        if not relative.lower().endswith(self.suffixes):
            raise ConfigError(
                f"{value}: a {self.base_type} assertion's file is a "
                f"{' or '.join(self.suffixes)} file"
            )
        path = inside(base_dir, relative, f"the {self.base_type} assertion's file")
        if not path.is_file():
            raise ConfigError(f"{value}: no such file under {base_dir}")
        return self.model_copy(
            update={
                "file": str(path.resolve()),
                "function": function or self.default_function,
                "folder": str(path.resolve().parent),
            }
        )

    def context(self, case: Case) -> dict[str, Any]:
        """promptfoo's assertion context, as plain data."""
        variables = case_vars(case)
        test = {"vars": variables, "options": case_options(case)}
        return {
            "prompt": case_prompt(case),
            "vars": variables,
            "test": test,
            "config": self.config or {},
            "provider": {"id": case.target or ""},
        }

    def request(self, case: Case, output: Output) -> dict[str, Any]:
        request: dict[str, Any] = {
            "output": output_value(output),
            "context": self.context(case),
        }
        if self.file is not None:
            request.update(file=self.file, function=self.function, folder=self.folder)
        else:
            request.update(self.inline(str(self.rendered(case))))
        return request

    def inline(self, code: str) -> dict[str, Any]:
        raise NotImplementedError

    async def run(
        self, ev: EvalContext, argv: list[str], marker: str, request: dict[str, Any]
    ) -> dict[str, Any]:
        stdin = json.dumps(request, ensure_ascii=False, default=str).encode()
        try:
            stdout, stderr, code = await run_program(argv, stdin, ev.task.root, TIMEOUT, {})
        except TargetFailure as exc:
            raise EvaluatorFailure(f"{self.language} assertion: {exc}") from None
        text = stdout.decode(errors="replace")
        if marker not in text:
            tail = stderr.decode(errors="replace").strip()[-800:]
            raise EvaluatorFailure(
                f"{self.language} assertion exited with {code} without an answer: "
                f"{tail or '(no stderr)'}"
            )
        answer = json.loads(text.rsplit(marker, 1)[1].strip().splitlines()[0])
        if not isinstance(answer, dict):
            raise EvaluatorFailure(f"{self.language} assertion: unreadable answer {answer!r}")
        return answer


def is_grading_result(value: Any) -> bool:
    """promptfoo's `isGradingResult`: pass (boolean), score (number), reason (string)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("pass"), bool)
        and isinstance(value.get("score"), int | float)
        and not isinstance(value.get("score"), bool)
        and isinstance(value.get("reason"), str)
    )


def camel_keys(value: dict[str, Any]) -> dict[str, Any]:
    """A Python result's snake_case keys as promptfoo reads them (`pass_` is `pass`)."""
    out = dict(value)
    for snake, camel in (("pass_", "pass"), ("named_scores", "namedScores"),
                         ("component_results", "componentResults"),
                         ("tokens_used", "tokensUsed")):  # fmt: skip
        if snake in out and camel not in out:
            out[camel] = out[snake]
    return out


def parse_float(text: str) -> float:
    """JavaScript's `parseFloat`: the longest number at the start of the text, else NaN."""
    match = re.match(
        r"\s*([+-]?(?:Infinity|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))", text
    )
    if match is None:
        return math.nan
    number = match.group(1)
    return float(number.replace("Infinity", "inf"))


def js_string(value: Any) -> str:
    """JavaScript's `String(value)` of a JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class Python(Script):
    suffixes: ClassVar[tuple[str, ...]] = PYTHON_SUFFIXES
    default_function: ClassVar[str | None] = "get_assert"
    language: ClassVar[str] = "python"
    settles: ClassVar[int] = 1

    def inline(self, code: str) -> dict[str, Any]:
        """promptfoo's wrapper: `def main(output, context):` around the code, a one-line
        value being returned, the lines of a longer one indented as its first indented
        line is."""
        if "\n" in code:
            indent = re.search(r"^(?!\s*$)\s+", code, re.MULTILINE)
            step = indent.group(0) if indent else "    "
            body = "\n".join(f"{step}{line}" for line in code.split("\n"))
        else:
            body = f"    return {code}"
        return {"code": f"import json\n\ndef main(output, context):\n{body}\n", "function": "main"}

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        interpreter = os.environ.get("PROMPTFOO_PYTHON") or sys.executable
        answer = await self.run(
            ev, [interpreter, "-c", PYTHON_RUNNER], PYTHON_MARKER, self.request(case, output)
        )
        if "error" in answer:
            return self.failed(f"Python code execution failed: {answer['error']}")
        return self.judged(answer.get("result"))

    def failed(self, reason: str) -> Finding:
        return self.result(False, 0.0, reason)

    def judged(self, result: Any) -> Finding:
        limit = self.pass_threshold
        if result is True or (isinstance(result, str) and result.lower() == "true"):
            return self.result(True, 1.0)
        if result is False or (isinstance(result, str) and result.lower() == "false"):
            return self.result(False, 0.0, self.returned())
        if isinstance(result, str) and result.startswith("{"):
            try:
                parsed = json.loads(result)
            except ValueError as exc:
                return self.failed(f"Python code execution failed: Invalid JSON: {exc}")
            if not is_grading_result(parsed):
                return self.failed(f"Python code execution failed: {_wrong_kind(result)}")
            return self.graded(parsed)
        if isinstance(result, dict):
            mapped = camel_keys(result)
            if not is_grading_result(mapped):
                return self.failed(f"Python code execution failed: {_wrong_kind(mapped)}")
            if limit and mapped["score"] < limit:
                shown = js_string(mapped["score"])
                note = f"Python score {shown} is less than threshold {js_string(limit)}"
                mapped["pass"] = False
                mapped["reason"] = f"{note}: {mapped['reason']}" if mapped["reason"] else note
            return self.graded(mapped)
        score = parse_float(js_string(result))
        if math.isnan(score):
            return self.failed(f"Python code execution failed: {_wrong_kind(result)}")
        ok = score >= limit if limit else score > 0
        if limit is not None and score < limit:
            ok = False
        return self.result(ok, score, "" if ok else self.returned())

    def returned(self) -> str:
        return f"Python code returned false\n{self.value}"

    def graded(self, result: dict[str, Any]) -> Finding:
        return self.result(bool(result["pass"]), float(result["score"]), str(result["reason"]))


def _wrong_kind(result: Any) -> str:
    shown = result if isinstance(result, str) else json.dumps(result, default=str)
    return (
        "Python assertion must return a boolean, number, or {pass, score, reason} object. "
        f"Got instead: {shown}"
    )


def node_path() -> str | None:
    return shutil.which("node")


class Javascript(Script):
    suffixes: ClassVar[tuple[str, ...]] = NODE_SUFFIXES
    language: ClassVar[str] = "javascript"

    def prepared(self, base_dir: Path) -> PromptfooAssertion:
        if node_path() is None:
            raise ConfigError(
                "javascript assertions run on Node.js, and no 'node' is on the PATH: install "
                "Node.js, or write the check as a python assertion"
            )
        return super().prepared(base_dir)

    def inline(self, code: str) -> dict[str, Any]:
        """promptfoo's wrapper: a one-line value is returned, a longer one is the body."""
        code = code.rstrip()
        return {"code": code if "\n" in code else f"return {code}"}

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        node = node_path()
        if node is None:
            raise EvaluatorFailure("no 'node' on the PATH to run a javascript assertion")
        answer = await self.run(
            ev, [node, "-e", NODE_RUNNER], NODE_MARKER, self.request(case, output)
        )
        code = str(self.value).rstrip()
        if "error" in answer:
            return self.result(
                False, 0.0, f"Custom function threw error: {answer['error']}\n{code}"
            )
        result, kind = answer.get("result"), answer.get("kind")
        if kind == "boolean":
            ok = bool(result) != self.inverse
            returned = f"Custom function returned {'true' if self.inverse else 'false'}\n{code}"
            return self.result(ok, reason="" if ok else returned)
        if kind == "number" and isinstance(result, int | float):
            limit = self.pass_threshold
            ok = result >= limit if limit else result > 0
            returned = f"Custom function returned false\n{code}"
            return self.result(ok, float(result), "" if ok else returned)
        if kind == "object" and isinstance(result, dict) and is_grading_result(result):
            return self.result(bool(result["pass"]), float(result["score"]), str(result["reason"]))
        return self.result(
            False,
            0.0,
            "Custom function threw error: Custom function must return a boolean, number, or "
            f"GradingResult object. Got type {kind}: {json.dumps(result)}\n{code}",
        )

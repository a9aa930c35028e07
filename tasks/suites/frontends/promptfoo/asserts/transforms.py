"""An assertion's `transform` (promptfoo 0.118, `src/assertions/index.ts` runAssertion and
`src/util/transform.ts`): JavaScript run on the output before the check, its result the
output the assertion checks.

The transform is inline code, called as `new Function('output', 'context', code)` with the
code returned when it is one line, or `file://path.js[:function]`; its context is
`{vars, prompt: {label: the rendered prompt}}`. A result that is no string is the value the
assertion checks (as a structured output, its text JSON). A transform that throws, or
returns nothing, makes the assertion an error, as it makes promptfoo's test one. Python
transform files are refused at load.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import SerializeAsAny

from ......engine.errors import ConfigError
from ......engine.paths import inside
from .....evaluators.base import EvaluatorFailure
from ....core.targets import TargetFailure, run_program
from .base import FILE, PromptfooAssertion, case_prompt, case_vars, output_value
from .graded import js_json
from .runners import NODE_MARKER, NODE_RUNNER
from .scripts import NODE_SUFFIXES, TIMEOUT, node_path, split_reference

if TYPE_CHECKING:
    from .....evaluators.base import Finding, ThresholdSpec
    from .....evaluators.cases import Case, Output
    from .....evaluators.judging import EvalContext


class Transformed(PromptfooAssertion):
    """An assertion (`inner`) checking its `transform`'s result instead of the output."""

    inner: SerializeAsAny[PromptfooAssertion]
    code: str | None = None
    file: str | None = None
    function: str | None = None
    # a test's options.transform: its result is the test's output, as promptfoo's results
    # write it (`response.output`); kept on the finding for the -o files
    test_level: bool = False

    def calls_model(self, judge_model: str | None) -> bool:
        return self.inner.calls_model(judge_model)

    def gate(self) -> ThresholdSpec | None:
        return self.inner.gate()

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        node = node_path()
        if node is None:
            raise EvaluatorFailure("no 'node' on the PATH to run the assertion's transform")
        request: dict[str, Any] = {
            "output": output_value(output),
            "context": {"vars": case_vars(case), "prompt": {"label": case_prompt(case)}},
        }
        if self.file is not None:
            folder = str(Path(self.file).parent)
            request.update(file=self.file, function=self.function, folder=folder)
        else:
            assert self.code is not None
            code = self.code.rstrip()
            request["code"] = code if "\n" in code else f"return {code}"
        stdin = json.dumps(request, ensure_ascii=False, default=str).encode()
        try:
            stdout, stderr, status = await run_program(
                [node, "-e", NODE_RUNNER], stdin, ev.task.root, TIMEOUT, {}
            )
        except TargetFailure as exc:
            raise EvaluatorFailure(f"transform: {exc}") from None
        text = stdout.decode(errors="replace")
        if NODE_MARKER not in text:
            tail = stderr.decode(errors="replace").strip()[-800:]
            raise EvaluatorFailure(f"transform exited with {status}: {tail or '(no stderr)'}")
        try:
            answer = json.loads(text.rsplit(NODE_MARKER, 1)[1].strip().splitlines()[0])
        except (ValueError, IndexError):
            answer = None
        if not isinstance(answer, dict):
            raise EvaluatorFailure("transform: it printed an answer that does not read") from None
        if "error" in answer:
            raise EvaluatorFailure(f"transform: {answer['error']}")
        result = answer.get("result")
        if result is None:  # promptfoo's transform(): null or undefined is an error
            raise EvaluatorFailure(
                f"Transform function did not return a value\n\n{self.code or self.file}"
            )
        changed = (
            dataclasses.replace(output, text=result, value=None)
            if isinstance(result, str)
            else dataclasses.replace(output, text=js_json(result), value=result)
        )
        finding = await self.inner.evaluate(ev, case, changed)
        if self.test_level:
            finding.metadata["transformedOutput"] = result
        return finding


def with_transform(
    inner: PromptfooAssertion, transform: Any, base_dir: Path, where: str, test_level: bool = False
) -> Transformed:
    """`inner` checking the result of `transform` (the entry's `transform` value)."""
    if not isinstance(transform, str) or not transform.strip():
        raise ConfigError(f"{where}: 'transform' is JavaScript code or file://path.js")
    if node_path() is None:
        raise ConfigError(
            f"{where}: an assertion's transform runs on Node.js, and no 'node' is on the PATH"
        )
    fields: dict[str, Any] = {"code": transform}
    if transform.startswith(FILE):
        relative, function = split_reference(transform)
        if not relative.lower().endswith(NODE_SUFFIXES):
            raise ConfigError(
                f"{where}: a transform file is a {' or '.join(NODE_SUFFIXES)} file, not "
                f"'{relative}' (accord runs JavaScript transforms only)"
            )
        path = inside(base_dir, relative, "the assertion's transform file")
        if not path.is_file():
            raise ConfigError(f"{where}: {transform}: no such file under {base_dir}")
        fields = {"file": str(path.resolve()), "function": function}
    shared = {k: getattr(inner, k) for k in ("type", "base_type", "inverse", "name",
                                             "metric", "weight", "pass_threshold")}  # fmt: skip
    return Transformed(inner=inner, test_level=test_level, **shared, **fields)

"""AgentV's program and mock providers as targets.

`cli`: `command_template` run by the shell with `{PROMPT}`, `{GUIDELINES}`, `{EVAL_ID}`,
`{ATTEMPT}`, `{FILES}` and `{OUTPUT_FILE}` filled in: each value reaches the command through
an environment variable, never as text the shell parses (command_template.py). The answer
is what the program writes to `{OUTPUT_FILE}`, else its stdout: AgentV's JSON
(`output_messages` with their `tool_calls`, or `text`, and `token_usage`, `cost_usd`,
`duration_ms`) or plain text. A non-zero exit errors the case with its stderr.

`mock`: answers every case with `response`.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from accord.tasks.suites.agentv.command_template import ENV_PREFIX, render, template_problem
from accord.tasks.suites.core.cases import Case, Output
from accord.tasks.suites.core.targets import Target, TargetFailure, parse_trace, run_program, target

if TYPE_CHECKING:
    from accord.engine.context import TaskContext


@target("cli")
class CliTarget(Target):
    """A program given the case through its command line (AgentV's `cli` provider)."""

    type: Literal["cli"] = "cli"
    command_template: str = Field(min_length=1, description="Run by the shell; see above.")
    cwd: str | None = Field(None, description="Working folder, relative to the project root.")
    timeout: float | None = Field(120.0, gt=0, allow_inf_nan=False)

    @field_validator("command_template")
    @classmethod
    def _fillable(cls, value: str) -> str:
        problem = template_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    def describe(self) -> str:
        return f"cli {self.command_template.split()[0]}"

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        with tempfile.TemporaryDirectory(prefix="accord-cli-") as scratch:
            output_file = Path(scratch) / "output.json"
            files = [str(f) for f in getattr(case, "input_files", ())]
            values = {
                "PROMPT": getattr(case, "prompt_text", lambda: case.prompt)(),
                "GUIDELINES": getattr(case, "guidelines", ""),
                "EVAL_ID": case.id,
                "ATTEMPT": str(repeat),
                "OUTPUT_FILE": str(output_file),
                "FILES": " ".join(files),
            }
            if any("\0" in value for value in values.values()):
                raise TargetFailure(
                    f"{self.describe()}: a value holds a NUL character, which no program "
                    "argument or environment variable can carry"
                )
            try:
                command = render(self.command_template, values)
            except ValueError as exc:
                raise TargetFailure(f"{self.describe()}: {exc}") from None
            env = {ENV_PREFIX + name: value for name, value in values.items()}
            # the input files are the shell's arguments: `{FILES}` unquoted is "$@"
            argv = ["/bin/sh", "-c", command, "sh", *files]
            cwd = tctx.root / (self.cwd or ".")
            stdout, stderr, code = await run_program(argv, b"", cwd, self.timeout or 120, env)
            if code != 0:
                tail = stderr.decode(errors="replace").strip()[-500:]
                raise TargetFailure(
                    f"{self.describe()} exited with {code}: {tail or '(no stderr)'}"
                )
            text = output_file.read_text(encoding="utf-8") if output_file.is_file() else ""
        return parse_trace(text or stdout.decode(errors="replace"))


@target("reply")
class ReplyTarget(Target):
    """Answers every case with the same text (AgentV's `mock` provider)."""

    type: Literal["reply"] = "reply"
    text: str = ""

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        return Output(text=self.text)

"""AgentV's program and mock providers as targets.

`cli`: `command_template` run by the shell with `{PROMPT}`, `{GUIDELINES}`, `{EVAL_ID}`,
`{ATTEMPT}`, `{FILES}` and `{OUTPUT_FILE}` filled in (each quoted for the shell). The answer
is what the program writes to `{OUTPUT_FILE}`, else its stdout: AgentV's JSON
(`output_messages` with their `tool_calls`, or `text`, and `token_usage`, `cost_usd`,
`duration_ms`) or plain text. A non-zero exit errors the case with its stderr.

`mock`: answers every case with `response`.
"""

from __future__ import annotations

import re
import shlex
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from accord.tasks.suites.core.cases import Case, Output
from accord.tasks.suites.core.targets import Target, TargetFailure, parse_trace, run_program, target

if TYPE_CHECKING:
    from accord.engine.context import TaskContext

PLACEHOLDERS = ("PROMPT", "GUIDELINES", "EVAL_ID", "ATTEMPT", "FILES", "OUTPUT_FILE")
_PLACEHOLDER = re.compile(r"\{([A-Z_]+)\}")


@target("cli")
class CliTarget(Target):
    """A program given the case through its command line (AgentV's `cli` provider)."""

    type: Literal["cli"] = "cli"
    command_template: str = Field(min_length=1, description="Run by the shell; see above.")
    cwd: str | None = Field(None, description="Working folder, relative to the project root.")
    timeout: float | None = Field(120.0, gt=0, allow_inf_nan=False)

    @field_validator("command_template")
    @classmethod
    def _known_placeholders(cls, value: str) -> str:
        unknown = sorted(set(_PLACEHOLDER.findall(value)) - set(PLACEHOLDERS))
        if unknown:
            raise ValueError(
                f"unknown placeholder {{{unknown[0]}}} in command_template (known: "
                + ", ".join(f"{{{p}}}" for p in PLACEHOLDERS)
                + ")"
            )
        return value

    def describe(self) -> str:
        return f"cli {self.command_template.split()[0]}"

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        with tempfile.TemporaryDirectory(prefix="accord-cli-") as scratch:
            output_file = Path(scratch) / "output.json"
            values = {
                "PROMPT": getattr(case, "prompt_text", lambda: case.prompt)(),
                "GUIDELINES": getattr(case, "guidelines", ""),
                "EVAL_ID": case.id,
                "ATTEMPT": str(repeat),
                "OUTPUT_FILE": str(output_file),
            }
            files = " ".join(shlex.quote(f) for f in getattr(case, "input_files", ()))

            def fill(match: re.Match[str]) -> str:
                name = match.group(1)
                return files if name == "FILES" else shlex.quote(values[name])

            command = _PLACEHOLDER.sub(fill, self.command_template)
            stdout, stderr, code = await run_program(
                ["/bin/sh", "-c", command], b"", tctx.root / (self.cwd or "."), self.timeout or 120
            )
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

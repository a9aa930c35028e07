"""AgentV's program and mock providers as targets.

`cli`: `command_template` run by the shell with `{PROMPT}`, `{GUIDELINES}`, `{EVAL_ID}`,
`{ATTEMPT}`, `{FILES}` and `{OUTPUT_FILE}` filled in: each value reaches the command through
an environment variable, never as text the shell parses (command_template.py). The answer
is what the program writes to `{OUTPUT_FILE}`, else its stdout: AgentV's JSON
(`output_messages` with their `tool_calls`, or `text`, and `token_usage`, `cost_usd`,
`duration_ms`) or plain text. A non-zero exit errors the case with its stderr.

`{FILES}` holds the test's input files and guideline files (AgentV's `file_paths`), each
formatted by `files_format` (`--file {path}`; `{basename}` too), word by word. The program
runs in the test's workspace when it has one (its `workspace.template`, or the target's
`workspace_template`), else in `cwd` from the eval file's folder (default: that folder), as
AgentV runs it. A `healthcheck` (`{type: command, command_template, cwd}` or `{type: http,
url}`) runs once before the target's first answer; a failing one errors every test.

`mock`: answers every case with `response`.
"""

from __future__ import annotations

import asyncio
import shlex
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, PrivateAttr, field_validator

from .....evaluators.cases import Case, Output
from ....core.targets import WORKSPACE, Target, TargetFailure, parse_trace, run_program, target
from .command_template import ENV_PREFIX, render, template_problem

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from ......engine.context import TaskContext


async def url_answers(url: str, timeout: float) -> tuple[bool, str]:
    """A healthcheck URL's GET: whether it answered below 400, and what it said (a `cli`
    target's `healthcheck: {url}`, in either AgentV format)."""
    from aiohttp import ClientError, ClientSession, ClientTimeout

    try:
        async with (
            ClientSession(timeout=ClientTimeout(total=timeout)) as session,
            session.get(url) as response,
        ):
            return response.status < 400, f"HTTP {response.status}"
    except (ClientError, TimeoutError) as exc:
        return False, str(exc) or type(exc).__name__


async def healthy_once(
    lock: asyncio.Lock, healthy: list[bool], probe: Callable[[], Awaitable[str | None]]
) -> None:
    """A cli provider's healthcheck, in either AgentV format: `probe` run once, before the
    first question (the other cases wait for it), its failure (a message) raised as a
    `TargetFailure` for each of them, its success kept in `healthy`."""
    async with lock:
        if healthy:
            return
        failure = await probe()
        if failure is not None:
            raise TargetFailure(failure)
        healthy.append(True)


@target("cli")
class CliTarget(Target):
    """A program given the case through its command line (AgentV's `cli` provider)."""

    type: Literal["cli"] = "cli"
    command_template: str = Field(min_length=1, description="Run by the shell; see above.")
    cwd: str | None = Field(None, description="Working folder, from the eval file's folder.")
    default_timeout: ClassVar[float | None] = 120.0
    files_format: str | None = Field(None, description="Each file in {FILES}: '--file {path}'.")
    healthcheck: dict[str, Any] | None = None
    base: str = Field("", exclude=True, description="The eval file's folder.")
    _checked: asyncio.Lock = PrivateAttr(default_factory=asyncio.Lock)
    _healthy: list[bool] = PrivateAttr(default_factory=list)

    @field_validator("command_template")
    @classmethod
    def _fillable(cls, value: str) -> str:
        problem = template_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    def describe(self) -> str:
        return f"cli {self.command_template.split()[0]}"

    def admission(self, file: Path, root: Path) -> str | None:
        from ......engine.programs import admit

        base = Path(self.base or root)
        problem = admit(self.command_template, file, root, base / (self.cwd or "."))
        check = self.healthcheck or {}
        if problem is None and "command_template" in check:
            folder = base / str(check.get("cwd") or ".")
            problem = admit(str(check["command_template"]), file, root, folder)
            problem = problem and f"healthcheck: {problem}"
        return problem

    def folder(self, tctx: TaskContext, cwd: str | None) -> Path:
        return Path(self.base or tctx.root) / (cwd or ".")

    def file_words(self, case: Case) -> list[str]:
        """The words `{FILES}` stands for: each file by `files_format` (AgentV's
        formatFileList), split into words as the shell would split the format."""
        files = list(dict.fromkeys(getattr(case, "file_paths", ())))
        if not self.files_format:
            return files
        words = shlex.split(self.files_format)
        return [
            word.replace("{path}", path).replace("{basename}", Path(path).name)
            for path in files
            for word in words
        ]

    async def check_health(self, tctx: TaskContext) -> None:
        check = self.healthcheck
        if check is None:
            return

        async def probe() -> str | None:
            if check.get("type") == "http" or "url" in check:
                timeout = float(check.get("timeout_seconds", 30))
                ok, detail = await url_answers(str(check["url"]), timeout)
            else:
                argv = ["/bin/sh", "-c", str(check.get("command_template", ""))]
                folder = self.folder(tctx, check.get("cwd"))
                timeout = float(check.get("timeout_seconds", 30))
                _out, stderr, code = await run_program(argv, b"", folder, timeout, {})
                ok = code == 0
                detail = f"exited with {code}: {stderr.decode(errors='replace').strip()[-300:]}"
            return None if ok else f"{self.describe()}: healthcheck failed ({detail})"

        await healthy_once(self._checked, self._healthy, probe)

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        await self.check_health(tctx)
        with tempfile.TemporaryDirectory(prefix="accord-cli-") as scratch:
            output_file = Path(scratch) / "output.json"
            files = self.file_words(case)
            values = {
                "PROMPT": getattr(case, "prompt_text", lambda: case.prompt)(),
                "GUIDELINES": getattr(case, "guidelines", ""),
                "EVAL_ID": case.id,
                "ATTEMPT": str(repeat),
                "OUTPUT_FILE": str(output_file),
                "FILES": " ".join(files),
            }
            if any("\0" in value for value in [*values.values(), *files]):
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
            workspace = WORKSPACE.get()
            cwd = Path(workspace) if workspace else self.folder(tctx, self.cwd)
            stdout, stderr, code = await run_program(argv, b"", cwd, self.seconds(), env)
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

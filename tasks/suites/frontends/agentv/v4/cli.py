"""AgentV's `cli` provider in a provider catalog (`.agentv/providers.yaml`), as AgentV 4 runs
it (commit 58f316ca2: providers/targets.ts resolveCliConfig, normalizeCliTargetInput;
providers/cli.ts CliProvider.invoke, buildTemplateValues, parseOutputContent):

    - id: cli
      label: fixture_replay
      command: python3 scripts/replay.py --prompt {PROMPT} --output {OUTPUT_FILE}
      cwd: ..                  # from the eval file's folder (its folder when not given)
      timeout_seconds: 60
      healthcheck: {command: python3 scripts/replay.py --healthcheck, cwd: ..}

The command runs by `/bin/sh` in `cwd`, with `{PROMPT}` (the question as AgentV formats it
for its providers), `{PROMPT_FILE}` (a file holding it), `{EVAL_ID}`, `{ATTEMPT}` (0) and
`{OUTPUT_FILE}` (where the program writes its answer). Its answer is that file's text: JSON
with `output` (or `output_messages`) messages is read as an agent's reply (the last
assistant message; tool calls, token usage, cost, duration), anything else is the answer as
written. A non-zero exit, or no output file, fails the answer with AgentV's words.

A value from the eval file never becomes shell text: it reaches the command as an
environment variable the placeholder refers to, as for the older format's `cli` targets
(agentv/command_template.py, docs/security.md); a placeholder inside single quotes is
refused at load. `cwd` and the healthcheck's must lie inside the project. `{FILES}` and
`files_format` (a coding agent's input files) are refused.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, PrivateAttr

from .....evaluators.cases import Case, Output
from ....core.targets import Target, TargetFailure, agent_reply, run_program

if TYPE_CHECKING:
    from ......engine.context import TaskContext

ID = "agentv-cli"  # the entry the catalog hands the provider builder (no promptfoo id)
KEYS = ("id", "provider", "label", "name", "command", "cwd", "timeout_seconds", "healthcheck",
        "verbose", "cli_verbose", "keep_temp_files", "keep_output_files")  # fmt: skip
PLACEHOLDERS = ("PROMPT", "PROMPT_FILE", "EVAL_ID", "ATTEMPT", "OUTPUT_FILE")
TIMEOUT = 600.0  # AgentV sets none; accord bounds every program it starts


class CliProblem(ValueError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def entry_config(entry: dict[str, Any], eval_file: Path, root: Path) -> dict[str, Any]:
    """A catalog `cli` entry as the config of CliCommandTarget (folders relative to `root`)."""
    from .catalog import _text

    unknown = [k for k in entry if k not in KEYS]
    if unknown:
        key = unknown[0]
        fix = (
            "grader selection belongs in 'defaults.grader' or the assertion's 'provider' (AgentV "
            "refuses it here too)" if key == "grader_target" else
            "(it reads command, cwd, timeout_seconds, healthcheck): remove it"
        )  # fmt: skip
        raise CliProblem(f"key '{key}' of an AgentV 'cli' provider is not supported by accord: "
                         f"{fix}")  # fmt: skip
    if "command" not in entry:
        raise CliProblem("an AgentV 'cli' provider needs 'command'")
    try:
        command = _checked(_text(entry["command"], "command"), "command")
        cwd = _folder(entry.get("cwd"), eval_file, root, "cwd")
        config: dict[str, Any] = {"command": command, "cwd": cwd}
        timeout = entry.get("timeout_seconds")
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
                raise CliProblem("'timeout_seconds' is a positive number")
            config["timeout"] = float(timeout)
        check = entry.get("healthcheck")
        if check is not None:
            config["healthcheck"] = _healthcheck(check, eval_file, root)
    except ValueError as exc:
        raise CliProblem(getattr(exc, "message", str(exc))) from None
    return config


def _checked(command: str, what: str) -> str:
    from ..common.command_template import slots, template_problem

    for slot in slots(command):
        if slot.name not in PLACEHOLDERS:
            known = ", ".join(f"{{{p}}}" for p in PLACEHOLDERS)
            raise CliProblem(f"{what}: placeholder {{{slot.name}}} is not supported by accord "
                             f"(it fills {known})")  # fmt: skip
    problem = template_problem(command.replace("{PROMPT_FILE}", "{OUTPUT_FILE}"))
    if problem is not None:
        raise CliProblem(f"{what}: {problem.replace('command_template', what)}")
    return command


def _folder(value: Any, eval_file: Path, root: Path, what: str) -> str:
    from .catalog import _text

    folder = eval_file.parent if value is None else eval_file.parent / _text(value, what)
    try:
        relative = folder.resolve().relative_to(root.resolve())
    except ValueError:
        raise CliProblem(f"'{what}' {folder} is outside the project root {root}") from None
    if not folder.is_dir():
        raise CliProblem(f"'{what}' {folder} is no folder")
    return str(relative) or "."


def _healthcheck(value: Any, eval_file: Path, root: Path) -> dict[str, Any]:
    from .catalog import _text

    if not isinstance(value, dict) or not ("command" in value or "url" in value):
        raise CliProblem("healthcheck is {command, cwd, timeout_seconds} or {url}")
    unknown = sorted(set(value) - {"command", "cwd", "url", "timeout_seconds"})
    if unknown:
        raise CliProblem(f"unknown healthcheck key '{unknown[0]}'")
    if "url" in value:
        return {"url": _text(value["url"], "healthcheck url")}
    from ..common.command_template import slots

    command = _text(value["command"], "healthcheck command")
    if slots(command):
        raise CliProblem("a healthcheck command takes no placeholders in accord: write the "
                         "command itself")  # fmt: skip
    return {
        "command": command,
        "cwd": _folder(value.get("cwd"), eval_file, root, "healthcheck cwd"),
        "timeout": float(value.get("timeout_seconds") or 30),
    }


class CliCommandTarget(Target):
    """A program given the question through AgentV's placeholders, its answer in a file."""

    type: Literal["agentv-cli"] = "agentv-cli"
    command: str = Field(min_length=1)
    cwd: str = "."  # relative to the project root
    healthcheck: dict[str, Any] | None = None
    default_timeout: ClassVar[float | None] = TIMEOUT
    _checked: asyncio.Lock = PrivateAttr(default_factory=asyncio.Lock)
    _healthy: list[bool] = PrivateAttr(default_factory=list)

    def describe(self) -> str:
        return f"cli {self.command.split()[0]}"

    def admission(self, file: Path, root: Path) -> str | None:
        from ......engine.programs import admit

        problem = admit(self.command, file, root, root / self.cwd)
        check = self.healthcheck or {}
        if problem is None and "command" in check:
            problem = admit(str(check["command"]), file, root, root / str(check["cwd"]))
            problem = problem and f"healthcheck: {problem}"
        return problem

    async def _check_health(self, tctx: TaskContext) -> None:
        """ensureHealthy: once, before the first question."""
        check = self.healthcheck
        if check is None:
            return
        from ..common.cli import healthy_once, url_answers

        async def probe() -> str | None:
            if "url" in check:
                ok, detail = await url_answers(str(check["url"]), 30.0)
            else:
                out, err, code = await run_program(
                    ["/bin/sh", "-c", str(check["command"])], b"", Path(tctx.root) / check["cwd"],
                    float(check["timeout"]), {},
                )  # fmt: skip
                ok, detail = code == 0, _failure(out, err, code)
            return None if ok else f"CLI healthcheck failed for '{self.describe()}': {detail}"

        await healthy_once(self._checked, self._healthy, probe)

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        from .checks.judge import question

        await self._check_health(tctx)
        asked = question(case)
        with tempfile.TemporaryDirectory(prefix="accord-cli-") as scratch:
            prompt_file = Path(scratch) / "prompt.txt"
            prompt_file.write_text(asked, encoding="utf-8")
            output_file = Path(scratch) / "output.txt"
            values = {"PROMPT": asked, "PROMPT_FILE": str(prompt_file), "EVAL_ID": case.id,
                      "ATTEMPT": "0", "OUTPUT_FILE": str(output_file)}  # fmt: skip
            if any("\0" in v for v in values.values()):
                raise TargetFailure(f"{self.describe()}: a value holds a NUL character, which no "
                                    "environment variable can carry")  # fmt: skip
            env = {f"AGENTV_{name}": value for name, value in values.items()}
            command = _rendered(self.command, values)
            out, err, code = await run_program(
                ["/bin/sh", "-c", command], b"", Path(tctx.root) / self.cwd,
                self.seconds(), env,
            )  # fmt: skip
            if code != 0:
                raise TargetFailure(_failure(out, err, code))
            try:
                content = output_file.read_text(encoding="utf-8")
            except OSError as exc:
                raise TargetFailure(f"Failed to read output file '{output_file}': "
                                    f"{exc.strerror or exc}") from None  # fmt: skip
        return _answer(content)


def _rendered(command: str, values: dict[str, str]) -> str:
    """The command with each placeholder a reference to its variable, accord's own values
    (temporary paths, the attempt) written as they are inside single quotes
    (agentv/command_template.py render)."""
    from ..common.command_template import render

    return render(command, values)


def _failure(out: bytes, err: bytes, code: int) -> str:
    """commandFailureMessage for a non-zero exit."""
    detail = err.decode(errors="replace").strip() or out.decode(errors="replace").strip()
    return f"{detail} (exit code {code})" if detail else f"CLI exited with code {code}"


def _answer(content: str) -> Output:
    """parseOutputContent: JSON with `output` (or `output_messages`) messages as an agent's
    reply; anything else as the answer's text."""
    try:
        data = json.loads(content)
    except ValueError:
        return Output(text=content)
    messages = data.get("output", data.get("output_messages")) if isinstance(data, dict) else None
    if isinstance(messages, list) and messages:
        return agent_reply({**data, "output_messages": messages})
    return Output(text=content)

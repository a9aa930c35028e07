"""AgentV 4's `script` grader (packages/core/src/evaluation/graders/script-grader.ts, its
entry read by loaders/grader-parser.ts): a program judging the answer.

- `command` is argv (a list), run without a shell in `cwd` (default: the eval file's
  folder), with AgentV's payload as snake_case JSON on stdin: `criteria`, `expected_output`
  (a conversation turn's; none for a test, whose `expected_output` var is only a var) and
  `input` (messages), `output` (the answer's text), `messages` (the target's reply),
  `input_files`, `metadata` (the test's), `trace_summary`, `token_usage`, `cost_usd`,
  `duration_ms`, `workspace_path` and `config` (every key of the entry AgentV does not read
  itself, plus its `config` mapping); `AGENTV_WORKSPACE_PATH` in its environment when there is a
  workspace. AgentV runs a command written as one string with `sh -lc`; accord runs no
  shell: a string is split into words as a shell would when it has no shell syntax, and
  refused otherwise (write the command as a list).
- The script's path (the command's last word, when it looks like a file) must lie inside the
  project; so must `cwd`.
- What it prints: a JSON object with `score` (clamped into [0, 1]), `pass`, `reason`,
  `checks` (`{text, pass, reason, score?}`: their mean is the score when `score` is
  absent); without `pass` the verdict is score >= 0.8. Plain text: exit 0 passes with
  score 1, any other exit fails with 0, the text being the reason.
- A non-zero exit with JSON on stdout, or with something on stderr, fails the grader with
  score 0 and the error as its reason (as AgentV scores it). A program that cannot start,
  runs past its time, or prints a JSON object with none of pass, score and checks is an
  error (AgentV scores those 0 too; accord reports them as errors, never as a score).
- `provider` (`true` or `{max_calls: N}`): the script may call models through AgentV 4's
  provider proxy while it runs (proxy.py).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from .......engine.errors import ConfigError
from .......engine.paths import PathError, inside
from ......evaluators.base import EvaluatorFailure, Finding
from .....core.scoring_rules import AGENTV_PASS as PASS
from .....core.targets import TargetFailure, run_program
from ....promptfoo.asserts.base import PromptfooAssertion, case_vars
from .proxy import ProviderAccess, access, proxied

if TYPE_CHECKING:
    from ......evaluators.cases import Case, Output
    from ......evaluators.judging import EvalContext

TIMEOUT = 300.0  # seconds a grader script may run
# keys of a script entry AgentV reads itself (grader-parser.ts); every other one is config
OWN_KEYS = frozenset({
    "metric", "type", "command", "cwd", "weight", "provider", "config", "preprocessors",
    "required", "min_score", "negate", "transform", "postprocess",
})  # fmt: skip
# what makes a command line need a shell: operators, expansions, quoting tricks, globs
_SHELL_SYNTAX = re.compile(r"[|&;<>()$`\\*?\[\]{}~#\n]")
# a leading NAME=value is a variable assignment to a shell, a program name to accord
_ASSIGNMENT = re.compile(r"^\s*[A-Za-z_][A-Za-z0-9_]*=")
# AgentV's looksLikeFilePath: the last word of a command is a script file
_FILE_LIKE = re.compile(r"\.[cm]?[jt]sx?$|\.py$|\.sh$|\.bash$|\.rb$|\.go$|\.rs$", re.IGNORECASE)


def _looks_like_file(word: str) -> bool:
    return word.startswith(("/", ".")) or "/" in word or bool(_FILE_LIKE.search(word))


def build_script(
    entry: dict[str, Any], *, base_dir: Path, root: Path, where: str, name: str
) -> AgentVScript:
    """A `type: script` entry, its command and folder checked against the project."""
    if "script" in entry:
        raise ConfigError(f"{where}: a script grader's 'script' field was removed by AgentV: "
                          "write 'command' (a list: program and arguments)")  # fmt: skip
    for key in ("preprocessors", "transform", "postprocess"):
        if key in entry:
            raise ConfigError(f"{where}: '{key}' on a script grader is not supported by accord")
    command = _argv(entry.get("command"), where)
    cwd = entry.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or not cwd.strip()):
        raise ConfigError(f"{where}: 'cwd' is a folder, relative to the eval file")
    folder = _inside(root, base_dir / (cwd or "."), where, "the script grader's cwd")
    if not folder.is_dir():
        raise ConfigError(f"{where}: the script grader's cwd '{cwd}' is no folder")
    if _looks_like_file(command[-1]):
        script = _inside(root, folder / command[-1], where, "the grader script")
        if not script.is_file():
            raise ConfigError(f"{where}: the grader script '{command[-1]}' does not exist "
                              f"(looked in {folder})")  # fmt: skip
    config = {k: v for k, v in entry.items() if k not in OWN_KEYS}
    given = entry.get("config")
    if given is not None and not isinstance(given, dict):
        raise ConfigError(f"{where}: a script grader's 'config' is a mapping")
    config.update(given or {})
    weight = entry.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
        raise ConfigError(f"{where}: 'weight' is a number, 0 or more")
    proxy = access(entry["provider"], base_dir, root, where) if "provider" in entry else None
    return AgentVScript(
        type="script", base_type="script", name=name, metric=entry.get("metric"),
        weight=float(weight), command=command, folder=str(folder), config=config or None,
        proxy=proxy,
    )  # fmt: skip


def _argv(value: Any, where: str) -> list[str]:
    if isinstance(value, str):
        if not value.strip():
            raise ConfigError(f"{where}: a script grader's command cannot be empty")
        if _SHELL_SYNTAX.search(value) or _ASSIGNMENT.match(value):
            raise ConfigError(
                f"{where}: the command {value!r} needs a shell (AgentV runs it with sh -lc); "
                "accord runs no shell: write 'command' as a list of program and arguments, "
                "or put the shell line in a script file and name that"
            )
        return shlex.split(value)
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        return [str(v) for v in value]
    raise ConfigError(f"{where}: a script grader needs 'command': a list of program and "
                      "arguments (each a non-empty string)")  # fmt: skip


def _inside(root: Path, path: Path, where: str, what: str) -> Path:
    """`path`, which must lie inside the project (as every path a project file names)."""
    try:
        relative = path.resolve().relative_to(root.resolve())
        return inside(root, relative, what)
    except ValueError:
        raise ConfigError(f"{where}: {what} '{path}' is outside the project {root}") from None
    except PathError as exc:
        raise ConfigError(f"{where}: {exc.message}") from None


def _messages(value: Any, role: str) -> list[dict[str, Any]]:
    """A test's `input` / `expected_output` var as AgentV's messages: text or an object is
    one message of `role`, a list of messages stays as it is."""
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(m, dict) and "role" in m for m in value):
        return [dict(m) for m in value]
    return [{"role": role, "content": value}]


# a case's metadata key holding its expected messages when they are not its
# `expected_output` var: a conversation's turn (conversation.py)
EXPECTED = "agentv_expected"


def expected_messages(case: Case) -> list[dict[str, Any]]:
    """AgentV's `expected_output` of what is graded (EvalTest.expected_output): a
    conversation turn's own (orchestrator.ts runConversationMode: none, or the turn's
    `expected_output` as the one entry), else none. An authored test has none of its own
    (yaml-parser.ts refuses `expected_output` on a test; the test's `expected_output` var
    is a var, which no grader reads as the expected output)."""
    meta = case.metadata if isinstance(case.metadata, dict) else {}
    return [dict(m) for m in meta.get(EXPECTED) or []]


def payload(case: Case, output: Output, config: dict[str, Any] | None) -> dict[str, Any]:
    """What a script grader reads on stdin (script-grader.ts, in snake_case). As AgentV 4
    (yaml-parser.ts) gives it: `expected_output` a conversation turn's own only (a test's
    `expected_output` var is a var, no expected output), `metadata` the test's."""
    variables = case_vars(case)
    meta = case.metadata if isinstance(case.metadata, dict) else {}
    given = meta.get("testCase")
    test: dict[str, Any] = given if isinstance(given, dict) else {}
    calls = output.tool_calls
    names: dict[str, int] = {}
    for call in calls:
        tool = str(call.get("name", ""))
        names[tool] = names.get(tool, 0) + 1
    usage = output.usage
    return {
        "criteria": str(variables.get("criteria") or ""),
        "expected_output": expected_messages(case),
        "output": output.text,
        "messages": output.messages or [{"role": "assistant", "content": output.text}],
        "input_files": [],
        "input": _messages(variables.get("input"), "user"),
        "metadata": test.get("metadata"),
        "trace_summary": {"event_count": len(calls), "tool_calls": names, "error_count": 0}
        if calls
        else None,
        "token_usage": {k: v for k, v in usage.items()} if usage else None,
        "cost_usd": output.cost,
        "duration_ms": output.duration_ms,
        "workspace_path": output.workspace,
        "config": config,
    }


class AgentVScript(PromptfooAssertion):
    family: ClassVar[str] = "agentv4"
    command: list[str]
    folder: str
    proxy: ProviderAccess | None = None  # `provider`: models through a proxy (agentv_proxy)

    deterministic: ClassVar[bool] = True

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        stdin = json.dumps(payload(case, output, self.config), ensure_ascii=False, default=str)
        env = {"AGENTV_WORKSPACE_PATH": output.workspace} if output.workspace else {}
        shown = " ".join(self.command)
        try:
            if self.proxy is None:
                raw_out, raw_err, code = await self._run(stdin, env)
            else:
                async with proxied(self.proxy, ev, case) as reach:
                    raw_out, raw_err, code = await self._run(stdin, {**reach, **env})
        except TargetFailure as exc:
            raise EvaluatorFailure(f"script grader `{shown}`: {exc}") from None
        stdout = raw_out.decode(errors="replace").strip()
        stderr = raw_err.decode(errors="replace").strip()
        if code != 0 and (stdout.startswith(("{", "[")) or stderr):
            said = f": {stderr[-2000:]}" if stderr else ""
            reason = f"Script evaluator failed: Script evaluator exited with code {code}{said}"
            return self._found(0.0, False, reason)
        try:
            parsed = json.loads(stdout)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):  # plain text: the exit code is the verdict
            ok = code == 0
            return self._found(1.0 if ok else 0.0, ok, stdout or f"exit {code}")
        return self._protocol(parsed, shown)

    async def _run(self, stdin: str, env: dict[str, str]) -> tuple[bytes, bytes, int]:
        return await run_program(self.command, stdin.encode(), Path(self.folder), TIMEOUT, env)

    def _protocol(self, parsed: dict[str, Any], shown: str) -> Finding:
        checks = [
            c
            for c in parsed.get("checks") or []
            if isinstance(c, dict)
            and isinstance(c.get("text"), str)
            and isinstance(c.get("pass"), bool)
            and isinstance(c.get("reason"), str)
        ] if isinstance(parsed.get("checks"), list) else []  # fmt: skip
        given, verdict = parsed.get("score"), parsed.get("pass")
        has_score = isinstance(given, int | float) and not isinstance(given, bool)
        if not has_score and not isinstance(verdict, bool) and not checks:
            raise EvaluatorFailure(
                f"script grader `{shown}` printed JSON with none of pass, score and checks[]: "
                f"{json.dumps(parsed)[:300]}"
            )
        if has_score:
            score = _clamp(float(given))  # type: ignore[arg-type]
        elif checks:
            score = sum(_check_score(c) for c in checks) / len(checks)
        else:
            score = 1.0 if verdict else 0.0
        ok = verdict if isinstance(verdict, bool) else score >= PASS
        reason = parsed.get("reason")
        if not isinstance(reason, str):
            reason = "; ".join(f"{'✓' if c['pass'] else '✗'} {c['text']}" for c in checks)
        return self._found(score, ok, reason)

    def _found(self, score: float, ok: bool, reason: str) -> Finding:
        if self.inverse:  # AgentV's negateScore: 1 - score, the verdict swapped
            score, ok = _clamp(1.0 - score), not ok
        return self.result(ok, score, reason)


def _clamp(value: float) -> float:
    if value != value or value in (float("inf"), float("-inf")):
        return 0.0
    return min(1.0, max(0.0, value))


def _check_score(check: dict[str, Any]) -> float:
    score = check.get("score")
    if isinstance(score, int | float) and not isinstance(score, bool):
        return _clamp(float(score))
    return 1.0 if check["pass"] else 0.0

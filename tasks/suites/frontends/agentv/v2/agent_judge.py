"""AgentV's `agent_judge` (evaluators/agent-judge.ts, built-in mode): the judge model looks
through the test's workspace with three read-only tools (`list_files`, `read_file`,
`search_files`, kept inside the workspace) for up to `max_steps` steps, then answers
`{score, hits, misses, reasoning}`, or with `rubrics` `{checks, overall_reasoning}`
scored as AgentV's calculateRubricScore (satisfied weight over the weight of the items it
checked; a failed required item fails the evaluator).

It needs a workspace (`workspace: {template: ...}`). A reply that does not parse is an
error, as for every accord judge (AgentV scores it 0). `judge_target` (a coding agent as
the judge) is not supported: refused at load.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, field_validator

from .....evaluators.base import EvaluatorFailure, Finding
from ..common.judging import RUBRIC_FORMAT, substitute
from .evaluators import AgentVEvaluator, agentv, agentv_case
from .judges import rubric_items, rubric_outcome

if TYPE_CHECKING:
    from .....evaluators.cases import Case, Output
    from .....evaluators.judging import EvalContext
    from .cases import AgentVCase

MAX_FILE_SIZE = 50 * 1024
MAX_SEARCH_MATCHES = 20
SKIP_DIRS = frozenset({"node_modules", ".git", ".next", "dist", "__pycache__", ".cache"})
BINARY = frozenset({
    ".png", ".jpg", ".jpeg", ".gif", ".ico", ".svg", ".woff", ".woff2", ".ttf", ".eot", ".mp3",
    ".mp4", ".wav", ".zip", ".tar", ".gz", ".pdf", ".exe", ".dll", ".so", ".dylib",
})  # fmt: skip
OUTPUT_SCHEMA = """You must respond with a single JSON object matching this schema:

{
  "score": <number between 0.0 and 1.0>,
  "hits": [<array of strings, max 4 items, brief specific achievements>],
  "misses": [<array of strings, max 4 items, brief specific failures or omissions, empty if none>],
  "reasoning": "<string, concise explanation for the score, 1-2 sentences max>"
}"""
RUBRIC_SCHEMA = (
    "You are an expert evaluator. Evaluate the candidate answer against each rubric item.\n"
    + RUBRIC_FORMAT
)
SYSTEM = (
    "You are an expert evaluator with access to the workspace filesystem.\n"
    "Use the provided tools to investigate the workspace and verify the criteria are met.\n"
    "Thoroughly examine relevant files before making your assessment.\n\n"
)


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> Any:
    parameters = {"type": "object", "properties": properties, "required": required}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


_PATH = {"type": "string", "description": 'Relative path within workspace (use "." for root)'}
TOOLS = [
    _tool("list_files", "List files and directories at a relative path within the workspace. "
          "Returns names only (single level, no recursion).", {"path": _PATH}, []),
    _tool("read_file", "Read the content of a file at a relative path within the workspace. "
          "Large files are truncated at 50KB.", {"path": _PATH}, ["path"]),
    _tool("search_files", "Search for a regex pattern across files in the workspace. Returns "
          "up to 20 matches. Skips binary files and node_modules/.git.",
          {"pattern": {"type": "string"}, "path": _PATH}, ["pattern"]),
]  # fmt: skip


@agentv("agent_judge")
class AgentJudge(AgentVEvaluator):
    """A judge model that investigates the workspace with read-only tools (see above)."""

    type: Literal["agent_judge"] = "agent_judge"
    prompt: str | None = Field(None, description="A prompt file (.md), or the prompt itself.")
    rubrics: list[Any] = Field(default_factory=list)
    max_steps: int = Field(10, ge=1, le=50)
    temperature: float = Field(0.0, ge=0, le=2, allow_inf_nan=False)
    judge_target: str | None = None
    template: str | None = Field(None, exclude=True)
    deterministic: ClassVar[bool] = False

    @field_validator("judge_target")
    @classmethod
    def _no_judge_target(cls, value: str | None) -> str | None:
        if value is not None:
            raise ValueError(
                "judge_target (a coding agent as the judge) is not supported: leave it out "
                "to judge with the model's own workspace tools"
            )
        return value

    @field_validator("rubrics")
    @classmethod
    def _items(cls, value: list[Any]) -> list[Any]:
        rubric_items(value)
        return value

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        test = agentv_case(case)
        if not output.workspace:
            raise EvaluatorFailure(
                "agent_judge needs a workspace to investigate: give the file or test a "
                "'workspace: {template: <folder>}'"
            )
        root = Path(output.workspace).resolve()
        items = rubric_items(self.rubrics)
        system = SYSTEM + (RUBRIC_SCHEMA if items else OUTPUT_SCHEMA)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": self.user_prompt(test, output, items)},
        ]
        text = ""
        for _step in range(self.max_steps):
            completion = await ev.complete(messages, None, tools=TOOLS)
            text = completion.text or ""
            if not completion.tool_calls:
                break
            messages.append(completion.message())
            for call in completion.tool_calls:
                result = run_tool(root, call.name, call.arguments)
                messages.append(
                    {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}
                )
        from .....evaluators.judging import json_object

        data = json_object(text)
        if not isinstance(data, dict):
            raise EvaluatorFailure(
                f"no evaluation JSON in the agent judge's reply: {text[-200:]!r}"
            )
        if items:
            return self._rubric_score(data, items)
        score = data.get("score")
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise EvaluatorFailure(f"no score in the agent judge's reply: {text[-200:]!r}")
        hits = [str(h) for h in data.get("hits") or [] if str(h).strip()][:4]
        misses = [str(m) for m in data.get("misses") or [] if str(m).strip()][:4]
        score = min(1.0, max(0.0, float(score)))
        return self.scored(score, hits, misses, str(data.get("reasoning") or ""))

    def _rubric_score(self, data: dict[str, Any], items: list[Any]) -> Finding:
        checks = data.get("checks")
        if not isinstance(checks, list):
            raise EvaluatorFailure("the agent judge's reply has no 'checks' list")
        by_id = {str(item.id): item for item in items}
        checked = []
        for check in checks:
            item = by_id.get(str(check.get("id"))) if isinstance(check, dict) else None
            if item is None:
                continue
            assert isinstance(check, dict)
            line = f"[{item.id}] {item.outcome}: {check.get('reasoning', '')}"
            checked.append((item, check.get("satisfied") is True, line))
        score, hits, misses, veto = rubric_outcome(checked)
        reason = str(data.get("overall_reasoning") or "")
        return self.scored(score, hits, misses, reason, veto=veto)

    def user_prompt(self, case: AgentVCase, output: Output, items: list[Any]) -> str:
        question = case.question
        if self.template or self.prompt:
            values = {
                "candidate_answer": output.text.strip(),
                "reference_answer": (case.reference_answer or "").strip(),
                "criteria": (case.criteria or "").strip(),
                "question": question.strip(),
                "file_changes": "",
            }
            return substitute(self.template or self.prompt or "", values)
        parts = ["Evaluate the candidate answer by investigating the workspace.", "",
                 "[[ ## question ## ]]", question, "", "[[ ## criteria ## ]]",
                 case.criteria or "", ""]  # fmt: skip
        if case.reference_answer and case.reference_answer.strip():
            parts += ["[[ ## reference_answer ## ]]", case.reference_answer, ""]
        parts += ["[[ ## candidate_answer ## ]]", output.text, ""]
        if items:
            parts.append("[[ ## rubrics ## ]]")
            for item in items:
                required = " (REQUIRED)" if item.required else ""
                weight = f" (weight: {item.weight:g})" if item.weight != 1 else ""
                parts.append(f"- [{item.id}]{required}{weight}: {item.outcome}")
            parts += ["", "For each rubric, investigate the workspace to determine if it is "
                      "satisfied. Provide brief reasoning."]  # fmt: skip
        else:
            parts.append(
                "Investigate the workspace to verify the criteria. Provide a score between "
                "0.0 and 1.0."
            )
        return "\n".join(parts)


def run_tool(root: Path, name: str, arguments: str) -> Any:
    """One tool call of the judge, inside the workspace; a problem is the tool's answer."""
    try:
        args = json.loads(arguments or "{}")
        if not isinstance(args, dict):
            return {"error": "arguments are a JSON object"}
        target = inside(root, str(args.get("path") or "."))
        if name == "list_files":
            entries = sorted(os.scandir(target), key=lambda e: e.name)
            return [
                {"name": e.name, "type": "directory" if e.is_dir() else "file"}
                for e in entries[:100]
            ]
        if name == "read_file":
            if target.is_dir():
                return {"error": f"'{args.get('path')}' is a directory, not a file"}
            size = target.stat().st_size
            with target.open("rb") as handle:
                content = handle.read(MAX_FILE_SIZE).decode("utf-8", errors="replace")
            return {"content": content, "truncated": size > MAX_FILE_SIZE, "size": size}
        if name == "search_files":
            pattern = re.compile(str(args.get("pattern", "")), re.IGNORECASE)
            matches: list[dict[str, Any]] = []
            search(target, root, pattern, matches)
            return {"matches": matches, "total": len(matches)}
        return {"error": f"unknown tool '{name}'"}
    except (OSError, ValueError, re.error) as exc:
        return {"error": str(exc)}


def inside(root: Path, relative: str) -> Path:
    path = (root / relative).resolve()
    if path != root and not path.is_relative_to(root):
        raise ValueError(f"Path '{relative}' is outside the workspace")
    return path


def search(folder: Path, root: Path, pattern: re.Pattern[str], out: list[dict[str, Any]]) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if len(out) >= MAX_SEARCH_MATCHES or entry.name in SKIP_DIRS:
            continue
        path = Path(entry.path)
        if entry.is_dir(follow_symlinks=False):
            search(path, root, pattern, out)
        elif entry.is_file(follow_symlinks=False) and path.suffix.lower() not in BINARY:
            try:
                if path.stat().st_size > MAX_FILE_SIZE:
                    continue
                lines = path.read_text(encoding="utf-8").split("\n")
            except (OSError, UnicodeDecodeError):
                continue
            for number, line in enumerate(lines, 1):
                if len(out) >= MAX_SEARCH_MATCHES:
                    return
                if pattern.search(line):
                    rel = path.relative_to(root).as_posix()
                    out.append({"file": rel, "line": number, "text": line[:200]})

"""AgentV 4's `llm-rubric` with `prompt:`: the grader's own prompt, read by
loaders/grader-parser.ts and asked by graders/llm-grader.ts (`evaluateFreeform`).

- `prompt: file://PATH` is a file (relative to the eval file, inside the project); any
  other text is the prompt itself. A prompt given as a script (`prompt: {command: ...}`) is
  refused.
- Its `{{ name }}` variables (template-variables.ts): `input` (the question), `output` (the
  answer), `expected_output` (the reference answer: the test's `expected_output` var, the
  last message's content when it is messages), `criteria` and `rubric` (the test's
  `criteria` var), `metadata` / `metadata_json` (the test's metadata, indented or compact
  JSON), `rubrics`, `rubrics_json`, `file_changes`, `tool_calls` (empty: accord has no
  rubric list, workspace diff or trace summary to give them). A name it does not know is
  left as written, as AgentV leaves it.
- The system prompt asks for AgentV's llm-rubric reply (`buildPromptfooRubricOutputSchema`).
  A reply with `pass`, `reason` or `checks` is read as promptfoo's grading result (pass
  defaults to true; score, else the checks' mean, else the pass as 1/0; with `min_score`
  pass needs score >= it); otherwise it must carry a numeric `score` (pass at 0.8).
  Scores are clamped into [0, 1]. A reply that is neither, after a second asking, is an
  error, never a score (AgentV skips such a grader; it never scores it).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from accord.engine.errors import ConfigError
from accord.tasks.suites.promptfoo.asserts.agentv_script import PASS, _clamp, _inside
from accord.tasks.suites.promptfoo.asserts.base import case_prompt, case_vars, output_string
from accord.tasks.suites.promptfoo.asserts.graded import Graded

if TYPE_CHECKING:
    from accord.tasks.evaluators.base import Finding
    from accord.tasks.evaluators.cases import Case, Output
    from accord.tasks.evaluators.judging import EvalContext

# what AgentV's system prompt asks of an llm-rubric judge (its fields, in our words)
SYSTEM = """Answer with one JSON object and nothing else:

{
  "reason": "<why you graded as you did, briefly>",
  "pass": <true or false>,
  "score": <a number from 0.0 to 1.0>,
  "checks": [
    {"id": "<rubric id, optional>", "text": "<what was checked, optional>", "pass": <boolean>,
     "score": <0.0 to 1.0, optional>, "reason": "<why>", "evidence": "<optional>"}
  ]
}

"checks" may be left out."""
_VARIABLE = re.compile(r"\{\{\s*([a-zA-Z0-9_]+)\s*\}\}")
_TRUE = re.compile(r"(?i)true|yes|pass|y")


def build_prompt_rubric(
    entry: dict[str, Any], *, base_dir: Path, root: Path, where: str, name: str
) -> AgentVPromptRubric:
    prompt = entry.get("prompt")
    if isinstance(prompt, dict):
        raise ConfigError(f"{where}: a grader prompt computed by a script (prompt: {{command}}) "
                          "is not supported by accord: write the prompt in a file "
                          "(prompt: file://PATH)")  # fmt: skip
    if not isinstance(prompt, str) or not prompt.strip():
        raise ConfigError(f"{where}: 'prompt' is the grader's prompt: text, or file://PATH")
    if prompt.startswith("file://"):
        path = _inside(root, base_dir / prompt[7:], where, "the grader prompt file")
        try:
            prompt = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{where}: cannot read the grader prompt {prompt}: "
                              f"{exc.strerror or exc}") from None  # fmt: skip
    value = entry.get("value")
    if value is not None and not isinstance(value, str):
        raise ConfigError(f"{where}: an llm-rubric with 'prompt' and a list of rubrics is not "
                          "supported by accord: keep one of them")  # fmt: skip
    unknown = sorted(set(entry) - {"type", "value", "metric", "weight", "prompt", "threshold"})
    if unknown:
        raise ConfigError(f"{where}: '{unknown[0]}' is no key of an llm-rubric with 'prompt' "
                          "that accord reads")  # fmt: skip
    weight = entry.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
        raise ConfigError(f"{where}: 'weight' is a number, 0 or more")
    return AgentVPromptRubric(
        type="llm-rubric", base_type="llm-rubric", name=name, metric=entry.get("metric"),
        weight=float(weight), value=value, template=prompt,
    )  # fmt: skip


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)


def _reference(value: Any) -> str:
    """AgentV's reference answer: the last expected message's content (text as it is,
    anything else as indented JSON)."""
    if isinstance(value, list) and value and all(isinstance(m, dict) for m in value):
        last = value[-1]
        content = last.get("content")
        if content is None and last.get("tool_calls") is not None:
            content = last["tool_calls"]
        return _text(content)
    return _text(value)


def variables(case: Case, output: Output) -> dict[str, str]:
    given = case_vars(case)
    question = given.get("input")
    meta = case.metadata.get("metadata") if isinstance(case.metadata, dict) else None
    criteria = _text(given.get("criteria")).strip()
    return {
        "input": (question if isinstance(question, str) else case_prompt(case)).strip(),
        "output": output_string(output).strip(),
        "expected_output": _reference(given.get("expected_output")).strip(),
        "criteria": criteria,
        "rubric": criteria,
        "metadata": "" if meta is None else json.dumps(meta, indent=2, ensure_ascii=False),
        "metadata_json": "" if meta is None else json.dumps(meta, separators=(",", ":")),
        "rubrics": "",
        "rubrics_json": "",
        "file_changes": "",
        "tool_calls": "",
    }


def _parsed(reply: str) -> dict[str, Any] | None:
    """AgentV's parseJsonFromText: fences dropped, the span from the first `{` to the last
    `}` read as JSON; None when that is no object or carries neither form of verdict."""
    cleaned = reply.replace("```json\n", "").replace("```json", "").replace("```", "").strip()
    start, end = cleaned.find("{"), cleaned.rfind("}")
    blob = cleaned[start : end + 1] if 0 <= start < end else cleaned
    try:
        data = json.loads(blob)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    aggregate = (
        "pass" in data
        or "reason" in data
        or ("checks" in data and "overall_reasoning" not in data and "assertions" not in data)
    )
    if aggregate:
        checks = data.get("checks")
        if checks is not None and not (
            isinstance(checks, list) and all(isinstance(c, dict) for c in checks)
        ):
            return None
        return {"form": "promptfoo", **data}
    score = data.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        return None
    return {"form": "freeform", **data}


def _pass(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return True if value is None else _TRUE.fullmatch(str(value)) is not None


def _score(value: Any, passed: bool) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _clamp(float(value))
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    return _clamp(number if math.isfinite(number) else float(passed))


class AgentVPromptRubric(Graded):
    template: str

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        values = variables(case, output)
        prompt = _VARIABLE.sub(lambda m: values.get(m.group(1), m.group(0)), self.template)
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
        data, _reply = await self.ask(ev, case, messages, _parsed, "JSON verdict with a score")
        if data["form"] == "freeform":
            score = _clamp(float(data["score"]))
            return self.result(score >= PASS, score, str(data.get("reason") or ""))
        checks = data.get("checks") or []
        check_passes = [self._check_pass(c) for c in checks]
        raw_pass = (
            _pass(data["pass"])
            if "pass" in data
            else all(check_passes) if checks else True
        )  # fmt: skip
        if data.get("score") is not None:
            score = _score(data["score"], raw_pass)
        elif checks:
            score = sum(
                _score(c["score"], p) if c.get("score") is not None else float(p)
                for c, p in zip(checks, check_passes, strict=True)
            ) / len(checks)
        else:
            score = float(raw_pass)
        limit = self.min_score
        passed = raw_pass and score >= limit if limit is not None else raw_pass
        reason = str(data.get("reason") or "").strip()
        if not reason:
            below = limit is not None and score < limit
            reason = "Grading passed" if passed else (
                f"Score {score:g} below threshold {limit:g}" if below and limit is not None
                else "Grading failed"
            )  # fmt: skip
        return self.result(passed, score, reason)

    @staticmethod
    def _check_pass(check: dict[str, Any]) -> bool:
        for key in ("pass", "passed", "satisfied"):
            if check.get(key) is not None:
                return _pass(check[key])
        if check.get("score") is not None:
            return _score(check["score"], False) >= PASS
        return False

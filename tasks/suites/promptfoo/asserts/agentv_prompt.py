"""AgentV 4's `llm-rubric` as loaders/grader-parser.ts reads it and
registry/builtin-graders.ts (llmGraderFactory) asks it, through the judge of
agentv_judge.py (`AgentVFreeform`):

- `value` (text, or anything else as indented JSON) is the `{{ criteria }}` of AgentV's
  default grader template.
- `prompt: file://PATH` is a grader template (relative to the eval file, inside the
  project), read only beside a `value`: without one AgentV skips the assertion (agentv4.py
  notes it). Any other `prompt` text is the template itself when it names one of AgentV's
  variables (`{{ input }}`, `{{ output }}`, `{{ expected_output }}`, `{{ criteria }}`,
  `{{ rubric }}`, `{{ metadata }}`, `{{ metadata_json }}`, `{{ rubrics }}`, ...), else it
  is the criteria. A name AgentV does not know is left as written. A prompt given as a
  script (`prompt: {command: ...}`), or a value that is a list beside a prompt, is
  refused.
- A `value` that is a list of rubrics (text, or objects with `id`, `outcome`, `weight`,
  `required`) is asked as AgentV's checklist.
- `threshold` (AgentV keeps it in the assertion's config) or `min_score`: a
  promptfoo-style reply passes only at that score.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from accord.engine.errors import ConfigError
from accord.tasks.suites.promptfoo.asserts.agentv_judge import AgentVChecklist, AgentVFreeform
from accord.tasks.suites.promptfoo.asserts.agentv_script import _inside


def build_prompt_rubric(
    entry: dict[str, Any], *, base_dir: Path, root: Path, where: str, name: str
) -> AgentVFreeform | AgentVChecklist:
    prompt = entry.get("prompt")
    if isinstance(prompt, dict):
        raise ConfigError(f"{where}: a grader prompt computed by a script (prompt: {{command}}) "
                          "is not supported by accord: write the prompt in a file "
                          "(prompt: file://PATH)")  # fmt: skip
    template: str | None = None
    from_file = False
    if prompt is not None:
        if not isinstance(prompt, str) or not prompt.strip():
            raise ConfigError(f"{where}: 'prompt' is the grader's prompt: text, or file://PATH")
        template = prompt
        if prompt.startswith("file://"):
            path = _inside(root, base_dir / prompt[7:], where, "the grader prompt file")
            try:
                template = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise ConfigError(f"{where}: cannot read the grader prompt {prompt}: "
                                  f"{exc.strerror or exc}") from None  # fmt: skip
            from_file = True  # a whole template, whatever it names (builtin-graders.ts)
    value = entry.get("value")
    if isinstance(value, list) and template is not None:
        raise ConfigError(f"{where}: an llm-rubric with 'prompt' and a list of rubrics is not "
                          "supported by accord: keep one of them")  # fmt: skip
    items = _structured(value, where) if isinstance(value, list | dict) else None
    # `provider`: the grader's model, resolved from the catalog label (agentv_graders.py)
    known = {"type", "value", "metric", "weight", "prompt", "threshold", "provider"}
    unknown = sorted(set(entry) - known)
    if unknown:
        raise ConfigError(f"{where}: '{unknown[0]}' is no key of an llm-rubric that accord "
                          "reads")  # fmt: skip
    weight = entry.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
        raise ConfigError(f"{where}: 'weight' is a number, 0 or more")
    threshold = entry.get("threshold")
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int | float)
    ):
        raise ConfigError(f"{where}: 'threshold' is a number")
    if items:
        # a list of rubrics: asked as a checklist (grader-parser.ts normalizeRubricCriteria,
        # parseRubricItems), the entry weighted as written
        return AgentVChecklist(
            type="llm-rubric", base_type="llm-rubric", name=name, metric=entry.get("metric"),
            weight=float(weight), items=items, provider=entry.get("provider"),
        )  # fmt: skip
    return AgentVFreeform(
        type="llm-rubric", base_type="llm-rubric", name=name, metric=entry.get("metric"),
        weight=float(weight), value=value, template=template, from_file=from_file,
        provider=entry.get("provider"),
        own_threshold=None if threshold is None else float(threshold),
    )  # fmt: skip


RUBRIC_KEYS = ("id", "outcome", "criteria", "weight", "required")


def _structured(value: Any, where: str) -> tuple[tuple[str, str, float, bool], ...]:
    """AgentV's structured rubrics: text (required, weight 1) or objects with `outcome` (or
    `criteria`), `id` (default rubric-N), `weight` (1), `required` (true unless false). Score
    ranges and operators are refused."""
    listed = value if isinstance(value, list) else [value]
    items = []
    for index, raw in enumerate(listed, 1):
        if isinstance(raw, str) and raw.strip():
            items.append((f"rubric-{index}", raw, 1.0, True))
            continue
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: a rubric is text, or a mapping with 'outcome'")
        extra = sorted(set(raw) - set(RUBRIC_KEYS))
        if extra:
            raise ConfigError(f"{where}: rubric key '{extra[0]}' is not supported by accord "
                              f"(it reads {', '.join(RUBRIC_KEYS)}; AgentV's score_ranges and "
                              "operators are not): remove it")  # fmt: skip
        outcome = raw.get("outcome", raw.get("criteria", ""))
        weight = raw.get("weight", 1.0)
        if not isinstance(outcome, str) or (
            isinstance(weight, bool) or not isinstance(weight, int | float)
        ):
            raise ConfigError(f"{where}: a rubric's 'outcome' is text, its 'weight' a number")
        rid = raw.get("id")
        items.append((str(rid) if rid is not None else f"rubric-{index}", outcome,
                      float(weight), raw.get("required") is not False))  # fmt: skip
    return tuple(items)

"""AgentV 4's `llm-rubric` as loaders/grader-parser.ts reads it and
registry/builtin-graders.ts (llmGraderFactory) asks it, through the judge of
judge.py (`AgentVFreeform`):

- `value` (text, or anything else as indented JSON) is the `{{ criteria }}` of AgentV's
  default grader template.
- `prompt: file://PATH` is a grader template (relative to the eval file, inside the
  project), read only beside a `value`: without one AgentV skips the assertion (file.py
  notes it). Any other `prompt` text is the template itself when it names one of AgentV's
  variables (`{{ input }}`, `{{ output }}`, `{{ expected_output }}`, `{{ criteria }}`,
  `{{ rubric }}`, `{{ metadata }}`, `{{ metadata_json }}`, `{{ rubrics }}`, ...), else it
  is the criteria. A name AgentV does not know is left as written. A prompt given as a
  script (`prompt: {command: ...}`), or a value that is a list beside a prompt, is
  refused.
- A `value` that lists rubrics (text, or objects with `id`, `outcome`, `weight`, `required`,
  `min_score`, `operator`, `score_ranges`), or a text value beside the assertion's own
  `score_ranges`, is asked as AgentV asks it (rubrics.py): a checklist, or criteria
  scored 0-10 when any has score ranges.
- `threshold` (AgentV keeps it in the assertion's config) or `min_score`: a
  promptfoo-style reply passes only at that score.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .......engine.errors import ConfigError
from .judge import AgentVChecklist, AgentVFreeform
from .rubrics import AgentVScoreRanges, structured
from .script import _inside


def build_prompt_rubric(
    entry: dict[str, Any],
    *,
    base_dir: Path,
    root: Path,
    where: str,
    name: str,
    gate: dict[str, Any] | None = None,
) -> AgentVFreeform | AgentVChecklist | AgentVScoreRanges:
    """`gate`: the entry's `required` and `min_score` (a criterion given as text beside
    the entry's `score_ranges` takes them, as AgentV's normalizeRubricCriteria does)."""
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
    # `provider`: the grader's model, resolved from the catalog label (graders.py)
    unknown = sorted(set(entry) - {"type", "value", "metric", "weight", "prompt", "threshold",
                                   "score_ranges", "operator", "provider"})  # fmt: skip
    if unknown:
        raise ConfigError(f"{where}: '{unknown[0]}' is no key of an llm-rubric that accord "
                          "reads")  # fmt: skip
    for key in ("score_ranges", "operator"):
        # AgentV reads them only as the criterion of a text value (normalizeRubricCriteria);
        # anywhere else it passes them over
        if key in entry and not (isinstance(value, str) and "score_ranges" in entry):
            raise ConfigError(f"{where}: '{key}' on an llm-rubric counts only beside a text "
                              "'value' and 'score_ranges' (AgentV ignores it here): put it on "
                              "the rubric items of the value")  # fmt: skip
    items = structured(value, {**entry, **(gate or {})}, where)
    if items and template is not None:
        raise ConfigError(f"{where}: an llm-rubric with 'prompt' and rubric items is not "
                          "supported by accord: keep one of them")  # fmt: skip
    weight = entry.get("weight", 1.0)
    if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
        raise ConfigError(f"{where}: 'weight' is a number, 0 or more")
    threshold = entry.get("threshold")
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int | float)
    ):
        raise ConfigError(f"{where}: 'threshold' is a number")
    if items:
        # rubric items (grader-parser.ts normalizeRubricCriteria, parseRubricItems), the
        # entry weighted as written: scored 0-10 when any has score ranges (llm-grader.ts
        # evaluateWithRubrics), else a checklist
        if any(i.score_ranges for i in items):
            return AgentVScoreRanges(
                type="llm-rubric", base_type="llm-rubric", name=name, metric=entry.get("metric"),
                weight=float(weight), items=items, value=value if isinstance(value, str) else None,
                provider=entry.get("provider"),
            )  # fmt: skip
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

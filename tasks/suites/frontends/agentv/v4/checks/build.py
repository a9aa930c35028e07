"""AgentV 4's assertions: promptfoo's form plus AgentV's own additions, read from AgentV's
`packages/core/src/evaluation` (`graders/llm-grader.ts`, `graders/script-grader.ts`,
`orchestrator.ts` for the test's score; its trajectory and skill checks are in
`agentv_checks`).

- An entry may be a plain string: a rubric the judge checks; the strings of one list are
  gathered into one checklist, and `llm-rubric` is asked with AgentV's own judge prompt
  (judge.py); an llm-rubric may give AgentV's grader prompt (`prompt:`).
- Any entry may say `required: true` (or a number, its `min_score`), `negate`, `id`/`name`.
- `script` (a command-backed grader), `execution-metrics`, `python` and `javascript` (AgentV's
  own, inline.py), and the checks of `agentv_checks`; every other type is promptfoo's.
- A test's score (`combine_agentv`): 0 when a required assertion scored below its minimum
  (default the pass threshold 0.8), else the weighted mean; pass when the score reaches the
  test's threshold (default 0.8).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .......engine.errors import ConfigError
from ......evaluators.base import EvaluatorSpec, Finding
from .....core import scoring_rules
from .....core.scoring_rules import AGENTV_PASS as PASS
from ....promptfoo.asserts.base import PromptfooAssertion
from ....promptfoo.asserts.building import build_assertion
from .checks import AGENTV4
from .judge import AgentVChecklist

__all__ = ["PASS", "build_agentv_assertion", "combine_agentv"]


def _script_grader(
    entry: dict[str, Any], base_dir: Path, root: Path, where: str, name: str | None
) -> PromptfooAssertion:
    """AgentV's `script` grader (script.py): argv run without a shell, the script
    inside the project, every key it does not read reaching the script's config."""
    from .script import build_script

    return build_script(entry, base_dir=base_dir, root=root, where=where, name=name or "script")


def _seed_grader(
    rest: dict[str, Any], base: str, inverse: bool, where: str, name: str | None
) -> PromptfooAssertion:
    """`field-accuracy` and `execution-metrics` by accord's AgentV evaluators (seed.py)."""
    from .seed import build_seed

    if inverse:
        raise ConfigError(f"{where}: 'negate' on {base} is not supported by accord")
    return build_seed(rest, where=where, name=name or rest.get("metric") or base)


def _inline_code(
    rest: dict[str, Any], root: Path, where: str, name: str | None, inverse: bool
) -> PromptfooAssertion:
    """`python` and `javascript` as AgentV runs them, with AgentV's context (inline.py)."""
    from .inline import build_inline

    label = name or rest.get("metric") or str(rest["type"])
    return build_inline(rest, root=root, where=where, name=label, inverse=inverse)


def _prompt_rubric(
    rest: dict[str, Any],
    agentv_fields: dict[str, Any],
    base_dir: Path,
    root: Path,
    where: str,
    name: str | None,
) -> PromptfooAssertion:
    """`llm-rubric`: with a value, or AgentV's own grader prompt (prompt.py)."""
    from .prompt import build_prompt_rubric

    if agentv_fields.get("negate"):
        raise ConfigError(f"{where}: 'negate' on an llm-rubric is not supported by accord")
    return build_prompt_rubric(
        rest, base_dir=base_dir, root=root, where=where,
        name=name or rest.get("metric") or "llm-rubric", gate=agentv_fields,
    )  # fmt: skip


# types.ts GRADER_KIND_VALUES: AgentV's own types; any other is a custom assertion
GRADER_KINDS = frozenset({
    "script", "llm-grader", "tool-trajectory", "skill-used", "not-skill-used",
    "trajectory:tool-used", "trajectory:tool-args-match", "trajectory:tool-sequence",
    "trajectory:step-count", "trajectory:goal-success", "field-accuracy", "latency", "cost",
    "token-usage", "execution-metrics", "assert-set", "llm-rubric", "agent-rubric", "contains",
    "contains-any", "contains-all", "icontains", "icontains-any", "icontains-all",
    "starts-with", "ends-with", "regex", "is-json", "equals", "javascript", "python",
    "webhook", "similar", "inline-assert",
})  # fmt: skip


def _negatable(base: str) -> bool:
    """Types AgentV reads with a `not-` prefix: skill-used (not-skill-used is registered
    beside it) and the trajectory checks (grader-parser.ts, TRAJECTORY_GRADER_TYPES)."""
    return base == "skill-used" or base in TRAJECTORY_KINDS


TRAJECTORY_KINDS = frozenset({
    "trajectory:tool-used", "trajectory:tool-args-match", "trajectory:tool-sequence",
    "trajectory:step-count", "trajectory:goal-success",
})  # fmt: skip


def _own_not_type(
    entry: dict[str, Any], kind: str, base_dir: Path, root: Path | None, where: str,
    name: str | None,
) -> PromptfooAssertion:  # fmt: skip
    """A `not-X` AgentV does not read as X inverted. grader-parser.ts (parseGraders) does
    that only for the trajectory kinds (and registers not-skill-used itself); any other
    `not-X` is looked up as a type of its own, and an unknown one scores the test 0 at run
    time (grader-registry.ts: "Unknown grader type"): accord refuses it instead."""
    if (found := _discovered(kind, base_dir, root)) is not None:
        return _custom_assertion(entry, found, name or kind, base_dir, root or base_dir, where)
    raise ConfigError(
        f"{where}: AgentV has no assertion type '{kind}' (it negates with the 'not-' prefix "
        f"only skill-used and the trajectory checks, and scores an unknown type 0): write "
        f"'type: {kind[4:]}' with 'negate: true'"
    )


def _discovered(kind: str, base_dir: Path, root: Path | None) -> Path | None:
    """The script of a custom assertion type (registry/assertion-discovery.ts
    discoverAssertions): `.agentv/assertions/TYPE.{ts,js,mts,mjs}` in the eval file's folder
    or the nearest folder above it that has one, up to the project root."""
    top = (root or base_dir).resolve()
    here = base_dir.resolve()
    while True:
        for suffix in (".ts", ".js", ".mts", ".mjs"):
            candidate = here / ".agentv" / "assertions" / f"{kind}{suffix}"
            if candidate.is_file():
                return candidate
        if here == top or here.parent == here or not here.is_relative_to(top):
            return None
        here = here.parent


def _custom_assertion(
    entry: dict[str, Any], script: Path, name: str, base_dir: Path, root: Path, where: str
) -> PromptfooAssertion:
    """A custom assertion: AgentV's ScriptGrader running `bun run SCRIPT` with no config
    (discoverAssertions' factory ignores the entry's other keys), named by its type
    (grader-parser.ts: `rawName ?? typeValue`); weight, required and negate as any entry's."""
    command = {"type": "script", "command": ["bun", "run", str(script)]}
    if "weight" in entry:
        command["weight"] = entry["weight"]
    return _script_grader(command, base_dir, root, where, name)


# --- building and the test's score -------------------------------------------------------------

AGENTV_KEYS = frozenset({"required", "min_score", "negate", "id", "name", "description"})


def build_agentv_assertion(
    entry: Any, *, base_dir: Path, where: str, name: str | None = None, root: Path | None = None
) -> EvaluatorSpec:
    """An entry of an AgentV 4 `assert:` list: a plain string (a rubric), one of AgentV's
    own types, or a promptfoo type (with AgentV's `required`, `min_score`, `negate`, `id` or
    `name`, `description`). `root` is the folder files must lie in (the project's root;
    default `base_dir`): AgentV's files name prompts beside the eval's folder."""
    if isinstance(entry, str | tuple):
        # rubrics written as text, gathered as AgentV gathers them (agentv4.gathered)
        texts = (entry.strip(),) if isinstance(entry, str) else entry
        if not all(texts):
            raise ConfigError(f"{where}: an assertion written as text needs the rubric's text")
        return AgentVChecklist(
            type="rubrics", base_type="llm-rubric", rubrics=texts, weight=float(len(texts)),
            name=name or "rubrics",
        )  # fmt: skip
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: an assertion is text (a rubric) or a mapping with a 'type'")
    agentv_fields = {k: entry[k] for k in AGENTV_KEYS if k in entry}
    rest = {k: v for k, v in entry.items() if k not in AGENTV_KEYS}
    kind = str(rest.get("type", ""))
    given = agentv_fields.get("name") or agentv_fields.get("id")
    name = name or (str(given) if given else None)
    if kind.startswith("not-") and not _negatable(kind[4:]):
        return _own_not_type(entry, kind, base_dir, root, where, name)
    inverse = kind.startswith("not-") != bool(agentv_fields.get("negate"))
    base = kind[4:] if kind.startswith("not-") else kind
    spec: PromptfooAssertion
    if base == "script":
        spec = _script_grader(entry, base_dir, root or base_dir, where, name or rest.get("metric"))
        spec = spec.model_copy(update={"inverse": inverse}) if inverse else spec
    elif base == "llm-rubric":
        spec = _prompt_rubric(rest, agentv_fields, base_dir, root or base_dir, where, name)
    elif base in ("field-accuracy", "execution-metrics"):
        spec = _seed_grader(rest, base, inverse, where, name)
    elif kind in ("python", "javascript"):
        spec = _inline_code(rest, root or base_dir, where, name, inverse)
    elif base == "assert-set":
        spec = _agentv_set(rest, base_dir, root or base_dir, where, name)
    elif base in AGENTV4:
        extra = sorted(set(rest) - {"type", "value", "metric", "weight"})
        if extra:
            raise ConfigError(f"{where}: '{extra[0]}' is no key of a {kind} assertion")
        spec = AGENTV4.get(base).model_validate(
            {"type": kind, "base_type": base, "inverse": inverse, "value": rest.get("value"),
             "name": name or rest.get("metric") or kind, "metric": rest.get("metric"),
             "weight": float(rest.get("weight", 1.0))}
        )  # fmt: skip
    elif base not in GRADER_KINDS and (found := _discovered(base, base_dir, root)) is not None:
        spec = _custom_assertion(entry, found, name or base, base_dir, root or base_dir, where)
        spec = spec.model_copy(update={"inverse": inverse}) if inverse else spec
    else:
        if base == "regex" and "flags" in rest:
            rest = _flagged(rest, where)
        spec = build_assertion(rest, base_dir=base_dir, where=where, name=name)
        if agentv_fields.get("negate"):
            spec = spec.model_copy(update={"inverse": not spec.inverse})
    return _with_required(spec, agentv_fields, where)


def _with_required(
    spec: PromptfooAssertion, agentv_fields: dict[str, Any], where: str
) -> PromptfooAssertion:
    """AgentV's `required` (true, or the score to reach) and `min_score` on an entry."""
    required = agentv_fields.get("required", False)
    minimum = agentv_fields.get("min_score")
    if not isinstance(required, bool | int | float) or (
        minimum is not None and not isinstance(minimum, int | float)
    ):
        raise ConfigError(f"{where}: 'required' is true/false or a score, 'min_score' a score")
    if required is not False:
        floor = minimum if minimum is not None else (required if required is not True else PASS)
        spec = spec.model_copy(update={"required": True, "min_score": float(floor)})
    return spec


def _flagged(entry: dict[str, Any], where: str) -> dict[str, Any]:
    """AgentV's regex `flags` (JavaScript's: i, m, s; g, u and y change nothing for one
    search) written into the pattern as Python's inline flags."""
    flags = entry["flags"]
    if not isinstance(flags, str) or set(flags) - set("imsguy"):
        raise ConfigError(f"{where}: regex 'flags' are letters of i, m, s, g, u, y")
    pattern = entry.get("value")
    inline = "".join(f for f in "ims" if f in flags)
    rest = {k: v for k, v in entry.items() if k != "flags"}
    if inline and isinstance(pattern, str):
        rest["value"] = f"(?{inline}){pattern}"
    return rest


def _minimum(spec: EvaluatorSpec, limit: float) -> float:
    """The score a required assertion must reach: its own minimum, else the threshold."""
    own = getattr(spec, "min_score", None)
    if own is None and not isinstance(spec.required, bool):
        own = spec.required  # AgentV's earlier form: `required: 0.6`
    return float(own) if own is not None else limit


def _agentv_set(
    entry: dict[str, Any], base_dir: Path, root: Path, where: str, name: str | None
) -> PromptfooAssertion:
    """An assert-set whose members are AgentV entries (strings, AgentV's types)."""
    members = entry.get("assert")
    if not isinstance(members, list) or not members:
        raise ConfigError(f"{where}: an assert-set needs 'assert': a list of assertions")
    # the set's own keys checked as promptfoo's, with one member standing in for the rest
    shell = build_assertion(
        {**entry, "assert": [{"type": "contains", "value": "x"}]},
        base_dir=base_dir, where=where, name=name,
    )  # fmt: skip
    built = [
        build_agentv_assertion(
            item,
            base_dir=base_dir,
            where=f"{where} (assert[{i}])",
            name=f"{shell.id}.{i}",
            root=root,
        )
        for i, item in enumerate(members)
    ]
    return shell.model_copy(update={"asserts": built})


def combine_agentv(
    findings: Sequence[Finding],
    assertions: Sequence[EvaluatorSpec],
    *,
    threshold: float | None = None,
    name: str = "assertions",
) -> Finding:
    """AgentV's test result: 0 when a required assertion scored below its minimum, else
    the weighted mean of the scores; pass at `threshold` (default 0.8)."""
    errors = [f for f in findings if f.error is not None]
    if errors:
        return Finding(name, error=f"{errors[0].name}: {errors[0].error}", children=list(findings))
    rule = scoring_rules.agentv4()
    limit = rule.bar(threshold)
    minimums = [_minimum(spec, limit) if spec.required else None for spec in assertions]
    weights = [spec.weight for spec in assertions]
    settled = rule.settle(findings, weights, minimums, threshold)
    return Finding(
        name,
        score=settled.score,
        passed=settled.passed,
        reason=settled.reason,
        children=list(findings),
    )

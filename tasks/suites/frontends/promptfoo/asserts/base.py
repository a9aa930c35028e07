"""What every promptfoo assertion has, as an evaluator of the core.

promptfoo (release 0.118, `src/assertions/index.ts` `runAssertion`) decides an assertion's
pass itself: each handler computes `pass` with the `not-` prefix applied (`inverse`) and a
score, and an assertion of `weight: 0` always passes (it only records a metric). So these
evaluators set `passed` on their findings themselves, and `gate()` is None: the core's own
threshold and `negate` (which would turn a score into 1 - score) are never applied to them.

The assertion's `value` is rendered with the test's vars before it is compared (promptfoo
renders a string value, or each string of a list, with nunjucks); the vars come from the
case (`PromptfooCase.vars`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import yaml
from pydantic import ConfigDict, Field

from ......engine.errors import AccordError, ConfigError
from ......engine.paths import inside
from ......engine.registry import Namespace
from .....evaluators.base import (
    CHECKS,
    EvaluatorFailure,
    EvaluatorSpec,
    Finding,
    ThresholdSpec,
)
from .....evaluators.cases import Case

if TYPE_CHECKING:
    from .....evaluators.cases import Output


@dataclass(frozen=True, slots=True)
class PromptfooCase(Case):
    """A case of a promptfoo config: one test (with `defaultTest` merged) under one prompt.

    `vars` are the test's vars (assertion values are templates over them); `options` the
    test's `options` (`provider` for model-graded assertions, `rubricPrompt`, ...);
    `prompt_text` the rendered prompt as the provider received it (what model-graded
    assertions quote as the question); `provider_config` the `config` of the provider that
    answers this case (`tools` for is-valid-openai-tools-call).
    """

    vars: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)
    prompt_text: str = ""
    provider_config: dict[str, Any] = field(default_factory=dict)


def case_vars(case: Case) -> dict[str, Any]:
    """The vars of a case: a promptfoo case's own, else `metadata['vars']` (a front-end that
    builds plain cases), else none."""
    if isinstance(case, PromptfooCase):
        return case.vars
    found = case.metadata.get("vars") if isinstance(case.metadata, dict) else None
    return found if isinstance(found, dict) else {}


def case_options(case: Case) -> dict[str, Any]:
    if isinstance(case, PromptfooCase):
        return case.options
    found = case.metadata.get("options") if isinstance(case.metadata, dict) else None
    return found if isinstance(found, dict) else {}


def case_prompt(case: Case) -> str:
    if isinstance(case, PromptfooCase) and case.prompt_text:
        return case.prompt_text
    return case.prompt


def js_json(value: Any) -> str:
    """`JSON.stringify(value)`: no spaces between items, non-ASCII kept."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def output_string(output: Output) -> str:
    """promptfoo's `coerceString(output)`: a string output as it is, anything else as JSON."""
    if output.value is not None and not isinstance(output.value, str):
        return js_json(output.value)
    return output.text


def output_value(output: Output) -> Any:
    """The provider's output as promptfoo hands it to assertions: a structured value when
    the target returned one, else the text."""
    return output.value if output.value is not None else output.text


def render_value(value: Any, variables: dict[str, Any]) -> Any:
    """A value with its templates filled from the test's vars: a string, or each string of a
    list (promptfoo renders nothing else)."""
    if isinstance(value, str):
        return render_text(value, variables)
    if isinstance(value, list):
        return [render_text(v, variables) if isinstance(v, str) else v for v in value]
    return value


def render_text(text: str, variables: dict[str, Any]) -> str:
    try:
        return fill_template(text, variables)
    except AccordError as exc:
        raise EvaluatorFailure(f"the assertion's value could not be rendered: {exc}") from None


def fill_template(template: str, values: dict[str, Any]) -> str:
    """A nunjucks template of a promptfoo file filled on accord's sandboxed Jinja (the
    syntax these templates use is common to both). A name with no value renders as
    nothing, as nunjucks renders it; `AccordError` when the template is not valid."""
    if "{{" not in template and "{%" not in template:
        return template
    from ......engine.render import render

    names = set(re.findall(r"{{-?\s*([A-Za-z_]\w*)", template))
    return render(template, {name: "" for name in names} | values)


FILE = "file://"
SCRIPT_SUFFIXES = (".py", ".js", ".cjs", ".mjs", ".ts", ".mts", ".cts")
# each assertion type (without `not-`) and the class that computes it, as `module:class` of
# this package: the module is imported when a config first uses one of its types, so a config
# of text checks does not pay for the model-graded, script and metric modules (each assertion
# is a pydantic model, whose class costs a millisecond to build)
TYPES = {
    "equals": "text:Equals",
    "contains": "text:Contains",
    "icontains": "text:Contains",
    "contains-any": "text:ContainsSome",
    "icontains-any": "text:ContainsSome",
    "contains-all": "text:ContainsSome",
    "icontains-all": "text:ContainsSome",
    "starts-with": "text:StartsWith",
    "regex": "text:Regex",
    "is-json": "structure:IsJson",
    "contains-json": "structure:ContainsJson",
    "is-valid-openai-tools-call": "structure:ToolsCall",
    "llm-rubric": "graded:LlmRubric",
    "model-graded-closedqa": "graded:ClosedQa",
    "factuality": "graded:Factuality",
    "model-graded-factuality": "graded:Factuality",
    "similar": "graded:Similar",
    "answer-relevance": "graded:AnswerRelevance",
    "context-recall": "context:ContextRecall",
    "context-relevance": "context:ContextRelevance",
    "context-faithfulness": "context:ContextFaithfulness",
    "levenshtein": "measures:Levenshtein",
    "rouge-n": "measures:RougeN",
    "bleu": "measures:Bleu",
    "cost": "measures:Cost",
    "latency": "measures:Latency",
    "python": "scripts:Python",
    "javascript": "scripts:Javascript",
    "assert-set": "sets:AssertSet",
}  # fmt: skip
PROMPTFOO: Namespace[type[PromptfooAssertion]] = Namespace(
    CHECKS,
    "promptfoo", "promptfoo assertion", plugins=False,
    lazy={kind: f"{__package__}.{where}" for kind, where in TYPES.items()},
)  # fmt: skip


class PromptfooAssertion(EvaluatorSpec):
    """One promptfoo assertion. `type` keeps the file's spelling (`not-contains`);
    `base_type` is without the prefix and `inverse` says whether it was there."""

    family: ClassVar[str] = "promptfoo"

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    type: str
    base_type: str = ""
    inverse: bool = False
    value: Any = None
    pass_threshold: float | None = Field(
        None, description="promptfoo's `threshold`: its meaning depends on the type."
    )
    metric: str | None = None
    provider: Any = None
    rubric_prompt: Any = None
    config: dict[str, Any] | None = None
    # an assertion an AgentV 4 test inherits: AgentV fills in no vars in its value
    verbatim: bool = False
    # AgentV's `required` with its minimum score (the test scores 0 below it)
    min_score: float | None = None

    default_threshold: ClassVar[ThresholdSpec | None] = None
    # how long promptfoo's check of this type takes to settle among a test's, which run
    # together (combine.py settling_order): 0 in its own process, 1 a Python process, 2 a
    # model or embedding call; the test's reason is its last failure to settle
    settles: ClassVar[int] = 0
    # the keys of the file's entry this type reads beyond the common ones
    own_keys: ClassVar[frozenset[str]] = frozenset()

    def gate(self) -> ThresholdSpec | None:
        """None: the assertion decides its pass itself (see the module's doc)."""
        return None

    def prepared(self, base_dir: Path) -> PromptfooAssertion:
        """The spec with `file://` values read (a text, JSON or YAML file, inside
        `base_dir`), as promptfoo reads them before the check."""
        value = self.value
        if isinstance(value, str) and value.startswith(FILE):
            value = self.file_value(value, base_dir)
        elif isinstance(value, list):
            value = [
                self.file_value(v, base_dir) if isinstance(v, str) and v.startswith(FILE) else v
                for v in value
            ]
        return self if value is self.value else self.model_copy(update={"value": value})

    def file_value(self, reference: str, base_dir: Path) -> Any:
        relative = reference[len(FILE) :]
        suffix = Path(relative).suffix.lower()
        if suffix in SCRIPT_SUFFIXES:
            raise ConfigError(
                f"a value computed by a script ({reference}) is supported on python and "
                "javascript assertions only; write the value, or use a python assertion"
            )
        path = inside(base_dir, relative, "the assertion's value file")
        try:
            content = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read {reference}: {exc.strerror or exc}") from None
        if suffix in (".json", ".yaml", ".yml"):
            try:
                return yaml.safe_load(content)
            except yaml.YAMLError as exc:
                raise ConfigError(f"{reference} is not valid YAML/JSON: {exc}") from None
        if suffix == ".txt":
            return content.strip()
        raise ConfigError(
            f"{reference}: promptfoo reads .txt, .json, .yaml and .yml files as values, "
            f"not '{suffix or 'no suffix'}'"
        )

    def rendered(self, case: Case) -> Any:
        """The value with the test's vars filled in (`{{ name }}`, and `{{ vars.name }}`
        as AgentV's files write them); `verbatim`: as written."""
        if self.verbatim:
            return self.value
        variables = case_vars(case)
        return render_value(self.value, {"vars": variables, **variables})

    def result(
        self, ok: bool, score: float | None = None, reason: str = "", **extra: Any
    ) -> Finding:
        """A finding with promptfoo's verdict: `ok` already has `inverse` applied; the score
        is 1 or 0 with the verdict unless given; `weight: 0` passes whatever was found."""
        if score is None:
            score = 1.0 if ok else 0.0
        passed = True if self.weight == 0 else ok
        reason = "Assertion passed" if ok and not reason else reason
        if self.metric:
            extra["metadata"] = {**extra.get("metadata", {}), "metric": self.metric}
        return Finding(self.id, score=score, passed=passed, reason=reason, **extra)

    def text_value(self, case: Case, what: str = "a string value") -> str:
        value = self.rendered(case)
        if not isinstance(value, str) or not value:
            raise EvaluatorFailure(f'"{self.base_type}" assertion type must have {what}')
        return value

    async def evaluate(self, ev: Any, case: Case, output: Output) -> Finding:
        raise NotImplementedError

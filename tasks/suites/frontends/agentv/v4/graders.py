"""The grader of one AgentV 4 `llm-rubric`: its `provider`, a label of the project's provider
catalog (`.agentv/providers.yaml`), as AgentV 4 reads it (loaders/grader-parser.ts
parseGraderList: `graderTargetName` from the assertion's `provider`; registry/
builtin-graders.ts llmGraderFactory: that provider grades instead of the suite's grader;
commit 58f316ca2).

- The label is looked up as a provider's is (catalog.py) and must be one of AgentV's
  model providers (openai, azure, anthropic, openrouter, gemini) or a model id: accord asks
  that model as the judge of this assertion alone. An agent or command provider as a grader
  (AgentV's delegate mode) is refused.
- An assertion's `target` AgentV refuses ("Assertion field 'target' has been removed ...
  Use assertion 'provider' instead"), skipping the test; accord refuses it at load with the
  same fix. Inside an `assert-set` the same holds for each member.
- A `provider` that is not a label (AgentV warns and ignores it) is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .catalog import RUNNABLE, _catalog_entry, special_target
from .state import state

if TYPE_CHECKING:
    from ......engine.yamlmarks import Loc
    from ...promptfoo.form import _Loader

GRADED = ("llm-rubric", "not-llm-rubric")
PREFIX = "agentv-grader:"  # the name of a grader's model among the project's models


def resolved(loader: _Loader, entry: Any, loc: Loc, report: Callable[[str], None]) -> Any:
    """The entry with each llm-rubric's `provider` label replaced by the name of its model
    (registered on `state(loader).grader_models`); its problems given to `report`."""
    if not isinstance(entry, dict):
        return entry
    out = dict(entry)
    members = entry.get("assert")
    if str(entry.get("type")) == "assert-set" and isinstance(members, list):
        out["assert"] = [resolved(loader, m, loc, report) for m in members]
    if str(entry.get("type")) not in GRADED:
        return out
    name = entry.get("metric") or entry.get("type")
    if isinstance(entry.get("target"), str):
        report(f"the field 'target' of an assertion ('{name}') has been removed by AgentV, "
               "which refuses it: name the grader with the assertion's 'provider' (a label "
               "of .agentv/providers.yaml) instead")  # fmt: skip
        out.pop("target")
    label = entry.get("provider")
    if label is None:
        return out
    if not isinstance(label, str) or not label.strip():
        report(f"the 'provider' of '{name}' is the label of its grader in "
               ".agentv/providers.yaml: a non-empty text")  # fmt: skip
        out.pop("provider")
        return out
    model = _grader_model(loader, label.strip(), loc, report)
    if model is None:
        out.pop("provider")
    else:
        out["provider"] = model
    return out


def _grader_model(
    loader: _Loader, label: str, loc: Loc, report: Callable[[str], None]
) -> str | None:
    from ...promptfoo.providers import SOURCE, ProviderProblem, build_target

    name = f"{PREFIX}{label}"
    if name in state(loader).grader_models:
        return name
    if RUNNABLE.match(label):
        entry: dict[str, Any] | None = {"id": label}
    else:
        before = len(loader.issues)
        entry = _catalog_entry(loader, label, loc)
        if entry is None:  # the catalog's problem, said at the assertion
            messages = [issue.message for issue in loader.issues[before:]]
            del loader.issues[before:]
            for message in messages:
                report(message)
            return None
    assert entry is not None
    pid = str(entry.get("id"))
    if pid == "echo" or pid.startswith(("exec:", "python:", "file://")):
        report(f"the grader '{label}' is '{pid}', no model: AgentV would hand the grading to "
               "it as an agent, which accord does not do; name a model provider of "
               ".agentv/providers.yaml (openai, azure, anthropic, openrouter, gemini)")  # fmt: skip
        return None
    try:
        _target, model = build_target(
            {k: v for k, v in entry.items() if k in ("id", "label", "config", SOURCE)},
            loader.base, loader.root, name, env=loader.env, file=loader.path,
            special=special_target,
        )  # fmt: skip
    except (ProviderProblem, ValueError) as exc:
        report(f"the grader '{label}': {getattr(exc, 'message', exc)}")
        return None
    if model is None:
        report(f"the grader '{label}' is no model provider accord can ask")
        return None
    state(loader).grader_models[name] = model
    return name

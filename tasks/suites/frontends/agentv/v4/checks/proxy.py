"""AgentV 4's provider access for a script grader (`provider: {max_calls: N}` or
`provider: true`, read by loaders/grader-parser.ts; run by graders/script-grader.ts with
runtime/provider-proxy.ts): while the script runs, a proxy on 127.0.0.1 answers its model
calls (agentv/target_proxy.py, AgentV 4's wire), reached through `AGENTV_PROVIDER_PROXY_URL`
with the bearer token `AGENTV_PROVIDER_PROXY_TOKEN`, both made for that one run. The script
gets no key: the proxy's calls are accord's.

- The default provider is the grader AgentV's graders use: accord's judge model (config.yml
  `defaults.judge_model` or `--judge-model`), listed by its name.
- A request may name another provider by its label, as AgentV resolves any label of the
  provider catalog (orchestrator.ts targetResolver): the eval's provider, or any entry of the
  nearest `.agentv/providers.yaml` that is a model (AgentV's openai, azure, anthropic,
  openrouter, gemini, or a promptfoo model id). A label of the catalog accord cannot call
  (a coding agent, a command, a variable that is not set) is answered with an error naming
  why; a label the catalog lacks is refused (400), as AgentV refuses it.
- Each call is a chat of the script's system prompt (AgentV's default system prompt when it
  gives none) and its question (llm-providers.ts buildChatPrompt), through the models door
  as every judge call: the same model entry, its limits and retries, its cost in the run's
  usage, recorded and replayed with the run's cache; at temperature 0 with the judge seed.
- `max_calls` (default 50) bounds the calls of one script run (429 past it).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from .......engine import trust
from .......engine.errors import ConfigError
from .......engine.spec import ModelSpec
from .......engine.yamlmarks import parse_yaml, read_text
from ...common.project import nearest_catalog

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager

    from ......evaluators.cases import Case
    from ......evaluators.judging import EvalContext
    from .....core.cases import Suite
    from ...common.proxy import Answer, Answering

DEFAULT_MAX_CALLS = 50  # provider-proxy.ts DEFAULT_MAX_CALLS
MODEL_PREFIX = "promptfoo:"  # the models door's name of a provider's model (config.py)
CONVERSATION = " (conversation)"  # the suffix of a conversation's target (file.py)


class ProviderAccess(BaseModel):
    """A script grader's proxy: its budget and the catalog's providers it may name."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_calls: int | float = DEFAULT_MAX_CALLS
    # the catalog's labels in its order; a model's label -> its models door name; a label
    # accord cannot call -> why
    labels: tuple[str, ...] = ()
    models: dict[str, str] = Field(default_factory=dict)
    unavailable: dict[str, str] = Field(default_factory=dict)
    # the model entries the suite's project gains (with_catalog_models)
    specs: tuple[ModelSpec, ...] = Field(default=(), exclude=True)


def access(value: Any, base_dir: Path, root: Path, where: str) -> ProviderAccess:
    """A script grader's `provider`: `true`, or `{max_calls: N}` (N a number, 0 or more).
    AgentV ignores any other value with a warning, and runs the script with no proxy;
    accord refuses it, so that a script never runs without the access its file asks for."""
    calls: Any = DEFAULT_MAX_CALLS
    if isinstance(value, dict):
        unknown = sorted(str(k) for k in value if k != "max_calls")
        if unknown:
            raise ConfigError(f"{where}: unknown key '{unknown[0]}' in a script grader's "
                              "'provider' (it takes max_calls)")  # fmt: skip
        calls = value.get("max_calls", DEFAULT_MAX_CALLS)
        if isinstance(calls, bool) or not isinstance(calls, int | float) or calls < 0:
            raise ConfigError(f"{where}: provider.max_calls is a number of calls, 0 or more")
    elif value is not True:
        raise ConfigError(
            f"{where}: a script grader's 'provider' is `true` or `{{max_calls: N}}` (the "
            f"script may call models through AgentV's provider proxy), not {value!r}: AgentV "
            "ignores any other value and runs the script without the proxy"
        )
    catalog = nearest_catalog(base_dir, root)
    if catalog is None:
        return ProviderAccess(max_calls=calls)
    # the catalog's `{{ env.NAME }}` values are the environment's: a part of the key
    # and whether the user trusts it: the endpoints it writes get keys only then
    key = (catalog.stat().st_mtime_ns, frozenset(os.environ.items()),
           trust.is_trusted(catalog, root))  # fmt: skip
    return ProviderAccess(max_calls=calls, **_resolved(str(catalog), str(root), key))


@functools.lru_cache(maxsize=16)
def _resolved(path: str, root: str, _key: Any) -> dict[str, Any]:
    """Each label of the catalog at `path` as a model of the models door, or why not (a
    test's inherited grader is built once per test: the catalog is read once)."""
    from ....promptfoo.providers import ProviderProblem, build_target
    from .. import catalog as agentv_catalog

    labels: list[str] = []
    models: dict[str, str] = {}
    unavailable: dict[str, str] = {}
    specs: list[ModelSpec] = []
    try:
        data = parse_yaml(read_text(Path(path)), Path(path), core=True)[0]
    except Exception:  # the eval's providers report the catalog's error at their line
        data = None
    entries = data.get("providers") if isinstance(data, dict) else data
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        label = entry.get("label", entry.get("id"))
        if not isinstance(label, str) or label in labels:
            continue  # the first entry of a label is the one accord's catalog reads
        labels.append(label)
        pid = entry.get("id", entry.get("provider"))
        try:
            if isinstance(pid, str) and pid in agentv_catalog.MODEL_KINDS:
                given = agentv_catalog._model_entry(pid, entry, label)
            elif isinstance(pid, str) and agentv_catalog.RUNNABLE.match(pid):
                given = {k: v for k, v in entry.items() if k in ("id", "config")}
            else:
                unavailable[label] = (f"'{label}' is AgentV's '{pid}' provider, which accord "
                                      "does not call (it calls models only)")  # fmt: skip
                continue
            name = f"{MODEL_PREFIX}{label}"
            base = Path(path).parent
            spec = build_target({k: v for k, v in given.items() if k != "label"}, base,
                                Path(root), name, file=Path(path),
                                special=agentv_catalog.special_target)[1]  # fmt: skip
        except agentv_catalog.CatalogProblem as exc:
            unavailable[label] = f"provider '{label}' ({path}): {exc.message}"
            continue
        except (ProviderProblem, ValueError) as exc:
            unavailable[label] = f"provider '{label}' ({path}): {getattr(exc, 'message', exc)}"
            continue
        if spec is None:
            unavailable[label] = (f"'{label}' is the provider '{pid}', which is no model: "
                                  "accord's proxy calls models only")  # fmt: skip
            continue
        models[label] = name
        specs.append(spec)
    return {"labels": tuple(labels), "models": models, "unavailable": unavailable,
            "specs": tuple(specs)}  # fmt: skip


def with_catalog_models(suite: Suite) -> Suite:
    """The suite with the catalog's models its script graders may call added to its
    project's models (a model entry already there, such as the eval's own provider's, is
    kept as it is)."""
    import dataclasses

    if suite.project is None:
        return suite
    known = {m.name for m in suite.project.config.models}
    added: list[ModelSpec] = []
    for found in _accesses(suite):
        for spec in found.specs:
            if spec.name not in known:
                known.add(spec.name)
                added.append(spec)
    if not added:
        return suite
    config = suite.project.config.model_copy(
        update={"models": [*suite.project.config.models, *added]}
    )
    return dataclasses.replace(suite, project=dataclasses.replace(suite.project, config=config))


def _accesses(suite: Suite) -> Iterator[ProviderAccess]:
    """Every script grader's access, wherever the grader sits (a suite's or a case's
    evaluators, an assertion set, a conversation's turns)."""
    seen: set[int] = set()
    pending: list[Any] = [suite.evaluators]
    for case in suite.cases:
        pending += [case.evaluators, case.obj]
    while pending:
        item = pending.pop()
        if isinstance(item, ProviderAccess):
            yield item
        elif id(item) in seen or isinstance(item, str | bytes | int | float | bool | None):
            continue
        elif isinstance(item, BaseModel):
            seen.add(id(item))
            pending += [getattr(item, name) for name in type(item).model_fields]
        elif isinstance(item, dict):
            seen.add(id(item))
            pending += list(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            seen.add(id(item))
            pending += list(item)
        elif hasattr(item, "__dataclass_fields__"):
            seen.add(id(item))
            pending += [getattr(item, name) for name in item.__dataclass_fields__]


def proxied(
    found: ProviderAccess, ev: EvalContext, case: Case
) -> AbstractAsyncContextManager[dict[str, str]]:
    """The proxy for one run of the script: the variables of the script's environment."""
    from ...common.proxy import provider_proxy

    judge = ev.judge_model or "default"
    project = ev.suite.project
    own = {m.name for m in project.config.models} if project is not None else set()
    # the eval's provider (a conversation's case runs on a target named after it)
    target = (case.target or "").removesuffix(CONVERSATION)

    def route(label: str | None) -> Answering | None:
        if label is None:
            return _asking(ev, None)
        if label in found.models:
            return _asking(ev, found.models[label])
        if label in found.unavailable:
            return _failing(found.unavailable[label])
        # the eval's own provider, named by an id rather than a catalog label
        if label == target and f"{MODEL_PREFIX}{label}" in own:
            return _asking(ev, f"{MODEL_PREFIX}{label}")
        return None

    # orchestrator.ts availableTargets: the eval's provider, then the catalog's labels
    labels = [target, *found.labels] if target else list(found.labels)
    return provider_proxy(judge, labels, route, found.max_calls)


def _asking(ev: EvalContext, model: str | None) -> Answering:
    async def ask(question: str, system: str | None) -> Answer:
        from ...common.proxy import Answer
        from ..files import DEFAULT_SYSTEM

        messages = [
            {"role": "system", "content": (system or "").strip() or DEFAULT_SYSTEM},
            {"role": "user", "content": question.strip()},
        ]
        completion = await ev.complete(messages, model)
        return Answer(str(completion.text or ""), completion.input_tokens, completion.output_tokens)

    return ask


def _failing(reason: str) -> Answering:
    async def ask(question: str, system: str | None) -> Answer:
        raise RuntimeError(reason)

    return ask

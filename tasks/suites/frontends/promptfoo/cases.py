"""The cases of a promptfoo config: every test (each vars combination) under every
(provider, prompt) column, in promptfoo's order (`src/evaluator.ts`: tests outer, then
providers, then prompts; `promptIdx` counts the columns, `testIdx` the combinations).

A prompt is rendered here, once, at load (promptfoo's `renderPrompt`): `file://` vars read,
one trailing newline dropped from each text var, `{{name}}` references between vars
resolved, then the template rendered over the vars (each string of a JSON prompt on its
own). A template that does not render names its test and prompt before anything runs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

from .....engine import budget
from .....engine.errors import AccordError
from .....engine.programs import admit_code
from ....evaluators.base import EvaluatorSpec
from ....evaluators.cases import Case, case_digest
from . import sources, templating
from .asserts import PromptfooCase
from .form import _Loader, _Test, plain

if TYPE_CHECKING:
    from .....engine.yamlmarks import Loc

_VAR_REFERENCE = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def prompt_id(prompt: sources.Prompt) -> str:
    """promptfoo's `generateIdFromPrompt`: the sha256 of the label when the prompt was
    named, else of its raw text (which is then its label too)."""
    return hashlib.sha256((prompt.label if prompt.named else prompt.raw).encode()).hexdigest()


def resolve_references(variables: dict[str, Any]) -> dict[str, Any]:
    """promptfoo's `resolveVariables`: a text var holding `{{other}}` gets that var's value
    put in, the first reference at a time, for at most five rounds."""
    out = dict(variables)
    for _round in range(5):
        changed = False
        for key, value in out.items():
            if not isinstance(value, str):
                continue
            match = _VAR_REFERENCE.search(value)
            if match and out.get(match.group(1)) is not None:
                out[key] = value.replace(match.group(0), str(out[match.group(1)]), 1)
                changed = True
        if not changed:
            break
    return out


def prepare_vars(variables: dict[str, Any]) -> dict[str, Any]:
    """The vars as promptfoo's `renderPrompt` leaves them: one trailing newline dropped from
    each text var, then `{{name}}` references resolved. promptfoo changes the test's own vars
    object so, and its assertions and result files read that same object afterwards."""
    if not any(isinstance(v, str) and (v.endswith("\n") or "{{" in v) for v in variables.values()):
        return variables  # nothing to change: the same object, as promptfoo keeps it
    stripped = {k: v[:-1] if isinstance(v, str) and v.endswith("\n") else v
                for k, v in variables.items()}  # fmt: skip
    return resolve_references(stripped)


def render_prompt(
    raw: str, variables: dict[str, Any], env: dict[str, Any], *, prepared: bool = False
) -> str:
    """The prompt as the provider receives it (`prepared`: the vars went through
    `prepare_vars` already)."""
    if not prepared:
        variables = prepare_vars(variables)
    try:
        json.loads(raw)
    except ValueError:
        return templating.render_vars(raw, variables, env)
    return templating.render_json_prompt(raw, variables, env)


def chat_messages(text: str) -> list[dict[str, Any]] | None:
    """A rendered prompt that is a JSON list of messages, as OpenAI's chat takes it."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, list) and value and all(isinstance(m, dict) and "role" in m
                                                 for m in value):  # fmt: skip
        return value
    return None


def _inline_code(entry: dict[str, Any]) -> str | None:
    """What code an assertion entry writes inline (a `python`/`javascript` value, a
    `transform`; an assert-set's members too), or None: a `file://` module is the project's
    own code."""
    kind = str(entry.get("type") or "").removeprefix("not-")
    value = entry.get("value")
    if kind in ("python", "javascript") and not (isinstance(value, str)
                                                 and value.startswith("file://")):  # fmt: skip
        return f"the inline {kind} assertion"
    transform = entry.get("transform")
    if isinstance(transform, str) and not transform.strip().startswith("file://"):
        return "the assertion's transform"
    members = entry.get("assert") if kind == "assert-set" else None
    for member in members if isinstance(members, list) else []:
        found = _inline_code(member) if isinstance(member, dict) else None
        if found is not None:
            return found
    return None


def assertions(loader: _Loader, item: _Test, test: dict[str, Any]) -> tuple[EvaluatorSpec, ...]:
    """The specs of a test's assertions, each built by the dialect (`loader.dialect`); a
    problem of one said at its place."""
    entries = test.get("assert") or []
    if not entries:
        return ()
    dialect = loader.dialect
    numbered = dialect.numbered_checks(loader, item, entries)
    own = len(item.test["assert"]) if isinstance(item.test.get("assert"), list) else 0

    specs: list[EvaluatorSpec] = []
    names: set[str] = set()
    for index, entry in numbered:
        where_file = item.file or loader.path
        line = item.line if item.file else loader.marks.find((*item.loc, "assert", index))[0]
        where = f"{where_file}:{line}" if line else str(where_file)
        if not isinstance(entry, dict) and not (
            dialect.text_checks and isinstance(entry, str | tuple)
        ):
            message = "an assertion is a mapping with 'type'"
            if isinstance(entry, str):
                # promptfoo 0.118 stops on such an entry too (runAssertion reads its type)
                message += (
                    f", not the text '{entry[:60]}' (a file of assertions is not read "
                    "by promptfoo either): write them here, or `$ref` a shared one"
                )
            loader.issue((*item.loc, "assert", index), message, file=item.file,
                         line=item.line)  # fmt: skip
            continue
        kind = entry.get("metric") or entry.get("type") if isinstance(entry, dict) else "rubrics"
        name = str(kind or "assert")
        number = 1
        while name in names:  # the assertions of one case need distinct names
            number += 1
            name = f"{kind}#{number}"
        names.add(name)
        inline = _inline_code(entry) if isinstance(entry, dict) else None
        refused = inline and admit_code(where_file, loader.root, inline)
        if refused:  # code written in a file runs only when the user trusts the file
            loader.issue((*item.loc, "assert", index), refused, file=item.file, line=item.line)
            continue
        try:
            specs.append(dialect.build_check(loader, item, index, entry, where, name, own))
        except (AccordError, ValueError) as exc:
            message = getattr(exc, "message", None) or str(exc)
            message = message.removeprefix(f"{where}: ")  # the issue names the place itself
            loader.issue((*item.loc, "assert", index), message, file=item.file, line=item.line)
    return tuple(specs)


def build(
    loader: _Loader,
    tests: list[_Test],
    prompts: list[sources.Prompt],
    providers: list[str],
    env: dict[str, Any],
    models: dict[str, Any],
) -> tuple[list[Case], list[dict[str, Any]]]:
    """The cases, and the columns (prompt x provider) promptfoo's outputs list, made as
    the loader's dialect (`loader.dialect`) reads a test."""
    dialect = loader.dialect
    default = loader.default
    pairs = _pairs(loader, providers, prompts)
    columns = [
        {"raw": p.raw, "label": p.label, "id": prompt_id(p), "provider": name} for name, p in pairs
    ]
    cases: list[Case] = []
    owners: list[tuple[Any, Any, Loc]] = []  # each case's test: its file, line and place
    test_index = 0
    for position, item in enumerate(tests):
        tests[position] = None  # type: ignore[call-overload]  # let each test go once read
        test = plain(dialect.merged(item.test, default))
        evaluators = dialect.checks(loader, item, test, models)
        options = test.get("options") or {}
        try:
            combos = (
                [test["vars"]]
                if options.get("disableVarExpansion")
                else sources.var_combinations(
                    test["vars"], loader.base, loader.root, len(cases), max(len(pairs), 1)
                )
            )
        except (sources.SourceProblem, budget.ExpansionError) as exc:
            loader.issue((*item.loc, "vars"), exc.message, file=item.file, line=item.line)
            continue
        bar = _bar(loader, item, dialect.given_bar(loader, item, test, default))
        first = len(cases)  # the test's first case: its embedding models are checked on it
        prepared = dialect.prepares_vars
        # the test's first combination and how many it has: promptfoo numbers the repeats of
        # a test's combinations before the next test's (evaluator.ts: tests, then repeats)
        test_range = [test_index, len(combos)]
        for variables in combos:
            if prepared:  # the vars the case's assertions and result files see
                variables = prepare_vars(variables)
            test_case = _test_case(test, variables, alone=len(combos) == 1)
            column = 0
            for provider, prompt in pairs:
                raw = f"{options.get('prefix') or ''}{prompt.raw}{options.get('suffix') or ''}"
                try:
                    text = render_prompt(raw, variables, env, prepared=prepared)
                except templating.NunjucksDifference as exc:
                    line = f" (its line {exc.line})" if exc.line else ""
                    loader.issue(item.loc, f"prompt '{prompt.label[:60]}' with this test's "
                                 f"vars: {exc.message}{line}", file=item.file,
                                 line=item.line)  # fmt: skip
                    column += 1
                    continue
                text = dialect.prompt_text(loader, item, raw, text, variables)
                messages = chat_messages(text) if provider in models else None
                if provider in models:
                    messages = dialect.model_messages(messages, text)
                made = dialect.conversation(loader, item, test, variables, evaluators, text,
                                            messages)  # fmt: skip
                if made is None:
                    column += 1
                    continue
                plan, case_evaluators, messages = made
                case = PromptfooCase(
                    vars=variables, options=options, prompt_text=text,
                    id=dialect.case_id(test_index, column, len(columns), test.get("id"),
                                       prompts, prompt, providers, provider),
                    input=messages if messages is not None else text,
                    target=provider,
                    evaluators=case_evaluators,
                    obj=plan,
                    pass_score=bar,
                    line=item.line or loader.marks.find(item.loc)[0],
                    metadata={
                        "vars": variables, "options": options,
                        "threshold": test.get("threshold"),
                        "description": test.get("description"),
                        "prompt": {"raw": text, "label": prompt.label},
                        "promptIdx": column, "testIdx": test_index, "testRange": test_range,
                        "testCase": test_case,
                    },
                )  # fmt: skip
                if len(cases) == first:
                    _check_embeddings(loader, item, case)
                cases.append(dataclasses.replace(case, digest=case_digest(case)))
                owners.append((item.file, item.line, item.loc))
                column += 1
            test_index += 1
    dialect.finish(loader, cases, owners)
    return cases, columns


def _test_case(test: dict[str, Any], variables: dict[str, Any], *, alone: bool) -> dict[str, Any]:
    """The test as promptfoo's result files give it, with the case's vars: the test itself
    when it makes one combination of vars (promptfoo's test object holds its prepared vars),
    else a copy for each combination; one for all the prompt x provider pairs."""
    if alone:
        test["vars"] = variables
        return test
    return {**test, "vars": variables}


def own_graders(loader: _Loader, item: _Test, test: dict[str, Any], models: dict[str, Any]) -> None:
    """A grading provider given with its `config` (`{id, config: {apiBaseUrl, ...}}`, in the
    test's options or on an assertion) is loaded by promptfoo as a provider of its own
    (matchers.ts getAndCheckProvider): here it becomes a model of the run, as a target's
    provider does, and the test names that model instead. One accord cannot build (an
    embedding API, a config key it does not map) is refused at the test."""

    def own(value: Any) -> Any:
        if isinstance(value, str) and value.startswith("ollama:"):
            # promptfoo's Ollama providers read OLLAMA_BASE_URL: the grader is a provider
            # of its own, as one with a config is, to find its endpoint as they do
            value = {"id": value, "config": {}}
        if not isinstance(value, dict):
            return value
        if "id" not in value:  # {text: ..., embedding: ...}: a provider per use
            return {k: own(v) for k, v in value.items()}
        if not value.get("config") and not str(value["id"]).startswith("ollama:"):
            return value
        value = {"config": {}, **value}
        key = "grader:" + json.dumps({"id": value["id"], "config": value["config"]},
                                     sort_keys=True)  # fmt: skip
        name = loader.built.get(key)
        if name is None:
            from .providers import ProviderProblem, build_target

            name = f"promptfoo-grader-{sum(k.startswith('grader:') for k in loader.built) + 1}"
            entry = {"id": value["id"], "config": value["config"]}
            try:
                _target, model = build_target(
                    entry, loader.base, loader.root, name, env=loader.env,
                    file=item.file or loader.path,
                )  # fmt: skip
            except ProviderProblem as exc:
                loader.issue(item.loc, f"grading provider '{value['id']}': {exc.message}",
                             file=item.file, line=item.line)  # fmt: skip
                return value
            if model is None:
                loader.issue(item.loc, f"grading provider '{value['id']}': a grader is a model "
                             "provider (openai:, anthropic:, ...)", file=item.file,
                             line=item.line)  # fmt: skip
                return value
            models[name] = model
            loader.built[key] = name
        return name

    options = test.get("options")
    if isinstance(options, dict) and "provider" in options:
        test["options"] = {**options, "provider": own(options["provider"])}
    pending = [a for a in test.get("assert") or [] if isinstance(a, dict)]
    while pending:
        entry = pending.pop()
        if "provider" in entry:
            entry["provider"] = own(entry["provider"])
        pending += [a for a in entry.get("assert") or [] if isinstance(a, dict)]


def test_transform(
    loader: _Loader, item: _Test, options: dict[str, Any], specs: tuple[EvaluatorSpec, ...]
) -> tuple[EvaluatorSpec, ...]:
    """A test's `options.transform` (or `postprocess`): promptfoo's evaluator applies it to
    the provider's output before every assertion (evaluator.ts runEval), so each assertion
    checks its result (then its own transform, if any)."""
    code = options.get("transform") or options.get("postprocess")
    if code is None:
        return specs
    if isinstance(code, str) and not code.strip().startswith("file://"):
        key = "transform" if "transform" in options else "postprocess"
        refused = admit_code(item.file or loader.path, loader.root, f"the test's options.{key}")
        if refused is not None:
            loader.issue((*item.loc, "options"), refused, file=item.file, line=item.line)
            return specs
    from .asserts.base import PromptfooAssertion
    from .asserts.transforms import with_transform

    where = f"{item.file or loader.path}:{item.line or loader.marks.find(item.loc)[0]}"
    try:
        return tuple(with_transform(spec, code, loader.base, where, test_level=True)
                     if isinstance(spec, PromptfooAssertion) else spec
                     for spec in specs)  # fmt: skip
    except AccordError as exc:
        message = exc.message.removeprefix(f"{where}: ")
        loader.issue((*item.loc, "options"), message, file=item.file, line=item.line)
        return specs


def _bar(loader: _Loader, item: _Test, value: Any) -> float | None:
    """A test's `threshold` (defaultTest's when it has none) as its cases' pass bar:
    promptfoo's `AssertionsResult` passes a test with one on its assertions' weighted score
    reaching it, and one without on all of them passing; 0 counts as none (JavaScript's
    `if (threshold)`)."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
        loader.issue((*item.loc, "threshold"), "a threshold is a number",
                     file=item.file, line=item.line)  # fmt: skip
        return None
    return loader.dialect.bar(value)


def _pairs(
    loader: _Loader, providers: list[str], prompts: list[sources.Prompt]
) -> list[tuple[str, sources.Prompt]]:
    """The (provider, prompt) columns, provider first, as promptfoo's evaluator orders them;
    a provider with `prompts` (its own, or those promptfoo keys by its label or id) runs
    those whose label is one of them or starts with one and a colon (promptfoo's
    `isAllowedPrompt`). A name in a `prompts:` that picks no prompt is refused."""
    for allowed, loc in loader.prompt_lists:
        for name in allowed:
            if not any(p.label == name or p.label.startswith(f"{name}:") for p in prompts):
                labels = ", ".join(repr(p.label) for p in prompts)
                loader.issue(loc, f"'{name}' is the label of no "
                             f"prompt of the config (their labels: {labels})")  # fmt: skip
    pairs = []
    for provider in providers:
        chosen = loader.provider_prompts.get(provider)
        picked = [
            p for p in prompts
            if chosen is None or p.label in chosen[0]
            or any(p.label.startswith(f"{a}:") for a in chosen[0])
        ]  # fmt: skip
        pairs += [(provider, p) for p in picked]
    return pairs


def _check_embeddings(loader: _Loader, item: _Test, case: PromptfooCase) -> None:
    """A `similar` or `answer-relevance` with no embedding model to ask is refused at load
    (promptfoo would ask OpenAI's; accord asks the one config.yml or the config names)."""
    default = loader.embedding_model
    pending = list(case.evaluators)
    while pending:
        spec = pending.pop(0)
        pending.extend(getattr(spec, "asserts", None) or [])
        pending.extend([spec.inner] if hasattr(spec, "inner") else [])  # a transform's
        embeds = getattr(spec, "embeds", False)
        if embeds and spec.embedding_model(case, default) is None:  # type: ignore[attr-defined]
            loader.issue(
                (*item.loc, "assert"),
                f"{spec.type} needs an embedding model (promptfoo's default is OpenAI's): set "
                "defaults.embedding_model in config.yml, or give the assertion or the test's "
                "options a provider with 'embedding' ({embedding: openai:embedding:MODEL})",
                file=item.file, line=item.line,
            )  # fmt: skip
            return

"""A promptfoo config (`promptfooconfig.yaml`) compiled to a core `Suite`, every problem
found at once, at its file and line, before anything runs.

promptfoo 0.118 (`src/evaluator.ts`) runs every test under every prompt for every
provider. Here each (test, vars combination, prompt, provider) is one case: its input is
the prompt rendered with the test's vars, its target the provider, its evaluators the
test's assertions (`defaultTest`'s first). Tests are the config's `tests` (inline or
`file://`), then each scenario's config entries times its tests; with neither, one test
without vars. `defaultTest` gives vars, assertions, options, threshold and metadata to every
test (a test's own win). A key accord does not run is an error, never passed over.

The loader asks its `Dialect` (form.py) wherever a file of promptfoo's form may be read
another way; promptfoo's rules are the default. An AgentV 4 eval file is read by the same
loader with AgentV's dialect (agentv/v4/dialect.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .....engine.errors import AccordError, Issue, ValidationError
from .....engine.yamlmarks import Loc, Marks, parse_yaml, read_text
from ...core.cases import Suite
from ...core.targets import Target
from . import derived, expansions, sources, templating
from .form import Dialect, _Loader, _Test
from .providers import SOURCE, ProviderProblem, build_target, provider_entries

if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass
class PromptfooSuite(Suite):
    """A promptfoo config's suite, with what promptfoo's own outputs need: the raw config,
    the (prompt, provider) columns, the derived metrics and the config's `outputPath`."""

    config: dict[str, Any] = field(default_factory=dict)
    columns: list[dict[str, Any]] = field(default_factory=list)
    derived_metrics: list[tuple[str, str]] = field(default_factory=list)
    output_paths: list[Path] = field(default_factory=list)
    providers: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> {id, label}


def load(
    path: Path,
    *,
    judge_model: str | None = None,
    repeat: int | None = None,
    text: str | None = None,
    dialect: Dialect | None = None,
    parsed: tuple[Any, Marks] | None = None,
) -> Suite:
    """Validate a file of promptfoo's form and build its suite; every problem at once (exit
    2). `dialect`: how the file is read (promptfoo's rules when None; a new object for each
    file). `text`: the file's text when the caller has read it already; `parsed`: its data
    and marks when the caller has parsed it already (`parse_yaml(..., core=True)`)."""
    data, marks = parsed or parse_yaml(read_text(path) if text is None else text, path, core=True)
    if not isinstance(data, dict):
        raise ValidationError([Issue(path, 1, 1, "", "a promptfoo config is a mapping")])
    dialect = dialect or Dialect()
    project = dialect.project(path)
    loader = _Loader(path, project.root, marks, dialect=dialect)
    loader.embedding_model = project.config.defaults.embedding_model
    env = data.get("env") if isinstance(data.get("env"), dict) else {}
    loader.env = {str(k): v for k, v in (env or {}).items()}
    data = dialect.prepare(loader, data)
    env = loader.env
    prompts = _prompts(loader, data.get("prompts"))
    targets, models, columns_of = _providers(loader, data)
    named = {name: {"id": _shown_id(e, targets.get(name)), "label": str(e.get("label") or "")}
             for name, e in loader.provider_entries.items()}  # fmt: skip
    default = loader.default = _default_test(loader, data.get("defaultTest"))
    tests = _tests(loader, data, default)
    metrics = derived.parse(loader, data.get("derivedMetrics"))
    from . import cases as case_building  # it reads this module

    cases, columns = case_building.build(loader, tests, prompts, columns_of, env or {}, models)
    if not prompts and "prompts" in data and not loader.issues:  # else those are the cause
        loader.issue(("prompts",), "no prompt: give at least one")
    if loader.issues:
        raise ValidationError(sorted(loader.issues, key=lambda i: (str(i.file), i.line or 0)))
    added = [*models.values(), *dialect.models(loader)]  # a dialect's graders too
    project = dataclasses.replace(
        project,
        config=project.config.model_copy(update={"models": [*project.config.models, *added]}),
    )
    outputs = data.get("outputPath")
    output_paths = [outputs] if isinstance(outputs, str) else list(outputs or [])
    _check_output_paths(loader, outputs, project.root)
    if loader.issues:
        raise ValidationError(sorted(loader.issues, key=lambda i: (str(i.file), i.line or 0)))
    return PromptfooSuite(
        id=str(data.get("description") or path.parent.name or path.stem),
        cases=cases,
        targets=targets,
        repeat=repeat or 1,
        pass_score=dialect.pass_score,
        judge_model=judge_model or dialect.judge(loader) or project.default_judge,
        path=path,
        project=project,
        config=data,
        columns=columns,
        derived_metrics=metrics,
        output_paths=[Path(p) for p in output_paths if isinstance(p, str) and p],
        providers=named,
        scoring=dialect.scoring,
        notes=tuple(loader.notes),
    )


def _shown_id(entry: dict[str, Any], target: Target | None) -> str:
    """The id promptfoo's results show: the provider's `id()`, which is an http provider's
    URL (http.ts), else the entry's id."""
    from .http_provider import HttpTarget

    return target.url if isinstance(target, HttpTarget) else str(entry.get("id"))


def _check_output_paths(loader: _Loader, value: Any, root: Path) -> None:
    """`outputPath` is written by whoever runs the config: it stays inside the project (it is
    relative to the current folder, as promptfoo reads it). An absolute path or one leading
    out (`../`, a link) is refused at its line; a place outside is the user's to choose, on
    the command line (`-o PATH`), where the output checks of every command apply."""
    from .....engine.paths import resolved, shown_path

    items: list[tuple[tuple[int, ...], str]] = [((), value)] if isinstance(value, str) else []
    if isinstance(value, list):
        items = [((i,), item) for i, item in enumerate(value) if isinstance(item, str)]
    for index, given in items:
        if not given:
            continue
        path = Path(given)
        where = "an absolute path" if path.is_absolute() or given.startswith("~") else None
        if where is None and not resolved(Path.cwd() / path).is_relative_to(resolved(root)):
            where = "a path leading outside the project"
        if where is not None:
            loader.issue(
                ("outputPath", *index),
                f"outputPath '{given}' is {where} ({root} is the project): a file may write "
                "only inside its project; to write elsewhere, give the path on the command "
                f"line: accord eval -c {shown_path(loader.path)} -o PATH",
            )


def _prompts(loader: _Loader, value: Any) -> list[sources.Prompt]:
    if value is None:
        loader.issue((), "'prompts' is required: the prompt templates to run")
        return []
    items: list[tuple[Any, str | None, Loc]] = []
    if isinstance(value, str):
        items.append((value, None, ("prompts",)))
    elif isinstance(value, dict):
        items += [(k, v if isinstance(v, str) else None, ("prompts", k)) for k, v in value.items()]
    elif isinstance(value, list):
        items += [(v, None, ("prompts", i)) for i, v in enumerate(value)]
    else:
        loader.issue(("prompts",), "'prompts' is a prompt, a list of prompts, or a mapping")
    out: list[sources.Prompt] = []
    for item, label, loc in items:
        named = label is not None
        if isinstance(item, dict):
            loader.keys(item, loc, {"id", "raw", "label", "config"}, {"function"}, "a prompt")
            label = item.get("label")
            named = "label" in item or "id" in item
            raw = item.get("raw") if item.get("raw") is not None else item.get("id")
            if item.get("config"):
                loader.issue((*loc, "config"), "a prompt's own 'config' is not supported by "
                             "accord: set it on the provider")  # fmt: skip
        else:
            raw = item
        if not isinstance(raw, str):
            loader.issue(loc, "a prompt is text, `file://PATH`, or {raw|id, label}")
            continue
        try:
            if raw.startswith("file://") or sources.maybe_file_path(raw):
                out += _prompt_files(loader, raw, label, named)
            else:
                out.append(sources.Prompt(raw, label or raw, named=named))
        except sources.SourceProblem as exc:
            loader.issue(loc, exc.message)
    for prompt in out:
        if loader.dialect.refuses_prompt(loader, prompt):
            continue
        try:
            templating.check(prompt.raw)
        except templating.NunjucksDifference as exc:
            loader.issue(("prompts",), f"prompt '{prompt.label[:60]}': {exc.message}"
                         + (f" (its line {exc.line})" if exc.line else ""))  # fmt: skip
    return out


def _prompt_files(
    loader: _Loader, raw: str, label: str | None, named: bool
) -> list[sources.Prompt]:
    """The prompts a path names. promptfoo (`prompts/index.ts` `processPrompt`) reads a
    prompt that looks like a path (`maybeFilePath`), given as text or as `raw`, as one: a
    glob matching nothing is the text itself; a name with no prompt file suffix is an error
    ('There are no prompts in ...')."""
    pattern = raw.removeprefix("file://")
    if any(c in pattern for c in "*?[]{}"):
        try:
            found = sources.expand(loader.base, loader.root, pattern, "prompt file")
        except sources.SourceProblem:
            if raw.startswith("file://"):
                raise
            return [sources.Prompt(raw, label or raw, named=named)]
    else:
        if not raw.startswith("file://") and not pattern.endswith(sources.PROMPT_SUFFIXES):
            raise sources.SourceProblem(
                f"the prompt '{raw[:60]}' reads as a file path (it has a '/', a '\\' or a file "
                "suffix) that names no prompt file (promptfoo stops on it too: 'There are no "
                "prompts'): rephrase it, or put it in a .txt file"
            )
        found = sources.expand(loader.base, loader.root, pattern, "prompt file")
    out: list[sources.Prompt] = []
    globbed = any(c in pattern for c in "*?[]{}")
    for path, shown in found:
        # promptfoo reads each file a glob matches as a prompt of its own path alone
        # (prompts/index.ts processPrompt: `{raw: path}`): the entry's label is not used
        out += sources.prompts_from_file(path, shown, None if globbed else label)
    return out


def _providers(
    loader: _Loader, data: dict[str, Any]
) -> tuple[dict[str, Target], dict[str, Any], list[str]]:
    """Targets by name, the model entries they add, and the provider names in order."""
    key = "providers" if "providers" in data else "targets"
    value = data.get(key)
    targets: dict[str, Target] = {}
    models: dict[str, Any] = {}
    names: list[str] = []
    if value is None:
        loader.issue((), "'providers' is required: the models (or echo, exec:, python:) to run")
        return targets, models, names
    try:
        entries = expansions.provider_files(loader, key, provider_entries(value))
    except ProviderProblem as exc:
        loader.issue((key,), exc.message)
        return targets, models, names
    keyed: dict[str, tuple[list[str], Loc] | None] = {}
    for entry, loc in entries:
        # the file that wrote the entry (a catalog, a provider file) answers for its program
        written = entry.get(SOURCE)
        source, source_line = (Path(written[0]), written[1]) if written else (loader.path, None)
        entry = loader.dialect.provider_entry(loader, key, entry, loc)
        pid = entry.get("id")
        label = entry.get("label")
        name = str(label or pid)
        while name in targets:
            name += "'"
        try:
            target, model = build_target(
                entry, loader.base, loader.root, f"promptfoo:{name}", env=loader.env,
                agent_trace=loader.dialect.agent_trace, file=loader.path,
                special=loader.dialect.special_target,
            )  # fmt: skip
            target = loader.dialect.placed_target(loader, target)
        except ProviderProblem as exc:
            at = (key, *loc, *exc.key) if exc.file is None else ()  # another file's line
            loader.issue(at, exc.message, file=exc.file, line=exc.line)
            continue
        except (ValueError, AccordError) as exc:
            loader.issue((key, *loc), str(exc))
            continue
        problem = target.problem(loader.root)
        if problem is not None:
            loader.issue((key, *loc), problem)
        refused = target.admission(source, loader.root)
        if refused is not None:  # the door of programs (engine/programs.admit)
            loader.issue((key, *loc), refused, file=source, line=source_line)
            continue
        item = value[loc[0]] if isinstance(value, list) else value
        _prompt_keys(loader, entry, item, (key, *loc, "prompts"), keyed)
        targets[name] = target
        loader.provider_entries[name] = entry
        if model is not None:
            models[name] = model
        names.append(name)
    for name in names:
        # promptfoo's evaluator looks the prompts up by the provider's label, else its id
        entry = loader.provider_entries[name]
        chosen = keyed.get(str(entry.get("label") or entry.get("id")))
        if chosen is not None:
            loader.provider_prompts[name] = chosen
    return targets, models, names


def _prompt_keys(
    loader: _Loader,
    entry: dict[str, Any],
    item: Any,
    loc: Loc,
    keyed: dict[str, tuple[list[str], Loc] | None],
) -> None:
    """An entry's part of promptfoo's `readProviderPromptMap`, entry by entry (a later one
    replaces an earlier's key): an entry with `id` keys its prompts (None: all) by its id
    and its label, one of the `{ID: options}` form by its id alone; a plain id adds none."""
    own = None
    allowed = entry.get("prompts")
    if allowed is not None:
        if isinstance(allowed, list) and allowed and all(isinstance(a, str) for a in allowed):
            own = (allowed, loc)
            loader.prompt_lists.append(own)
        else:
            loader.issue(loc, "a provider's 'prompts' is a list of the labels of the prompts "
                         "it runs")  # fmt: skip
    if isinstance(item, dict):
        keyed[str(entry.get("id"))] = own
        if entry.get("label") and "id" in item:
            keyed[str(entry["label"])] = own


def _default_test(loader: _Loader, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if isinstance(value, str) and value.startswith("file://"):
        try:
            ((found, _line),) = sources.tests_from_file(
                *sources.expand(loader.base, loader.root, value[7:], "defaultTest file")[0]
            )
        except (sources.SourceProblem, ValueError) as exc:
            loader.issue(("defaultTest",), getattr(exc, "message", str(exc)))
            return {}
        value = found
    if not isinstance(value, dict):
        loader.issue(("defaultTest",), "defaultTest is a mapping (vars, assert, options, ...)")
        return {}
    loader.check_test(value, ("defaultTest",))
    return value


def _place(loader: _Loader, loc: Loc) -> Callable[[], str]:
    """The file and line of `loc`, found when asked."""
    return lambda: f"{loader.path}:{loader.marks.find(loc)[0]}"


def _tests(loader: _Loader, data: dict[str, Any], default: dict[str, Any]) -> list[_Test]:
    value = data.get("tests")
    found: list[_Test] = []
    items = [value] if isinstance(value, str | dict) else (value or [])
    if not isinstance(items, list):
        loader.issue(("tests",), "'tests' is a list of tests, or `file://PATH`")
        items = []
    dialect = loader.dialect
    for index, item in enumerate(items):
        loc: Loc = ("tests", index) if isinstance(value, list) else ("tests",)
        if isinstance(item, str):
            found += loader.test_file(item, loc)
        elif isinstance(item, dict):
            if not dialect.keeps(loader, item, _place(loader, loc)):
                continue
            loader.check_test(item, loc)
            found.append(_Test(item, loc))
        else:
            loader.issue(loc, "a test is a mapping (vars, assert, ...) or `file://PATH`")
    return dialect.scenario_tests(loader, data, default, found)

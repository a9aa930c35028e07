"""A promptfoo config (`promptfooconfig.yaml`) compiled to a core `Suite`, every problem
found at once, at its file and line, before anything runs.

promptfoo 0.118 (`src/evaluator.ts`) runs every test under every prompt for every
provider. Here each (test, vars combination, prompt, provider) is one case: its input is
the prompt rendered with the test's vars, its target the provider, its evaluators the
test's assertions (`defaultTest`'s first). Tests are the config's `tests` (inline or
`file://`), then each scenario's config entries times its tests; with neither, one test
without vars. `defaultTest` gives vars, assertions, options, threshold and metadata to every
test (a test's own win). A key accord does not run is an error, never passed over.

An AgentV 4 eval file (`dialect="agentv4"`, agentv/v4/file.py) is read by the same loader with
AgentV's keys: its own top-level and test keys, its assertions, its provider labels and its
`environment`, `extensions` and inherited assertions (after the test's own).
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .....engine import budget
from .....engine.errors import AccordError, Issue, ValidationError, did_you_mean
from .....engine.project import load_project
from .....engine.yamlmarks import Loc, Marks, format_path, parse_yaml, read_text
from ...core.cases import Suite
from ...core.targets import Target
from . import derived, expansions, sources, templating
from .providers import SOURCE, ProviderProblem, build_target, provider_entries

SUPPORTED = {
    "description", "prompts", "providers", "targets", "tests", "defaultTest", "scenarios",
    "derivedMetrics", "env", "outputPath", "tags", "metadata", "sharing", "evaluateOptions",
}  # fmt: skip
NOT_SUPPORTED = {
    "commandLineOptions", "nunjucksFilters", "extensions", "redteam", "tracing",
    "writeLatestResults",
}  # fmt: skip
TEST_KEYS = {"description", "vars", "assert", "options", "threshold", "metadata"}
NOT_SUPPORTED_TEST = {"provider", "providerOutput", "assertScoringFunction", "prompts"}
OPTION_KEYS = {"prefix", "suffix", "provider", "rubricPrompt", "disableVarExpansion"}
SCENARIO_KEYS = {"description", "config", "tests"}
# promptfoo's evaluator fills `_conversation` with the earlier (prompt, output) pairs of the
# tests sharing a `metadata.conversationId`, running those tests serially (evaluator.ts)
_CONVERSATION = re.compile(r"\b_conversation\b")


@dataclass
class PromptfooSuite(Suite):
    """A promptfoo config's suite, with what promptfoo's own outputs need: the raw config,
    the (prompt, provider) columns, the derived metrics and the config's `outputPath`."""

    config: dict[str, Any] = field(default_factory=dict)
    columns: list[dict[str, Any]] = field(default_factory=list)
    derived_metrics: list[tuple[str, str]] = field(default_factory=list)
    output_paths: list[Path] = field(default_factory=list)
    providers: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> {id, label}


@dataclass
class _Loader:
    path: Path
    root: Path
    marks: Marks
    issues: list[Issue] = field(default_factory=list)
    default: dict[str, Any] = field(default_factory=dict)  # the config's defaultTest
    provider_entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    env: dict[str, Any] = field(default_factory=dict)  # the config's env:
    dialect: str = "promptfoo"  # or "agentv4": an AgentV 4 eval file
    trailing: list[Any] = field(default_factory=list)  # AgentV: asserts after a test's own
    process_env: dict[str, str] = field(default_factory=dict)  # AgentV: its environment's env
    built: dict[str, Any] = field(default_factory=dict)  # assertion specs by entry and name
    embedding_model: str | None = None  # config.yml's defaults.embedding_model
    # the `prompts` (labels) each provider runs, and their place, as promptfoo picks them
    provider_prompts: dict[str, tuple[list[str], Loc]] = field(default_factory=dict)
    prompt_lists: list[tuple[list[str], Loc]] = field(default_factory=list)  # every `prompts:`
    agentv_prompt_ids: list[str] = field(default_factory=list)  # AgentV: each prompt's id
    notes: list[str] = field(default_factory=list)  # warnings said on stderr at load
    skipped_tests: int = 0  # AgentV: tests skipped for want of an id (agentv_rows.has_id)
    judge: Any = None  # AgentV: the model of the file's defaults.grader
    implicit_input: bool = False  # AgentV: no `prompts`, each test's `input` is its prompt
    grader_models: dict[str, Any] = field(default_factory=dict)  # AgentV: agentv/v4/graders.py
    trailing_locs: list[Loc | None] = field(default_factory=list)  # AgentV: where `trailing` is
    # a provider entry written in another file (a provider file, an AgentV catalog), by id()
    # of the entry: that file and the entry's line there, where its program is judged

    @property
    def base(self) -> Path:
        return self.path.parent

    def issue(self, loc: Loc, message: str, *, file: Path | None = None, line: int | None = None,
              key: bool = False) -> None:  # fmt: skip
        if file is not None and file != self.path:
            self.issues.append(Issue(file, line, None, format_path(loc), message))
            return
        at_line, column = self.marks.find(loc, key=key)
        self.issues.append(Issue(self.path, line or at_line, column, format_path(loc), message))

    def keys(self, data: dict[str, Any], loc: Loc, allowed: set[str], refused: set[str],
             what: str, **where: Any) -> None:  # fmt: skip
        for key in data:
            if key in allowed:
                continue
            if key in refused:
                message = (f"'{key}' ({what}) is not supported by accord: remove it "
                           "(docs/promptfoo.md lists what runs)")  # fmt: skip
            else:
                hint = did_you_mean(key, allowed, before="", after=" ")
                message = (f"unknown key '{key}' in {what}: {hint}known keys: "
                           f"{', '.join(sorted(allowed))}")  # fmt: skip
            self.issue((*loc, key), message, key=True, **where)


def load(
    path: Path,
    *,
    judge_model: str | None = None,
    repeat: int | None = None,
    text: str | None = None,
    dialect: str = "promptfoo",
) -> Suite:
    """Validate a promptfoo config (or, `dialect="agentv4"`, an AgentV 4 eval file) and build
    its suite; every problem at once (exit 2). `text`: the file's text when the caller has
    read it already."""
    data, marks = parse_yaml(read_text(path) if text is None else text, path, core=True)
    if not isinstance(data, dict):
        raise ValidationError([Issue(path, 1, 1, "", "a promptfoo config is a mapping")])
    project = load_project(path)
    loader = _Loader(path, project.root, marks, dialect=dialect)
    loader.embedding_model = project.config.defaults.embedding_model
    env = data.get("env") if isinstance(data.get("env"), dict) else {}
    loader.env = {str(k): v for k, v in (env or {}).items()}
    workdir = None
    if dialect == "agentv4":
        from ..agentv.v4 import file as agentv4

        data, workdir = agentv4.prepare(loader, data)
    else:
        from . import refs

        data, holders = refs.resolve(data, lambda loc, message: loader.issue(loc, message))
        loader.keys(data, (), SUPPORTED | (holders - NOT_SUPPORTED), NOT_SUPPORTED, "the config")
    env = loader.env
    if dialect == "promptfoo":
        expansions.evaluate_options_of(loader, data.get("evaluateOptions"))
    prompts = _prompts(loader, data.get("prompts"))
    targets, models, columns_of = _providers(loader, data, workdir)
    named = {name: {"id": str(e.get("id")), "label": str(e.get("label") or "")}
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
    judges = [loader.judge] if loader.judge is not None else []  # AgentV's defaults.grader
    graders = loader.grader_models.values()  # AgentV: an assertion's own grader
    project = dataclasses.replace(
        project,
        config=project.config.model_copy(
            update={"models": [*project.config.models, *models.values(), *judges, *graders]}
        ),
    )
    pass_score = None  # a promptfoo config's cases carry their tests' own bars
    if dialect == "agentv4":
        from ..agentv.v4.checks.build import PASS

        # each case carries its test's threshold (default_test's, else the file's, merged in
        # by agentv4.prepare); one without passes at AgentV's DEFAULT_THRESHOLD, 0.8
        # (run-eval.ts resolveEffectiveRunPolicy: run ?? test ?? suite default ?? 0.8)
        pass_score = PASS
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
        pass_score=pass_score,
        judge_model=judge_model or getattr(loader.judge, "name", None) or project.default_judge,
        path=path,
        project=project,
        config=data,
        columns=columns,
        derived_metrics=metrics,
        output_paths=[Path(p) for p in output_paths if isinstance(p, str) and p],
        providers=named,
        scoring="agentv4" if dialect == "agentv4" else "promptfoo",
        notes=tuple(loader.notes),
    )


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
        if loader.dialect == "promptfoo" and _CONVERSATION.search(prompt.raw):
            loader.issue(("prompts",), f"prompt '{prompt.label[:60]}' reads `_conversation`, "
                         "promptfoo's record of the earlier tests of a conversation (run one "
                         "after another, each seeing the answers before it): accord runs each "
                         "test on its own and cannot fill it; write the earlier turns into the "
                         "test's own messages")  # fmt: skip
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
    loader: _Loader, data: dict[str, Any], workdir: str | None = None
) -> tuple[dict[str, Target], dict[str, Any], list[str]]:
    """Targets by name, the model entries they add, and the provider names in order
    (`workdir`: an AgentV environment's folder, where command and Python targets run)."""
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
        if loader.dialect == "promptfoo":
            entry = expansions.rendered_provider(loader, key, entry, loc)
        pid = entry.get("id")
        label = entry.get("label")
        name = str(label or pid)
        while name in targets:
            name += "'"
        try:
            target, model = build_target(
                entry, loader.base, loader.root, f"promptfoo:{name}", env=loader.env,
                agent_trace=loader.dialect == "agentv4", file=loader.path,
            )  # fmt: skip
            if workdir is not None and hasattr(target, "cwd"):
                target = target.model_copy(update={"cwd": workdir})
            if loader.process_env and hasattr(target, "process_env"):
                target = target.model_copy(update={"process_env": loader.process_env})
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
    _check_test(loader, value, ("defaultTest",))
    return value


def _check_test(
    loader: _Loader, test: dict[str, Any], loc: Loc, whole: bool = True, **where: Any
) -> None:
    """`whole`: a test as it runs, not a part of one (an AgentV scenario's row or test)."""
    if loader.dialect == "agentv4":
        from ..agentv.v4 import file as agentv4
        from ..agentv.v4 import rows as agentv_rows

        kept = agentv_rows.admit(loader, test, loc, whole, **where)
        loader.keys(kept, loc, agentv4.TEST_KEYS, agentv4.NOT_SUPPORTED_TEST, "a test", **where)
    else:
        loader.keys(test, loc, TEST_KEYS, NOT_SUPPORTED_TEST, "a test", **where)
    options = test.get("options")
    if isinstance(options, dict):
        # AgentV reads default_test.options.rubric_prompt (config-loader.ts
        # extractDefaultTestRubricPrompt) into suite.defaultTest, where no grader reads it
        # AgentV runs a test's transform (agentv/v4/transform.py); promptfoo's test transform
        # (evaluator.ts: `transform`, or its older name `postprocess`) is applied by cases.py
        allowed = OPTION_KEYS | (
            {"rubric_prompt", "transform"} if loader.dialect == "agentv4"
            else {"transform", "postprocess"}
        )  # fmt: skip
        loader.keys(options, (*loc, "options"), allowed,
                    {"transform", "transformVars", "storeOutputAs", "runSerially"} - allowed,
                    "a test's options", **where)  # fmt: skip
    given = test.get("vars")
    if loader.dialect == "promptfoo" and (
        isinstance(given, str)
        or (isinstance(given, list) and given and all(isinstance(v, str) for v in given))
    ):
        try:  # vars files, read as promptfoo reads them (from the test's own file's folder)
            folder = where["file"].parent if where.get("file") else loader.base
            test["vars"] = sources.vars_files(given, folder, loader.root)
        except sources.SourceProblem as exc:
            loader.issue((*loc, "vars"), exc.message, **where)
            test["vars"] = {}
    for name in ("vars", "options", "metadata"):
        if name in test and not isinstance(test[name], dict):
            loader.issue((*loc, name), f"'{name}' is a mapping", **where)
            test[name] = {}  # refused above; what is merged later stays of its shape
    if "assert" in test and not isinstance(test["assert"], list):
        loader.issue((*loc, "assert"), "'assert' is a list of assertions", **where)


@dataclass
class _Test:
    test: dict[str, Any]
    loc: Loc
    file: Path | None = None
    line: int | None = None


def _tests(loader: _Loader, data: dict[str, Any], default: dict[str, Any]) -> list[_Test]:
    value = data.get("tests")
    found: list[_Test] = []
    items = [value] if isinstance(value, str | dict) else (value or [])
    if not isinstance(items, list):
        loader.issue(("tests",), "'tests' is a list of tests, or `file://PATH`")
        items = []
    for index, item in enumerate(items):
        loc: Loc = ("tests", index) if isinstance(value, list) else ("tests",)
        if isinstance(item, str):
            found += _test_file(loader, item, loc)
        elif isinstance(item, dict):
            if loader.dialect == "agentv4":
                from ..agentv.v4.rows import has_id

                if not has_id(loader, item, f"{loader.path}:{loader.marks.find(loc)[0]}"):
                    continue
            _check_test(loader, item, loc)
            found.append(_Test(item, loc))
        else:
            loader.issue(loc, "a test is a mapping (vars, assert, ...) or `file://PATH`")
    scenarios = data.get("scenarios") or []
    if loader.dialect != "agentv4":  # AgentV's scenario files: agentv/v4/scenarios.py
        scenarios = expansions.scenario_files(loader, scenarios)
    if not found and not scenarios:
        found.append(_Test({}, ()))
    if loader.dialect == "agentv4":
        # AgentV's scenarios: promptfoo's config x tests, with scenario files and test ids
        from ..agentv.v4.rows import none_left
        from ..agentv.v4.scenarios import scenario_tests

        return none_left(loader, [*found, *scenario_tests(loader, data.get("scenarios"))])
    return [*found, *_scenario_tests(loader, scenarios, default)]


def _scenario_tests(loader: _Loader, scenarios: Any, default: dict[str, Any]) -> list[_Test]:
    """promptfoo's scenarios: each config row crossed with each test, merged as its
    evaluator merges them."""
    found: list[_Test] = []
    for s_index, scenario in enumerate(scenarios if isinstance(scenarios, list) else []):
        loc = ("scenarios", s_index)
        if not isinstance(scenario, dict):
            loader.issue(loc, "a scenario is a mapping with config and tests")
            continue
        loader.keys(scenario, loc, SCENARIO_KEYS, set(), "a scenario")
        inner = scenario.get("tests") or [{}]
        if isinstance(inner, str):  # file://: its tests (util/config/load.ts resolveConfigs)
            inner = [t.test for t in _test_file(loader, inner, (*loc, "tests"))] or [{}]
        rows = scenario.get("config") or []
        try:  # rows x tests, counted before they are made
            budget.check_product(
                [("config rows", len(rows)), ("tests", len(inner))],
                "this scenario's config rows and tests", already=len(found),
                advice="split the scenario",
            )  # fmt: skip
        except budget.ExpansionError as exc:
            loader.issue(loc, exc.message)
            continue
        for d_index, entry in enumerate(rows):
            for t_index, test in enumerate(inner):
                if not isinstance(entry, dict) or not isinstance(test, dict):
                    loader.issue(loc, "a scenario's config and tests are lists of mappings")
                    continue
                _check_test(loader, test, (*loc, "tests", t_index))
                _check_test(loader, entry, (*loc, "config", d_index))
                merged = {
                    **{k: v for k, v in default.items() if k != "assert"}, **entry, **test,
                    "vars": {**default.get("vars", {}), **entry.get("vars", {}),
                             **test.get("vars", {})},
                    "options": {**default.get("options", {}), **test.get("options", {})},
                    "assert": [*entry.get("assert", []), *test.get("assert", [])],
                    "metadata": {**default.get("metadata", {}), **entry.get("metadata", {}),
                                 **test.get("metadata", {})},
                }  # fmt: skip
                found.append(_Test(merged, (*loc, "config", d_index)))
    return found


def _test_file(loader: _Loader, item: str, loc: Loc) -> list[_Test]:
    if not item.startswith("file://"):
        loader.issue(loc, f"a test given as text must be `file://PATH`, not '{item[:60]}'")
        return []
    out: list[_Test] = []
    read = sources.tests_from_file
    if loader.dialect == "agentv4":  # AgentV's own reader of test files (CSV above all)
        import functools

        from ..agentv.v4 import csvfile as agentv_csv
        from ..agentv.v4 import rows as agentv_rows

        read = functools.partial(agentv_csv.tests_from_file, loader=loader)
    try:
        for path, shown in sources.expand(loader.base, loader.root, item[7:], "test file"):
            for t_index, (test, line) in enumerate(read(path, shown)):
                if not isinstance(test, dict):
                    loader.issue((t_index,), "a test is a mapping", file=path, line=line)
                    continue
                if loader.dialect == "agentv4" and not agentv_rows.has_id(
                    loader, test, f"{path}:{line}" if line else f"{path}, test {t_index + 1}"
                ):
                    continue
                _check_test(loader, test, (t_index,), file=path, line=line)
                out.append(_Test(test, (t_index,), path, line))
    except sources.SourceProblem as exc:
        if exc.file is not None:
            loader.issue((), exc.message, file=exc.file, line=exc.line)
        else:
            loader.issue(loc, exc.message)
    return out


def _merged(
    test: dict[str, Any], default: dict[str, Any], trailing: list[Any] | None = None
) -> dict[str, Any]:
    """A test with defaultTest's parts, as promptfoo's evaluator merges them (`trailing`:
    an AgentV file's inherited assertions, which come after the test's own)."""
    merged = {**test}
    merged["vars"] = {**default.get("vars", {}), **test.get("vars", {})}
    merged["assert"] = [*default.get("assert", []), *test.get("assert", []), *(trailing or [])]
    merged["options"] = {**default.get("options", {}), **test.get("options", {})}
    merged["metadata"] = {**default.get("metadata", {}), **test.get("metadata", {})}
    if merged.get("threshold") is None and default.get("threshold") is not None:
        merged["threshold"] = default["threshold"]
    return merged


def plain(value: Any) -> Any:
    """A value as JSON would carry it (`json.loads(json.dumps(value, default=str))`): keys
    as text (`1` -> "1", `true`, `null`), sequences as lists, YAML dates and any other value
    as text; numbers, booleans, null and texts as they are. The texts are shared, not made
    again: a config of 1,000,000 tests holds each key once, not once a test."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, dict):
        return {_json_key(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return str(value)


def _json_key(key: Any) -> str:
    """A mapping key as `json.dumps` writes it."""
    if isinstance(key, str):
        return sys.intern(key)  # a test file's keys are few: each text held once
    if isinstance(key, bool) or key is None:
        return {True: "true", False: "false", None: "null"}[key]
    if isinstance(key, float):
        if key != key:
            return "NaN"
        if key in (math.inf, -math.inf):
            return "Infinity" if key > 0 else "-Infinity"
        return float.__repr__(key)
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")

"""promptfoo's form as the loader reads it: the loader's state (`_Loader`, one per file), a
test as read (`_Test`), defaultTest's merge (`_merged`) and JSON's view of a value
(`plain`); beside them the `Dialect`, whose methods are promptfoo's own rules.

A file of promptfoo's form written for another tool (an AgentV 4 eval file:
agentv/v4/dialect.py) is read by the same loader (config.py, cases.py) with a subclass of
`Dialect` that gives that tool's rules; the loader asks its dialect, never which one it is.
A dialect object is made for each file loaded: one that keeps state of its own (AgentV's
inherited assertions, its catalog's graders) keeps it there, not on the loader.
"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .....engine import budget
from .....engine.errors import Issue, did_you_mean
from .....engine.yamlmarks import Loc, Marks, format_path
from . import expansions, sources

if TYPE_CHECKING:
    from collections.abc import Callable

    from .....engine.project import Project
    from ....evaluators.base import EvaluatorSpec
    from ....evaluators.cases import Case
    from ...core.targets import Target

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
# a test's options that neither form reads: refused by name
REFUSED_OPTION_KEYS = {"transform", "transformVars", "storeOutputAs", "runSerially"}
# promptfoo's evaluator fills `_conversation` with the earlier (prompt, output) pairs of the
# tests sharing a `metadata.conversationId`, running those tests serially (evaluator.ts)
_CONVERSATION = re.compile(r"\b_conversation\b")


@dataclass
class _Test:
    test: dict[str, Any]
    loc: Loc
    file: Path | None = None
    line: int | None = None


@dataclass
class _Loader:
    path: Path
    root: Path
    marks: Marks
    dialect: Dialect = field(default_factory=lambda: Dialect())
    issues: list[Issue] = field(default_factory=list)
    default: dict[str, Any] = field(default_factory=dict)  # the config's defaultTest
    provider_entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    env: dict[str, Any] = field(default_factory=dict)  # the config's env:
    built: dict[str, Any] = field(default_factory=dict)  # assertion specs by entry and name
    embedding_model: str | None = None  # config.yml's defaults.embedding_model
    # the `prompts` (labels) each provider runs, and their place, as promptfoo picks them
    provider_prompts: dict[str, tuple[list[str], Loc]] = field(default_factory=dict)
    prompt_lists: list[tuple[list[str], Loc]] = field(default_factory=list)  # every `prompts:`
    notes: list[str] = field(default_factory=list)  # warnings said on stderr at load

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
                           f"({self.dialect.docs} lists what runs)")  # fmt: skip
            else:
                hint = did_you_mean(key, allowed, before="", after=" ")
                message = (f"unknown key '{key}' in {what}: {hint}known keys: "
                           f"{', '.join(sorted(allowed))}")  # fmt: skip
            self.issue((*loc, key), message, key=True, **where)

    def check_test(self, test: dict[str, Any], loc: Loc, whole: bool = True,
                   **where: Any) -> None:  # fmt: skip
        """A test's keys and the shapes of its parts, problems at their lines. `whole`: a
        test as it runs, not a part of one (a scenario's row or test)."""
        dialect = self.dialect
        dialect.admit(self, test, loc, whole, **where)
        options = test.get("options")
        if isinstance(options, dict):
            allowed = dialect.option_keys
            self.keys(options, (*loc, "options"), allowed, REFUSED_OPTION_KEYS - allowed,
                      "a test's options", **where)  # fmt: skip
        dialect.test_vars(self, test, loc, **where)
        for name in ("vars", "options", "metadata"):
            if name in test and not isinstance(test[name], dict):
                self.issue((*loc, name), f"'{name}' is a mapping", **where)
                test[name] = {}  # refused above; what is merged later stays of its shape
        if "assert" in test and not isinstance(test["assert"], list):
            self.issue((*loc, "assert"), "'assert' is a list of assertions", **where)

    def test_file(self, item: str, loc: Loc) -> list[_Test]:
        """The tests of a `file://` entry of `tests` (globs too), each checked."""
        if not item.startswith("file://"):
            self.issue(loc, f"a test given as text must be `file://PATH`, not '{item[:60]}'")
            return []
        out: list[_Test] = []
        dialect = self.dialect
        try:
            for path, shown in sources.expand(self.base, self.root, item[7:], "test file"):
                for t_index, (test, line) in enumerate(dialect.read_test_file(self, path, shown)):
                    if not isinstance(test, dict):
                        self.issue((t_index,), "a test is a mapping", file=path, line=line)
                        continue
                    if not dialect.keeps(self, test, _in_file(path, line, t_index)):
                        continue
                    self.check_test(test, (t_index,), file=path, line=line)
                    out.append(_Test(test, (t_index,), path, line))
        except sources.SourceProblem as exc:
            if exc.file is not None:
                self.issue((), exc.message, file=exc.file, line=exc.line)
            else:
                self.issue(loc, exc.message)
        return out


def passed_over(loader: _Loader, data: dict[str, Any], read: set[str]) -> dict[str, Any]:
    """The config without the top-level keys promptfoo does not read, each named in a
    warning with its line. promptfoo's schema (types/index.ts UnifiedConfigSchema, a zod
    object that is not strict) lets them pass without a word; a top-level `assert` is one of
    them, which promptfoo never runs (its assertions belong under `defaultTest`)."""
    kept: dict[str, Any] = {}
    for key, value in data.items():
        if key in read:
            kept[key] = value
            continue
        line = loader.marks.find((key,), key=True)[0]
        where = f"{loader.path}:{line}" if line else str(loader.path)
        if key == "assert":
            loader.notes.append(
                f"{where}: a top-level 'assert' is not read by promptfoo, and so not by "
                "accord: these assertions check nothing; to check every test with them, put "
                "them under defaultTest.assert"
            )
        else:
            # a key kept for YAML anchors (`x-defaults: &d`) is read where its aliases are
            hint = "" if str(key).startswith("x-") else did_you_mean(str(key), read, before=" (",
                                                                     after=")")  # fmt: skip
            loader.notes.append(
                f"{where}: the top-level key '{key}' is not one promptfoo reads{hint}: passed "
                "over, as promptfoo passes it over"
            )
    return kept


def _in_file(path: Path, line: int | None, index: int) -> Callable[[], str]:
    """A test of a test file's place (its line, else its number), made when asked."""
    return lambda: f"{path}:{line}" if line else f"{path}, test {index + 1}"


class Dialect:
    """promptfoo's own rules, asked by the loader at each place where a file of promptfoo's
    form may be read another way. A subclass (another tool's dialect) overrides what its
    tool reads differently; one is made per file loaded, and may keep that file's state."""

    name = "promptfoo"
    docs = "docs/promptfoo.md"  # the page that says what runs
    # what describes the whole file in a key problem
    what = "the config"
    # the keys it reads (and those it refuses by name) at the top, of a test, of its options
    top_keys, refused_top_keys = SUPPORTED, NOT_SUPPORTED
    test_keys, refused_test_keys = TEST_KEYS, NOT_SUPPORTED_TEST
    option_keys = OPTION_KEYS | {"transform", "postprocess"}
    # how the suite scores: its rule (core/scoring_rules.py: a test with no assertion
    # passes), and the bar of a case without its own (promptfoo's carry their tests' own)
    scoring = "promptfoo"
    pass_score: float | None = None
    # a Python provider's `tool_calls` are an agent's (trajectory assertions read them)
    agent_trace = False
    # the case's vars are those promptfoo's renderPrompt leaves (its newline dropped,
    # `{{name}}` references resolved), which its assertions and result files see
    prepares_vars = True
    # an assertion may be written as text (a tuple: texts gathered into one)
    text_checks = False

    # the file as a whole

    def project(self, path: Path) -> Project:
        """The project of the file at `path`, whose root bounds what the file reads
        (promptfoo's: the folder of the nearest config.yml, else the file's own)."""
        from .....engine.project import load_project

        return load_project(path)

    def prepare(self, loader: _Loader, data: dict[str, Any]) -> dict[str, Any]:
        """The file's data in the loader's terms (promptfoo's: its `$ref`s resolved), its
        top-level keys checked."""
        from . import refs

        data, holders = refs.resolve(data, lambda loc, message: loader.issue(loc, message))
        refused = self.refused_top_keys
        known = self.top_keys | (holders - refused)
        data = passed_over(loader, data, known | refused)
        loader.keys(data, (), known, refused, self.what)
        expansions.evaluate_options_of(loader, data.get("evaluateOptions"))
        return data

    def refuses_prompt(self, loader: _Loader, prompt: sources.Prompt) -> bool:
        """Whether the prompt is refused (said at its place) before its template is checked."""
        if not _CONVERSATION.search(prompt.raw):
            return False
        loader.issue(("prompts",), f"prompt '{prompt.label[:60]}' reads `_conversation`, "
                     "promptfoo's record of the earlier tests of a conversation (run one "
                     "after another, each seeing the answers before it): accord runs each "
                     "test on its own and cannot fill it; write the earlier turns into the "
                     "test's own messages")  # fmt: skip
        return True

    def provider_entry(
        self, loader: _Loader, key: str, entry: dict[str, Any], loc: Loc
    ) -> dict[str, Any]:
        """A provider entry as it is built (promptfoo fills its id's and label's templates)."""
        return expansions.rendered_provider(loader, key, entry, loc)

    def special_target(self, pid: str, config: dict[str, Any]) -> Target | None:
        """The target of a provider id only this dialect knows, else None."""
        return None

    def placed_target(self, loader: _Loader, target: Target) -> Target:
        """A built target, placed where the dialect runs its programs."""
        return target

    def models(self, loader: _Loader) -> list[Any]:
        """Models the file adds beside its providers' (a dialect's graders)."""
        return []

    def judge(self, loader: _Loader) -> str | None:
        """The judge model the file names, if any."""
        return None

    # tests

    def admit(self, loader: _Loader, test: dict[str, Any], loc: Loc, whole: bool,
              **where: Any) -> None:  # fmt: skip
        """A test's own keys checked (the loader checks its parts' shapes after)."""
        loader.keys(test, loc, self.test_keys, self.refused_test_keys, "a test", **where)

    def test_vars(self, loader: _Loader, test: dict[str, Any], loc: Loc, **where: Any) -> None:
        """A test's `vars` given as files read, as promptfoo reads them (from the test's own
        file's folder)."""
        given = test.get("vars")
        if isinstance(given, str) or (
            isinstance(given, list) and given and all(isinstance(v, str) for v in given)
        ):
            try:
                folder = where["file"].parent if where.get("file") else loader.base
                test["vars"] = sources.vars_files(given, folder, loader.root)
            except sources.SourceProblem as exc:
                loader.issue((*loc, "vars"), exc.message, **where)
                test["vars"] = {}

    def keeps(self, loader: _Loader, test: dict[str, Any], where: Callable[[], str]) -> bool:
        """Whether a test runs (`where()`: its file and line, for a note on one skipped)."""
        return True

    def read_test_file(
        self, loader: _Loader, path: Path, shown: str
    ) -> list[tuple[Any, int | None]]:
        """The tests of one test file, each with its line where the format has lines."""
        return sources.tests_from_file(path, shown)

    def scenario_tests(
        self, loader: _Loader, data: dict[str, Any], default: dict[str, Any], found: list[_Test]
    ) -> list[_Test]:
        """All the tests: `found` (the file's own) and its scenarios' (promptfoo's: each
        config row crossed with each test, merged as its evaluator merges them); with
        neither, one test without vars."""
        scenarios = expansions.scenario_files(loader, data.get("scenarios") or [])
        if not found and not scenarios:
            found.append(_Test({}, ()))
        out: list[_Test] = []
        for s_index, scenario in enumerate(scenarios if isinstance(scenarios, list) else []):
            loc = ("scenarios", s_index)
            if not isinstance(scenario, dict):
                loader.issue(loc, "a scenario is a mapping with config and tests")
                continue
            loader.keys(scenario, loc, SCENARIO_KEYS, set(), "a scenario")
            inner = scenario.get("tests") or [{}]
            if isinstance(inner, str):  # file://: its tests (util/config/load.ts resolveConfigs)
                inner = [t.test for t in loader.test_file(inner, (*loc, "tests"))] or [{}]
            rows = scenario.get("config") or []
            try:  # rows x tests, counted before they are made
                budget.check_product(
                    [("config rows", len(rows)), ("tests", len(inner))],
                    "this scenario's config rows and tests", already=len(out),
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
                    loader.check_test(test, (*loc, "tests", t_index))
                    loader.check_test(entry, (*loc, "config", d_index))
                    merged = {
                        **{k: v for k, v in default.items() if k != "assert"}, **entry, **test,
                        "vars": {**default.get("vars", {}), **entry.get("vars", {}),
                                 **test.get("vars", {})},
                        "options": {**default.get("options", {}), **test.get("options", {})},
                        "assert": [*entry.get("assert", []), *test.get("assert", [])],
                        "metadata": {**default.get("metadata", {}), **entry.get("metadata", {}),
                                     **test.get("metadata", {})},
                    }  # fmt: skip
                    out.append(_Test(merged, (*loc, "config", d_index)))
        return [*found, *out]

    def merged(self, test: dict[str, Any], default: dict[str, Any]) -> dict[str, Any]:
        """A test with defaultTest's parts."""
        return _merged(test, default)

    # a test's cases

    def checks(
        self, loader: _Loader, item: _Test, test: dict[str, Any], models: dict[str, Any]
    ) -> tuple[EvaluatorSpec, ...]:
        """The test's assertions as specs: promptfoo's grading providers given with their
        config made models of the run, then each assertion, then the test's transform."""
        from . import cases

        cases.own_graders(loader, item, test, models)
        specs = cases.assertions(loader, item, test)
        return cases.test_transform(loader, item, test.get("options") or {}, specs)

    def numbered_checks(
        self, loader: _Loader, item: _Test, entries: list[Any]
    ) -> list[tuple[int, Any]]:
        """The entries of a test's `assert` graded, each with its index."""
        return list(enumerate(entries))

    def build_check(self, loader: _Loader, item: _Test, index: int, entry: Any, where: str,
                    name: str, own: int) -> EvaluatorSpec:  # fmt: skip
        """One assertion's spec (`own`: how many of the entries are the test's own)."""
        from .asserts import build_assertion

        # defaultTest's assertions are in every test: one spec each, shared (a spec is its
        # entry and name; `where` only places the load's messages)
        key = json.dumps([entry, name], sort_keys=True)
        spec = loader.built.get(key)
        if spec is None:
            spec = build_assertion(entry, base_dir=loader.base, where=where, name=name)
            loader.built[key] = spec
        return spec

    def given_bar(
        self, loader: _Loader, item: _Test, test: dict[str, Any], default: dict[str, Any]
    ) -> Any:
        """The test's threshold as written."""
        return test.get("threshold")

    def bar(self, value: float | None) -> float | None:
        """A test's threshold (a number or None) as its cases' pass bar: 0 counts as none
        (JavaScript's `if (threshold)`)."""
        return float(value) if value else None

    def prompt_text(self, loader: _Loader, item: _Test, raw: str, text: str,
                    variables: dict[str, Any]) -> str:  # fmt: skip
        """The prompt a case sends, from its rendered `text`."""
        return text

    def model_messages(
        self, messages: list[dict[str, Any]] | None, text: str
    ) -> list[dict[str, Any]] | None:
        """The messages a model provider is sent (None: the prompt's text)."""
        return messages

    def conversation(
        self, loader: _Loader, item: _Test, test: dict[str, Any], variables: dict[str, Any],
        checks: tuple[EvaluatorSpec, ...], text: str, messages: list[dict[str, Any]] | None,
    ) -> tuple[Any, tuple[EvaluatorSpec, ...], list[dict[str, Any]] | None] | None:  # fmt: skip
        """A case's plan (its `obj`), checks and messages; None: the case is not made."""
        return None, checks, messages

    def case_id(self, test: int, column: int, columns: int, named: Any,
                prompts: list[sources.Prompt], prompt: sources.Prompt, providers: list[str],
                provider: str) -> str:  # fmt: skip
        """promptfoo's tests are numbered (`test-N`, `.M` for the column under several)."""
        first = str(named) if named else f"test-{test + 1}"
        return first if columns == 1 else f"{first}.{column + 1}"

    def finish(
        self, loader: _Loader, cases: list[Case], owners: list[tuple[Any, Any, Loc]]
    ) -> None:
        """What is checked of the cases made (`owners`: each case's test's file, line, place)."""


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

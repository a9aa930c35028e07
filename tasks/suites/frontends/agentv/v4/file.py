"""AgentV 4 eval files: promptfoo's form (`prompts`, `providers`, `tests` with `vars` and
`assert`) with AgentV's own additions, read by the promptfoo loader (config.py) in its
`agentv4` dialect. What AgentV adds, as its packages/core/src/evaluation reads it:

- its keys: `name`, `default_test`, a suite-level `assert`, `threshold` (default 0.8), a
  test's `id`; assertions as text (rubrics), `required`, `min_score`, an assertion's `id`,
  skill and tool assertions (checks/build.py), `script` graders
  (checks/script.py), `llm-rubric` with a grader prompt (checks/prompt.py),
  `field-accuracy` and `execution-metrics` (checks/seed.py);
- providers named by label from the nearest `.agentv/providers.yaml` (the project's provider
  catalog, catalog.py); an entry must be one accord runs (echo, exec:, python:, a
  model id, or AgentV's openai/anthropic/openrouter/gemini);
- `evaluate_options`: `repeat` as trials scored as AgentV's pass_any, `max_concurrency`,
  `budget_usd` (budget.py);
- `{{ env.NAME }}` anywhere in the file, rendered from the process environment at load
  (interpolation.ts);
- `environment` (loaders/environment-recipe.ts): a `host` recipe's `workdir` is where
  command and Python providers run, its `env` the variables of their processes (values as
  given, never read by a shell, never shown). A `setup` command and a `docker` recipe build
  a coding agent's workspace: refused;
- `extensions` (extensions/runner.ts): lifecycle hooks in TypeScript (`file://x.ts:hook`)
  and `agentv:agent-rules` (skills and rules copied into a coding agent's workspace): both
  serve a coding agent accord does not run, refused with what to do.

Which file is AgentV 4's is told in agentv/frontend.py (`claims_v4`).
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

import yaml

from ......engine import keys
from ......engine.errors import LoadError
from ......engine.paths import PathError
from ......engine.yamlmarks import Loc, Marks, read_text
from . import catalog as agentv_catalog
from .files import DEFAULT_SYSTEM, within
from .interpolation import WHOLE_VAR, env_interpolated
from .state import state

if TYPE_CHECKING:
    from ....core.cases import Suite
    from ....core.frontend import Request, Source
    from ...promptfoo.form import _Loader, _Test

SUPPORTED = {
    "name", "description", "tags", "version", "author", "category", "license", "governance",
    "metadata", "prompts", "providers", "tests", "default_test", "assert", "threshold",
    "environment", "extensions", "output_path", "evaluate_options", "defaults", "scenarios",
}  # fmt: skip
NOT_SUPPORTED = {
    "input_files", "nunjucks_filters", "timeout_seconds",
    "requires", "derived_metrics", "env",
}  # fmt: skip
# conversation_id: a label AgentV carries into its results (orchestrator.ts), kept in the
# case's metadata with the rest of the test
TEST_KEYS = {"id", "description", "vars", "assert", "options", "threshold", "metadata",
             "conversation_id", "execution", "run",
             # a conversation (conversation.py)
             "mode", "turns", "aggregation", "on_turn_failure", "window_size"}  # fmt: skip
NOT_SUPPORTED_TEST = {
    "provider", "providers", "prompts", "input_files", "assert_scoring_function",
    "environment", "suite", "depends_on", "on_dependency_failure",
}  # fmt: skip
HOOKS = ("beforeAll", "beforeEach", "afterEach", "afterAll")


def load(source: Source, request: Request) -> list[Suite]:
    """An AgentV 4 file's suite: the promptfoo loader's with AgentV's dialect (the file
    parsed once: by the claim when it did, else by the loader), then AgentV's run controls."""
    from ...promptfoo.config import load as load_config
    from ...promptfoo.frontend import taken
    from .dialect import AgentV4Dialect

    dialect = AgentV4Dialect()
    suite = load_config(
        source.path, judge_model=request.judge_model, repeat=request.repeat, text=source.text,
        dialect=dialect, parsed=taken(source),
    )  # fmt: skip
    # the catalog's models a script grader's provider proxy may call (proxy.py)
    from .checks.proxy import with_catalog_models

    suite = with_catalog_models(suite)
    # evaluate_options, checked by prepare(): `repeat` makes trials of each test, scored as
    # AgentV's pass_any (the best trial; a pass when any passed); `max_concurrency` bounds
    # the tests run at once. The command line's --repeat / --max-concurrency win.
    # the file as the loader parsed it (YAML 1.2's core schema), before its changes
    data, marks = dialect.state.data, dialect.state.marks
    options = (data.get("evaluate_options") if isinstance(data, dict) else None) or {}
    if not isinstance(options, dict):
        options = {}
    repeat, concurrency = options.get("repeat"), options.get("max_concurrency")
    if request.repeat is None and isinstance(repeat, int) and repeat > 1:
        suite = dataclasses.replace(suite, repeat=repeat, trials="pass_any")
    if request.max_concurrency is None and isinstance(concurrency, int):
        suite = dataclasses.replace(suite, max_concurrency=concurrency)
    suite = _conversations(suite)
    budget = options.get("budget_usd")
    if isinstance(budget, int | float) and not isinstance(budget, bool) and budget > 0:
        from .budget import budgeted

        suite = budgeted(suite, float(budget))
    # after the budget: its start order is by the providers' own names, and a transform
    # target answers through the budget's
    from .transform import wrapped

    suite = wrapped(suite)  # a test's options.transform
    notes = _skip_notes(source, data, marks)
    if notes:
        suite = dataclasses.replace(suite, notes=(*suite.notes, *notes))
    return [suite]


def _evaluate_options(loader: _Loader, value: Any) -> None:
    """AgentV's evaluate_options (config-loader.ts, experiment.ts readRepeat): `repeat` a
    positive integer, `max_concurrency` an integer from 1 to 50, `budget_usd` a positive
    number (the cost after which no further test starts: budget.py)."""
    if value is None:
        return
    where: Loc = ("evaluate_options",)
    if not isinstance(value, dict):
        loader.issue(where, "evaluate_options is a mapping (repeat, max_concurrency)")
        return
    for key, option in value.items():
        at = (*where, key)
        if key == "repeat":
            if isinstance(option, bool) or not isinstance(option, int) or option < 1:
                loader.issue(at, "evaluate_options.repeat is a positive integer (AgentV removed "
                             "the object form): write e.g. 'repeat: 2'", key=True)  # fmt: skip
        elif key == "max_concurrency":
            if isinstance(option, bool) or not isinstance(option, int) or not 1 <= option <= 50:
                loader.issue(at, "evaluate_options.max_concurrency is an integer from 1 to 50",
                             key=True)  # fmt: skip
        elif key == "budget_usd":
            if isinstance(option, bool) or not isinstance(option, int | float) or option <= 0:
                loader.issue(at, "evaluate_options.budget_usd is a positive number (USD)",
                             key=True)  # fmt: skip
        else:
            loader.issue(at, f"unknown key '{key}' in evaluate_options: known keys: "
                         "budget_usd, max_concurrency, repeat", key=True)  # fmt: skip


def prepare(loader: _Loader, data: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """An AgentV 4 file's data in the promptfoo loader's terms (defaultTest, providers
    resolved through the catalog), its inherited assertions on `state(loader).trailing`, its `env`
    on `loader.env`; and the environment's workdir (relative to the project root), if any."""
    dialect = loader.dialect
    loader.keys(data, (), dialect.top_keys, dialect.refused_top_keys, dialect.what)
    source_default = data.get("default_test")
    if isinstance(data.get("default_test"), str):
        from . import files as agentv_files

        data = {**data, "default_test": agentv_files.default_test(loader, data["default_test"])}
    data = env_interpolated(loader, data, keys.environment())
    out = {k: v for k, v in data.items()
           if k in ("description", "prompts", "tests", "metadata", "scenarios")}  # fmt: skip
    if "prompts" in out:
        from . import files as agentv_files

        out["prompts"] = agentv_files.prompts(loader, out["prompts"])
    else:  # each test's own `input` is its prompt (rows.py)
        from .rows import INPUT_PROMPT

        out["prompts"], state(loader).implicit_input = [INPUT_PROMPT], True
    # AgentV takes a test file's path as it is (promptfoo wants `file://`)
    tests = out.get("tests")
    if isinstance(tests, str):
        out["tests"] = _file_ref(tests)
    elif isinstance(tests, list):
        out["tests"] = [_file_ref(t) if isinstance(t, str) else t for t in tests]
    default = data.get("default_test")
    if default is not None and not isinstance(default, dict):
        loader.issue(("default_test",), "default_test is a mapping (vars, assert, options, ...)")
        default = None
    if isinstance(default, dict):
        loader.check_test(default, ("default_test",))
    default = dict(default or {})
    trailing = default.pop("assert", None) or []
    suite_assert = data.get("assert") or []
    for key, value in (("default_test", trailing), ("assert", suite_assert)):
        if not isinstance(value, list):
            loader.issue((key,) if key == "assert" else (key, "assert"), "'assert' is a list")
    state(loader).trailing = [
        *(trailing if isinstance(trailing, list) else []),
        *(suite_assert if isinstance(suite_assert, list) else []),
    ]
    # where each inherited assertion is written in this file (None: in a default_test file)
    inline_default = isinstance(source_default, dict)
    state(loader).trailing_locs = [
        *((("default_test", "assert", i) if inline_default else None)
          for i in range(len(trailing) if isinstance(trailing, list) else 0)),
        *(("assert", i) for i in range(len(suite_assert) if isinstance(suite_assert, list) else 0)),
    ]  # fmt: skip
    if data.get("threshold") is not None and "threshold" not in default:
        default["threshold"] = data["threshold"]
    if default:
        out["defaultTest"] = default
    from . import files as agentv_files

    agentv_files.defaults(loader, data.get("defaults"))
    _evaluate_options(loader, data.get("evaluate_options"))
    _extensions(loader, data.get("extensions"))
    workdir = _environment(loader, data.get("environment"))
    out["providers"] = agentv_catalog.providers(loader, data.get("providers"))
    return out, workdir


def _file_ref(value: str) -> str:
    return value if value.startswith("file://") else f"file://{value}"


def _extensions(loader: _Loader, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, list):
        loader.issue(("extensions",), "'extensions' is a list")
        return
    for index, entry in enumerate(value):
        name = entry.get("id") if isinstance(entry, dict) else entry
        if isinstance(name, str) and name.startswith("agentv:agent-rules"):
            message = (
                "the extension 'agentv:agent-rules' copies skills, hooks and rules into a "
                "coding agent's workspace; accord runs no coding agent: remove it, or run this "
                "file with AgentV"
            )
        elif isinstance(name, str) and name.startswith("file://") and name.endswith(HOOKS):
            message = (
                f"the extension '{name}' is a TypeScript lifecycle hook AgentV's runtime runs "
                "around a coding agent; accord does not run it: remove it (prepare the "
                "workspace before `accord eval`), or run this file with AgentV"
            )
        else:
            message = (
                f"unknown extension {name!r}: AgentV's are 'agentv:agent-rules' and "
                "'file://PATH:HOOK' (HOOK one of beforeAll, beforeEach, afterEach, afterAll)"
            )
        loader.issue(("extensions", index), message)


def _environment(loader: _Loader, value: Any) -> str | None:
    """A host recipe's workdir (relative to the project root); its `env` onto loader.env."""
    if value is None:
        return None
    base, where, recipe = loader.base, ("environment",), value
    if isinstance(value, str):
        if not value.startswith("file://"):
            loader.issue(where, "environment is a recipe (type, workdir, env) or file://PATH")
            return None
        try:
            path = within(loader, base / value[7:], "environment recipe")
            recipe = yaml.safe_load(read_text(path))
        except (PathError, LoadError, yaml.YAMLError) as exc:
            loader.issue(where, getattr(exc, "message", str(exc)))
            return None
        base = path.parent
    if not isinstance(recipe, dict):
        loader.issue(where, "environment is a mapping with 'type: host' and 'workdir'")
        return None
    kind = recipe.get("type")
    if kind == "docker":
        loader.issue((*where, "type"), "a docker environment builds a container for a coding "
                     "agent; accord does not build one: use 'type: host', or run this file with "
                     "AgentV")  # fmt: skip
        return None
    if kind != "host":
        loader.issue(where, "environment 'type' is 'host' (or AgentV's 'docker')")
        return None
    for key in recipe:
        if key == "setup":
            loader.issue((*where, key), "environment 'setup' runs commands to prepare a coding "
                         "agent's workspace; accord does not run them: prepare the workdir "
                         "before `accord eval` and remove 'setup'", key=True)  # fmt: skip
        elif key not in ("type", "workdir", "env"):
            loader.issue((*where, key), f"unknown key '{key}' in a host environment: known "
                         "keys: env, type, workdir", key=True)  # fmt: skip
    env = recipe.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        loader.issue((*where, "env"), "environment 'env' maps names to text values")
    else:
        state(loader).process_env.update({str(k): v for k, v in env.items()})
    workdir = recipe.get("workdir")
    if not isinstance(workdir, str) or not workdir.strip():
        loader.issue(where, "a host environment needs 'workdir': the folder the target runs in")
        return None
    try:
        folder = within(loader, base / workdir, "environment workdir")
    except PathError as exc:
        loader.issue((*where, "workdir"), exc.message)
        return None
    if not folder.is_dir():
        loader.issue((*where, "workdir"), f"environment workdir '{workdir}' is no folder")
        return None
    return str(folder.resolve().relative_to(loader.root.resolve())) or "."


def gathered(loader: _Loader, item: _Test, entries: list[Any]) -> list[tuple[int, Any]]:
    """A test's assertions (its own, then the inherited ones) as AgentV grades them
    (grader-parser.ts parseGraders, parseGraderList): in each of the two lists, the rubrics
    written as text gathered into one entry (a tuple of the texts) at the first one's place;
    an llm-rubric AgentV skips (no value, no inline prompt) left out; the inherited list
    left out when the test's `execution` says `skip_defaults: true`. Each with its index in
    `entries`."""
    own = item.test.get("assert")
    count = len(own) if isinstance(own, list) else 0
    execution = item.test.get("execution")
    skip = False
    where: dict[str, Any] = {"file": item.file, "line": item.line} if item.file else {}
    if execution is not None:
        at = (*item.loc, "execution")
        if not isinstance(execution, dict):
            loader.issue(at, "a test's execution is a mapping (skip_defaults)", **where)
        else:
            for key in execution:
                if key in UNREAD_EXECUTION:
                    line = item.line if item.file else loader.marks.find((*at, key), key=True)[0]
                    loader.notes.append(
                        f"{item.file or loader.path}:{line}: AgentV accepts a test's "
                        f"execution.{key} and does not read it (yaml-parser.ts), so it changes "
                        "nothing here either"
                    )
                elif key not in ("skip_defaults", "threshold"):
                    loader.issue((*at, key), f"'{key}' of a test's execution is not supported "
                                 "by accord (it reads skip_defaults and threshold): remove it",
                                 key=True, **where)  # fmt: skip
            skip = execution.get("skip_defaults") is True
    from .....evaluators.base import EvaluatorFailure
    from .values import rubric_text, skipped_value, test_vars

    variables = test_vars(loader.default, item.test)
    out: list[tuple[int, Any]] = []
    for start, end in ((0, count), (count, 0 if skip else len(entries))):
        try:
            own = variables if start == 0 else None
            found = (rubric_text(e, own) for e in entries[start:end] if isinstance(e, str))
            texts = tuple(text for text in found if text)
        except EvaluatorFailure as exc:
            loader.issue((*item.loc, "assert"), str(exc), **where)
            texts = ()
        placed = False
        for index in range(start, end):
            entry = entries[index]
            if isinstance(entry, str):
                if texts and not placed:
                    out.append((index, texts))
                    placed = True
            elif not skipped_rubric(entry) and not skipped_value(
                entry, variables if index < count else None
            ):
                out.append((index, entry))
    return out


# keys of a test's `execution` AgentV's yaml-parser.ts lets through (KNOWN_TEST_EXECUTION_FIELDS)
# and reads nowhere
UNREAD_EXECUTION = ("cache", "trials", "budget_usd", "budgetUsd", "fail_on_error", "failOnError")
# experiment.ts normalizeExperimentRunOverride: the keys of a test's `run`
RUN_KEYS = ("threshold", "repeat", "timeout_seconds", "timeoutSeconds", "budget_usd", "budgetUsd")


def threshold(loader: _Loader, item: _Test) -> float | None:
    """A test's own pass bar as AgentV reads it (yaml-parser.ts: `execution.threshold`
    when a number from 0 to 1, else ignored; `run.threshold` over it, refused when not
    such a number, as normalizeExperimentRunOverride refuses it); None: the file's default
    (run-eval.ts resolveEffectiveRunPolicy). AgentV does not read a test's own top-level
    `threshold`: it changes nothing here either, with a warning."""
    test = item.test
    where: dict[str, Any] = {"file": item.file, "line": item.line} if item.file else {}

    def place(*loc: Any) -> str:
        line = item.line if item.file else loader.marks.find((*item.loc, *loc), key=True)[0]
        return f"{item.file or loader.path}:{line}" if line else str(item.file or loader.path)

    if item.file is not None and item.file.suffix.lower() == ".csv" and "threshold" in test:
        # a CSV row's __threshold is its execution.threshold (case-file-loader.ts)
        test = {**test, "execution": {**(test.get("execution") or {}),
                                      "threshold": test["threshold"]}}  # fmt: skip
    elif "threshold" in test:
        loader.notes.append(
            f"{place('threshold')}: a test's own 'threshold' is not read by AgentV (its "
            "yaml-parser.ts reads execution.threshold and run.threshold), so it changes "
            "nothing here either: write 'execution: {threshold: N}'"
        )
    found: float | None = None
    execution = test.get("execution")
    value = execution.get("threshold") if isinstance(execution, dict) else None
    if value is not None:
        if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1:
            found = float(value)
        else:
            loader.notes.append(f"{place('execution', 'threshold')}: execution.threshold "
                                f"{value!r} is not a number from 0 to 1, so AgentV ignores it, "
                                "and so does accord")  # fmt: skip
    run = test.get("run")
    if run is None:
        return found
    at = (*item.loc, "run")
    if not isinstance(run, dict):
        loader.issue(at, "a test's run is a mapping (threshold)", **where)
        return found
    for key in run:
        if key not in RUN_KEYS:
            loader.issue((*at, key), f"unknown key '{key}' in a test's run: AgentV's are "
                         "threshold, repeat, timeout_seconds, budget_usd", key=True,
                         **where)  # fmt: skip
        elif key != "threshold":
            loader.issue((*at, key), f"run.{key} (this test's own {key.split('_')[0]}) is not "
                         "supported by accord: remove it (evaluate_options sets the file's)",
                         key=True, **where)  # fmt: skip
    value = run.get("threshold")
    if value is None:
        return found
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        loader.issue((*at, "threshold"), "run.threshold is a number from 0 to 1", **where)
        return found
    return float(value)


def skipped_rubric(entry: Any) -> bool:
    """An llm-rubric AgentV skips ("expected value or prompt"): no value, and no prompt
    text of its own (a `file://` prompt is read only beside a value)."""
    if not isinstance(entry, dict) or entry.get("type") != "llm-rubric":
        return False
    value, prompt = entry.get("value"), entry.get("prompt")
    if value not in (None, "", []):
        return False
    if isinstance(prompt, str):
        return not prompt or prompt.startswith("file://")
    if isinstance(prompt, dict):
        return "command" in prompt
    return not isinstance(prompt, list)


def _skip_notes(source: Source, data: Any, marks: Marks | None) -> list[str]:
    """What AgentV skips with a warning, said the same way: text rubrics that are empty,
    llm-rubrics with nothing to grade by."""
    if not isinstance(data, dict) or marks is None:
        return []
    from .values import skip_note, skipped_value, test_vars

    default = data.get("default_test")
    lists: list[tuple[Loc, Any, dict[str, Any] | None]] = [(("assert",), data.get("assert"), None)]
    if isinstance(default, dict):
        lists.append((("default_test", "assert"), default.get("assert"), None))
    tests = data.get("tests")
    for index, test in enumerate(tests if isinstance(tests, list) else []):
        if isinstance(test, dict):
            variables = test_vars(default, test)
            lists.append((("tests", index, "assert"), test.get("assert"), variables))
    notes = []
    for loc, entries, variables in lists:
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            line = marks.find((*loc, index))[0]
            where = f"{source.path}:{line}" if line else str(source.path)
            if skipped_value(entry, variables):
                notes.append(f"{where}: {skip_note(entry)}")
            elif isinstance(entry, str) and not entry.strip():
                notes.append(f"{where}: an empty rubric is skipped, as AgentV skips it")
            elif skipped_rubric(entry):
                notes.append(f"{where}: this llm-rubric has no 'value' and no prompt text of "
                             "its own, so AgentV skips it (a 'prompt: file://' is read only "
                             "beside a 'value'), and so does accord: give it a 'value' for it "
                             "to count")  # fmt: skip
    return notes


def message_prompt(raw: str, variables: dict[str, Any]) -> str | None:
    """A prompt that is one var holding chat messages (`prompts: ["{{ input }}"]` with
    `vars.input` a list of `{role, content}`): those messages, as JSON the chat API takes,
    as AgentV sends them (its prompt expansion makes them the test's input messages)."""
    found = WHOLE_VAR.match(raw)
    value = variables.get(found.group(1)) if found else None
    if (
        isinstance(value, list)
        and value
        and all(isinstance(m, dict) and isinstance(m.get("role"), str) for m in value)
    ):
        return json.dumps(value, ensure_ascii=False)
    return None


def _conversations(suite: Suite) -> Suite:
    """A conversation's case answered by its provider's target played turn by turn
    (conversation.py): one such target per provider, named after it."""
    from ....core.targets import ModelTarget
    from .conversation import ConversationTarget, Plan

    targets = dict(suite.targets)
    cases = []
    for case in suite.cases:
        if isinstance(case.obj, Plan) and case.target in suite.targets:
            name = f"{case.target} (conversation)"
            inner = suite.targets[case.target]
            if name not in targets:
                # AgentV's model providers send their system message when the test has none
                system = DEFAULT_SYSTEM if isinstance(inner, ModelTarget) else None
                targets[name] = ConversationTarget(inner=inner, system=system)
            case = dataclasses.replace(case, target=name)
        cases.append(case)
    return dataclasses.replace(suite, targets=targets, cases=cases)

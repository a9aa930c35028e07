"""AgentV's own test keys: `input`, `criteria` and `expected_output`, as AgentV 4 reads
them (packages/core/src/evaluation/yaml-parser.ts loadTestsFromParsedYamlValue, commit
58f316ca2).

- A row of a test file (`tests: [file://cases.jsonl]`, loaders/case-file-loader.ts) may hold
  them; AgentV refuses `input` and `expected_output` in a test written in the eval file
  itself, in `default_test` and in a scenario (rejectAuthoredDirectInput,
  rejectAuthoredExpectedOutput, rejectRemovedScenarioRowFields), and so does accord, with
  its words. `criteria` may be written anywhere.
- `input` is the prompt. Without `prompts`, the row's input is what the provider gets
  (expandInputShorthand: text, a JSON chat array in text, or a list of messages); with
  `prompts`, it becomes the var `input` (expandPromptMatrix). Either way accord makes it
  `vars.input`, and a file without `prompts` runs the one prompt `{{ input }}`. Without
  `prompts` a test without `input` is refused (AgentV skips it: "Missing required fields").
- `criteria` is the judge's `{{ criteria }}` (and the `[[ ## criteria ## ]]` of its rubric
  prompt) unless an llm-rubric's `value` takes its place (builtin-graders.ts
  llmGraderFactory). A test with `criteria` and no assertion of its own or inherited is
  graded by it as a rubric written as text.
- `expected_output` is the judge's reference answer (`{{ expected_output }}`,
  `[[ ## reference_answer ## ]]`): text as it is; the last message's content of a message
  list (JSON, two-space indents, when it is no text; its tool calls when it has none); any
  other value as indented JSON (expandExpectedOutputShorthand).
- A test with nothing to grade it by (no criteria, expected output or assertion, nothing
  inherited, no turns) is refused, where AgentV skips it.
- A test without an id, or whose id is no text (`id: 1`), is skipped as AgentV skips it
  ("Skipping incomplete test", yaml-parser.ts `asString(renderedCase.id)`), with a warning
  naming it; a file none of whose tests is left is refused. A CSV row's id is `row-N` when
  it has none, a scenario's test has one made up (scenarios.py).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .state import state

if TYPE_CHECKING:
    from ......engine.yamlmarks import Loc
    from .....evaluators.cases import Case
    from ...promptfoo.form import _Loader, _Test

ROW_KEYS = ("input", "expected_output", "criteria", "expected_outcome")
# what a file without `prompts` runs: each test's input
INPUT_PROMPT = "{{ input }}"
_INPUT_MOVED = (
    "Put prompt text or chat/system/user messages in top-level 'prompts' and put row-specific "
    "data in tests[].vars (AgentV reads a test's 'input' only from a test file: "
    "tests: [file://cases.jsonl])"
)
_EXPECTED_MOVED = (
    "Put the reference answer in vars.expected_output and consume it with an explicit "
    "assertion such as {type: llm-rubric, value: 'Matches the reference answer: "
    "{{ expected_output }}'} (AgentV reads 'expected_output' only in a test file's rows)"
)


def admit(
    loader: _Loader, test: dict[str, Any], loc: Loc, whole: bool = True, **where: Any
) -> dict[str, Any]:
    """A test's keys as AgentV takes them: AgentV's refusals of `input` and
    `expected_output` outside a test file, said at their line; a row's `input` moved to
    `vars.input` (in place). Returns the test without the keys checked here, for the
    loader's key check. `whole`: a test as it runs (a scenario's config row and test are
    parts of one: `complete` checks what they make)."""
    in_file = where.get("file") is not None
    kept = {k: v for k, v in test.items() if k not in ROW_KEYS}
    if loc and loc[0] == "default_test":
        where_said = "default_test"
    elif loc and loc[0] == "scenarios":
        where_said = "a scenario's test"
    else:
        where_said = "a test written in the eval file"
    for key, fix in (("input", _INPUT_MOVED), ("expected_output", _EXPECTED_MOVED)):
        if key in test and not in_file:
            loader.issue((*loc, key), f"'{key}' has been removed from {where_said} by AgentV: "
                         f"{fix}", key=True, **where)  # fmt: skip
    if "expected_outcome" in test:
        loader.issue((*loc, "expected_outcome"), "'expected_outcome' has been removed by "
                     "AgentV: write 'criteria'", key=True, **where)  # fmt: skip
    criteria = test.get("criteria")
    if criteria is not None and not isinstance(criteria, str):
        loader.issue((*loc, "criteria"), "'criteria' is text: what the judge grades the "
                     "answer by", **where)  # fmt: skip
    if in_file and "input" in test:
        variables = test.get("vars")
        if variables is None or isinstance(variables, dict):
            test["vars"] = {**(variables or {}), "input": test.pop("input")}
    from . import transform as agentv_transform

    agentv_transform.check(loader, test.get("options"), loc, where)
    if whole and loc[:1] not in (("default_test",), ("defaultTest",)):
        complete(loader, test, loc, where)
    return kept


def complete(loader: _Loader, test: dict[str, Any], loc: Loc, where: dict[str, Any]) -> None:
    """What a test must hold to run (its prompt's input, something to grade it by)."""
    if state(loader).implicit_input:
        _needs_input(loader, test, loc, where.get("file") is not None, where)
    _needs_grading(loader, test, loc, where)


def _needs_input(
    loader: _Loader, test: dict[str, Any], loc: Loc, in_file: bool, where: dict[str, Any]
) -> None:
    variables = test.get("vars")
    has = in_file and isinstance(variables, dict) and variables.get("input") not in (None, "", [])
    if not has and not test.get("turns"):
        loader.issue(loc, "this test has no 'input', and the file has no 'prompts': AgentV "
                     "skips it (\"Missing required fields: id, input\"); give the test file's "
                     "row an 'input', or the eval file 'prompts' (the row's data in 'vars')",
                     **where)  # fmt: skip


def _needs_grading(loader: _Loader, test: dict[str, Any], loc: Loc, where: dict[str, Any]) -> None:
    """AgentV's completeness check (hasEvaluationSpec), and its desugaring of `criteria`
    into a rubric when the test has no assertion of its own or inherited."""
    criteria = test.get("criteria")
    criteria = criteria.strip() if isinstance(criteria, str) else ""
    execution = test.get("execution")
    skip = isinstance(execution, dict) and execution.get("skip_defaults") is True
    inherited = bool(state(loader).trailing) and not skip
    if criteria and "assert" not in test and not inherited:
        test["assert"] = [criteria]
    if not (criteria or _expected(test) or "assert" in test or inherited or test.get("turns")):
        loader.issue(loc, "this test has nothing to grade it by (no 'criteria', "
                     "'expected_output' or 'assert', none inherited): AgentV skips it; give "
                     "it one", **where)  # fmt: skip


def _expected(test: dict[str, Any]) -> bool:
    value = test.get("expected_output")
    return value is not None and value != []


def has_id(loader: _Loader, test: dict[str, Any], where: str) -> bool:
    """Whether AgentV runs the test: it skips one whose id is missing, empty or no text;
    accord skips it too and says so on stderr (`where`: the test's file and line)."""
    value = test.get("id")
    if isinstance(value, str) and value:
        return True
    state(loader).skipped_tests += 1
    if value is None:
        why, fix = "it has no 'id'", "give it one (id: my-test)"
    elif isinstance(value, str):
        why, fix = "its 'id' is empty", "give it one (id: my-test)"
    else:
        shown = json.dumps(value, ensure_ascii=False)
        why = f"its id {shown} is no text (AgentV reads only text ids)"
        fix = f"quote it (id: '{shown}')" if isinstance(value, int | float) else "write it as text"
    loader.notes.append(f"{where}: this test is skipped, as AgentV skips it (\"Skipping "
                        f"incomplete test\"): {why}; {fix}")  # fmt: skip
    return False


def none_left(loader: _Loader, tests: list[_Test]) -> list[_Test]:
    """The tests to run; a file all of whose tests were skipped for want of an id is refused
    (AgentV: "No tests matched")."""
    if not state(loader).skipped_tests:
        return tests
    kept = [t for t in tests if t.loc != () or t.test]  # not the stand-in for "no tests"
    if not kept:
        skipped = state(loader).skipped_tests
        loader.issue(("tests",), f"no test is left to run: AgentV skips all {skipped} "
                     "(a test needs a text 'id'): give each test an id")  # fmt: skip
    return kept


def _test_case(case: Case) -> dict[str, Any]:
    meta = case.metadata if isinstance(case.metadata, dict) else {}
    found = meta.get("testCase")
    return found if isinstance(found, dict) else {}


def criteria(case: Case) -> str:
    """The test's `criteria` (AgentV's evalCase.criteria), '' when it has none."""
    value = _test_case(case).get("criteria")
    return value if isinstance(value, str) else ""


def reference_answer(case: Case) -> str:
    """The reference answer of the test's `expected_output` (AgentV's reference_answer)."""
    value = _test_case(case).get("expected_output")
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "role" in value:
        value = [value]
    if isinstance(value, list) and value and isinstance(value[0], dict) and "role" in value[0]:
        last = value[-1]
        content = last.get("content") if isinstance(last, dict) else None
        if isinstance(content, str):
            return content
        if content is not None:
            return _pretty(content)
        calls = last.get("tool_calls") if isinstance(last, dict) else None
        return _pretty(calls) if calls is not None else ""
    return _pretty(value)


def _pretty(value: Any) -> str:
    """JSON.stringify(value, null, 2)."""
    return json.dumps(value, indent=2, ensure_ascii=False)

"""What AgentV 4 makes of an assertion's value (packages/core/src/evaluation at 58f316ca2):

- yaml-parser.ts interpolateRawEvalCase fills the test's vars into the test's own
  assertions, rubrics written as text included; the assertions a test inherits
  (`default_test.assert`, the file's `assert`) keep their values as written (cases.py marks
  them `verbatim`).
- loaders/grader-parser.ts parseGraderList skips, with a warning, an assertion whose value
  is missing or not text: accord skips it too, with a note, not scored and not counted in
  the test's mean. The graders that compare with a reference meet this when the reference
  is given as a var (`value: "{{ expected_output }}"`) and the test has none, or an object."""

from __future__ import annotations

import re
from typing import Any


def rubric_text(text: str, variables: dict[str, Any] | None) -> str:
    """A rubric written as text, the test's vars filled in (its own list's: `variables`
    given), stripped; a value that is one `{{ name }}` naming something other than text
    stays as written."""
    if variables is not None:
        from .interpolation import vars_interpolated

        filled = vars_interpolated(text, {"vars": variables, **variables})
        text = filled if isinstance(filled, str) else text
    return text.strip()


def test_vars(default: Any, test: Any) -> dict[str, Any] | None:
    """The vars AgentV fills a test's own assertions from (yaml-parser.ts
    mergeDefaultTestVarsIntoCases, then interpolateRawEvalCase): default_test's under the
    test's; None when neither has any (AgentV then leaves the assertions as written)."""
    given = [t.get("vars") for t in (default, test) if isinstance(t, dict)]
    found = [v for v in given if isinstance(v, dict)]
    return {k: v for given in found for k, v in given.items()} if found else None


# grader-parser.ts parseGraderList (lines 1436-1440, 1509-1707 at 58f316ca2): these are
# skipped with "missing value" unless their value is text that is not empty (asString), or
# for the -any/-all forms a list holding text (asStringArrayStrict)
TEXT_VALUE = frozenset({"contains", "icontains", "starts-with", "ends-with", "regex", "equals"})
TEXTS_VALUE = frozenset({"contains-any", "contains-all", "icontains-any", "icontains-all"})
CODE_VALUE = frozenset({"python", "javascript"})  # skipped also when the text is blank
VALUED = TEXT_VALUE | TEXTS_VALUE | CODE_VALUE
_WHOLE_NAME = re.compile(r"^\s*\{\{\s*(?:vars\.)?([A-Za-z_]\w*)\s*\}\}\s*$")


def skipped_value(entry: Any, variables: dict[str, Any] | None) -> bool:
    """An assertion AgentV skips for want of a value, its value filled from `variables`
    first (a test's own assertions: interpolateTemplateVars, where a value that is one
    `{{ name }}` becomes that var's value, an object or number included, and a name with no
    var renders as nothing). So `value: "{{ expected_output }}"` in a test without that var,
    or whose var is an object, is skipped, as is an `equals` whose value is a number."""
    if not isinstance(entry, dict) or entry.get("type") not in VALUED:
        return False
    value = entry.get("value")
    if variables is not None and isinstance(value, str):
        whole = _WHOLE_NAME.match(value)
        named = variables.get(whole.group(1)) if whole else None
        if isinstance(named, list) and (not named or isinstance(named[0], str)):
            return False  # a var AgentV makes one test of per item (expandArrayVarCases)
        from .....evaluators.base import EvaluatorFailure
        from .interpolation import vars_interpolated

        try:
            value = vars_interpolated(value, {"vars": variables, **variables})
        except EvaluatorFailure:
            return False  # not renderable: the assertion says so when it runs
    if entry["type"] in CODE_VALUE:
        return not (isinstance(value, str) and value.strip())
    if entry["type"] in TEXT_VALUE:
        return not (isinstance(value, str) and value)
    return not (isinstance(value, list) and any(isinstance(v, str) for v in value))


def skip_note(entry: dict[str, Any]) -> str:
    """What is said of a skipped assertion (AgentV warns "Skipping TYPE evaluator ...:
    missing value")."""
    kind = entry["type"]
    plural = kind in TEXTS_VALUE
    what = "a list of texts" if plural else "text"
    form = "a list holding text" if plural else "text"
    return (
        f"this {kind} has no {what} to check for (its value, with the test's vars filled in, "
        f"is missing, empty or not {form}), so AgentV skips it ('missing value'), and so "
        "does accord: give it a value for it to count"
    )

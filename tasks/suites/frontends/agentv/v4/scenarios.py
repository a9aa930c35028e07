"""AgentV 4's `scenarios`: promptfoo's form (each scenario's `config` rows times its
`tests`), with what AgentV adds, as its loaders read it (commit 58f316c):

- an entry `file://PATH` (or a glob: `file://scenarios/*.yaml`) is replaced by the
  scenarios of the files it names (loaders/scenario-file-loader.ts): each a `.yaml`, `.yml`
  or `.json` file holding a list of scenarios or `{scenarios: [...]}`, read in path order,
  relative to the eval file's folder (inside the project), `{{ env.NAME }}` rendered; an
  empty file adds none;
- a scenario needs both `config` and `tests`, lists of mappings (yaml-parser.ts
  lowerScenariosIntoTests);
- a row is the config row laid under the test row: their `vars`, `metadata` and `options`
  merged (the test's win), their `assert` lists joined (the config row's first);
  `default_test` comes in later, as for any test (mergeScenarioTestRows);
- its id: the test row's `id`; else the config row's `id` (with `__scenario_test_N`, the
  test's number, when the scenario has more than one test); else `scenario-S-C-T`, the
  numbers of the scenario (after the files are read), the config row and the test;
- the rows come after the file's `tests`.

Problems are reported at their line, in the scenario file for its rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ......engine import keys
from ......engine.errors import LoadError
from ......engine.yamlmarks import Loc, Marks, parse_yaml, read_text
from ...promptfoo import sources

if TYPE_CHECKING:
    from ...promptfoo.form import _Loader, _Test

SUFFIXES = (".yaml", ".yml", ".json")


def scenario_tests(loader: _Loader, value: Any) -> list[_Test]:
    """The tests the file's `scenarios` lower into, in AgentV's order and with its ids."""
    from ...promptfoo.form import _Test
    from . import rows as agentv_rows

    if value is None:
        return []
    if not isinstance(value, list):
        loader.issue(("scenarios",), "'scenarios' is a list of scenarios (config, tests) or "
                     "file://PATH entries")  # fmt: skip
        return []
    found: list[_Test] = []
    for number, (scenario, loc, origin) in enumerate(_expanded(loader, value), 1):
        path, marks = origin if origin else (None, None)

        def where(at: Loc, path: Path | None = path, marks: Marks | None = marks) -> Any:
            if path is None or marks is None:
                return {}
            return {"file": path, "line": marks.find(at)[0]}

        if not isinstance(scenario, dict):
            loader.issue(loc, "a scenario is a mapping with config and tests", **where(loc))
            continue
        loader.keys(scenario, loc, {"description", "config", "tests"}, set(), "a scenario",
                    **where(loc))  # fmt: skip
        rows, tests = scenario.get("config"), scenario.get("tests")
        if not isinstance(rows, list) or not isinstance(tests, list):
            loader.issue(loc, "an AgentV scenario needs 'config' and 'tests', both lists of "
                         "mappings (each config row runs every test)", **where(loc))  # fmt: skip
            continue
        for r_index, row in enumerate(rows, 1):
            row_loc = (*loc, "config", r_index - 1)
            if not isinstance(row, dict):
                loader.issue(row_loc, "a config row is a mapping (id, vars, assert, ...)",
                             **where(row_loc))  # fmt: skip
                continue
            loader.check_test(row, row_loc, False, **where(row_loc))
            for t_index, test in enumerate(tests, 1):
                test_loc = (*loc, "tests", t_index - 1)
                if not isinstance(test, dict):
                    if r_index == 1:
                        loader.issue(test_loc, "a scenario's test is a mapping (vars, assert, "
                                     "...)", **where(test_loc))  # fmt: skip
                    continue
                if r_index == 1:
                    loader.check_test(test, test_loc, False, **where(test_loc))
                merged = _row(row, test, _id(row, test, (number, r_index, t_index), len(tests)))
                placed = where(test_loc)
                agentv_rows.complete(loader, merged, test_loc, placed)
                found.append(_Test(merged, test_loc, placed.get("file"), placed.get("line")))
    return found


def _row(row: dict[str, Any], test: dict[str, Any], rid: str) -> dict[str, Any]:
    """mergeScenarioTestRows."""
    merged = {**row, **test}
    for key in ("vars", "metadata", "options"):
        both = {**(row.get(key) or {}), **(test.get(key) or {})}
        if both:
            merged[key] = both
    joined = [*_listed(row.get("assert")), *_listed(test.get("assert"))]
    if joined:
        merged["assert"] = joined
    return {**merged, "id": rid}


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [] if value is None else [value]


def _id(row: dict[str, Any], test: dict[str, Any], numbers: tuple[int, int, int],
        count: int) -> str:  # fmt: skip
    own, config = test.get("id"), row.get("id")
    if isinstance(own, str) and own.strip():
        return own
    if isinstance(config, str) and config.strip():
        return f"{config}__scenario_test_{numbers[2]}" if count > 1 else config
    return "scenario-{}-{}-{}".format(*numbers)


Placed = tuple[Any, Loc, tuple[Path, Marks] | None]


def _expanded(loader: _Loader, value: list[Any]) -> list[Placed]:
    """The scenarios with each `file://` entry replaced by its files' (expandScenarioReferences):
    each with its place (in the eval file, or in the scenario file with that file's marks)."""
    out: list[Placed] = []
    for index, entry in enumerate(value):
        loc: Loc = ("scenarios", index)
        if not (isinstance(entry, str) and entry.startswith("file://")):
            if isinstance(entry, str):
                loader.issue(loc, "a scenario given as text is a file reference: file://PATH")
                continue
            out.append((entry, loc, None))
            continue
        pattern = entry[len("file://") :]
        if "{" in pattern:
            loader.issue(loc, f"the scenario file pattern '{pattern}' uses braces, which accord "
                         "does not expand: name each file, or use * and ?")  # fmt: skip
            continue
        try:
            files = sources.expand(loader.base, loader.root, pattern, "scenario file")
        except sources.SourceProblem as exc:
            loader.issue(loc, exc.message)
            continue
        for path, _shown in files:
            out += _from_file(loader, path, loc)
    return out


def _from_file(loader: _Loader, path: Path, loc: Loc) -> list[Placed]:
    """loadScenariosFromFile: a file's scenarios."""
    from .interpolation import env_interpolated

    if path.suffix.lower() not in SUFFIXES:
        loader.issue(loc, f"scenario file {path.name}: AgentV reads .yaml, .yml and .json "
                     "scenario files")  # fmt: skip
        return []
    try:
        text = read_text(path)
        if not text.strip():
            return []  # AgentV skips an empty scenario file (with a warning)
        data, marks = parse_yaml(text, path, core=True)
    except LoadError as exc:
        loader.issue(loc, exc.message)
        return []
    data = env_interpolated(loader, data, keys.environment())
    inner: Loc = ()
    if isinstance(data, dict) and isinstance(data.get("scenarios"), list):
        data, inner = data["scenarios"], ("scenarios",)
    if not isinstance(data, list):
        loader.issue((), "a scenario file holds a list of scenarios, or a mapping with "
                     "'scenarios': that list", file=path, line=1)  # fmt: skip
        return []
    return [(s, (*inner, i), (path, marks)) for i, s in enumerate(data)]

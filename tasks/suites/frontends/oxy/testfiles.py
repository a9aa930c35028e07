"""What `accord test` does besides running one file, as Oxy's `oxy test` does it.

- `discover`: with no FILE, the project's `*.test.yml` suites (dataset files that share the
  suffix, lists of rows, are left out, as Oxy leaves them out).
- `with_variables`: `-v name=value` given to the tested workflow or agent, typed and checked
  before anything runs.
- `merge`: the results of several files as one (tests numbered on in discovery order).
- `detailed_json`: what `--output-json FILE` writes: the JSON report plus every run, pair
  and case with its output and the judge's reasoning.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from .....engine import variables as workflow_variables
from .....engine.errors import LoadError
from .....engine.masking import mask_data
from .....engine.project import find_root
from .....engine.spec import variable_spec
from .....engine.usage import Usage, UsageLedger
from .....engine.yamlmarks import parse_yaml, read_text
from ...core.gate import GateResult
from ...testing.outcomes import SuiteResult, TestOutcome
from ...testing.prepared import PreparedSuite

SKIPPED_FOLDERS = frozenset({".git", ".accord", ".venv", "venv", "node_modules", "__pycache__"})


def discover(start: Path) -> list[Path]:
    """The `.test.yml` suites of the project that holds `start`, in path order."""
    root = find_root(start)[0]
    found: list[Path] = []
    for path in sorted(root.rglob("*.test.y*ml")):
        parts = path.relative_to(root).parts[:-1]
        if any(p in SKIPPED_FOLDERS or p.startswith(".") for p in parts):
            continue
        if path.name.endswith((".test.yml", ".test.yaml")) and _is_suite(path):
            found.append(path)
    if not found:
        raise LoadError(
            f"no .test.yml file found under {root}: give a file to test (a workflow, an agent "
            "or a .test.yml), or run accord test inside the project"
        )
    return found


def _is_suite(path: Path) -> bool:
    """A mapping (a suite, valid or not: its problems are reported); a list is a dataset."""
    try:
        data, _marks = parse_yaml(read_text(path), path)
    except LoadError:
        return True  # reported when it is prepared
    return not isinstance(data, list)


def with_variables(suite: PreparedSuite, given: dict[str, str]) -> PreparedSuite:
    """`suite` with `-v` values, converted to the declared types (a name the workflow or
    agent does not declare is an error, exit 2)."""
    if not given:
        return suite
    if suite.plan is not None:
        plan = suite.plan
        workflow_variables.resolve(
            plan.variables, given, where=str(plan.path), lines=plan.variable_lines
        )
        return dataclasses.replace(suite, variables=dict(given))
    assert suite.agent is not None
    specs = {k: variable_spec(v) for k, v in suite.agent.variables.items()}
    values = workflow_variables.resolve(specs, given, where=str(suite.agent_path or suite.path))
    return dataclasses.replace(suite, variables={k: values[k] for k in given})


def merge(results: list[SuiteResult]) -> SuiteResult:
    """One result for several files: their tests in order, numbered on; totals summed."""
    if len(results) == 1:
        return results[0]
    tests: list[TestOutcome] = []
    for result in results:
        for test in result.tests:
            tests.append(dataclasses.replace(test, index=len(tests) + 1))
    ledger = UsageLedger()
    stats: dict[str, int] = {}
    for result in results:
        if result.usage is not None:
            _add_usage(ledger.total, result.usage.total)
        for key, value in result.stats.items():
            stats[key] = stats.get(key, 0) + value
    return SuiteResult(
        file=find_root(results[0].file)[0],
        name="project tests",
        tests=tests,
        seconds=sum(r.seconds for r in results),
        usage=ledger,
        stats=stats,
    )


def _add_usage(total: Usage, part: Usage) -> None:
    for name in ("calls", "cached", "input_tokens", "output_tokens", "retries", "failures"):
        setattr(total, name, getattr(total, name) + getattr(part, name))
    total.cost += part.cost
    total.latency += part.latency
    total.cost_known = total.cost_known and part.cost_known


def detailed_json(result: SuiteResult, gate: GateResult | None) -> str:
    """The JSON report with every run, judged pair and case of every test."""
    from ...reports.text import json_document

    doc = json_document(result, gate)
    for detail, test in zip(doc["tests"], result.tests, strict=True):
        detail["task_description"] = test.task_description
        detail["error"] = test.error
        detail["warnings"] = list(test.warnings)
        detail["runs"] = [dataclasses.asdict(r) for r in test.runs]
        detail["pairs"] = [
            {**dataclasses.asdict(p), "consistent": p.consistent} for p in test.pairs
        ] or detail.get("pairs")
        detail["cases"] = [dataclasses.asdict(c) for c in test.cases] or detail.get("cases")
    return json.dumps(mask_data(doc), ensure_ascii=False, indent=2, default=_plain)


def _plain(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)

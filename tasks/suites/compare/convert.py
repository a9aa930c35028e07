"""Records from what accord produces: stored or in-memory case results, `accord test`
outcomes, and the JSON files `--format json` (eval) and `--output-json` (test) write."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ....engine.errors import ConfigError
from .intake import Intake, read_json
from .records import RunRecord


def outcome_tests(value: Any, error: str | None) -> list[dict[str, Any]]:
    """An `accord test` outcome (or its failure) as the test dicts `--output-json` writes."""
    if value is None or not dataclasses.is_dataclass(value) or isinstance(value, type):
        return [{"name": "test", "error": error or "the test did not run"}]
    data = dataclasses.asdict(value)
    data["metrics"] = {
        name: {"value": getattr(metric, "value", None)}
        for name, metric in (getattr(value, "metrics", None) or {}).items()
    }
    return [data]


def from_suite_runs(runs: list[Any]) -> RunRecord:
    """The record of `accord eval`'s `SuiteRun`s, just run."""
    record = RunRecord(label="this run", source="this run")
    intake = Intake("this run")
    for run in runs:
        suite = record.suite(run.id)
        record.workflows.append(run.id)
        for case in run.cases:
            case_id, sample = intake.case_result(case)
            suite.add(case_id, sample)
        suite.repeat = run.suite.repeat
        if run.run_id:
            record.run_ids.append(run.run_id)
    return intake.into(record)


def from_suite_result(result: Any) -> RunRecord:
    """The record of `accord test`'s `SuiteResult`, just run."""
    record = RunRecord(label="this run", source="this run", workflows=[f"{result.name} tests"])
    intake = Intake("this run")
    for test in result.tests:
        for data in outcome_tests(test, test.error):
            suite = record.suite(str(data["name"]))
            for case_id, sample in intake.test_cases(data, "test"):
                suite.add(case_id, sample)
    return intake.into(record)


def from_document(path: Path) -> RunRecord:
    """A results file: `accord eval --format json` (`suites`) or `accord test --output-json`
    (`tests` with their cases), every value checked (intake.py). `accord test --format json`
    has only figures, no cases, and is refused with what to write instead."""
    doc = read_json(path)
    intake = Intake(str(path))
    record = RunRecord(label=str(path), source="file")
    if isinstance(doc, dict) and isinstance(doc.get("suites"), list):
        for n, data in enumerate(doc["suites"]):
            where = f"suites[{n}]"
            if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
                intake.refuse(where, "a suite without its 'cases' list")
            suite = record.suite(intake.name(data.get("suite"), f"{where}: its name"))
            where = f"suite {suite.name!r}"
            for case in data["cases"]:
                suite.add(*intake.eval_case(case, where))
            suite.repeat = intake.repeat(data.get("repeat"), where)
            run_id = intake.text(data.get("run_id"), f"{where}: run_id")
            if run_id:
                record.run_ids.append(run_id)
        return intake.into(record)
    if isinstance(doc, dict) and isinstance(doc.get("tests"), list):
        detailed = [t for t in doc["tests"] if isinstance(t, dict) and "error" in t]
        if not detailed:
            raise ConfigError(
                f"{path}: an `accord test --format json` result holds figures, not cases; "
                "write the baseline with `accord test --output-json FILE` (every case of "
                "every test) and compare with that"
            )
        for n, test in enumerate(detailed):
            cases = intake.test_cases(test, f"tests[{n}]")
            suite = record.suite(intake.name(test.get("name") or f"test {n}", f"tests[{n}]"))
            for case_id, sample in cases:
                suite.add(case_id, sample)
        return intake.into(record)
    raise ConfigError(
        f"{path}: not a results file accord wrote (expected 'suites' from `accord eval "
        "--format json` or 'tests' from `accord test --output-json`)"
    )

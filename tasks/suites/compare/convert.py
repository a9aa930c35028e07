"""Records from what accord produces: stored or in-memory case results, `accord test`
outcomes, and the JSON files `--format json` (eval) and `--output-json` (test) write."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from accord.engine.errors import ConfigError
from accord.tasks.suites.compare.records import (
    Evaluation,
    RunRecord,
    Sample,
    eval_sample,
    samples_of_test,
)


def case_result_sample(value: Any) -> tuple[str, Sample]:
    """(case id, sample) of a `CaseResult`."""
    findings = getattr(value, "findings", None) or []
    sample = Sample(
        status=str(getattr(value, "status", "error")),
        score=getattr(value, "score", None),
        evaluations=tuple(
            Evaluation(f.name, f.passed, f.score, f.reason or "", f.error) for f in findings
        ),
        error=getattr(value, "error", None),
        tags=tuple(getattr(value, "tags", None) or ()),
    )
    return str(getattr(value, "id", "?")), sample


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
    for run in runs:
        suite = record.suite(run.id)
        record.workflows.append(run.id)
        for case in run.cases:
            case_id, sample = case_result_sample(case)
            suite.add(case_id, sample)
        suite.repeat = run.suite.repeat
        if run.run_id:
            record.run_ids.append(run.run_id)
    return record


def from_suite_result(result: Any) -> RunRecord:
    """The record of `accord test`'s `SuiteResult`, just run."""
    record = RunRecord(label="this run", source="this run", workflows=[f"{result.name} tests"])
    for test in result.tests:
        for data in outcome_tests(test, test.error):
            suite = record.suite(str(data["name"]))
            for case_id, sample in samples_of_test(data):
                suite.add(case_id, sample)
    return record


def from_document(path: Path) -> RunRecord:
    """A results file: `accord eval --format json` (`suites`) or `accord test --output-json`
    (`tests` with their cases). `accord test --format json` has only figures, no cases, and
    is refused with what to write instead."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except ValueError as exc:
        raise ConfigError(
            f"{path}: not JSON ({exc}); give a file written by `accord eval --format json` "
            "or `accord test --output-json`"
        ) from None
    record = RunRecord(label=str(path), source="file")
    if isinstance(doc, dict) and isinstance(doc.get("suites"), list):
        for data in doc["suites"]:
            if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
                raise ConfigError(f"{path}: a suite without its 'cases' list")
            suite = record.suite(str(data.get("suite")))
            for case in data["cases"]:
                if isinstance(case, dict) and "id" in case:
                    suite.add(str(case["id"]), eval_sample(case))
            suite.repeat = int(data.get("repeat") or 1)
            if data.get("run_id"):
                record.run_ids.append(str(data["run_id"]))
        return record
    if isinstance(doc, dict) and isinstance(doc.get("tests"), list):
        detailed = [t for t in doc["tests"] if isinstance(t, dict) and "error" in t]
        if not detailed:
            raise ConfigError(
                f"{path}: an `accord test --format json` result holds figures, not cases; "
                "write the baseline with `accord test --output-json FILE` (every case of "
                "every test) and compare with that"
            )
        for test in detailed:
            suite = record.suite(str(test.get("name")))
            for case_id, sample in samples_of_test(test):
                suite.add(case_id, sample)
        return record
    raise ConfigError(
        f"{path}: not a results file accord wrote (expected 'suites' from `accord eval "
        "--format json` or 'tests' from `accord test --output-json`)"
    )

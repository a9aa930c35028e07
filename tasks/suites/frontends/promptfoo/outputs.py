"""promptfoo's `-o` files (json, jsonl, yaml, csv, html) from an accord run of a promptfoo
config, in the shapes promptfoo 0.118 writes (`src/util/index.ts` `writeOutput`,
`src/util/exportToFile/`), so the scripts that read promptfoo's results keep working:

- json / yaml: `{evalId, results: {version: 3, timestamp, prompts, stats, results},
  config, shareableUrl, metadata}`; each prompt column with its `metrics` (score sum,
  pass/fail/error counts, assertion counts, latency, named scores with the derived metrics);
- jsonl: one result per line;
- csv / html: the table: one row per test (its vars), one column per `[provider] label`,
  each cell `[PASS] (score, metric: score)`, the output and the reason.

Where accord has no value of promptfoo's (the eval's database id, token details), the field
holds the empty value promptfoo writes for it; `metadata` names accord as the producer.
"""

from __future__ import annotations

import csv
import html
import io
import json
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import yaml

from .....engine.errors import AccordError
from ....evaluators.base import Finding
from ....evaluators.cases import Case
from ...core.cases import CaseResult
from ...core.verdicts import SuiteRun, pass_bar
from . import derived
from .config import PromptfooSuite

if TYPE_CHECKING:
    from .....engine.paths import Output

FORMATS = ("json", "jsonl", "yaml", "yml", "txt", "csv", "html")
PASS, ASSERT, ERROR = 0, 1, 2  # promptfoo's ResultFailureReason


def _tokens(usage: dict[str, int] | None) -> dict[str, int]:
    usage = usage or {}
    prompt, completion = int(usage.get("input", 0)), int(usage.get("output", 0))
    return {"total": prompt + completion, "prompt": prompt, "completion": completion}


def _empty_usage() -> dict[str, Any]:
    details = {"reasoning": 0, "acceptedPrediction": 0, "rejectedPrediction": 0}
    counts = {"prompt": 0, "completion": 0, "cached": 0, "total": 0, "numRequests": 0}
    return {**counts, "completionDetails": dict(details),
            "assertions": {**counts, "completionDetails": dict(details)}}  # fmt: skip


_NO_TOKENS = {"total": 0, "prompt": 0, "completion": 0, "cached": 0, "numRequests": 0}


def _component(finding: Finding, entry: Any) -> dict[str, Any]:
    """One assertion's `GradingResult`. An assert-set's is its own `AssertionsResult`
    (0.118 `assertionsResult.ts` testResult): its members' results nested under it, its
    members' named scores, and no `assertion`."""
    verdict = {
        "pass": finding.passed is not False and finding.error is None,
        "score": finding.score or 0.0,
        "reason": finding.error or finding.reason,
    }
    if not (isinstance(entry, dict) and entry.get("type") == "assert-set"):
        return {**verdict, "assertion": entry}
    from .asserts.sets import set_children

    members = [
        _component(f, e) for f, e in zip(finding.children, set_children(entry), strict=False)
    ]
    named = finding.metadata.get("namedScores") or {}
    return {**verdict, "namedScores": named, "tokensUsed": dict(_NO_TOKENS),
            "componentResults": members, "assertion": None}  # fmt: skip


def _flat(component: dict[str, Any]) -> list[dict[str, Any]]:
    """A result, then its nested results, each with the set's `assertion` when it has none
    (promptfoo lists an assert-set's members after the set in the test's results)."""
    nested = component.get("componentResults") or []
    return [
        component,
        *({**c, "assertion": c["assertion"] or component["assertion"]} for c in nested),
    ]


def _grading(case: Case, result: CaseResult, threshold: float | None) -> dict[str, Any] | None:
    """promptfoo's `gradingResult`: the test's verdict and each assertion's (a test without
    assertions passes with "No assertions"; one whose target failed has none)."""
    entries = list(case.metadata.get("testCase", {}).get("assert") or [])
    if result.status == "error" and not result.findings:
        return None
    if not entries:
        return {"pass": True, "score": 1, "reason": "No assertions",
                "tokensUsed": dict(_NO_TOKENS), "assertion": None}  # fmt: skip
    from .asserts import combine

    findings: list[Finding] = list(result.findings)
    specs = list(case.evaluators)
    components = [
        c for f, entry in zip(findings, entries, strict=False) for c in _flat(_component(f, entry))
    ]
    combined = None
    if len(findings) == len(specs):
        combined = combine(findings, specs, threshold=threshold)  # type: ignore[arg-type]
    named = (combined.metadata.get("namedScores") if combined else None) or {}
    reason = (combined.error or combined.reason) if combined else (result.error or "")
    return {
        "pass": result.status == "passed", "score": result.score or 0.0, "reason": reason,
        "namedScores": named,
        "tokensUsed": dict(_NO_TOKENS),
        "componentResults": components, "assertion": None,
    }  # fmt: skip


def result_record(case: Case, result: CaseResult, suite: PromptfooSuite) -> dict[str, Any]:
    """One result, as promptfoo's `EvaluateResult`."""
    meta = case.metadata
    column = suite.columns[meta["promptIdx"]]
    grading = _grading(case, result, pass_bar(suite, case))
    reason = ERROR if result.status == "error" else ASSERT if result.status == "failed" else PASS
    error = result.error if result.status == "error" else None
    if result.status == "failed" and grading is not None:
        error = grading["reason"]
    named = grading.get("namedScores", {}) if grading else {}
    output = result.output if result.output is not None else ""
    raw = output
    # a test's transform changed the output its assertions checked: promptfoo's evaluator
    # writes that as the response's output (evaluator.ts runEval), the provider's as raw
    transformed = next((f.metadata["transformedOutput"] for f in result.findings
                        if "transformedOutput" in f.metadata), None)  # fmt: skip
    if transformed is not None:
        output = transformed
    record: dict[str, Any] = {
        "cost": result.cost or 0,
        "gradingResult": grading,
        "id": str(uuid.uuid4()),
        "latencyMs": round(result.seconds * 1000),
        "namedScores": named,
        "prompt": meta["prompt"],
        "promptId": column["id"],
        "promptIdx": meta["promptIdx"],
        "provider": suite.providers.get(
            column["provider"], {"id": column["provider"], "label": ""}
        ),
        "response": {
            "output": output,
            "raw": raw,
            "cost": result.cost or 0,
            "cached": False,
            "tokenUsage": _tokens(result.usage),
            "isRefusal": False,
            "metadata": {},
        },
        "score": result.score if result.score is not None else (0 if error else 1),
        "success": result.status in ("passed", "recorded"),
        "testCase": meta["testCase"],
        "testIdx": meta["testIdx"],
        "vars": meta["vars"],
        "metadata": {**(meta["testCase"].get("metadata") or {}), "_promptfooFileMetadata": {}},
        "failureReason": reason,
    }
    if error:
        record["error"] = error
    return record


def _records(run: SuiteRun) -> list[dict[str, Any]]:
    suite = run.suite
    assert isinstance(suite, PromptfooSuite)
    by_id = {c.id: c for c in suite.cases}
    records = []
    for result in (r for r in run.cases if r.id in by_id):
        case = by_id[result.id]
        record = result_record(case, result, suite)
        # promptfoo numbers a test's combinations, each repeat's after the one before, then
        # the next test's (evaluator.ts: for each test, for each repeat, for each combination)
        first, count = case.metadata.get("testRange") or (record["testIdx"], 1)
        record["testIdx"] = (
            first * suite.repeat + result.repeat * count + (record["testIdx"] - first)
        )
        records.append(record)
    return records


def _prompts(suite: PromptfooSuite, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    prompts = []
    for index, column in enumerate(suite.columns):
        mine = [r for r in records if r["promptIdx"] == index]
        named: dict[str, float] = {}
        counts: dict[str, int] = {}
        for record in mine:
            for key, value in record["namedScores"].items():
                named[key] = named.get(key, 0) + value
                components = (record["gradingResult"] or {}).get("componentResults", [])
                counted = sum(1 for c in components if (c["assertion"] or {}).get("metric") == key)
                counts[key] = counts.get(key, 0) + (counted or 1)
        components = [
            c for r in mine for c in (r["gradingResult"] or {}).get("componentResults", [])
        ]
        usage = _empty_usage()
        usage["numRequests"] = len(mine)
        prompts.append({
            "raw": column["raw"], "label": column["label"], "id": column["id"],
            "provider": column["provider"],
            "metrics": {
                "score": sum(r["score"] for r in mine),
                "testPassCount": sum(1 for r in mine if r["success"]),
                "testFailCount": sum(1 for r in mine if r["failureReason"] == ASSERT),
                "testErrorCount": sum(1 for r in mine if r["failureReason"] == ERROR),
                "assertPassCount": sum(1 for c in components if c["pass"]),
                "assertFailCount": sum(1 for c in components if not c["pass"]),
                "totalLatencyMs": sum(r["latencyMs"] for r in mine),
                "tokenUsage": usage,
                "namedScores": derived.apply(suite.derived_metrics, named) if mine else {},
                "namedScoresCount": counts,
                "cost": sum(r["cost"] for r in mine),
            },
        })  # fmt: skip
    return prompts


def summary(run: SuiteRun) -> dict[str, Any]:
    """promptfoo's `EvaluateSummaryV3` of one run."""
    suite = run.suite
    assert isinstance(suite, PromptfooSuite)
    records = _records(run)
    usage = _empty_usage()
    usage["numRequests"] = len(records)
    return {
        "version": 3,
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "prompts": _prompts(suite, records),
        "results": records,
        "stats": {
            "successes": sum(1 for r in records if r["success"]),
            "failures": sum(1 for r in records if r["failureReason"] == ASSERT),
            "errors": sum(1 for r in records if r["failureReason"] == ERROR),
            "tokenUsage": usage,
        },
    }


def _document(run: SuiteRun, made: dict[str, Any]) -> dict[str, Any]:
    suite = run.suite
    assert isinstance(suite, PromptfooSuite)
    from importlib.metadata import PackageNotFoundError, version

    try:
        accord_version = version("accord")
    except PackageNotFoundError:
        accord_version = "unknown"
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return {
        "evalId": f"eval-{run.run_id or uuid.uuid4().hex[:8]}",
        "results": made,
        "config": suite.config,
        "shareableUrl": None,
        "metadata": {
            "producer": f"accord {accord_version}",
            "exportedAt": now,
            "evaluationCreatedAt": made["timestamp"],
        },
    }


def _cell(record: dict[str, Any]) -> str:
    """A table cell as promptfoo's `outputToSimpleString` writes it."""
    grading = record["gradingResult"]
    output = record["response"]["output"]
    output = json.dumps(output) if not isinstance(output, str) else output
    if record["testCase"].get("assert"):
        if record["success"]:
            text = output or record.get("error") or ""
        else:
            fails = " --- ".join(
                c["reason"] for c in (grading or {}).get("componentResults", []) if not c["pass"]
            )
            text = f"{record.get('error') or fails}\n---\n{output}"
    else:
        text = record.get("error") or output
    failed = "[FAIL]" if record["failureReason"] == ASSERT else "[ERROR]"
    mark = "[PASS]" if record["success"] else failed
    named = ", ".join(f"{k}: {v:.2f}" for k, v in record["namedScores"].items())
    score = f"({record['score']:.2f}, {named})" if named else f"({record['score']:.2f})"
    verdict = "Pass" if record["success"] else "Fail"
    why = f"{verdict} Reason: {grading['reason']}" if grading else ""
    return f"{mark} {score}\n\n{text}\n\n{why}".strip()


def table(run: SuiteRun) -> list[list[str]]:
    """The head row (vars, then `[provider] label` per column) and one row per test."""
    suite = run.suite
    assert isinstance(suite, PromptfooSuite)
    records = _records(run)
    names: list[str] = []
    default = suite.config.get("defaultTest")
    for source in [default.get("vars") if isinstance(default, dict) else None] + [
        r["testCase"].get("vars") for r in records
    ]:
        for name in source or {}:
            if name not in names:
                names.append(name)
    names.sort()  # promptfoo's getHeaderForTable sorts the var columns
    head = [*names, *(f"[{c['provider']}] {c['label']}" for c in suite.columns)]
    rows: dict[int, list[str]] = {}
    for record in records:
        row = rows.setdefault(record["testIdx"], [
            v if isinstance(v, str) else json.dumps(v)
            for v in (record["testCase"].get("vars", {}).get(n) or "" for n in names)
        ] + [""] * len(suite.columns))  # fmt: skip
        row[len(names) + record["promptIdx"]] = _cell(record)
    return [head, *(rows[i] for i in sorted(rows))]


def render(run: SuiteRun, fmt: str) -> str:
    """The text of one output file in `fmt` (a suffix of FORMATS)."""
    if fmt == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _records(run))
    if fmt in ("csv", "html"):
        rows = table(run)
        if fmt == "csv":
            buffer = io.StringIO()
            csv.writer(buffer, lineterminator="\n").writerows(rows)
            return buffer.getvalue()
        return _html(run, rows)
    document = _document(run, summary(run))
    if fmt == "json":
        return _indented(document)
    return str(yaml.safe_dump(document, sort_keys=False, allow_unicode=True))


def _indented(document: dict[str, Any]) -> str:
    """JSON.stringify(document, null, 2), as promptfoo writes it. orjson's indented form is the
    same text as json's (tested), at a twentieth of the time: json indents in pure Python,
    0.28 s of a 1,000-case run's 1.3 s (B13). A value orjson refuses (an integer beyond 64
    bits) takes json's slower path to the same text."""
    try:
        return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
    except orjson.JSONEncodeError:
        return json.dumps(document, indent=2, ensure_ascii=False)


def _html(run: SuiteRun, rows: list[list[str]]) -> str:
    def cells(tag: str, row: list[str]) -> str:
        return "".join(f"<{tag}>{html.escape(v)}</{tag}>" for v in row)

    title = html.escape(str(run.suite.id))
    body = "\n".join(f"<tr>{cells('td', r)}</tr>" for r in rows[1:])
    return (
        f"<!doctype html>\n<html><head><meta charset='utf-8'><title>{title}</title>"
        "<style>table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px;"
        "white-space:pre-wrap;vertical-align:top}</style></head><body>"
        f"<h1>{title}</h1>\n<table><thead><tr>{cells('th', rows[0])}</tr></thead>\n"
        f"<tbody>\n{body}\n</tbody></table></body></html>\n"
    )


def format_of(path: Path) -> str:
    """The output form a path's suffix asks for, or an error naming the ones there are."""
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise AccordError(
            f"{path}: promptfoo's output forms are .json, .jsonl, .yaml, .csv and .html (not "
            f"'{path.suffix or 'no suffix'}'): name the file with one of them"
        )
    return fmt


def write(run: SuiteRun, path: Path) -> None:
    from .....engine.masking import mask

    # the secrets the run used (an apiKey, a key in the config's env:) never reach the file
    text = mask(render(run, format_of(path)))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise AccordError(f"{path}: cannot write: {exc.strerror}") from None


def takes_output(suites: Sequence[Any], output: Path | None) -> bool:
    """Whether `--output` is promptfoo's `-o` (every suite a promptfoo config); its form is
    checked here, before anything runs."""
    if output is None or not suites or not all(isinstance(s, PromptfooSuite) for s in suites):
        return False
    if len(suites) > 1:
        raise AccordError(
            f"{output}: promptfoo's -o file holds one config's results: run the configs one "
            "at a time, or use --output-dir for accord's report of them all"
        )
    format_of(output)
    return True


def write_all(runs: Sequence[SuiteRun], output: Path | None) -> None:
    """Write promptfoo's files: `output` when it is promptfoo's `-o` (given only then), else
    each config's `outputPath` (promptfoo's `-o` replaces the config's, and both are
    relative to the current folder)."""
    if output is not None:
        write(runs[0], output)
        return
    for run in runs:
        if isinstance(run.suite, PromptfooSuite):
            for path in run.suite.output_paths:
                write(run, path)


def planned_outputs(suites: Sequence[Any], output: Path | None) -> list[Output]:
    """The files a run will write, as checks before it runs (`engine.paths.check_outputs`):
    none of its own when `output` (promptfoo's `-o`, checked as --output) replaces the
    configs' `outputPath`; their forms are checked here too."""
    from .....engine.paths import Output

    if output is not None:
        return []
    planned = []
    for suite in suites:
        if isinstance(suite, PromptfooSuite):
            for path in suite.output_paths:
                format_of(path)
                planned.append(Output(f"outputPath of {suite.path}", path, example="out.json"))
    return planned

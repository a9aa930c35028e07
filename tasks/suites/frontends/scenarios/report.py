"""The report of a scenario suite run (seed 003): one self-contained HTML page and one JSON file.

Each row is one scenario run against one model, with its metric badges on the judge's 0-10
scale; its details (the expanded input, the output as safe Markdown, the expected output, the
criteria, each metric's explanation, tokens, seconds, the error) open without JavaScript. Every
value is escaped and nothing is fetched, so the page opens offline or as a CI artifact. The JSON
file holds the same data, scores on the same 0-10 scale.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .....engine.masking import mask_data
from ....evaluators.base import Finding
from ...core.cases import CaseResult
from ...core.verdicts import SuiteRun
from ...reports.evals import _e, metric_data, metric_text

JUDGE = "scenario_judge"
COLUMNS = ("agent", "scenario", "model", "status", "score", "metrics")

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1200px;
       padding: 16px 24px; color: #1d232a; background: #fafbfc; }
h1 { font-size: 22px; margin: 0 0 4px; }
h4 { margin: 10px 0 4px; font-size: 13px; color: #57606a; }
.meta { color: #57606a; margin: 2px 0 10px; }
table { border-collapse: collapse; width: 100%; margin: 12px 0; background: #fff; }
th, td { border-top: 1px solid #e4e8ec; padding: 5px 8px; text-align: left;
         vertical-align: top; }
th { background: #f3f5f7; font-weight: 600; }
tr.more td { border-top: 0; padding-top: 0; font-size: 13px; }
summary { cursor: pointer; color: #0969da; }
pre { white-space: pre-wrap; word-break: break-word; margin: 0; font-size: 12.5px;
      max-height: 24em; overflow: auto; background: #f6f8fa; padding: 6px; }
.md pre { margin: 4px 0; }
code { font-size: 12.5px; background: #f6f8fa; }
.passed { color: #1a7f37; } .failed { color: #cf222e; } .error { color: #9a6700; }
.badge { display: inline-block; border-radius: 10px; padding: 0 8px; margin: 1px 2px;
         font-size: 12px; color: #fff; white-space: nowrap; }
.badge.ok { background: #1a7f37; } .badge.bad { background: #cf222e; }
.badge.none { background: #8c959f; }
ul.metrics { margin: 0; padding-left: 18px; }
"""

FENCE = re.compile(r"^```([\w+.#-]*)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`([^`\n]+)`")


def _ten(score: float | None) -> float | None:
    """A 0..1 score on the judge's 0-10 scale."""
    return None if score is None else round(score * 10, 3)


def _score_text(score: float | None) -> str:
    return "n/a" if score is None else f"{score:.1f}"


def _safe(text: str) -> str:
    """A file-name part: letters, digits, dot, dash and underscore only."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "x"


def report_stem(run: SuiteRun) -> str:
    """`<suite>-<run id>`: the name of a run's report files, without extension."""
    return f"{_safe(run.id)}-{_safe(run.run_id or 'run')}"


def _judge(case: CaseResult) -> Finding | None:
    named = [f for f in case.findings if f.name == JUDGE]
    return named[0] if named else (case.findings[0] if case.findings else None)


def _passes(score: float | None, threshold: Any, child: Finding | None) -> bool | None:
    if score is None:
        return None
    if isinstance(threshold, int | float):
        return round(score, 6) >= float(threshold)
    return None if child is None else child.passed


def _metrics(case: CaseResult) -> list[dict[str, Any]]:
    """One entry per metric, in the scenario's order; a metric not judged has no score."""
    judge = _judge(case)
    found = {c.name: c for c in (judge.children if judge else [])}
    names = [str(n) for n in case.metadata.get("metrics") or []]
    names += [n for n in found if n not in names]
    threshold = case.metadata.get("pass_threshold")
    out = []
    for name in names:
        child = found.get(name)
        score = _ten(child.score) if child is not None and child.error is None else None
        out.append(
            {
                "name": name,
                "score": score,
                "passed": _passes(score, threshold, child),
                "reason": child.reason if child is not None else "",
                "error": child.error if child is not None else None,
            }
        )
    return out


def _case_data(case: CaseResult) -> dict[str, Any]:
    meta = case.metadata
    judge = _judge(case)
    return {
        "id": case.id,
        "repeat": case.repeat,
        "scenario": meta.get("scenario", case.id),
        "description": meta.get("description"),
        "agent": meta.get("agent"),
        "model": meta.get("model"),
        "status": case.status,
        "score": _ten(case.score),
        "pass_threshold": meta.get("pass_threshold"),
        "judge_model": meta.get("judge_model"),
        "metrics": _metrics(case),
        "input": case.input,
        "expected": case.expected,
        "output": case.output,
        "criteria": meta.get("criteria"),
        "usage": case.usage,
        "seconds": round(case.seconds, 3),
        "error": case.error or (judge.error if judge is not None else None),
    }


def scenario_data(run: SuiteRun, *, seed: int | None = None) -> dict[str, Any]:
    """The run as plain data (the JSON file): summary figures and every scenario x model."""
    mean = run.mean_score()
    return {
        "suite": run.id,
        "file": str(run.suite.path) if run.suite.path else None,
        "run_id": run.run_id,
        "seed": seed,
        "scale": 10,
        "seconds": round(run.seconds, 3),
        "counts": run.counts(),
        "pass_rate": metric_data(run.pass_rate()),
        "mean_score": None if mean is None else _ten(mean.value),
        "warnings": list(run.warnings),
        "cases": [_case_data(c) for c in run.cases],
    }


def _prose(escaped: str) -> str:
    text = escaped.strip("\n")
    return INLINE_CODE.sub(r"<code>\1</code>", text).replace("\n", "<br>\n")


def markdown_html(text: str | None) -> str:
    """Markdown made safe: everything escaped first, then fenced code blocks become
    <pre><code>, inline code <code>, and line breaks are kept. Nothing else is interpreted."""
    if not text:
        return ""
    escaped = _e(text.replace("\r\n", "\n"))
    parts, end = [], 0
    for match in FENCE.finditer(escaped):
        parts.append(_prose(escaped[end : match.start()]))
        language = f" class='language-{match.group(1)}'" if match.group(1) else ""
        code = match.group(2).removesuffix("\n")
        parts.append(f"<pre><code{language}>{code}</code></pre>")
        end = match.end()
    parts.append(_prose(escaped[end:]))
    return "".join(p for p in parts if p)


def _badge(metric: dict[str, Any]) -> str:
    kind = {True: "ok", False: "bad", None: "none"}[metric["passed"]]
    title = metric["error"] or metric["reason"] or "not judged"
    return (
        f"<span class='badge {kind}' title='{_e(title)}'>"
        f"{_e(metric['name'])} {_score_text(metric['score'])}</span>"
    )


def _usage_text(usage: Any) -> str:
    if not usage:
        return "n/a"
    if isinstance(usage, dict):
        return ", ".join(f"{k} {v}" for k, v in usage.items())
    return str(usage)


def _metric_item(metric: dict[str, Any], threshold: Any) -> str:
    bar = f" (pass threshold {_e(threshold)})" if threshold is not None else ""
    detail = f"error: {metric['error']}" if metric["error"] else metric["reason"]
    return (
        f"<li>{_badge(metric)}{bar}<br>"
        f"<span class='reason'>{markdown_html(detail) or 'no explanation'}</span></li>"
    )


def _section(title: str, body: str) -> str:
    return f"<h4>{_e(title)}</h4>{body}"


def _pre(value: Any) -> str:
    return f"<pre>{_e(value)}</pre>"


def _details(case: dict[str, Any]) -> str:
    """The expanded part of a row: everything the agent was given, gave, and was judged on."""
    parts = []
    if case["description"]:
        parts.append(_section("Description", _pre(case["description"])))
    parts.append(_section("Input", _pre(case["input"])))
    output = markdown_html(case["output"]) if case["output"] else "<i>no output</i>"
    parts.append(_section("Output", f"<div class='md'>{output}</div>"))
    if case["expected"] is not None:
        parts.append(_section("Expected output", _pre(case["expected"])))
    if case["criteria"]:
        parts.append(_section("Evaluation criteria", _pre(case["criteria"])))
    if case["metrics"]:
        items = "".join(_metric_item(m, case["pass_threshold"]) for m in case["metrics"])
        parts.append(_section("Metrics", f"<ul class='metrics'>{items}</ul>"))
    judge = f"judge {_e(case['judge_model'])} · " if case["judge_model"] else ""
    spent = f"{judge}tokens: {_e(_usage_text(case['usage']))} · {case['seconds']:.2f} s"
    parts.append(f"<p class='meta'>{spent}</p>")
    if case["error"]:
        parts.append(_section("Error", f"<pre class='error'>{_e(case['error'])}</pre>"))
    return "".join(parts)


def _row(case: dict[str, Any]) -> str:
    status = _e(case["status"])
    badges = "".join(_badge(m) for m in case["metrics"])
    cells = (
        f"<td>{_e(case['agent'] or '')}</td><td>{_e(case['scenario'])}</td>"
        f"<td>{_e(case['model'] or '')}</td><td class='{status}'>{status}</td>"
        f"<td>{_score_text(case['score'])}</td><td>{badges}</td>"
    )
    more = (
        f"<tr class='more'><td colspan='{len(COLUMNS)}'><details><summary>details of "
        f"{_e(case['id'])}</summary>{_details(case)}</details></td></tr>"
    )
    return f"<tbody class='case' data-status='{status}'><tr class='row'>{cells}</tr>{more}</tbody>"


def _summary(run: SuiteRun, data: dict[str, Any]) -> str:
    counts = data["counts"]
    seed = "none" if data["seed"] is None else data["seed"]
    where = [f"run {_e(data['run_id'] or 'n/a')}", f"seed {_e(seed)}"]
    if data["file"]:
        where.insert(0, _e(data["file"]))
    where.append(f"{len(data['cases'])} scenario runs in {data['seconds']:.2f} s")
    mean = data["mean_score"]
    parts = [
        f"<h1>Scenario suite: {_e(data['suite'])}</h1>",
        f"<p class='meta'>{' · '.join(where)}</p>",
        f"<p class='summary'>Pass rate: <b>{_e(metric_text(run.pass_rate()))}</b> · "
        f"{counts['passed']} passed, {counts['failed']} failed, {counts['error']} errors"
        + (f" · mean score {mean:.1f}/10" if mean is not None else "")
        + "</p>",
    ]
    parts += [f"<p class='warning'>{_e(w)}</p>" for w in data["warnings"]]
    return "".join(parts)


def render_scenario_html(run: SuiteRun, *, seed: int | None = None) -> str:
    """The whole report as one HTML document: inline style, no script, every value escaped."""
    data = mask_data(scenario_data(run, seed=seed))
    title = f"accord scenarios: {data['suite']}"
    head = "".join(f"<th>{c}</th>" for c in COLUMNS)
    rows = "".join(_row(c) for c in data["cases"])
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>"
        f"{_summary(run, data)}<table><thead><tr>{head}</tr></thead>{rows}</table>"
        "</body></html>\n"
    )


def write_scenario_reports(
    run: SuiteRun, output_dir: Path, *, seed: int | None = None
) -> tuple[Path, Path]:
    """Write `<suite>-<run id>.html` and `.json` into `output_dir` (created as needed)."""
    output_dir.mkdir(parents=True, exist_ok=True)
    stem = report_stem(run)
    html_path, json_path = output_dir / f"{stem}.html", output_dir / f"{stem}.json"
    html_path.write_text(render_scenario_html(run, seed=seed), encoding="utf-8")
    data = mask_data(scenario_data(run, seed=seed))
    document = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    json_path.write_text(document + "\n", encoding="utf-8")
    return html_path, json_path

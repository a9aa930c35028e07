"""AgentV's own examples (tests/data/agentv-examples: examples/features and
examples/showcase at 4a86b769, MIT licence): every eval file loads, and a handful score as
AgentV scored them. The expected scores are AgentV's: its `*.baseline.jsonl` beside each
file, written by AgentV's code (field-accuracy.ts, tool-trajectory.ts) on the same answers;
the programs the targets run (mock_extractor.ts, cat-trace.ts, both bun scripts) are
replaced by Python scripts that do the same."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.agentv.conftest import records
from tests.evals.conftest import accord

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "agentv-examples"
EVAL_FILES = sorted(
    p.relative_to(EXAMPLES).as_posix()
    for p in EXAMPLES.rglob("*")
    if p.suffix in (".yaml", ".jsonl")
    and ("evals" in p.parts or p.parent.name == "tool-evaluation-plugins")
    and "baseline" not in p.name
    and "results" not in p.name
    and not (p.suffix == ".yaml" and p.with_suffix(".jsonl").exists())
)
# the variables the examples' targets files read (none is used to call anything here)
VARIABLES = (
    "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "AZURE_DEPLOYMENT_NAME",
    "AZURE_OPENAI_API_VERSION", "GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_MODEL_NAME",
    "OPENAI_API_KEY", "OPENAI_ENDPOINT", "OPENAI_MODEL", "ANTHROPIC_API_KEY",
)  # fmt: skip


@pytest.fixture
def examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "examples"
    shutil.copytree(EXAMPLES, root)
    for name in VARIABLES:
        monkeypatch.setenv(name, "https://example.invalid" if "ENDPOINT" in name else "unused")
    monkeypatch.setenv("TOOL_EVAL_PLUGINS_DIR", str(root / "showcase" / "tool-evaluation-plugins"))
    monkeypatch.chdir(root)
    return root


def test_the_examples_are_all_here() -> None:
    assert len(EVAL_FILES) == 27, EVAL_FILES


@pytest.mark.parametrize("name", EVAL_FILES)
def test_every_example_loads(examples: Path, name: str) -> None:
    from accord.tasks.suites.agentv.files import load_agentv_file

    path = examples / name
    targets = None
    if name == "features/tool-trajectory-simple/evals/dataset.yaml":
        # its mock_agent is defined by the caller (AgentV's own tests pass --targets)
        targets = examples / "mock-targets.yaml"
        targets.write_text("targets:\n  - name: mock_agent\n    provider: mock\n")
    suite = load_agentv_file(path, targets_file=targets)
    if path.suffix == ".jsonl":
        ids = [json.loads(line)["id"] for line in path.read_text().splitlines() if line.strip()]
    else:
        data = yaml.safe_load(path.read_text())
        ids = [t["id"] for t in data.get("tests") or data.get("evalcases") or data["cases"]]
    assert [c.id for c in suite.cases] == ids


def baseline(path: Path) -> dict[str, dict[str, Any]]:
    out = {}
    for line in path.read_text().splitlines():
        record = json.loads(line)
        out[record["eval_id"]] = {e["name"]: e["score"] for e in record["evaluator_results"]}
    return out


EXTRACTOR = """import shutil, sys
shutil.copyfile(sys.argv[1], sys.argv[2])  # as mock_extractor.ts: the fixture is the answer
"""


def test_document_extraction_field_accuracy(examples: Path) -> None:
    folder = examples / "features" / "document-extraction"
    (folder / "mock_extractor.py").write_text(EXTRACTOR)
    targets = folder / "python-targets.yaml"
    targets.write_text(
        "targets:\n  - name: mock_extractor\n    provider: cli\n"
        f"    command_template: {sys.executable} ../mock_extractor.py {{FILES}} {{OUTPUT_FILE}}\n"
    )
    out = folder / "out.jsonl"
    cases = ("invoice-001", "invoice-003", "invoice-004", "invoice-005")  # 002 runs a bun judge
    result = accord(
        "eval", folder / "evals" / "dataset-field-accuracy.yaml", "--targets", targets,
        "--output", out, *(a for c in cases for a in ("--case", c)),
    )  # fmt: skip
    found = records(out)
    expected = baseline(folder / "evals" / "dataset-field-accuracy.baseline.jsonl")
    for case in cases:
        scores = {e["name"]: e["score"] for e in found[case]["evaluator_results"]}
        assert scores == pytest.approx(expected[case]), (case, result.stderr)
    # invoice-004 misses its invoice_number (weight 2 of 13): 11 / 13 as AgentV reports
    assert found["invoice-004"]["score"] == pytest.approx(11 / 13)


CAT_TRACE = """import argparse, json
p = argparse.ArgumentParser(); p.add_argument("--trace"); p.add_argument("--output")
p.add_argument("--prompt"); a = p.parse_args()
parsed = json.load(open(a.trace)); trace = parsed.get("trace") or []
results = {e["id"]: e for e in trace if e.get("type") == "tool_result" and e.get("id")}
calls = []
for e in trace:
    if e.get("type") == "tool_call" and e.get("name"):
        call = {"tool": e["name"]}
        if "input" in e: call["input"] = e["input"]
        out = results.get(e.get("id"), {}).get("output")
        if out is not None: call["output"] = out
        if e.get("id"): call["id"] = e["id"]
        calls.append(call)
text = parsed.get("text")
message = {"role": "assistant", "content": text, "tool_calls": calls}
json.dump({"text": text, "output_messages": [message]}, open(a.output, "w"))
"""


def test_tool_trajectory_advanced(examples: Path) -> None:
    folder = examples / "features" / "tool-trajectory-advanced"
    (folder / "cat_trace.py").write_text(CAT_TRACE)
    targets = folder / "python-targets.yaml"
    targets.write_text(
        "targets:\n  - name: static_trace\n    provider: cli\n    command_template: "
        f"{sys.executable} ./cat_trace.py --trace ./static-trace.json --prompt {{PROMPT}}"
        " --output {OUTPUT_FILE}\n    cwd: ..\n"
    )
    out = folder / "out.jsonl"
    result = accord(
        "eval", folder / "evals" / "dataset-trace-file-demo.yaml", "--targets", targets,
        "--output", out,
    )  # fmt: skip
    found = records(out)
    expected = baseline(folder / "evals" / "trace-file-demo.baseline.jsonl")
    assert set(found) == set(expected), result.stderr
    for case, scores in expected.items():
        got = {e["name"]: e["score"] for e in found[case]["evaluator_results"]}
        assert got == pytest.approx(scores), (case, found[case], result.stderr)
    assert result.exit_code == 0

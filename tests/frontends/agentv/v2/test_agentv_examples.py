"""AgentV's example features on eval files of our own, scored as AgentV's code scores them
(EntityProcess/agentv at 4a86b769; each expected number is worked out from the function named
beside it), and, when the environment names an AgentV checkout, every example of it loads.

The corpus of AgentV files the project keeps beside the repository (../shared/agentv-corpus)
is run file by file in test_corpus.py, which also loads each of its files."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from accord.engine.errors import AccordError
from accord.tasks.suites.core import frontend as frontends
from tests.evals.conftest import accord
from tests.frontends.agentv.v2.conftest import records

# --- an AgentV checkout, when one is named ------------------------------------------------

SOURCE_VARIABLE = "ACCORD_AGENTV_SOURCE"
# the variables the examples' targets files read (none is used to call anything here)
VARIABLES = (
    "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "AZURE_DEPLOYMENT_NAME",
    "AZURE_OPENAI_API_VERSION", "GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_MODEL_NAME",
    "OPENAI_API_KEY", "OPENAI_ENDPOINT", "OPENAI_MODEL", "ANTHROPIC_API_KEY",
)  # fmt: skip


# what accord refuses on purpose, each named at its line (docs/agentv.md, docs/security.md):
# a program or key destination a file not trusted may not name, a coding agent, a workspace
# set-up, a TypeScript hook or transform, what AgentV itself refuses or fails on
ON_PURPOSE = (
    "has not been told to trust", "which accord does not run", "runs no coding agent",
    "TypeScript", "coding agent's workspace", "accord does not build one", "AgentV fails",
    "has been removed by AgentV", "AgentV removed", "AgentV refuses", "is not in ",
    "no .agentv/providers.yaml", "is no folder", "not supported by accord", "does not exist",
)  # fmt: skip


def refused_on_purpose(error: AccordError) -> bool:
    """Whether every problem of a refused file is one accord refuses on purpose."""
    issues = getattr(error, "issues", None) or []
    messages = [i.message for i in issues] or [error.message]
    return all(any(part in m for part in ON_PURPOSE) for m in messages)


def agentv4_rows(path: Path) -> bool:
    """A JSONL file of AgentV 4 test rows (`vars`, `assert`): a fragment a suite's `tests:
    file://...` includes, no eval file of its own."""
    if path.suffix != ".jsonl":
        return False
    first = next((line for line in path.read_text().splitlines() if line.strip()), "{}")
    row = json.loads(first)
    return isinstance(row, dict) and bool({"vars", "assert"} & set(row))


def example_eval_files(examples: Path) -> list[Path]:
    """The eval files of examples/features and examples/showcase: YAML and JSONL datasets
    under `evals/` (and the tool-evaluation-plugins showcase), not AgentV's result files, and
    a YAML that is the sidecar of a same-named JSONL counted once, as the JSONL."""
    found = []
    for part in ("features", "showcase"):
        for path in sorted((examples / part).rglob("*")):
            parts = path.relative_to(examples).parts
            if (
                path.suffix in (".yaml", ".jsonl")
                and ("evals" in parts or path.parent.name == "tool-evaluation-plugins")
                and "baseline" not in path.name
                and "results" not in path.name
                and "node_modules" not in parts
                and not (path.suffix == ".yaml" and path.with_suffix(".jsonl").exists())
            ):
                found.append(path)
    return found


@pytest.mark.reference
def test_every_example_of_an_agentv_checkout_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from accord.tasks.suites.frontends.agentv.v2.files import load_agentv_file

    source = os.environ.get(SOURCE_VARIABLE)
    if not source:
        pytest.skip(f"{SOURCE_VARIABLE} names no AgentV checkout (a folder with examples/)")
    examples = Path(source) / "examples"
    assert examples.is_dir(), f"{SOURCE_VARIABLE}={source} has no examples/ folder"
    files = example_eval_files(examples)
    assert files, f"no eval files under {examples}/features or {examples}/showcase"
    for name in VARIABLES:
        monkeypatch.setenv(name, "https://example.invalid" if "ENDPOINT" in name else "unused")
    plugins = examples / "showcase" / "tool-evaluation-plugins"
    monkeypatch.setenv("TOOL_EVAL_PLUGINS_DIR", str(plugins))
    monkeypatch.chdir(examples)
    # tool-trajectory-simple's mock_agent is defined by the caller (AgentV's own tests pass
    # --targets); the file is written here, the checkout is only read
    mock_targets = tmp_path / "mock-targets.yaml"
    mock_targets.write_text("targets:\n  - name: mock_agent\n    provider: mock\n")
    failures = []
    for path in files:
        name = path.relative_to(examples).as_posix()
        mock = name.endswith("tool-trajectory-simple/evals/dataset.yaml")
        targets = mock_targets if mock else None
        # the checkout's own format: AgentV 2's files (4a86b769) or AgentV 4's (58f316c), each
        # read by the front-end that claims it, as `accord validate` reads it
        claimant = frontends.claimant(frontends.Source(path))
        if claimant is None or agentv4_rows(path):
            continue  # a fragment a suite includes (a test file, a default_test file)
        try:
            if claimant.name == "agentv4":
                frontends.load(path, frontends.Request())
                continue
            suite = load_agentv_file(path, targets_file=targets)
        except AccordError as error:
            if refused_on_purpose(error):
                continue
            failures.append(f"{name}: {error}")
            continue
        except Exception as error:  # every file's failure is listed, not only the first
            failures.append(f"{name}: {error!r}")
            continue
        if path.suffix == ".jsonl":
            lines = path.read_text().splitlines()
            ids = [json.loads(line)["id"] for line in lines if line.strip()]
        else:
            data = yaml.safe_load(path.read_text())
            ids = [t["id"] for t in data.get("tests") or data.get("evalcases") or data["cases"]]
        if [c.id for c in suite.cases] != ids:
            failures.append(f"{name}: tests {[c.id for c in suite.cases]}, file has {ids}")
    assert not failures, "\n".join(failures)


# --- field_accuracy: a document extractor behind a cli target -----------------------------

# the extractor's answer is the JSON file it is given (as a fixture-replaying extractor)
EXTRACTOR = """import shutil, sys
shutil.copyfile(sys.argv[1], sys.argv[2])
"""

EXPECTED_INVOICE = {
    "invoice_number": "NW-7731",
    "issued": "2025-03-07",
    "currency": "EUR",
    "vendor": {"name": "Northwind Freight", "vat_id": "DE811"},
    "net_total": 1250,
    "gross_total": 1487.5,
}

# each test's answer (the fixture the extractor returns) and expected object
INVOICES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    # every field right; the date in another of the listed formats
    "clean": ({**EXPECTED_INVOICE, "issued": "07-Mar-2025"}, EXPECTED_INVOICE),
    # totals within tolerance (one as text with its currency), a US-style date
    "rounding": (
        {
            **EXPECTED_INVOICE,
            "issued": "03/07/2025",
            "net_total": "1250.80 EUR",
            "gross_total": 1500,
        },
        EXPECTED_INVOICE,
    ),
    # the required invoice number missing; nothing expected for the optional VAT id
    "gaps": (
        {k: v for k, v in EXPECTED_INVOICE.items() if k != "invoice_number"},
        {**EXPECTED_INVOICE, "vendor": {"name": "Northwind Freight"}},
    ),
    # wrong case, wrong day, a total outside tolerance; the optional VAT id missing
    "mismatches": (
        {
            **EXPECTED_INVOICE,
            "currency": "eur",
            "issued": "2025-03-08",
            "net_total": 1260,
            "vendor": {"name": "Northwind Freight"},
        },
        EXPECTED_INVOICE,
    ),
    # line items by index, under the test's own evaluators
    "line-items": (
        {
            "line_items": [
                {"description": "Sea freight", "amount": 900},
                {"description": "Port fees", "amount": 104},
            ]
        },
        {
            "line_items": [
                {"description": "Sea freight", "amount": 900},
                {"description": "Port fee", "amount": 100},
            ]
        },
    ),
}

FIELD_ACCURACY_FILE = """description: invoice fields
execution:
  target: extractor
  evaluators:
    - name: invoice_fields
      type: field_accuracy
      aggregation: weighted_average
      fields:
        - {path: invoice_number, match: exact, weight: 2}
        - {path: issued, match: date, formats: [DD-MMM-YYYY, YYYY-MM-DD, MM/DD/YYYY]}
        - {path: currency, match: exact}
        - {path: vendor.name, match: exact}
        - {path: vendor.vat_id, match: exact, required: false, weight: 0.5}
        - {path: net_total, match: numeric_tolerance, tolerance: 1, weight: 3}
        - {path: gross_total, match: numeric_tolerance, tolerance: 0.01, relative: true,
           weight: 3}
tests:
"""

CASE = """  - id: {id}
    criteria: Extracts the invoice fields
    input:
      - role: user
        content:
          - {{type: file, value: ../fixtures/{id}.json}}
          - {{type: text, value: Extract the invoice as JSON.}}
    expected_output:
      - role: assistant
        content: {expected}
"""

LINE_ITEM_EVALUATORS = """    evaluators:
      - name: items
        type: field_accuracy
        fields:
          - {path: "line_items[0].description", match: exact}
          - {path: "line_items[1].amount", match: numeric_tolerance, tolerance: 0.05,
             relative: true}
          - {path: "line_items[2].description", match: exact}
      - name: items_strict
        type: field_accuracy
        aggregation: all_or_nothing
        fields:
          - {path: "line_items[0].amount", match: numeric_tolerance}
          - {path: "line_items[1].description", match: exact}
"""


def test_field_accuracy_on_an_extractor(tmp_path: Path) -> None:
    (tmp_path / "fixtures").mkdir()
    text = FIELD_ACCURACY_FILE
    for case_id, (answer, expected) in INVOICES.items():
        (tmp_path / "fixtures" / f"{case_id}.json").write_text(json.dumps(answer))
        text += CASE.format(id=case_id, expected=json.dumps(expected))
        if case_id == "line-items":
            text += LINE_ITEM_EVALUATORS
    (tmp_path / "evals").mkdir()
    eval_file = tmp_path / "evals" / "invoices.yaml"
    eval_file.write_text(text)
    (tmp_path / "extractor.py").write_text(EXTRACTOR)
    # `.agentv/` makes tmp_path the project, so `../fixtures` from evals/ stays inside it
    (tmp_path / ".agentv").mkdir()
    targets = tmp_path / ".agentv" / "targets.yaml"
    targets.write_text(
        "targets:\n  - name: extractor\n    provider: cli\n"
        f"    command_template: {sys.executable} {tmp_path / 'extractor.py'} {{FILES}}"
        " {OUTPUT_FILE}\n"
    )
    out = tmp_path / "out.jsonl"
    result = accord("eval", eval_file, "--output", out)
    assert out.exists(), result.stderr
    found = records(out)
    assert set(found) == set(INVOICES), result.stderr

    def scores(case_id: str) -> dict[str, float]:
        return {e["name"]: e["score"] for e in found[case_id]["evaluator_results"]}

    # field-accuracy.ts FieldAccuracyEvaluator: evaluateField gives each field its score (1
    # or 0) at its weight, aggregateResults (weighted_average) sums score x weight / weights.
    # All present, the weights are 2 + 1 + 1 + 1 + 0.5 + 3 + 3 = 11.5.
    # clean: compareDate reads "07-Mar-2025" by parseDate's DD-MMM-YYYY branch, the same day
    assert scores("clean") == {"invoice_fields": 1.0}
    # rounding: compareNumericTolerance, toNumber("1250.80 EUR") = parseFloat = 1250.8, |0.8|
    # <= 1; gross |1500 - 1487.5| / 1487.5 = 0.0084 <= 0.01 (relative); "03/07/2025" is
    # 7 March (parseDate: JavaScript's Date reads MM/DD/YYYY)
    assert scores("rounding") == {"invoice_fields": 1.0}
    # gaps: evaluateField, no expected vat_id: score 1 at weight 0.5 ("no expected value",
    # checked before the answer's side); invoice_number required and missing: 0 at weight 2.
    # (11.5 - 2) / 11.5 = 19 / 23
    gaps = found["gaps"]
    assert scores("gaps")["invoice_fields"] == pytest.approx(19 / 23)
    assert gaps["verdict"] == "pass"  # scoring.ts scoreToVerdict: pass from 0.8
    assert "vendor.vat_id: no expected value" in gaps["evaluator_results"][0]["hits"]
    # mismatches: optional vat_id missing weighs 0; currency "eur" != "EUR" (compareExact),
    # 8 March is not 7 March (compareDate), |1260 - 1250| = 10 > 1; invoice_number, vendor.name
    # and gross_total hold: (2 + 1 + 3) / (11.5 - 0.5) = 6 / 11
    mismatches = found["mismatches"]
    assert scores("mismatches")["invoice_fields"] == pytest.approx(6 / 11)
    assert mismatches["verdict"] == "fail"  # below 0.6
    assert len(mismatches["evaluator_results"][0]["misses"]) == 3
    # line-items: the test's `evaluators` replace the suite's (evaluator-parser.ts
    # parseEvaluators: case evaluators before global execution.evaluators); resolvePath splits
    # "line_items[1].amount" at the brackets. items: description equal, |104 - 100| / 100 =
    # 0.04 <= 0.05, nothing expected at line_items[2]: 1. items_strict: "Port fees" is not
    # "Port fee", and all_or_nothing is 0 on any miss. The test's score is the evaluators'
    # mean (orchestrator.ts computeWeightedMean, weights 1): 0.5.
    assert scores("line-items") == {"items": 1.0, "items_strict": 0.0}
    assert found["line-items"]["score"] == pytest.approx(0.5)
    assert result.exit_code == 1  # "mismatches" and "line-items" fail


# --- tool_trajectory: an agent's recorded tool calls behind a cli target ------------------

# a booking agent's calls, in two assistant turns
TRACE = {
    "text": "Booked seat 14C on TP761 for 3 May.",
    "output_messages": [
        {"role": "assistant", "content": "Searching.", "tool_calls": [
            {"tool": "searchFlights", "id": "c1",
             "input": {"from": "OSL", "to": "LIS", "date": "2025-05-02"},
             "output": {"flights": ["TP759"]}},
            {"tool": "getFareRules", "id": "c2", "input": {"fare": "LITE"},
             "output": {"refundable": False}},
        ]},
        {"role": "assistant", "content": "Booking.", "tool_calls": [
            {"tool": "searchFlights", "id": "c3",
             "input": {"from": "OSL", "to": "LIS", "date": "2025-05-03"},
             "output": {"flights": ["TP761"]}},
            {"tool": "bookSeat", "id": "c4", "input": {"flight": "TP761", "seat": "14C"},
             "output": {"confirmation": "K2XQ9"}},
        ]},
    ],
}  # fmt: skip

# the agent replays its recorded run whatever it is asked
REPLAY = f"""import json, sys
json.dump({TRACE!r}, open(sys.argv[1], "w"))
"""

TRAJECTORY_FILE = """description: booking agent trajectories
execution:
  target: agent
tests:
  - id: in-order-with-gaps
    criteria: Searches before booking
    input: Book me to Lisbon
    execution:
      evaluators:
        - {name: search-then-book, type: tool_trajectory, mode: in_order,
           expected: [{tool: searchFlights}, {tool: bookSeat}]}
  - id: in-order-wrong-order
    criteria: Checks fare rules after booking
    input: Book me to Lisbon
    execution:
      evaluators:
        - {name: book-then-rules, type: tool_trajectory, mode: in_order,
           expected: [{tool: bookSeat}, {tool: getFareRules}]}
  - id: exact-sequence
    criteria: The whole workflow
    input: Book me to Lisbon
    execution:
      evaluators:
        - {name: workflow, type: tool_trajectory, mode: exact,
           expected: [{tool: searchFlights}, {tool: getFareRules}, {tool: searchFlights},
                      {tool: bookSeat}]}
  - id: exact-off-by-one
    criteria: Searches twice then reads the rules
    input: Book me to Lisbon
    execution:
      evaluators:
        - {name: workflow, type: tool_trajectory, mode: exact,
           expected: [{tool: searchFlights}, {tool: searchFlights}, {tool: getFareRules}]}
  - id: any-order-minimums
    criteria: Searches enough, reads the rules, cancels the old booking
    input: Book me to Lisbon
    execution:
      evaluators:
        - {name: depth, type: tool_trajectory, mode: any_order,
           minimums: {searchFlights: 2, getFareRules: 1, cancelBooking: 1}}
  - id: in-order-arguments
    criteria: Searches the 3rd, books 14C
    input: Book me to Lisbon
    execution:
      evaluators:
        - name: searched-the-third
          type: tool_trajectory
          mode: in_order
          expected:
            - {tool: searchFlights, args: {date: "2025-05-03"}}
            - {tool: bookSeat, args: {seat: 14C}}
  - id: exact-arguments
    criteria: The calls with their arguments
    input: Book me to Lisbon
    execution:
      evaluators:
        - name: calls
          type: tool_trajectory
          mode: exact
          expected:
            - {tool: searchFlights, args: {from: OSL, to: LIS}}
            - {tool: getFareRules, args: any}
            - {tool: searchFlights, args: {date: "2025-05-03"}}
            - {tool: bookSeat, args: {seat: 14D}}
  - id: input-and-output-keys
    criteria: Search then book
    input: Book me to Lisbon
    execution:
      evaluators:
        - name: not-arguments
          type: tool_trajectory
          mode: in_order
          expected:
            - {tool: searchFlights, input: {from: BGO}}
            - {tool: bookSeat, output: {confirmation: NOPE}}
  - id: combined
    criteria: The workflow and enough searching
    input: Book me to Lisbon
    expected_output:
      - role: assistant
        tool_calls:
          - {tool: searchFlights, input: {from: OSL, to: LIS}}
      - role: assistant
        content: Booked.
    execution:
      evaluators:
        - {name: workflow, type: tool_trajectory, mode: exact,
           expected: [{tool: searchFlights}, {tool: getFareRules}, {tool: bookSeat}]}
        - {name: depth, type: tool_trajectory, mode: any_order, minimums: {searchFlights: 2}}
"""


def test_tool_trajectory_on_a_recorded_agent(tmp_path: Path) -> None:
    (tmp_path / "replay.py").write_text(REPLAY)
    eval_file = tmp_path / "trajectories.yaml"
    eval_file.write_text(TRAJECTORY_FILE)
    targets = tmp_path / "targets.yaml"
    targets.write_text(
        "targets:\n  - name: agent\n    provider: cli\n"
        f"    command_template: {sys.executable} {tmp_path / 'replay.py'} {{OUTPUT_FILE}}\n"
    )
    out = tmp_path / "out.jsonl"
    result = accord("eval", eval_file, "--targets", targets, "--output", out)
    assert out.exists(), result.stderr
    found = records(out)

    def scores(case_id: str) -> dict[str, float]:
        return {e["name"]: e["score"] for e in found[case_id]["evaluator_results"]}

    # the calls, across both messages (tool-trajectory.ts extractToolCallsFromMessages):
    # 0 searchFlights (2 May), 1 getFareRules, 2 searchFlights (3 May), 3 bookSeat (14C)
    # evaluateInOrder: searchFlights at 0, bookSeat at 3 (calls between are allowed): 2 / 2
    assert scores("in-order-with-gaps") == {"search-then-book": 1.0}, result.stderr
    # evaluateInOrder: bookSeat at 3, then no getFareRules after it: 1 / 2
    assert scores("in-order-wrong-order") == {"book-then-rules": 0.5}
    assert found["in-order-wrong-order"]["verdict"] == "fail"  # scoreToVerdict: below 0.6
    # evaluateExact: the four positions match: 4 / 4
    assert scores("exact-sequence") == {"workflow": 1.0}
    # evaluateExact: position 0 matches, 1 is getFareRules, 2 is searchFlights; the count
    # (3 expected, 4 made) is a miss line, not an assertion: 1 / 3
    off = found["exact-off-by-one"]
    assert scores("exact-off-by-one")["workflow"] == pytest.approx(1 / 3)
    assert any("3" in m and "4" in m for m in off["evaluator_results"][0]["misses"])
    # evaluateAnyOrder: searchFlights 2 >= 2, getFareRules 1 >= 1, cancelBooking 0 < 1: 2 / 3
    assert scores("any-order-minimums")["depth"] == pytest.approx(2 / 3)
    assert found["any-order-minimums"]["verdict"] == "borderline"  # from 0.6
    # evaluateInOrder with argsMatch: the first searchFlights (2 May) has the name but not
    # the date; that is the expected item's miss and the search moves past it, it does not
    # go on to the 3 May search. bookSeat at 3, seat 14C (argsMatch checks only the keys
    # given): 1 / 2
    assert scores("in-order-arguments") == {"searched-the-third": 0.5}
    # evaluateExact with argsMatch: from/to a subset of call 0's input; `any` skips the
    # check; call 2's date; call 3 has seat 14C, not 14D: 3 / 4
    assert scores("exact-arguments")["calls"] == pytest.approx(3 / 4)
    assert found["exact-arguments"]["verdict"] == "borderline"
    # evaluator-parser.ts keeps `tool` and `args` of an expected item: `input` and `output`
    # are not checked, and the sequence holds: 2 / 2
    assert scores("input-and-output-keys") == {"not-arguments": 1.0}
    # combined: exact, position 2 is searchFlights not bookSeat: 2 / 3; any_order: 1; the
    # test's score the evaluators' mean (orchestrator.ts computeWeightedMean): (2/3 + 1) / 2
    combined = scores("combined")
    assert combined["workflow"] == pytest.approx(2 / 3)
    assert combined["depth"] == 1.0
    assert found["combined"]["score"] == pytest.approx((2 / 3 + 1) / 2)

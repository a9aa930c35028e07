"""AgentV 4 test files read as AgentV reads them (loaders/case-file-loader.ts at commit
58f316ca2: parseCsvRows, parseCsvCases, parseAssertionFromString; the JSON and YAML
branches), and tests without a text id skipped as AgentV skips them (yaml-parser.ts
`asString(renderedCase.id)`, "Skipping incomplete test"): through AgentV itself and `accord
eval` (the helpers of harness.py), and through accord alone for each rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from accord.tasks.suites.frontends.agentv.v4 import csvfile as agentv_csv
from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI
from tests.frontends.agentv.v4 import harness

# the model's answers to the rows of csv-rows/evals/cases.csv and the id suite below
ANSWERS = {
    "capital? [geography/easy; Portugal]": "The capital is Lisbon.",
    "capital? [geography/easy; Spain]": "The capital is Madrid.",
    "river": "The Tagus runs through Lisbon.",
    "Greet the team": "Hello team",
    "polite note": "Dear customer, thank you.",
    "Say alpha": "alpha",
    "Say beta": "beta",
    "Say gamma": "gamma",
}


answer = harness.answering(ANSWERS)


@pytest.mark.reference
@harness.needs_agentv
def test_csv_rows_score_as_in_agentv(tmp_path: Path, fake: FakeOpenAI) -> None:
    name = "csv-rows"
    expected, asked, sent, got = harness.through_both(tmp_path, name, fake)
    assert got == expected
    assert asked and harness.judge_requests(fake.requests) == asked
    assert harness.model_requests(fake.requests) == sent
    # the row's input with its __prefix and __suffix (a quoted cell keeps its comma, its
    # doubled quote and its newline), nested vars.topic.area in the prompt
    assert any("Please answer: Which city is the capital? [geography/easy; Portugal]" in m
               for m in sent), sent  # fmt: skip
    assert any('through \\"the\\" capital, please [geography/medium' in m for m in sent), sent
    assert any("Greet the team,\\nwarmly! [social/easy" in m for m in sent), sent
    # __description is the criteria the judge grades a row without assertions by
    assert any("The note is polite and short." in user for _s, user in asked), asked
    # from case-file-loader.ts: the id column (header trimmed), `row-N` for an empty id
    # (blank lines are no rows); __threshold 0.4 passes greeting's 0.5; criteria beside an
    # assertion is not graded; a rubric about politeness fails in the fake judge
    assert expected == {
        "capital": {"score": 1.0, "passed": True, "assertions": [1.0, 1.0]},
        "row-2": {"score": 1.0, "passed": True, "assertions": [1.0, 1.0]},
        "greeting": {"score": 0.5, "passed": True, "assertions": [1.0, 0.0]},
        "polite-note": {"score": 0.0, "passed": False, "assertions": [0.0]},
        "criteria-and-check": {"score": 0.0, "passed": False, "assertions": [0.0]},
    }  # fmt: skip


ID_SUITE = """\
providers: [llm]
prompts: ['Say {{ word }}']
tests:
  - vars: {word: alpha}
    assert: [{type: contains, value: alpha}]
  - id: 1
    vars: {word: beta}
    assert: [{type: contains, value: beta}]
  - id: kept
    vars: {word: gamma}
    assert: [{type: contains, value: zzz}]
"""


@pytest.mark.reference
@harness.needs_agentv
def test_tests_without_a_text_id_are_skipped_as_in_agentv(tmp_path: Path, fake: FakeOpenAI) -> None:
    """AgentV runs only `kept` (its mean score 0, not the 2/3 of three tests); accord too,
    warning about the two others at their lines."""
    suites = []
    for tool in ("agentv", "accord"):
        suites.append(harness.project(tmp_path / tool / "p", "text-checks.suite.yaml"))
        suites[-1].write_text(ID_SUITE)
    expected = harness.run_agentv(suites[0])
    sent = harness.model_requests(fake.requests)
    fake.requests.clear()
    run = accord("eval", suites[1], "--format", "json", "--cache", "off")
    assert run.exit_code == 1, run.stdout + run.stderr
    got = {c["id"]: c["score"] for c in json.loads(run.stdout)["suites"][0]["cases"]}
    assert expected == {"kept": {"score": 0.0, "passed": False, "assertions": [0.0]}}
    assert got == {"kept": 0.0}
    assert harness.model_requests(fake.requests) == sent
    assert f"{suites[1]}:4: this test is skipped" in run.stderr
    assert "it has no 'id'; give it one" in run.stderr
    assert f"{suites[1]}:6: this test is skipped" in run.stderr
    assert "AgentV reads only text ids); quote it (id: '1')" in run.stderr


def project(root: Path, suite: str, files: dict[str, str]) -> Path:
    (root / "evals").mkdir(parents=True)
    (root / "config.yml").write_text("")
    (root / ".agentv").mkdir()
    (root / ".agentv" / "providers.yaml").write_text("- id: echo\n  label: llm\n")
    for name, text in files.items():
        (root / "evals" / name).write_bytes(text.encode())
    path = root / "evals" / "suite.yaml"
    path.write_text(suite)
    return path


CSV_SUITE = "providers: [llm]\ntests: file://cases.csv\n"


def cases(root: Path, csv: str, suite: str = CSV_SUITE, code: int = 0) -> dict[str, Any]:
    """Each case of `accord eval` of a suite over `csv`, by id (the echo provider answers
    each row's input)."""
    path = project(root, suite, {"cases.csv": csv})
    run = accord("eval", path, "--format", "json", "--cache", "off")
    assert run.exit_code in (0, 1) and code in (0, run.exit_code), run.stdout + run.stderr
    return {c["id"]: c for c in json.loads(run.stdout)["suites"][0]["cases"]}


def test_csv_cells_are_split_as_agentv_splits_them(tmp_path: Path) -> None:
    """parseCsvRows: a byte-order mark dropped, CRLF line ends, headers trimmed and a column
    with an empty header dropped, blank lines skipped, a missing cell empty, a quoted cell
    holding commas, quotes and a line end."""
    csv = (
        '\ufeff id , input ,,__expected,__description\r\n'
        'a,"say ""x"", y\r\nz",ignored,"contains:""x"", y"\r\n'
        '\r\n'
        'b,say w,,contains:w\r\n'
    )  # fmt: skip
    found = cases(tmp_path, csv)
    assert list(found) == ["a", "b"]
    assert found["a"]["output"] == 'say "x", y\r\nz' and found["a"]["status"] == "passed"
    # b's missing __description is empty: no criteria
    assert found["b"]["output"] == "say w" and found["b"]["status"] == "passed"


def test_an_unclosed_quote_is_refused_at_its_row(tmp_path: Path) -> None:
    path = project(tmp_path, CSV_SUITE, {"cases.csv": 'id,input\na,ok\nb,"never closed\n'})
    run = accord("validate", path)
    assert run.exit_code == 2, run.stdout + run.stderr
    assert f"{tmp_path / 'evals' / 'cases.csv'}:3" in run.stderr
    assert "never closed" in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize(
    ("cell", "output", "passed"),
    [
        # parseAssertionFromString's forms, each graded against the echoed input
        ("contains:pear", "a pear", True),
        ("not-contains:pear", "a pear", False),
        ("icontains:PEAR", "a pear", True),
        ('"icontains-any:plum, PEAR"', "a pear", True),
        ('"contains-all:a, plum"', "a pear", False),
        ("starts-with:a p", "a pear", True),
        ("ends-with:pear", "a pear", True),
        ("regex:^a\\s", "a pear", True),
        ("equals:a pear", "a pear", True),
        ("a pear", "a pear", True),  # no known prefix: equals the whole cell
        ("Pear: ripe", "Pear: ripe", True),  # not `type:` (a capital letter): equals
        ("latency(60000)", "a pear", True),
    ],
)
def test_an_expected_cell_is_read_as_agentv_reads_it(
    tmp_path: Path, cell: str, output: str, passed: bool
) -> None:
    found = cases(tmp_path, f"id,input,__expected\nr,{output},{cell}\n")
    assert found["r"]["status"] == ("passed" if passed else "failed"), found["r"]


@pytest.mark.parametrize(
    ("cell", "said"),
    [
        ("grade: is polite", "'llm-grader' assertion, which it refuses"),
        ("llm-rubric: is polite", "__description column"),
        ("javascript: output.length > 1", "'inline-assert' with no function"),
        ("fn: x", "{type: javascript, value: ...}"),
        ("similar(0.5):pear", "CSV tests have no assertion 'similar'"),
        ("latency", "a latency cell needs its limit, e.g. latency(1)"),
        ("cost", "cost(1)"),
        ("file://check.txt", "only file://*.py script graders"),
        ("cost(0.5)", "AgentV's cost grader (a budget in USD) is not supported"),
    ],
)
def test_cells_agentv_refuses_or_cannot_run_are_refused(
    tmp_path: Path, cell: str, said: str
) -> None:
    csv = f"id,input,__expected\nok,fine,fine\nr,hi,{cell}\n"
    path = project(tmp_path, CSV_SUITE, {"cases.csv": csv})
    run = accord("validate", path)
    assert run.exit_code == 2, run.stdout + run.stderr
    assert f"{tmp_path / 'evals' / 'cases.csv'}:3" in run.stderr
    assert said in run.stderr and "Traceback" not in run.stderr


@pytest.mark.parametrize(
    ("header", "said"),
    [
        ("__provider_output", "AgentV refuses the column __provider_output"),
        ("__providerOutput", "AgentV refuses the column __providerOutput"),
        ("__config:__expected:weight", "set only 'threshold'"),
        ("__config:__expected0:threshold", "names no __expected column"),
    ],
)
def test_columns_agentv_refuses_are_refused(tmp_path: Path, header: str, said: str) -> None:
    path = project(tmp_path, CSV_SUITE, {"cases.csv": f"id,input,{header}\nr,hi,0.5\n"})
    run = accord("validate", path)
    assert run.exit_code == 2, run.stdout + run.stderr
    assert said in run.stderr and "Traceback" not in run.stderr


def test_metric_config_threshold_and_row_threshold(tmp_path: Path) -> None:
    """__metric is the assertions' metric; __threshold is the row's
    pass bar (execution.threshold); a __config threshold is the assertion's min_score,
    which AgentV reads only for a required one (orchestrator.ts), so it changes nothing."""
    csv = (
        "id,input,__expected1,__expected2,__metric,__threshold,__config:__expected1:threshold\n"
        "half,a pear,contains:pear,contains:plum,fruit,0.5,0.99\n"
        "strict,a pear,contains:pear,contains:plum,fruit,,0.1\n"
        "one,a pear,contains:pear,,solo,,0.1\n"
    )
    found = cases(tmp_path, csv)
    assert found["half"]["status"] == "passed" and found["half"]["score"] == 0.5
    assert found["strict"]["status"] == "failed"
    # AgentV names an assertion by its metric (grader-parser.ts `rawName`), not by the
    # `name` the CSV reader gives it
    names = [e["name"] for e in found["half"]["evaluations"]]
    assert all(n.startswith("fruit") for n in names) and len(names) == 2, names
    assert [e["name"] for e in found["one"]["evaluations"]] == ["solo"]


def test_vars_metadata_and_prompts(tmp_path: Path) -> None:
    """Columns other than AgentV's are vars (`vars.a.b` nested); with `prompts` the input
    is the var `input`; __metadata:KEY[] is a list (an escaped comma kept)."""
    suite = (
        "name: vars\nproviders: [llm]\n"
        "prompts: ['{{ input }}|{{ a.b }}|{{ plain }}']\n"
        "tests: file://cases.csv\n"
    )
    csv = (
        "id,input,vars.a.b,plain,__metadata:tags[],__expected\n"
        'r,hi,deep,flat,"x, y\\,z",contains:hi\n'
    )
    found = cases(tmp_path, csv, suite)
    assert found["r"]["output"] == "hi|deep|flat"
    ((test, line),) = agentv_csv.tests_from_file(tmp_path / "evals" / "cases.csv", "cases.csv")
    assert line == 2 and test["metadata"] == {"tags": ["x", "y,z"]}
    assert test["vars"] == {"a": {"b": "deep"}, "plain": "flat"}


def test_json_and_yaml_test_files_take_agentv_shapes(tmp_path: Path) -> None:
    """case-file-loader.ts: a JSON file is an array of tests or an object whose `tests` is
    one; a YAML file is an array (one mapping is refused); an empty file has no tests."""
    suite = "providers: [llm]\ntests: [file://a.json, file://b.yaml, file://empty.jsonl]\n"
    row = {"id": "j", "input": "hi", "criteria": "ok", "assert": [{"type": "contains",
                                                                    "value": "hi"}]}  # fmt: skip
    path = project(tmp_path, suite, {
        "a.json": json.dumps({"tests": [row]}),
        "b.yaml": "- id: y\n  input: hi\n  assert: [{type: contains, value: hi}]\n",
        "empty.jsonl": "",
    })  # fmt: skip
    run = accord("eval", path, "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert [c["id"] for c in json.loads(run.stdout)["suites"][0]["cases"]] == ["j", "y"]
    (tmp_path / "evals" / "b.yaml").write_text("id: y\ninput: hi\n")
    run = accord("validate", path)
    assert run.exit_code == 2 and "holds a list of tests" in run.stderr, run.stderr


def test_a_file_whose_tests_all_lack_an_id_is_refused(tmp_path: Path) -> None:
    suite = (
        "providers: [llm]\nprompts: ['Say {{ w }}']\ntests:\n"
        "  - vars: {w: a}\n    assert: [{type: contains, value: a}]\n"
        "  - id: ''\n    vars: {w: b}\n    assert: [{type: contains, value: b}]\n"
    )
    path = project(tmp_path, suite, {})
    run = accord("eval", path, "--cache", "off")
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "no test is left to run: AgentV skips all 2" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_jsonl_row_without_id_is_skipped_naming_its_line(tmp_path: Path) -> None:
    suite = "providers: [llm]\ntests: file://rows.jsonl\n"
    check = [{"type": "contains", "value": "h"}]
    rows = [{"id": "a", "input": "hi", "assert": check}, {"input": "ho", "assert": check}]
    path = project(tmp_path, suite, {"rows.jsonl": "".join(json.dumps(r) + "\n" for r in rows)})
    run = accord("eval", path, "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert [c["id"] for c in json.loads(run.stdout)["suites"][0]["cases"]] == ["a"]
    assert f"{tmp_path / 'evals' / 'rows.jsonl'}:2: this test is skipped" in run.stderr


def test_env_in_a_jsonl_row_is_filled_in_when_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """case-file-loader.ts interpolateEnv: a JSON/JSONL/YAML row's `{{ env.NAME }}` is
    filled in when the file is read (the echo provider answers the row's input); the value,
    read from the environment, is masked in what accord writes (docs/security.md)."""
    monkeypatch.setenv("ROW_CITY", "Lisbon")
    suite = "providers: [llm]\ntests: file://rows.jsonl\n"
    row = {"id": "j", "input": "go to {{ env.ROW_CITY }}",
           "assert": [{"type": "contains", "value": "go"}]}  # fmt: skip
    path = project(tmp_path, suite, {"rows.jsonl": json.dumps(row) + "\n"})
    run = accord("eval", path, "--format", "json", "--cache", "off")
    assert run.exit_code == 0, run.stdout + run.stderr
    found = {c["id"]: c["output"] for c in json.loads(run.stdout)["suites"][0]["cases"]}
    assert found == {"j": "go to [redacted]"}

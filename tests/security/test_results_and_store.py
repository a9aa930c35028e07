"""Results files and run stores from others, and what accord writes: each reproduction of a
hostile results file, a tampered `.accord/runs.db`, an output path onto what the project
keeps, and a name holding control characters, through the real commands (subprocesses, and a
real `accord view` on loopback asked with urllib).

Expected: wrong shapes exit 2 with the file and why; bad numbers read as missing with the
reason; no traceback, no "internal error" (exit 70); no escape byte on the terminal; strict
JSON and well-formed XML; the view serving every page of a tampered store; no output
replacing config.yml, the eval file, a compared file or the run store."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
import xml.dom.minidom
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.bounds import PROCESS_SECONDS
from tests.compare.harness import start, stop
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

SUITE = """\
name: s
target: echo
evaluators: [{type: contains, value: ok}]
cases:
  - {id: c1, input: ok 1}
  - {id: c2, input: bad 2}
  - {id: c3, input: ok 3}
"""
ESCAPE = "zz\x1b]52;c;cHduZWQ=\x07\x1b[2J"  # OSC 52 (the clipboard), then clear the screen


class Ran:
    def __init__(self, done: subprocess.CompletedProcess[bytes]) -> None:
        self.code = done.returncode
        self.out_bytes, self.err_bytes = done.stdout, done.stderr
        self.stdout = done.stdout.decode("utf-8", "replace")
        self.stderr = done.stderr.decode("utf-8", "replace")

    def clean(self) -> None:
        """No traceback, no internal error, no escape byte on either stream."""
        both = self.stdout + self.stderr
        assert "Traceback" not in both and "internal error" not in both, both[-2000:]
        assert self.code != 70, both[-2000:]
        assert b"\x1b" not in self.out_bytes and b"\x1b" not in self.err_bytes, both[-2000:]
        assert b"\xc2\x9b" not in self.out_bytes and b"\xc2\x9d" not in self.out_bytes


def accord(root: Path, *args: str | Path, timeout: float = PROCESS_SECONDS) -> Ran:
    done = subprocess.run(
        [sys.executable, "-m", "accord.cli", *map(str, args)],
        cwd=root, capture_output=True, timeout=timeout, check=False,
    )  # fmt: skip
    return Ran(done)


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    """A project with one stored run and its results file `base.json`."""
    (tmp_path / "config.yml").write_text("defaults: {}\n")
    (tmp_path / "s.eval.yml").write_text(SUITE)
    first = accord(tmp_path, "eval", "s.eval.yml", "-q", "--format", "json", "--output",
                   "base.json")  # fmt: skip
    assert first.code == 1, first.stderr  # c2 fails, as written
    return tmp_path


def doc(root: Path) -> dict[str, Any]:
    return dict(json.loads((root / "base.json").read_text()))


def strict(text: str) -> Any:
    """JSON as every parser reads it: NaN and Infinity are not JSON."""

    def refuse(constant: str) -> Any:
        raise AssertionError(f"{constant} in JSON output")

    return json.loads(text, parse_constant=refuse)


# --- F04, F06: hostile results files -------------------------------------------------------


def _hostile(kind: str, data: dict[str, Any]) -> str:
    suite = data["suites"][0]
    cases = suite["cases"]
    if kind == "big integer":
        return json.dumps(data).replace('"score": 1.0', '"score": 1' + "0" * 400, 1)
    if kind == "NaN and infinities":
        text = json.dumps(data).replace('"score": 1.0', '"score": NaN', 1)
        return text.replace('"score": 0.0', '"score": Infinity', 1).replace(
            '"score": 1.0', '"score": -Infinity', 1
        )
    if kind == "1e308 sums":
        return json.dumps(data).replace('"score": 1.0', '"score": 1e308')
    if kind == "repeat text":
        suite["repeat"] = "abc"
    elif kind == "repeat list":
        suite["repeat"] = [1]
    elif kind == "repeat 1e999":
        return json.dumps(data).replace('"repeat": 1,', '"repeat": 1e999,')
    elif kind == "cases not objects":
        suite["cases"] = [1, "x"]
    elif kind == "a deep key":
        cases[0]["input"] = "DEEP"
        return json.dumps(data).replace('"DEEP"', "[" * 100_000 + "]" * 100_000)
    elif kind == "accord test shapes":
        return json.dumps({"tests": [{"name": "t", "error": None, "cases": [1, 2]}]})
    elif kind == "evaluations not a list":
        cases[0]["evaluations"] = "x"
    return json.dumps(data)


REFUSED = {
    "repeat text": "suite 's': repeat 'abc' is not a whole number",
    "repeat list": "suite 's': repeat a list is not a whole number",
    "repeat 1e999": "suite 's': repeat inf is not a whole number",
    "cases not objects": "suite 's': a case is 1, not an object",
    "a deep key": "its JSON nests too deep to read",
    "accord test shapes": "tests[0]: test 't': a case is 1, not an object",
    "evaluations not a list": "suite 's': case 'c1': its evaluations are 'x', not a list",
}
MISSING = {
    "big integer": "score an integer of about 401 digits is not a finite number",
    "NaN and infinities": "score nan is not a finite number",
    "1e308 sums": "score 1e+308 is not a finite number of magnitude at most 1e+12",
}


@pytest.mark.parametrize("kind", [*REFUSED, *MISSING])
def test_a_hostile_results_file_is_refused_or_read_as_missing(proj: Path, kind: str) -> None:
    (proj / "h.json").write_text(_hostile(kind, doc(proj)))
    for args in (("runs", "compare", "h.json", "last"), ("runs", "compare", "last", "h.json")):
        result = accord(proj, *args)
        result.clean()
        if kind in REFUSED:
            assert result.code == 2, result.stderr
            assert f"h.json: {REFUSED[kind]}" in result.stderr
        else:
            assert result.code == 0, result.stderr
            assert "values read as missing:" in result.stdout
            assert MISSING[kind] in result.stdout
    gate = accord(proj, "eval", "s.eval.yml", "-q", "--baseline", "h.json")
    gate.clean()
    assert gate.code == (2 if kind in REFUSED else 1)  # 1: c2 fails, as written


def test_non_finite_scores_never_reach_the_json_and_never_hide_a_regression(proj: Path) -> None:
    """Every score NaN in the baseline: the JSON is strict, the figures it cannot compute are
    null, and the reason is in `problems`; the pass rate (from the verdicts) is still
    tested, so a regression is still found."""
    data = doc(proj)
    for case in data["suites"][0]["cases"]:
        case["status"] = "passed"
    text = json.dumps(data).replace('"score": 1.0', '"score": NaN')
    (proj / "h.json").write_text(text.replace('"score": 0.0', '"score": NaN'))
    result = accord(proj, "runs", "compare", "h.json", "last", "--format", "json")
    result.clean()
    assert result.code == 0
    found = strict(result.stdout)
    assert len(found["problems"]) == 6  # 3 case scores and 3 evaluator scores
    assert all("score nan is not a finite number" in p for p in found["problems"])
    assert found["suites"][0]["mean_score"] is None  # no pair of scores left to compare
    assert found["suites"][0]["pass_rate"]["regressed"] == 1
    for fmt in ("pretty", "junit", "html"):
        shown = accord(proj, "runs", "compare", "h.json", "last", "--format", fmt)
        shown.clean()
        assert "score nan is not a finite number" in shown.stdout


# --- F05: terminal escapes from a results file and the store -------------------------------


def test_ids_and_suite_names_reach_the_terminal_escaped(proj: Path) -> None:
    data = doc(proj)
    data["suites"][0]["cases"].append({"id": ESCAPE, "status": "passed"})
    data["suites"].append({"suite": "x" + ESCAPE, "cases": [{"id": "a", "status": "passed"}]})
    (proj / "h.json").write_text(json.dumps(data))
    shown = ESCAPE.replace("\x1b", "\\x1b").replace("\x07", "\\x07")
    result = accord(proj, "runs", "compare", "h.json", "last")
    result.clean()
    assert f"removed: {shown}" in result.stdout
    assert f"suites only in the baseline: x{shown}" in result.stdout
    gated = accord(proj, "eval", "s.eval.yml", "-q", "--baseline", "h.json",
                   "--fail-on-regression", "any")  # fmt: skip
    gated.clean()
    assert f"removed: {shown}" in gated.stderr
    exact = accord(proj, "runs", "compare", "h.json", "last", "--format", "json")
    exact.clean()  # escaped as JSON escapes it: \u001b, the value kept exact
    assert strict(exact.stdout)["suites"][0]["removed"] == [ESCAPE]


def test_stored_case_ids_reach_the_terminal_escaped(proj: Path) -> None:
    hostile = 'cases:\n  - {id: "c\\e[31m\\e]0;title\\a", input: ok}\n'
    (proj / "s.eval.yml").write_text(SUITE.split("cases:")[0] + hostile)
    assert accord(proj, "eval", "s.eval.yml", "-q").code == 0
    (proj / "s.eval.yml").write_text(SUITE.split("cases:")[0] + hostile.replace("ok", "bad"))
    assert accord(proj, "eval", "s.eval.yml", "-q").code == 1
    result = accord(proj, "runs", "compare", "last~1", "last")
    result.clean()
    assert "c\\x1b[31m\\x1b]0;title\\x07: passed -> failed" in result.stdout


# --- F22: JUnit of any name ----------------------------------------------------------------


def test_junit_is_well_formed_whatever_a_name_holds(proj: Path) -> None:
    (proj / "j.eval.yml").write_text(
        'name: "ju\\x01suite\\x0b"\ntarget: echo\nevaluators: [{type: contains}]\n'
        'cases: [{id: "c\\x01\\e[31m\\uFFFE", input: hi, expected: nope}]\n'
    )
    run = accord(proj, "eval", "j.eval.yml", "--format", "junit", "--output", "r.xml")
    assert run.code == 1, run.stderr  # the case fails, as written
    report = xml.dom.minidom.parse(str(proj / "r.xml"))
    suite = report.getElementsByTagName("testsuite")[0]
    assert suite.getAttribute("name") == "ju\\x01suite\\x0b"
    case = report.getElementsByTagName("testcase")[0]
    assert case.getAttribute("name") == "c\\x01\\x1b[31m\\ufffe"

    (proj / "j.eval.yml").write_text((proj / "j.eval.yml").read_text().replace("nope", "hi"))
    assert accord(proj, "eval", "j.eval.yml", "-q").code == 0
    compared = accord(proj, "runs", "compare", "last~1", "last", "--format", "junit")
    compared.clean()
    parsed = xml.dom.minidom.parseString(compared.out_bytes)
    names = [c.getAttribute("name") for c in parsed.getElementsByTagName("testcase")]
    assert "c\\x01\\x1b[31m\\ufffe" in names


def test_accord_test_junit_is_well_formed_whatever_a_case_name_holds(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    """The same through `accord test`: a `.test.yml` case name with control characters and
    a character XML cannot carry; the example project's agent, on a scripted model."""

    proj = tmp_path / "p"
    example = Path(__file__).resolve().parents[2] / "workflows" / "ci_checks"
    shutil.copytree(example, proj, ignore=shutil.ignore_patterns(".accord", "output"))
    database = "databases:\n  - {name: shop, type: duckdb, dataset: data}\n"
    (proj / "config.yml").write_text(
        fake_model_config(fake_llm) + "defaults:\n  model: fake\n" + database
    )
    fake_llm.responder = lambda _body: Reply(text="The total revenue was 4,000.\nPASS")
    (proj / "x.test.yml").write_text(
        'target: analyst.agent.yml\nsettings: {runs: 1}\ncases:\n  - name: "t\\x01\\e[31m\\uFFFE"\n'
        "    prompt: What was the total revenue of all orders?\n    expected: 4,000\n"
    )
    run = accord(proj, "test", "x.test.yml", "--format", "junit", "--output", "r.xml")
    assert "Traceback" not in run.stderr and run.code != 70, run.stderr
    report = xml.dom.minidom.parse(str(proj / "r.xml"))
    names = [c.getAttribute("name") for c in report.getElementsByTagName("testcase")]
    assert "t\\x01\\x1b[31m\\ufffe" in names, names


# --- F08: runs compare --output ------------------------------------------------------------


def snapshot(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("output", "message"),
    [
        (".accord/runs.db", "is inside .accord/, where accord keeps its run store"),
        ("config.yml", "would replace config.yml, a file the project reads"),
        ("s.eval.yml", "would replace s.eval.yml, a file the project reads"),
        ("base.json", "--output base.json: is a results file being compared"),
        ("newdir/", "newdir/ names a folder; give a file in it, e.g. newdir/comparison.txt"),
        (".", "--output .: is a folder; give a file in it, e.g. comparison.txt"),
    ],
)
def test_runs_compare_output_never_replaces_what_the_project_keeps(
    proj: Path, output: str, message: str
) -> None:
    before = snapshot(proj)
    result = accord(proj, "runs", "compare", "base.json", "last", "--output", output)
    result.clean()
    assert result.code == 2 and message in result.stderr
    assert snapshot(proj) == before and not (proj / "newdir").exists()
    listed = accord(proj, "runs", "list", "--format", "json")
    assert listed.code == 0 and len(json.loads(listed.stdout)) == 1


def test_runs_compare_writes_where_it_may(proj: Path, tmp_path_factory: Any) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "cmp.json"  # the user's own choice
    for output in ("out/cmp.json", str(elsewhere)):
        result = accord(proj, "runs", "compare", "base.json", "last", "--format", "json",
                        "--output", output)  # fmt: skip
        assert result.code == 0, result.stderr
        written = Path(output) if Path(output).is_absolute() else proj / output
        assert strict(written.read_text())["suites"][0]["paired_cases"] == 3


def test_eval_output_never_replaces_its_baseline(proj: Path) -> None:
    before = (proj / "base.json").read_bytes()
    result = accord(proj, "eval", "s.eval.yml", "--baseline", "base.json", "--output",
                    "base.json")  # fmt: skip
    result.clean()
    assert result.code == 2
    assert "--output base.json: is the --baseline results file; give another path" in (
        result.stderr
    )
    assert (proj / "base.json").read_bytes() == before


# --- F14: a promptfoo config's outputPath --------------------------------------------------


PROMPTFOO = """\
prompts: ['hi']
providers: [echo]
outputPath: {path}
tests: [{{assert: [{{type: contains, value: hi}}]}}]
"""


@pytest.mark.parametrize("where", ["absolute", "../x.json", "[ok.json, ../x.json]"])
def test_a_promptfoo_output_path_outside_the_project_is_refused_at_its_line(
    tmp_path: Path, where: str
) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "config.yml").write_text("defaults: {}\n")
    victim = tmp_path / "victim.json"
    victim.write_text('{"auths": {}}\n')
    path = str(victim) if where == "absolute" else where
    (root / "promptfooconfig.yaml").write_text(PROMPTFOO.format(path=path))
    for command in (("eval", "-c", "promptfooconfig.yaml"), ("validate", "promptfooconfig.yaml")):
        result = accord(root, *command)
        result.clean()
        assert result.code == 2, result.stderr
        assert "promptfooconfig.yaml:3:" in result.stderr
        assert "a file may write only inside its project" in result.stderr
        assert "accord eval -c promptfooconfig.yaml -o PATH" in result.stderr
    assert victim.read_text() == '{"auths": {}}\n'
    assert not (tmp_path / "x.json").exists() and not (root / "ok.json").exists()
    (root / "promptfooconfig.yaml").write_text(PROMPTFOO.format(path="out/ok.json"))
    inside = accord(root, "eval", "-c", "promptfooconfig.yaml", "-q")
    assert inside.code == 0 and (root / "out" / "ok.json").is_file()
    chosen = accord(root, "eval", "-c", "promptfooconfig.yaml", "-q", "-o", victim)
    assert chosen.code == 0, chosen.stderr  # on the command line: the user's own choice
    assert "results" in json.loads(victim.read_text())


# --- F02, F03, F25: a tampered store under accord view and --baseline ----------------------


@pytest.fixture
def two_runs(proj: Path) -> Path:
    (proj / "s.eval.yml").write_text(SUITE.replace("ok 3", "bad 3"))
    assert accord(proj, "eval", "s.eval.yml", "-q").code == 1
    return proj


def tamper(root: Path, statement: str, *args: Any) -> None:
    with sqlite3.connect(root / ".accord" / "runs.db") as conn:
        conn.execute(statement, args)


def fetch(url: str, **headers: str) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return int(response.status), response.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8", "replace")


@pytest.fixture
def view(two_runs: Path) -> Iterator[tuple[Path, Any]]:
    """A function serving the project's (tampered) store: every page is fetched, and the
    server's own output is checked once it stops."""
    procs = []

    def serve() -> str:
        proc, url = start(two_runs)
        procs.append(proc)
        return url

    yield two_runs, serve
    for proc in procs:
        out, err = stop(proc)
        assert "Traceback" not in out + err and "Exception" not in out + err, err[-2000:]


STARTED = {"text": "yesterday", "1e300": 1e300, "a blob": b"\x00\x01", "NaN": "NaN"}


@pytest.mark.parametrize("value", list(STARTED))
def test_a_tampered_start_time_is_shown_marked_on_every_page(
    view: tuple[Path, Any], value: str
) -> None:
    root, serve = view
    tamper(root, "UPDATE runs SET started = ? WHERE rowid = 1", STARTED[value])
    url = serve()
    status, index = fetch(url)
    assert status == 200 and index.count('<tr class="run') == 2
    assert '<tr class="run bad"><td><span class="bad" title="not a time in the store">unknown' in (
        index
    )
    for page in ("run?id=last", "run?id=last~1", "compare?a=last~1&b=last", "suite?name=s"):
        status, text = fetch(url + page)
        assert status == 200, text
    gate = accord(root, "eval", "s.eval.yml", "-q", "--baseline", "last", "--min-pass-rate", "0")
    gate.clean()
    assert gate.code == 0, gate.stderr


def test_a_summary_nested_100000_deep_breaks_no_page(view: tuple[Path, Any]) -> None:
    root, serve = view
    tamper(root, "UPDATE runs SET summary = ?", "[" * 100_000 + "]" * 100_000)
    url = serve()
    for page in ("", "run?id=last", "compare?a=last~1&b=last", "suite?name=s"):
        status, text = fetch(url + page)
        assert status == 200, text


def test_a_tampered_score_is_shown_as_missing(view: tuple[Path, Any]) -> None:
    root, serve = view
    nan = json.dumps({"$": "float", "v": "nan"})  # the codec's form of a NaN
    tamper(root, "UPDATE results SET output = replace(output, '\"score\": 1.0', ?) "
           "WHERE key LIKE '%.verdict'", f'"score": {nan}')  # fmt: skip
    url = serve()
    status, text = fetch(url + "run?id=last")
    assert status == 200 and '<div id="problems"' in text
    assert "score nan is not a finite number" in text
    status, text = fetch(url + "compare?a=last~1&b=last")
    assert status == 200 and "score nan is not a finite number" in text
    cli = accord(root, "runs", "compare", "last~1", "last", "--format", "json")
    cli.clean()
    assert any("score nan" in p for p in strict(cli.stdout)["problems"])


def test_a_store_of_a_newer_format_is_refused_by_every_reader(two_runs: Path) -> None:
    tamper(two_runs, "PRAGMA user_version = 99")
    readers = (
        ("runs", "compare", "last~1", "last"),
        ("runs", "list"),
        ("view", "--port", "0"),
        ("eval", "s.eval.yml", "--baseline", "last"),
    )
    for args in readers:
        result = accord(two_runs, *args, timeout=120)
        result.clean()
        assert result.code == 2, (args, result.stderr)
        assert "was written by a newer accord (format 99" in result.stderr


# --- F07: the paired test, and who may ask the view for it ---------------------------------


def _flipped(path: Path, n: int, first: str) -> None:
    """n cases, passed and failed by turns starting with `first`."""
    other = {"passed": "failed", "failed": "passed"}
    statuses = [first if i % 2 == 0 else other[first] for i in range(n)]
    cases = [{"id": f"c{i}", "status": status, "score": float(status == "passed")}
             for i, status in enumerate(statuses)]  # fmt: skip
    path.write_text(json.dumps({"suites": [{"suite": "s", "cases": cases}]}))


@pytest.mark.slow
def test_a_hundred_thousand_flipped_cases_compare_in_seconds(tmp_path: Path) -> None:
    """Every case's verdict opposite, half each way: the exact McNemar test over 100,000
    discordant pairs, 50,000 the smaller side (cubic before: 20,000 took 36 s, 100,000
    hours)."""
    _flipped(tmp_path / "a.json", 100_000, "passed")
    _flipped(tmp_path / "b.json", 100_000, "failed")
    started = time.monotonic()
    result = accord(tmp_path, "runs", "compare", "a.json", "b.json", "--format", "json",
                    timeout=120)  # fmt: skip
    assert time.monotonic() - started < 60  # a process start on a busy machine included
    result.clean()
    rate = strict(result.stdout)["suites"][0]["pass_rate"]
    assert (rate["regressed"], rate["improved"], rate["p_value"]) == (50_000, 50_000, 1.0)
    assert rate["paired_cases"] == 100_000


def test_the_view_answers_only_its_own_pages(view: tuple[Path, Any]) -> None:
    """`/compare` is a GET: a page of another site could make the view compute it (an
    `<img>` carries the right Host). Browsers say where a request comes from."""
    _root, serve = view
    url = serve()
    port = url.rstrip("/").rsplit(":", 1)[1]
    compare = url + "compare?a=last~1&b=last"
    assert fetch(compare)[0] == 200  # typed in, or from a tool: no browser headers
    assert fetch(compare, **{"Sec-Fetch-Site": "same-origin"})[0] == 200
    assert fetch(compare, Origin=f"http://127.0.0.1:{port}")[0] == 200
    for headers in (
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Host": "evil.example"},
    ):
        status, text = fetch(compare, **headers)
        assert status == 403, (headers, text)
        assert "Run comparison" not in text

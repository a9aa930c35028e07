"""`accord view`'s pages in headless Chromium over the demo project of
benchmarks/view_pages.py (an evaluation run twice with an LLM judge, a workflow with parallel
queries and a consistency run): what each page shows, the links between them, and a
screenshot of each saved in the test's tmp folder (the same code writes docs/images/view/).
Each Chromium and the server are subprocesses the test waits for and ends."""

from __future__ import annotations

import re
import sqlite3
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks import view_pages
from tests.compare.harness import start, stop
from tests.compare.test_view import dump
from tests.fakes import FakeOpenAI


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    root = tmp_path_factory.mktemp("view") / "demo"
    fake = FakeOpenAI()
    try:
        view_pages.build(root, fake)
    finally:
        fake.close()
    proc, url = start(root)
    try:
        yield root, url
    finally:
        stop(proc)


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return str(response.read().decode())


@pytest.mark.slow
def test_each_page_in_chromium(demo: tuple[Path, str], tmp_path: Path) -> None:
    _root, url = demo
    pages = view_pages.pages(url)
    profile = tmp_path / "profile"
    index = dump(pages["runs"], profile)
    # every kind of run, the suite's chart, figures in one unit, the compare form on two runs
    assert index.count('class="run"') == 3 and ">workflow<" in index and ">eval<" in index
    assert 'class="spark"' in index and "pass rate (of judged samples)" in index
    chosen = re.findall(r'<option value="([^"]+)" selected', index)
    assert len(chosen) == 2 and chosen[0] != chosen[1]
    suite_run = dump(pages["suite-run"], profile)
    assert '<p id="shown">12 of 12 case result(s)</p>' in suite_run
    assert "<th>contains</th><th>same_city</th>" in suite_run  # a column per evaluator
    assert "8 passed, 4 failed" in suite_run and "pass rate 66.7% of judged samples" in suite_run
    failed = dump(pages["suite-run-failed"], profile)
    assert '<p id="shown">4 of 12 case result(s)</p>' in failed
    assert dump(f"{pages['suite-run']}&tag=europe&q=oslo", profile).count('class="case') == 1
    case = dump(pages["case"], profile)
    assert "What is the capital of Spain?" in case and "Barcelona" in case
    assert "These are different cities." in case  # the judge's reason, and its call:
    assert 'The expected answer is "Madrid"' in case and "select_answer" in case
    assert "&gt;= 1" in case and "input 8" in case  # threshold and tokens
    compared = dump(pages["compare"], profile)
    assert "4 regressed" in compared and 'id="changed"' in compared
    assert "<del>Madrid</del><ins>Barcelona</ins>" in compared
    assert "same_city: These are different cities." in compared
    # regressions listed in natural id order
    changed = re.findall(r'<h3 class="change bad" id="case-([^"]+)"', compared)
    assert changed == ["australia", "chile", "norway", "spain"]
    workflow = dump(pages["workflow-run"], profile)
    assert '<svg id="dag"' in workflow and '<svg id="timeline"' in workflow
    assert re.search(r"at most [2-9] at once", workflow)  # the three queries overlapped
    assert "(chosen)" in workflow and "The counts differ." in workflow
    assert "<th>region</th>" in workflow  # a query's output as a table
    # navigation: the index links each run, the run page its cases and the run before
    run_link = re.search(r'href="(/run\?id=[^"]+)"', index)
    assert run_link is not None and run_link.group(1) in pages["workflow-run"]
    case_link = re.search(r'href="(/case\?[^"]+)"', failed)
    assert case_link is not None
    assert "repeat 1" in dump(url.rstrip("/") + case_link.group(1).replace("&amp;", "&"), profile)
    previous = re.search(r'id="compare-previous" href="([^"]+)"', suite_run)
    assert previous is not None
    assert "changed cases (4)" in dump(
        url.rstrip("/") + previous.group(1).replace("&amp;", "&"), profile
    )
    for page in (index, suite_run, case, compared, workflow):
        assert "<script" not in page and 'src="http' not in page
    shots = view_pages.screenshots(url, tmp_path / "shots", profile)
    assert [p.name for p in shots] == [f"{n}.png" for n in pages] and all(
        p.read_bytes().startswith(b"\x89PNG") for p in shots
    )


def test_pages_and_paging_over_http(demo: tuple[Path, str]) -> None:
    _root, url = demo
    pages = view_pages.pages(url)
    assert "page 1 of 1" in _get(pages["suite-run"])
    assert "page 1 of 1" in _get(pages["suite-run"] + "&page=99")  # clamped
    assert "page 1 of 1" in _get(pages["suite-run"] + "&page=x")
    for method in ("POST", "PUT", "DELETE"):
        request = urllib.request.Request(url, data=b"", method=method)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 405


def test_a_hostile_store_shows_error_pages(tmp_path: Path) -> None:
    """Rows a tampered store may hold: verdicts that are not JSON, JSON of the wrong shape,
    deep nesting, a blob, a consistency result of the wrong types, a chart path outside the
    run's folder. Every page answers (200 or 404) with text, never a traceback or a 500."""
    fake = FakeOpenAI()
    try:
        view_pages.build(tmp_path / "demo", fake)
    finally:
        fake.close()
    store = tmp_path / "demo" / ".accord" / "runs.db"
    conn = sqlite3.connect(store)
    run_id = conn.execute(
        "SELECT run_id FROM runs WHERE workflow = 'capitals' ORDER BY started DESC"
    ).fetchone()[0]
    flow = conn.execute("SELECT run_id FROM runs WHERE workflow = 'users_report'").fetchone()[0]
    bad = [
        ("x1.verdict", "{not json"),
        ("x2.verdict", '{"$": "eval_case", "v": [1, 2]}'),
        ("x3.verdict", "[" * 5000 + "]" * 5000),
        ("x4.verdict", b"\x00\xff"),
        ("x5.verdict", '{"$": "eval_case", "v": {"id": 7, "status": "won", "score": 1e999,'
                       ' "tags": "x", "findings": 3}}'),
    ]  # fmt: skip
    for key, output in bad:
        conn.execute(
            "INSERT INTO results (run_id, key, type, status, output, written) VALUES"
            " (?, ?, 'eval_verdict', 'succeeded', ?, 1)",
            (run_id, key, output),
        )
    conn.execute(
        "UPDATE results SET output_json = ? WHERE run_id = ? AND type = 'consistency_select'",
        ('{"runs": 5, "pairs": [{"runs": 3, "verdict": [1]}], "selected": {}}', flow),
    )
    conn.execute(
        "UPDATE results SET output_json = '\"../../../etc/passwd.png\"', written = 'x'"
        " WHERE run_id = ? AND key = 'report'",
        (flow,),
    )
    conn.execute("UPDATE runs SET summary = '{\"graph\": {\"a\": [\"a\"], \"b\": 3}}'"
                 " WHERE run_id = ?", (flow,))  # fmt: skip
    conn.commit()
    conn.close()
    proc, url = start(tmp_path / "demo")
    try:
        for path in (
            "", f"run?id={run_id}", f"run?id={run_id}&status=error", f"run?id={run_id}&q=x",
            f"run?id={run_id}&evaluator=contains", f"case?run={run_id}&case=7",
            f"case?run={run_id}&case=x1", f"run?id={flow}", f"compare?a={flow}&b={run_id}",
        ):  # fmt: skip
            try:
                text = _get(url + path)
            except urllib.error.HTTPError as exc:
                assert exc.code == 404, (path, exc.code)
                text = exc.read().decode()
            assert "Traceback" not in text and "internal error" not in text, path
        assert "<img" not in _get(f"{url}run?id={flow}")
    finally:
        _out, err = stop(proc)
    assert "Traceback" not in err and "internal error" not in err

"""Macro expansion has a budget: each of these ran for minutes or took gigabytes, and now fails
its scenario with a message naming the macro and the budget while the others still run.

Each run goes through `accord eval` in-process, on a thread the test waits for with a bound
(`bounded`), so a regression fails the test instead of hanging it; the time budget is lowered
to two seconds so that the slow cases end quickly.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from accord.tasks.suites.frontends.scenarios import macros
from tests.evals.conftest import Run
from tests.frontends.scenarios.conftest import cases, run

BUDGET = 2.0  # seconds of expansion, lowered from EXPANSION_SECONDS for these tests
BOUND = 60.0  # seconds a whole `accord eval` may take here before the test fails


@pytest.fixture(autouse=True)
def _short_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(macros, "EXPANSION_SECONDS", BUDGET)


def bounded(root: Path) -> tuple[Run, float]:
    """`accord eval` of the project's scenarios, failing the test past `BOUND` seconds."""
    done: list[Run] = []
    failed: list[BaseException] = []

    def work() -> None:
        try:
            done.append(run(root))
        except BaseException as exc:  # shown by the test, not lost on the thread
            failed.append(exc)

    started = time.monotonic()
    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(BOUND)
    if thread.is_alive():
        pytest.fail(f"accord eval was still expanding after {BOUND:g} s")
    if failed:
        raise failed[0]
    return done[0], time.monotonic() - started


def scenarios(*entries: tuple[str, str]) -> str:
    lines = [
        f"  - name: {name}\n    input_message: '{text}'\n    expected_output: ok\n"
        for name, text in entries
    ]
    return (
        "agent_class: scen_agents.Echo\nscenarios:\n  - {expected_output: ok, name: Fine, input_message: hi}\n"
        + ("".join(lines))
    )


def errors_of(result: Run) -> dict[str, str]:
    found = cases(result)
    assert found["Fine"]["status"] == "passed", found["Fine"]
    assert result.exit_code == 1
    return {name: c["error"] for name, c in found.items() if name != "Fine"}


@pytest.mark.slow
def test_loops_and_repeats_stop_at_the_budget(scenario_project: Callable[..., Path]) -> None:
    # the nested LOOP expanded for minutes; REPEAT built 100 MB that reached the judge twice
    root = scenario_project(
        scenarios(
            ("Nested loop", '{{ LOOP 10000 "[[ LOOP 10000 x ]]" }}'),
            ("Repeat", "{{ REPEAT {{ REPEAT x 10000 }} 10000 }}"),
            ("Many repeats", " ".join(["{{ REPEAT xxxxxxxxxx 10000 }}"] * 300)),
        )
    )
    result, seconds = bounded(root)
    errors = errors_of(result)
    assert "{{ LOOP 10000" in errors["Nested loop"]
    assert (
        f"took longer than {BUDGET:g} s (the expansion budget)" in errors["Nested loop"]
        or "at most 20,000,000 (the expansion budget)" in errors["Nested loop"]
    ), errors["Nested loop"]
    assert "macro {{ REPEAT" in errors["Repeat"]
    assert "REPEAT would make 100,000,000 characters" in errors["Repeat"]
    assert "at most 20,000,000 (the expansion budget)" in errors["Repeat"]
    assert "the text with its output would make" in errors["Many repeats"]
    assert seconds < BOUND


class _Trickle(BaseHTTPRequestHandler):
    """Answers 200, then one byte of body every 0.2 s for ever (until the test ends)."""

    stop = threading.Event()

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "1000000")
        self.end_headers()
        try:
            while not self.stop.wait(0.2):
                self.wfile.write(b"x")
                self.wfile.flush()
        except OSError:
            pass  # the client went away: what the budget is for

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def trickle(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    _Trickle.stop.clear()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Trickle)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/slow"
    finally:
        _Trickle.stop.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)


@pytest.mark.slow
def test_a_slow_web_page_and_an_endless_query_stop_at_the_deadline(
    scenario_project: Callable[..., Path], trickle: str
) -> None:
    # the 30 s timeout was per read: a byte every 5 s kept HTTP_GET loading at 100 s; an
    # endless recursive CTE never ended
    endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n"
    root = scenario_project(
        "allow_hosts: [127.0.0.1]\n"
        + scenarios(("Slow page", f"{{{{ HTTP_GET {trickle} }}}}"))
        + f'  - name: Endless query\n    input_message: "{{{{ SQL_QUERY app.db \\"{endless}\\" }}}}"\n    expected_output: ok\n'
    )
    sqlite3.connect(root / "app.db").close()
    result, seconds = bounded(root)
    errors = errors_of(result)
    assert f"macro {{{{ HTTP_GET {trickle} }}}}" in errors["Slow page"]
    assert (
        f"GET {trickle} was still running when the expansion budget ({BUDGET:g} s"
        in (errors["Slow page"])
    )
    assert "macro {{ SQL_QUERY app.db" in errors["Endless query"]
    assert (
        f"the query was still running when the expansion budget ({BUDGET:g} s"
        in (errors["Endless query"])
    )
    assert seconds < 4 * BUDGET + 20  # two budgets, plus the run itself on a busy machine


def _zip(path: Path, members: dict[str, int]) -> None:
    """A zip whose members hold that many zero bytes (about 400 kB compressed per 100 MB)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for name, size in members.items():
            with archive.open(name, "w", force_zip64=True) as member:
                chunk = b"\0" * 1_000_000
                for _ in range(size // len(chunk)):
                    member.write(chunk)


def test_zip_bombs_are_refused_before_reading(scenario_project: Callable[..., Path]) -> None:
    # a 1 MB docx holding a 1 GB document.xml took 2.1 GB to OPEN (here 100 MB, quicker to make)
    root = scenario_project(
        scenarios(
            ("Docx bomb", "{{ OPEN bomb.docx }}"),
            ("Pptx bomb", "{{ OPEN deck.pptx }}"),
        )
    )
    _zip(root / "bomb.docx", {"[Content_Types].xml": 0, "word/document.xml": 100_000_000})
    _zip(root / "deck.pptx", {f"ppt/media/video{i}.mp4": 90_000_000 for i in range(3)})
    result, _ = bounded(root)
    errors = errors_of(result)
    assert "macro {{ OPEN bomb.docx }}" in errors["Docx bomb"]
    assert "holds word/document.xml of 100,000,000 bytes uncompressed" in errors["Docx bomb"]
    assert "at most 50,000,000 (the size budget for documents)" in errors["Docx bomb"]
    assert "holds 270,000,000 bytes uncompressed" in errors["Pptx bomb"]
    assert "at most 250,000,000 (the size budget for documents)" in errors["Pptx bomb"]


@pytest.mark.slow
def test_an_xlsx_is_read_by_its_cells_not_its_declared_range(
    scenario_project: Callable[..., Path],
) -> None:
    # one cell at XFD1048576 declares 17 billion cells: reading them would make ~17 GB of text
    import openpyxl

    root = scenario_project(scenarios(("Far cell", "{{ OPEN far.xlsx }}")))
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Data"
    sheet["A1"] = "near"
    sheet["B2"] = 2
    sheet["XFD1048576"] = "far"
    book.save(root / "far.xlsx")
    result, _ = bounded(root)
    found = cases(result)
    assert found["Far cell"]["status"] == "passed", found["Far cell"]
    text = found["Far cell"]["input"]
    assert text.startswith("Sheet: Data\nnear,Unnamed: 1,Unnamed: 2,") and text.endswith(",far\n")
    assert len(text) < 2_200_000  # a million rows, most of them empty, and one wide one

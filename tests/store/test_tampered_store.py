"""A tampered `.accord/` folder, column by column: runs.db and cache.db are files a shared
repository or a colleague's archive can carry, so every value read back is checked.

Each column of each table is set to each kind of payload (a pickle that would create a
file, codec tags naming modules or overflowing, malformed, deep and overflowing JSON, rich
markup, terminal escape sequences, invalid UTF-8, bytes, NULL, numbers and text of the wrong
kind), and the commands that read them run: `runs list`, `runs show`, `runs baselines`,
`run --resume last`, `eval --resume last` and a cached model call (the exhaustive
matrix reads what those read through the store's API, which takes milliseconds; the
commands themselves run once for each payload kind). None may run code, end in
a traceback, print a terminal escape sequence, or print JSON that is not JSON.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from accord.cli import main
from accord.engine.cache import CallCache
from accord.engine.errors import ConfigError
from accord.engine.store import ResumeIndex, find_run_of, list_runs, runs_db
from accord.engine.usage import Completion
from accord.tasks.evaluators.baselines import save_baseline
from tests.bounds import PROCESS_SECONDS
from tests.conftest import fake_model_config
from tests.fakes import FakeOpenAI, Reply

WORKFLOW = """\
tasks:
  - name: first
    type: formatter
    template: "one"
  - name: second
    type: formatter
    template: "{{ first }} two"
  - name: ask
    type: agent
    model: fake
    prompt: "{{ second }}?"
"""
EVAL_FILE = """\
name: checks
target: echo
evaluators:
  - {type: contains}
cases:
  - {id: capital, input: Paris is the capital., expected: Paris}
  - {id: other, input: Lyon, expected: Lyon}
"""
ANSWER = "forty-two"
# what a terminal would act on: ESC, BEL (ends an OSC), and the C1 forms of CSI and OSC
TERMINAL_CONTROLS = ("\x1b", "\x07", "\x9b", "\x9d")


class _Touch:
    """A pickle that creates `marker` when loaded."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


def _payloads(marker: Path) -> dict[str, Any]:
    """Each payload kind, as the value SQLite stores; ("utf8", bytes) is TEXT that is not
    valid UTF-8."""
    return {
        "pickle": pickle.dumps(_Touch(marker)),
        "codec_module": json.dumps({"$": "os.system", "v": f"touch {marker}"}),
        "codec_overflow": '{"$": "timedelta", "v": "1e300"}',
        "json_malformed": '{"seconds": ',
        "json_deep": "[" * 5_000 + "]" * 5_000,  # past the recursion limit and MAX_DEPTH
        "json_overflow": '{"seconds": 1e999, "tasks": {"succeeded": 1e999}}',
        "json_list": "[1, 2]",
        "json_int": "5",
        "markup": "[/] x [bold red]",
        "escapes": "\x1b]0;owned\x07\x1b[2J\x9b1m\x9d8;;http://x\x07",
        "invalid_utf8": ("utf8", b"\xff\xfe[/]\x1b]0;x\x07"),
        "bytes": b"\x00\x01[/]\x1b",
        "null": None,
        "int": 7,
        "huge_int": 2**63 - 1,
        "inf": float("inf"),
        "text_soon": "soon",
    }


PAYLOAD_KINDS = list(_payloads(Path("m")))
COLUMNS = {
    "runs": ["run_id", "workflow", "path", "started", "finished", "status", "variables",
             "error", "summary"],
    "results": ["run_id", "key", "type", "status", "error", "seconds", "attempts",
                "input_hash", "output_json", "output", "written"],
    "legacy_runs": ["run_id"],
    "baselines": ["suite", "case_id", "evaluator", "output", "run_id", "updated"],
    "calls": ["key", "value", "created"],
}  # fmt: skip


@dataclass(frozen=True)
class Pristine:
    """A project with two runs, a baseline and a cached model call, before tampering."""

    root: Path
    server: FakeOpenAI
    outputs: dict[str, Any]


def _invoke(*args: str | Path) -> Result:
    # color=True: click leaves escape sequences in, so any that reach the output are seen
    return CliRunner().invoke(main, [str(a) for a in args], color=True)


def _without_not_null(db: Path) -> None:
    """Drop the NOT NULL constraints, as an attacker editing the file can: NULL is then a
    value the store may hold."""
    with sqlite3.connect(str(db)) as conn:
        version = conn.execute("PRAGMA schema_version").fetchone()[0]
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute("UPDATE sqlite_master SET sql = replace(sql, 'NOT NULL', '')")
        conn.execute(f"PRAGMA schema_version = {version + 1}")
    conn.close()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pristine]:
    server = FakeOpenAI()
    server.responder = lambda body: Reply(text=ANSWER)
    try:
        root = tmp_path_factory.mktemp("pristine")
        (root / "config.yml").write_text(fake_model_config(server))
        (root / "w.workflow.yml").write_text(WORKFLOW)
        (root / "checks.eval.yml").write_text(EVAL_FILE)
        ran = _invoke("run", root / "w.workflow.yml", "--format", "json")
        assert ran.exit_code == 0, ran.output
        evaluated = _invoke("eval", root / "checks.eval.yml")
        assert evaluated.exit_code == 0, evaluated.output
        run_id = json.loads(ran.stdout)["run_id"]
        save_baseline(runs_db(root), "checks", "capital", "battle", "Paris", run_id)
        with sqlite3.connect(str(runs_db(root))) as conn:
            conn.execute("INSERT INTO legacy_runs VALUES ('an-old-run')")
        conn.close()
        for db in (runs_db(root), root / ".accord" / "cache.db"):
            _without_not_null(db)
        yield Pristine(root, server, json.loads(ran.stdout)["outputs"])
    finally:
        server.close()


def _copy(pristine: Pristine, tmp_path: Path) -> Path:
    project = tmp_path / "p"
    shutil.copytree(pristine.root, project)
    # runs record their file's absolute path: point them at the copy, for --resume last
    with sqlite3.connect(str(runs_db(project))) as conn:
        conn.execute(
            "UPDATE runs SET path = replace(path, ?, ?)", (str(pristine.root), str(project))
        )
    conn.close()
    return project


def _tamper(db: Path, table: str, column: str, value: Any, where: str = "") -> None:
    """Set `column` of every row (`where` narrows them) to `value`; of one row only where a
    key must stay unique."""
    setting = "CAST(? AS TEXT)" if isinstance(value, tuple) else "?"  # TEXT, not UTF-8
    argument = value[1] if isinstance(value, tuple) else value
    conn = sqlite3.connect(str(db))
    try:
        try:
            conn.execute(f"UPDATE {table} SET {column} = {setting}{where}", (argument,))
        except sqlite3.IntegrityError:
            one = f" WHERE rowid = (SELECT min(rowid) FROM {table})"
            conn.execute(f"UPDATE {table} SET {column} = {setting}{one}", (argument,))
        conn.commit()
    finally:
        conn.close()


def _commands(project: Path, table: str) -> list[list[str | Path]]:
    """The commands that read `table` and cost milliseconds (no run)."""
    at = ["--project", project]
    if table == "baselines":
        return [["runs", "baselines", *at], ["runs", "baselines", *at, "--format", "json"]]
    return [
        ["runs", "list", *at],
        ["runs", "list", *at, "--format", "json"],
        ["runs", "show", "last", *at],
        ["runs", "show", "last", *at, "--format", "json"],
    ]


def _no_number_constant(name: str) -> Any:
    raise ValueError(f"{name} in JSON output")


def _check(result: Result, args: list[str | Path], marker: Path) -> None:
    said = f"{args}: exit {result.exit_code}\n{result.output[-2000:]}"
    assert result.exit_code in (0, 1, 2), said
    assert result.exception is None or isinstance(result.exception, SystemExit), said
    assert "Traceback" not in result.output and "internal error" not in result.output, said
    for control in TERMINAL_CONTROLS:
        assert control not in result.output, said
    assert not marker.exists(), said
    if result.exit_code == 0 and "json" in args:
        json.loads(result.stdout, parse_constant=_no_number_constant)


def _resume_reads(project: Path) -> None:
    """What `run --resume` and `eval --resume` read, through the store's own API: finding
    the run, and looking up every stored task. Only a ConfigError (a message, exit 2) may
    come out; a lookup is a hit or a miss."""
    db = runs_db(project)
    for run in ("last", *(r.run_id for r in list_runs(db, 1000))):
        try:
            found = find_run_of(db, run, "w", project / "w.workflow.yml")
            index = ResumeIndex(db, found.run_id)
        except ConfigError:
            continue
        try:
            for key, digest in list(index.hashes.items()):
                index.lookup(key, digest)
        finally:
            index.close()


def _cache_reads(project: Path) -> None:
    """What a model call reads from the cache: every entry is an answer or a miss."""
    cache = CallCache(project / ".accord" / "cache.db")
    try:
        cache.check()
        conn = sqlite3.connect(str(cache.path))
        conn.text_factory = bytes  # keys as the cache looks them up: valid UTF-8 text only
        rows = conn.execute("SELECT key FROM calls WHERE typeof(key) = 'text'").fetchall()
        conn.close()
        keys = []
        for (key,) in rows:
            with contextlib.suppress(UnicodeDecodeError):
                keys.append(key.decode("utf-8"))
        for key in keys:
            hit = cache.get(key)
            if hit is not None:
                with contextlib.suppress(ValueError):  # the documented miss
                    Completion.from_cache(hit)
    finally:
        cache.close()


CASES = [
    pytest.param(table, column, kind, id=f"{table}.{column}-{kind}")
    for table, columns in COLUMNS.items()
    for column in columns
    for kind in PAYLOAD_KINDS
]


@pytest.mark.parametrize(("table", "column", "kind"), CASES)
def test_a_tampered_column_runs_nothing_and_crashes_nothing(
    pristine: Pristine, tmp_path: Path, table: str, column: str, kind: str
) -> None:
    project = _copy(pristine, tmp_path)
    marker = tmp_path / "executed"
    db = project / ".accord" / ("cache.db" if table == "calls" else "runs.db")
    _tamper(db, table, column, _payloads(marker)[kind])
    if table == "calls":
        _cache_reads(project)
    else:
        for args in _commands(project, table):
            _check(_invoke(*args), args, marker)
        _resume_reads(project)
    assert not marker.exists()


@pytest.mark.parametrize("kind", PAYLOAD_KINDS)
def test_resume_cached_calls_and_eval_after_tampering(
    pristine: Pristine, tmp_path: Path, kind: str
) -> None:
    """Through the CLI: one task's stored output, the eval's stored results and the cached
    answer tampered at once. The run resumes the others and runs that task again; the eval
    resumes; the model call is a miss, asked again. Same outputs as before."""
    project = _copy(pristine, tmp_path)
    marker = tmp_path / "executed"
    payload = _payloads(marker)[kind]
    db = runs_db(project)
    _tamper(db, "results", "output", payload, " WHERE key = 'first'")
    _tamper(db, "results", "output", payload, " WHERE key LIKE 'capital%'")
    _tamper(project / ".accord" / "cache.db", "calls", "value", payload)
    calls = len(pristine.server.requests)
    args: list[str | Path] = ["run", project / "w.workflow.yml", "--resume", "last"]
    resumed = _invoke(*args, "--format", "json")
    _check(resumed, [*args, "json"], marker)
    assert resumed.exit_code == 0, resumed.output
    document = json.loads(resumed.stdout)
    assert document["outputs"] == pristine.outputs
    assert document["summary"]["stats"]["reused"] >= 2  # second and ask: one bad row only
    evaluated = _invoke("eval", project / "checks.eval.yml", "--resume", "last")
    _check(evaluated, ["eval"], marker)
    assert evaluated.exit_code == 0, evaluated.output
    fresh = _invoke("run", project / "w.workflow.yml", "--format", "json")
    _check(fresh, ["run", "json"], marker)
    assert json.loads(fresh.stdout)["outputs"] == pristine.outputs
    assert len(pristine.server.requests) <= calls + 1  # the tampered answer, asked again


def _run_count(project: Path) -> int:
    with sqlite3.connect(str(runs_db(project))) as conn:
        count = int(conn.execute("SELECT count(*) FROM runs").fetchone()[0])
    conn.close()
    return count


def _user_version(db: Path, value: int | None = None) -> int:
    with sqlite3.connect(str(db)) as conn:
        if value is not None:
            conn.execute(f"PRAGMA user_version = {value}")
        found = int(conn.execute("PRAGMA user_version").fetchone()[0])
    conn.close()
    return found


@pytest.mark.parametrize("store", ["runs.db", "cache.db"])
def test_a_store_from_a_newer_accord_is_refused_and_left_alone(
    pristine: Pristine, tmp_path: Path, store: str
) -> None:
    project = _copy(pristine, tmp_path)
    db = project / ".accord" / store
    _user_version(db, 99)
    runs = _run_count(project)
    before = db.read_bytes()
    ran = _invoke("run", project / "w.workflow.yml")
    assert ran.exit_code == 2, ran.output
    assert "was written by a newer accord (format 99" in ran.stderr
    assert "upgrade accord, or move" in ran.stderr
    assert _user_version(db) == 99 and _run_count(project) == runs
    if store == "runs.db":
        listed = _invoke("runs", "list", "--project", project)
        assert listed.exit_code == 2 and "newer accord" in listed.stderr
        assert db.read_bytes() == before


def test_a_damaged_cache_is_refused_before_anything_runs(
    pristine: Pristine, tmp_path: Path
) -> None:
    project = _copy(pristine, tmp_path)
    (project / ".accord" / "cache.db").write_bytes(b"not a database" * 1000)
    runs = _run_count(project)
    ran = _invoke("run", project / "w.workflow.yml")
    assert ran.exit_code == 2, ran.output
    assert "the call cache" in ran.stderr and "is damaged" in ran.stderr
    assert _run_count(project) == runs  # refused before the run began: nothing recorded
    off = _invoke("run", project / "w.workflow.yml", "--cache", "off", "--format", "json")
    assert off.exit_code == 0, off.output  # the cache is the only thing in the way


def test_stored_escape_sequences_and_markup_print_as_text(
    pristine: Pristine, tmp_path: Path
) -> None:
    project = _copy(pristine, tmp_path)
    db = runs_db(project)
    osc = "\x1b]0;owned\x07"
    _tamper(db, "runs", "workflow", f"{osc}[bold red]w")
    run_id = list_runs(db)[-1].run_id  # the workflow's run, older than the eval's
    _tamper(db, "runs", "run_id", "[/] x", f" WHERE run_id = '{run_id}'")
    _tamper(db, "results", "run_id", "[/] x", f" WHERE run_id = '{run_id}'")
    _tamper(db, "results", "error", "\x9b2J\x1b[1A\x1b[2Kgone", " WHERE key = 'first'")
    listed = _invoke("runs", "list", "--project", project)
    assert listed.exit_code == 0, listed.output
    assert "[/] x" in listed.stdout and "\\x1b]0;owned\\x07[bold red]w" in listed.stdout
    shown = _invoke("runs", "show", "[/] x", "--project", project)
    assert shown.exit_code == 0, shown.output
    assert "\\x9b2J\\x1b[1A\\x1b[2Kgone" in shown.stdout
    assert "\\x1b]0;owned\\x07[bold red]w" in shown.stdout
    for control in TERMINAL_CONTROLS:
        assert control not in listed.output + shown.output
    missing = _invoke("runs", "show", f"{osc}nope", "--project", project)
    assert missing.exit_code == 2 and "\\x1b]0;owned\\x07nope" in missing.stderr


def test_a_model_answer_s_escape_sequences_print_as_text(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    # OSC 52 asks the terminal to put text on the clipboard
    fake_llm.responder = lambda body: Reply(text="\x1b]52;c;cGF3bmVk\x07fine \x9b31mred")
    (tmp_path / "config.yml").write_text(fake_model_config(fake_llm))
    path = tmp_path / "a.workflow.yml"
    path.write_text("tasks:\n  - name: ask\n    type: agent\n    model: fake\n    prompt: q\n")
    ran = _invoke("run", path)
    assert ran.exit_code == 0, ran.output
    assert "\\x1b]52;c;cGF3bmVk\\x07fine \\x9b31mred" in ran.stdout
    for control in TERMINAL_CONTROLS:
        assert control not in ran.output
    data = _invoke("run", path, "--format", "json")  # data formats keep the answer as it is
    assert json.loads(data.stdout)["outputs"]["ask"] == "\x1b]52;c;cGF3bmVk\x07fine \x9b31mred"


def test_a_warning_about_a_tampered_value_prints_it_as_text(
    pristine: Pristine, tmp_path: Path
) -> None:
    # the warning names the stored type; its own process, as the log goes to the real stderr
    project = _copy(pristine, tmp_path)
    tag = json.dumps({"$": "\x1b]0;owned\x07", "v": 1})
    _tamper(runs_db(project), "results", "output", tag, " WHERE key = 'first'")
    command = [sys.executable, "-m", "accord.cli", "run", str(project / "w.workflow.yml"),
               "--resume", "last", "--quiet"]  # fmt: skip
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=PROCESS_SECONDS, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "stored_output_unreadable" in done.stderr
    assert "x1b]0;owned" in done.stderr  # shown, as \x1b (quoted by the log line)
    for control in TERMINAL_CONTROLS:
        assert control not in done.stdout + done.stderr


@pytest.mark.parametrize(
    "field", ["input_tokens", "output_tokens", "latency", "cost"], ids=lambda f: f"{f}=1e999"
)
def test_a_cached_answer_with_an_overflowing_count_is_a_miss(
    pristine: Pristine, tmp_path: Path, field: str
) -> None:
    project = _copy(pristine, tmp_path)
    entry = {"text": "planted", "tool_calls": [], "input_tokens": 1, "output_tokens": 1,
             "cost": 0.0, "latency": 0.1}  # fmt: skip
    value = json.dumps(entry).replace(f'"{field}": {json.dumps(entry[field])}', f'"{field}": 1e999')
    _tamper(project / ".accord" / "cache.db", "calls", "value", value)
    calls = len(pristine.server.requests)
    ran = _invoke("run", project / "w.workflow.yml", "--format", "json")
    assert ran.exit_code == 0, ran.output
    assert json.loads(ran.stdout)["outputs"]["ask"] == ANSWER  # asked again, not "planted"
    assert len(pristine.server.requests) == calls + 1

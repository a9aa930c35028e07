"""The run store: every run and every task result in SQLite (WAL) under `.accord/runs.db`.

Results are written as tasks finish, by a writer thread that commits whatever has queued
since its last commit: the scheduler never waits for the disk, and a run killed with SIGKILL
keeps every result committed before the kill; Ctrl-C or SIGTERM records the run as
`interrupted` after its finished results. `--resume` reads the succeeded results of an
earlier run back and reuses those whose inputs hash the same. A result's `written` is when
its task finished (wall clock) and `seconds` how long it ran: `accord view` draws a run's
timeline from them.

Outputs are stored as data (`engine.codec`: JSON read back into accord's own types by name),
never pickled: a tampered store can hold wrong values, not code. Stores written by earlier
versions, which pickled outputs, are migrated when opened: the pickles are deleted unread and
their runs can no longer be resumed (saying so). A store that fails SQLite's quick check is
refused with what to do, and so is one a newer accord wrote (its `user_version` above
`FORMAT`): it is neither migrated nor appended to. Every value read back is checked
(`engine.stored`); a row that cannot be used is skipped with a warning, never a crash.
"""

from __future__ import annotations

import json
import queue
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import codec, sqlite, stored
from .errors import ConfigError, OutOfMemory
from .masking import holds_secret, mask, mask_data
from .paths import resolved
from .registry import Registry
from .render import jsonable
from .results import Status, TaskResult

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    workflow TEXT NOT NULL,
    path TEXT NOT NULL,
    started REAL NOT NULL,
    finished REAL,
    status TEXT NOT NULL,
    variables TEXT NOT NULL,
    error TEXT,
    summary TEXT
);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT NOT NULL,
    key TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    seconds REAL,
    attempts INTEGER,
    input_hash TEXT,
    output_json TEXT,
    output BLOB,
    written REAL NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE TABLE IF NOT EXISTS legacy_runs (run_id TEXT PRIMARY KEY);
"""
# Tables a task keeps beside the runs (an automatic battle's baselines), by name: their
# `CREATE TABLE IF NOT EXISTS` statements. The module that reads and writes a table registers
# it when imported, so the table exists whenever that module opens the store.
TABLES: Registry[str] = Registry("run store table", plugins=False)
FORMAT = 2  # PRAGMA user_version: 2 = outputs as codec JSON text (1 and 0 pickled them)
_STOP = object()
INTERRUPTED = "interrupted"  # a run's status after Ctrl-C or SIGTERM; `--resume` reuses its tasks
STORED_BYTES = 32 * 1024 * 1024  # a larger output is not kept: its task runs again on --resume
SHOWN_BYTES = 1024 * 1024  # what `runs show` keeps of an output for display
BULK_BYTES = 64 * 1024 * 1024  # a resume reads a run's outputs at once up to this size
OUT_OF_MEMORY_ERROR = "out of memory"
BATCH_SECONDS = 0.02  # a finished task reaches the disk within about this long


# containers (no slot of their own) whose succeeded result is stored all the same: a
# consistency run's choice (its samples' scores, the pairwise verdicts, the one chosen)
KEPT = frozenset({"consistency_select"})


def _wall(finished: float | None) -> float | None:
    """A task's end (a `perf_counter` reading) as a wall-clock time: the `written` column,
    so a task's row says when it ended and, with `seconds`, when it started."""
    if finished is None:
        return None
    return time.time() - (time.perf_counter() - finished)


def register_table(name: str, statement: str) -> None:
    """A table of a task's own in the run store: `statement` creates it if it is missing
    (every connection runs it), so a store written before the task existed gains it."""
    TABLES.add(name, statement)


def runs_db(root: Path) -> Path:
    """A project's run store: `.accord/runs.db` under its root."""
    return root / ".accord" / "runs.db"


def runs_db_of(folder: Path) -> Path:
    """The run store of the project a file or folder (`--project`) belongs to."""
    from .errors import ConfigError
    from .project import find_root

    if not folder.exists():
        raise ConfigError(
            f"project folder '{folder}' does not exist; give --project a file or folder "
            "of the project (the default is the current folder)"
        )
    return runs_db(find_root(folder)[0])


_CHECKED: set[Path] = set()  # stores that passed SQLite's quick check in this process


def connect(path: Path) -> sqlite3.Connection:
    """A connection to the store, created with its schema on first use, checked, and
    migrated from an earlier format."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise ConfigError(f"cannot open the run store {path}: {exc}") from None
    conn.text_factory = sqlite.text_or_bytes
    try:
        sqlite.set_up(conn, lambda c: _set_up(c, path))
    except sqlite.NewerFormat as exc:
        conn.close()
        raise newer_format(path, exc.found) from None
    except sqlite3.Error as exc:
        conn.close()
        if sqlite.is_locked(exc):
            raise ConfigError(
                f"the run store {path} is locked by another process: try again when it is done"
            ) from None
        raise ConfigError(
            f"the run store {path} is damaged ({exc}): move it away (or delete it) and accord "
            "starts a new one; the runs recorded in it are lost"
        ) from None
    return conn


def newer_format(path: Path, found: int) -> ConfigError:
    """The refusal of a store a newer accord wrote (every reader gives this one)."""
    return ConfigError(
        f"the run store {path} was written by a newer accord (format {found}; this one "
        f"reads up to {FORMAT}): upgrade accord, or move the store away and this one starts "
        "a new one"
    )


def _set_up(conn: sqlite3.Connection, path: Path) -> None:
    if path not in _CHECKED:  # once a process: it reads the whole file (~1.3 ms a MB)
        check = conn.execute("PRAGMA quick_check").fetchone()
        if check is None or check[0] != "ok":
            raise sqlite3.DatabaseError(str(check[0] if check else "no answer"))
        _CHECKED.add(path)
    # before anything is written: a newer accord's store is neither migrated nor appended to
    version = sqlite.format_of(conn, FORMAT)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(SCHEMA)
    for _name, statement in TABLES.items():
        conn.executescript(statement)
    if version < FORMAT:
        _migrate(conn)
    conn.commit()


def _migrate(conn: sqlite3.Connection) -> None:
    """From pickled outputs to codec text: the pickles are deleted without being read (reading
    one can run code), and their runs are remembered as not resumable."""
    conn.execute(
        "INSERT OR IGNORE INTO legacy_runs SELECT DISTINCT run_id FROM results"
        " WHERE typeof(output) = 'blob'"
    )
    conn.execute("UPDATE results SET output = NULL WHERE typeof(output) = 'blob'")
    conn.execute(f"PRAGMA user_version = {FORMAT}")


def _output_json(output: Any) -> str | None:
    """The output as `accord runs show` displays it, up to `SHOWN_BYTES`."""
    try:
        text = json.dumps(mask_data(jsonable(output)), ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return None
    if len(text) > SHOWN_BYTES:
        return json.dumps(f"(an output of {len(text):,} characters, not kept for display)")
    return text


def _output_data(output: Any) -> str | None:
    """The output as codec text, or None when it cannot be stored (the task then runs again
    on `--resume`)."""
    try:
        text = codec.dumps(output)
    except codec.CodecError:
        return None
    if holds_secret(text):  # never stored: a masked copy would be a wrong output to reuse
        return None
    return text if len(text) <= STORED_BYTES else None


class RunStore:
    """Writes one run's rows from a background thread; a scheduler observer."""

    def __init__(self, path: Path, run_id: str) -> None:
        self.path = path
        self.run_id = run_id
        self.input_hashes: dict[str, str] = {}
        # tasks whose output `--resume` took from an earlier run: stored with 0 attempts
        self.reused: set[str] = set()
        self.failures: list[tuple[str, str]] = []  # (task, error): an interrupted run shows them
        self.file: Path | None = None
        self.counts: dict[str, int] = {s.value: 0 for s in Status}
        self._started = time.perf_counter()
        self._finished = False
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        # results queued and results written: a run in parts waits while the writer is
        # far behind (`backlog`), so results (and their outputs) waiting for the disk stay
        # few instead of piling up while the scheduler runs ahead
        self._queued = 0
        self._written = 0
        self._conn = connect(path)
        self._error: str | None = None
        self._thread = threading.Thread(target=self._write_loop, name="accord-store", daemon=True)
        self._thread.start()

    def begin(self, workflow: str, file: Path, variables: dict[str, Any]) -> None:
        # the file's absolute path: `--resume last` finds this workflow's runs by it, from
        # whichever folder and with whichever spelling of the path it is run next time
        self.file = Path(file).resolve()
        self._started = time.perf_counter()
        self._queue.put(
            ("run", workflow, str(self.file), json.dumps(mask_data(jsonable(variables))))
        )

    def node_started(self, node: Any) -> None:
        return None

    def node_finished(self, node: Any, result: TaskResult) -> None:
        self.counts[result.status.value] = self.counts.get(result.status.value, 0) + 1
        if result.status is Status.FAILED:
            self.failures.append((result.key, mask(result.error or "")))
        # taken, not read: what a run keeps per task must go once the task is on its way
        input_hash = self.input_hashes.pop(result.key, None)
        reused = result.key in self.reused
        self.reused.discard(result.key)
        if node.uses_slot or result.status is not Status.SUCCEEDED or result.type in KEPT:
            self._queued += 1
            self._queue.put(("result", result, input_hash, reused, _wall(result.finished)))

    @property
    def backlog(self) -> int:
        """How many results are queued and not yet written (0 once the writer stopped)."""
        if not self._thread.is_alive():
            return 0
        return self._queued - self._written

    def finish(self, status: str, error: str | None, summary: dict[str, Any]) -> None:
        """Record the run's end and wait until everything queued is on disk."""
        if self._finished:
            return
        self._finished = True
        error = None if error is None else mask(error)
        self._queue.put(("end", status, error, json.dumps(mask_data(summary), default=str)))
        self._queue.put(_STOP)
        self._thread.join(timeout=60)
        self._conn.close()
        if self._error == OUT_OF_MEMORY_ERROR:
            raise OutOfMemory()
        if self._error:
            raise ConfigError(f"the run store {self.path} could not be written: {self._error}")

    @property
    def finished(self) -> bool:
        return self._finished

    def interrupt(self, reason: str) -> None:
        """Record the run as `interrupted`, after every result that finished before it."""
        summary = {"seconds": round(time.perf_counter() - self._started, 6), "tasks": self.counts}
        self.finish(INTERRUPTED, reason, summary)

    def _write_loop(self) -> None:
        while True:
            batch = [self._queue.get()]
            # let results accumulate briefly: one transaction per batch, and far fewer
            # wake-ups competing with the scheduler's thread for the interpreter; the run's
            # end is followed by nothing to wait for (`finish` waits for this thread)
            if batch[0] is not _STOP and batch[0][0] != "end":
                time.sleep(BATCH_SECONDS)
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = batch[-1] is _STOP
            try:
                self._write_batch([item for item in batch if item is not _STOP])
            except sqlite3.Error as exc:
                self._error = str(exc)
            except MemoryError:
                self._error = OUT_OF_MEMORY_ERROR  # this batch is lost; the thread goes on
            # written or lost, they are no longer waiting (one writer: no lock needed)
            self._written += sum(1 for item in batch if item is not _STOP and item[0] == "result")
            del batch
            if stop:
                return

    def _write_batch(self, batch: list[tuple[Any, ...]]) -> None:
        now = time.time()
        rows = []
        with self._conn:
            for item in batch:
                kind = item[0]
                if kind == "result":
                    rows.append(self._result_row(item[1], item[2], item[3], item[4] or now))
                    continue
                if rows:
                    self._insert_results(rows)
                    rows = []
                if kind == "run":
                    _, workflow, file, variables = item
                    self._conn.execute(
                        "INSERT OR REPLACE INTO runs (run_id, workflow, path, started, status,"
                        " variables) VALUES (?, ?, ?, ?, 'running', ?)",
                        (self.run_id, workflow, file, now, variables),
                    )
                elif kind == "end":
                    _, status, error, summary = item
                    self._conn.execute(
                        "UPDATE runs SET finished = ?, status = ?, error = ?, summary = ?"
                        " WHERE run_id = ?",
                        (now, status, error, summary, self.run_id),
                    )
            if rows:
                self._insert_results(rows)

    def _insert_results(self, rows: list[tuple[Any, ...]]) -> None:
        self._conn.executemany(
            "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
        )

    def _result_row(
        self, result: TaskResult, input_hash: str | None, reused: bool, finished: float
    ) -> tuple[Any, ...]:
        succeeded = result.status is Status.SUCCEEDED
        return (
            self.run_id,
            result.key,
            result.type,
            result.status.value,
            None if result.error is None else mask(result.error),
            result.duration,
            0 if reused else result.attempts,
            input_hash,
            _output_json(result.output) if succeeded else None,
            _output_data(result.output) if succeeded and input_hash else None,
            finished,
        )


def interrupt_runs(stores: list[RunStore], reason: str) -> list[RunStore]:
    """Record the runs of `stores` that have not finished as interrupted.

    For Ctrl-C and SIGTERM: the scheduler has settled what it could (cancelled tasks are
    recorded as `cancelled`), and the finished tasks stay for `--resume`.
    """
    interrupted = []
    for store in stores:
        if store.finished:
            continue
        try:
            store.interrupt(reason)
        except (ConfigError, OutOfMemory):
            continue
        if store.file is not None:  # its run row was queued, so it is on disk now
            interrupted.append(store)
    return interrupted


@dataclass(frozen=True)
class StoredRun:
    """A run as the store has it, every field checked: a value of the wrong type or shape
    (a tampered store) reads as None, or the row is skipped when its id is not text."""

    run_id: str
    workflow: str
    path: str
    started: float | None
    finished: float | None
    status: str
    error: str | None
    summary: dict[str, Any] | None


def run_from_row(row: tuple[Any, ...]) -> StoredRun | None:
    """A `runs` row (run_id, workflow, path, started, finished, status, error, summary) as a
    run, or None when its id is not text."""
    run_id = stored.text(row[0])
    if not run_id:
        return None  # without its id a run can be neither shown by id nor resumed
    return StoredRun(
        run_id,
        stored.shown(row[1]),
        stored.shown(row[2]),
        stored.timestamp(row[3]),
        stored.timestamp(row[4]),
        stored.shown(row[5]),
        None if row[6] is None else stored.shown(row[6]),
        stored.summary(row[7]),
    )


def _skipped(path: Path, what: str, count: int) -> None:
    if count:
        from . import log

        log.get().warning("stored_rows_skipped", store=str(path), rows=what, count=count)


def list_runs(path: Path, limit: int = 50) -> list[StoredRun]:
    """The newest runs first; a row whose id is not text is skipped (and logged)."""
    if not path.is_file():
        return []
    conn = connect(path)
    try:
        rows = conn.execute(
            "SELECT run_id, workflow, path, started, finished, status, error, summary FROM runs"
            # a start time that is not a number (a tampered row) sorts last, never as `last`
            " ORDER BY typeof(started) IN ('integer', 'real') DESC, started DESC LIMIT ?",
            (limit,),
        ).fetchall()
    finally:
        conn.close()
    runs = [run for run in map(run_from_row, rows) if run is not None]
    _skipped(path, "runs with an id that is not text", len(rows) - len(runs))
    return runs


def find_run(path: Path, run: str) -> StoredRun:
    """A run by id (or unique prefix), or `last`; a `ConfigError` says what exists."""
    runs = list_runs(path, limit=100000)
    if not runs:
        raise ConfigError(f"no runs recorded yet in {path}")
    if run == "last":
        return runs[0]
    matches = [r for r in runs if r.run_id == run] or [r for r in runs if r.run_id.startswith(run)]
    if len(matches) != 1:
        recent = ", ".join(r.run_id for r in runs[:5])
        what = "matches several runs" if matches else "is not a recorded run"
        raise ConfigError(f"'{run}' {what} (recent runs: {recent}; or use 'last')")
    return matches[0]


def is_run_of(run: StoredRun, file: Path, root: Path) -> bool:
    """Whether a stored run ran `file` (an absolute, resolved path)."""
    if not run.path or "\x00" in run.path:  # not a path (a tampered store)
        return False
    candidate = Path(run.path)
    if candidate.is_absolute():
        return resolved(candidate) == file
    # runs recorded before paths were stored absolute: relative to the folder accord ran
    # in, most often the project root
    return file in {resolved(root / candidate), resolved(Path.cwd() / candidate)}


def _listed(runs: list[StoredRun]) -> str:
    return ", ".join(f"{r.run_id} ({r.status})" for r in runs[:5]) or "none"


def find_run_of(path: Path, run: str, workflow: str, file: Path) -> StoredRun:
    """The run `--resume RUN` names for the workflow `workflow` in `file`.

    `last` is the newest run of this workflow in this file, not of the project; an id (or
    unique prefix) of a run of another workflow or file is refused. `accord run` and
    `accord test` of one file record different workflows (`NAME` and `NAME tests`), so one
    never resumes the other's run. A `ConfigError` says what exists.
    """
    runs = list_runs(path, limit=100000)
    target = resolved(file)
    mine = [r for r in runs if r.workflow == workflow and is_run_of(r, target, path.parent.parent)]
    this = f"workflow '{workflow}' ({file})"
    recent = f"recent runs of this workflow: {_listed(mine)}"
    instead = (
        f"resume one of them or 'last' ({recent})"
        if mine
        else "no run of it is recorded yet: leave --resume out to start fresh"
    )
    if run == "last":
        if not mine:
            raise ConfigError(
                f"--resume last: no earlier run of {this} is recorded ({recent}); "
                "run it without --resume to start fresh"
            )
        return mine[0]
    matches = (
        [r for r in runs if r.run_id == run]
        or [r for r in mine if r.run_id.startswith(run)]
        or [r for r in runs if r.run_id.startswith(run)]
    )
    if len(matches) != 1:
        what = "matches several runs" if matches else "is not a recorded run"
        raise ConfigError(
            f"--resume '{run}' {what} ({recent}); give a run id from `accord runs list`, "
            "'last', or leave --resume out to start fresh"
        )
    found = matches[0]
    if found not in mine:
        raise ConfigError(
            f"--resume: run {found.run_id} is a run of workflow '{found.workflow}' "
            f"({found.path}), not of {this}; {instead}"
        )
    return found


def run_results(path: Path, run_id: str) -> list[dict[str, Any]]:
    """Every stored task result of a run, in the order they were written; a row whose task
    key is not text is skipped (and logged), a value of the wrong type reads as None."""
    conn = connect(path)
    try:
        rows = conn.execute(
            "SELECT key, type, status, error, seconds, attempts, output_json FROM results"
            " WHERE run_id = ? ORDER BY written, rowid",
            (run_id,),
        ).fetchall()
    finally:
        conn.close()
    results = []
    for key, kind, status, error, seconds, attempts, shown in rows:
        if not isinstance(key, str):
            continue
        attempts = attempts if isinstance(attempts, int) and attempts >= 0 else None
        ok, output = stored.json_value(shown)
        results.append(
            {
                "task": key,
                "type": stored.shown(kind),
                "status": stored.shown(status),
                "error": None if error is None else stored.shown(error),
                "seconds": stored.number(seconds),
                "attempts": attempts,
                "reused": status == Status.SUCCEEDED.value and attempts == 0,
                "output": output if ok or shown is None else "(the stored output is unreadable)",
            }
        )
    _skipped(
        path, f"results of run {run_id} with a task key that is not text", len(rows) - len(results)
    )
    return results


class ResumeIndex:
    """The succeeded results of an earlier run, by task key and input hash."""

    def __init__(self, path: Path, run_id: str) -> None:
        self.path = path
        self.run_id = run_id
        conn = connect(path)
        try:
            legacy = conn.execute(
                "SELECT 1 FROM legacy_runs WHERE run_id = ?", (run_id,)
            ).fetchone()
            where = "run_id = ? AND status = 'succeeded' AND typeof(output) = 'text'"
            size = conn.execute(
                f"SELECT COALESCE(SUM(length(output)), 0) FROM results WHERE {where}", (run_id,)
            ).fetchone()[0]
            # one query for every stored output when they are small enough to hold at once
            # (a query per task is most of a resume's cost); else each is read when looked up
            column = "output" if size <= BULK_BYTES else "NULL"
            rows = conn.execute(
                f"SELECT key, input_hash, {column} FROM results WHERE {where}", (run_id,)
            ).fetchall()
        finally:
            conn.close()
        if legacy is not None:
            raise ConfigError(
                f"run {run_id} was recorded by an earlier accord, which stored task outputs "
                "with pickle; accord no longer reads those (a tampered store could run code) "
                "and removed them, so this run cannot be resumed: run without --resume"
            )
        # a row with a key or hash that is not text cannot match a task: that task runs again
        rows = [r for r in rows if isinstance(r[0], str) and isinstance(r[1], str)]
        self.hashes: dict[str, str] = {k: h for k, h, _ in rows}
        self._texts: dict[str, str] = {k: t for k, _, t in rows if isinstance(t, str)}
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self.reused = 0

    def lookup(
        self, key: str, input_hash: str, accepts: Callable[[Any], bool] = lambda _: True
    ) -> tuple[bool, Any]:
        """(True, output) when the earlier run finished this task with the same inputs and
        its stored output reads back as one `accepts` takes."""
        if self.hashes.get(key) != input_hash:
            return False, None
        text = self._texts.pop(key, None)
        if text is None:
            with self._lock:
                if self._conn is None:
                    self._conn = connect(self.path)
                row = self._conn.execute(
                    "SELECT output FROM results WHERE run_id = ? AND key = ?", (self.run_id, key)
                ).fetchone()
            if row is None or not isinstance(row[0], str):
                return False, None
            text = row[0]
        try:
            output = codec.loads(text)
        except codec.CodecError as exc:
            from . import log

            log.get().warning("stored_output_unreadable", task=key, error=exc.message)
            return False, None
        if not accepts(output):
            from . import log

            what = f"a stored {type(output).__name__} is not an output of this task"
            log.get().warning("stored_output_unreadable", task=key, error=what)
            return False, None
        self.reused += 1
        return True, output

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

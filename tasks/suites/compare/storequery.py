"""What `accord view` asks the run store, read-only, in SQL where a page needs one figure of
many rows: a run's counts, one page of its cases (filters applied in SQLite, the shown rows
alone decoded), its tasks with their times.

A stored case result is codec JSON (`{"$": "eval_case", "v": {...}}`); SQLite's JSON
functions read its fields without Python decoding the rest, so a run of 10,000 cases lists
its first page in milliseconds. Every field read here is checked as every other stored value
is (engine.stored, intake.py): a row whose JSON is not valid is left out of the figures and
named as a problem, a status outside the four reads as `error`, an id that is not text as its
key. Filters are bound parameters, never SQL text.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....engine import codec, stored
from .intake import SCORE_LIMIT, STATUSES, describe
from .storeview import RunRow, case_base, read_only

_DIGITS = re.compile(r"(\d+)")
FINDINGS_INDEXED = 8  # evaluators per case the index reads (the page decodes them all)
_PATHS = ", ".join(
    ["'$.v.id'", "'$.v.repeat'", "'$.v.status'", "'$.v.score'", "'$.v.tags'"]
    + [f"'$.v.findings[{i}].v.{f}'" for i in range(FINDINGS_INDEXED)
       for f in ("name", "passed", "error")]
)  # fmt: skip
# one parse of each verdict (json_extract of several paths), only of text json_valid passed
# (CASE: a tampered row reads as NULL, never as an SQL error)
_INDEX = (
    "SELECT key, CASE WHEN typeof(output) = 'text' AND json_valid(output) THEN"
    f" json_extract(output, {_PATHS}) END FROM results WHERE run_id = ?"
    " AND type = 'eval_verdict'"
)
_VALID = (
    "SELECT key FROM results WHERE run_id = ? AND type = 'eval_verdict' AND CASE WHEN"
    " typeof(output) = 'text' AND json_valid(output) THEN "
)
# the text a search looks in: id, input, expected, answer, error, each finding's reason
_SEARCHED = (
    "search(json_extract(output, '$.v.id', '$.v.input', '$.v.expected', '$.v.output',"
    " '$.v.error'), (SELECT group_concat(coalesce(json_extract(f.value, '$.v.name', "
    "'$.v.reason', '$.v.error'), ''), ' ') FROM json_each(output, '$.v.findings') f), ?)"
)
_FAILING = (
    "EXISTS (SELECT 1 FROM json_each(output, '$.v.findings') f WHERE"
    " json_extract(f.value, '$.v.name') = ? AND (json_extract(f.value, '$.v.passed') = 0"
    " OR json_extract(f.value, '$.v.error') IS NOT NULL))"
)


def natural(text: str) -> tuple[Any, ...]:
    """A sort key in natural order: `c2` before `c10`."""
    return tuple(int(p) if p.isdigit() else p.lower() for p in _DIGITS.split(text))


def _search(*values: Any) -> int:
    """SQLite's `search(field..., query)`: whether the query (case-folded) is in a field."""
    *fields, query = values
    wanted = str(query).casefold()
    return int(any(isinstance(v, str | int | float) and wanted in str(v).casefold()
                   for v in fields))  # fmt: skip


def _connect(conn: sqlite3.Connection) -> sqlite3.Connection:
    conn.create_function("search", -1, _search, deterministic=True)
    return conn


@dataclass(frozen=True)
class Listed:
    """One sample in a run's list: its verdict's key, case id, repeat, status, score, tags,
    and its first evaluators' names with whether each failed (or errored)."""

    key: str
    id: str
    repeat: int
    status: str
    score: float | None
    tags: tuple[str, ...] = ()
    evaluators: tuple[tuple[str, bool], ...] = ()
    error: str | None = None  # a failed target's error (no verdict)
    problem: str | None = None  # a stored value read as missing, and why


@dataclass
class Index:
    """An evaluation run's samples (sorted: natural id order, then repeat), what could not
    be read, and its kind."""

    kind: str  # "eval", "test" or "workflow"
    samples: list[Listed] = field(default_factory=list)
    unreadable: int = 0

    @property
    def problems(self) -> list[str]:
        """The values read as missing, as intake.py names them (the first 20, then a count)."""
        found = [s.problem for s in self.samples if s.problem is not None]
        more = [f"and {len(found) - 20} more value(s) read as missing"] if len(found) > 20 else []
        return found[:20] + more

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATUSES, 0)
        for sample in self.samples:
            out[sample.status] += 1
        return out

    @property
    def cases(self) -> int:
        return len({s.id for s in self.samples})

    @property
    def tags(self) -> list[str]:
        return sorted({t for s in self.samples for t in s.tags}, key=natural)

    @property
    def evaluators(self) -> list[str]:
        return list(dict.fromkeys(n for s in self.samples for n, _f in s.evaluators))


def pass_rate(counts: dict[str, int]) -> float | None:
    """Passed samples over judged ones (errors count as not passed)."""
    judged = sum(counts.values()) - counts.get("recorded", 0)
    return counts.get("passed", 0) / judged if judged else None


def run_kind(conn: sqlite3.Connection, run_id: str) -> str:
    """`test` (an `accord test` run), `eval` (an evaluation's cases) or `workflow`."""

    def has(kinds: str) -> bool:
        query = f"SELECT 1 FROM results WHERE run_id = ? AND type IN ({kinds}) LIMIT 1"
        return conn.execute(query, (run_id,)).fetchone() is not None

    if has("'accord_test'"):
        return "test"
    return "eval" if has("'eval_verdict', 'eval_target'") else "workflow"


def _listed(key: Any, fields: Any) -> Listed | None:
    """A verdict's index entry from its extracted fields; None for a trial not needed."""
    try:  # SQLite's own JSON array of the fields (numbers checked one by one below)
        values = json.loads(fields) if isinstance(fields, str) else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(values, list) or len(values) != 5 + 3 * FINDINGS_INDEXED:
        return None
    case_id, repeat, status, score, tags = values[:5]
    if case_id is None and status is None:
        return None
    key = stored.shown(key)
    base, n = case_base(key)
    problem = None
    value = _decoded(score)
    number = stored.number(value)
    if value is not None and (number is None or abs(number) > SCORE_LIMIT):
        number = None
        problem = (f"{key}: score {describe(value)} is not a finite number of magnitude at "
                   f"most {SCORE_LIMIT:g}; read as missing")  # fmt: skip
    found = values[5:]
    evaluators = tuple(
        (name, found[i + 1] is False or found[i + 1] == 0 or found[i + 2] is not None)
        for i in range(0, len(found), 3)
        if isinstance(name := found[i], str)
    )
    return Listed(
        key,
        case_id if isinstance(case_id, str) else base,
        repeat if isinstance(repeat, int) and 0 <= repeat < 10**6 else n,
        status if status in STATUSES else "error",
        number,
        tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) else (),
        evaluators,
        problem=problem,
    )


def _decoded(value: Any) -> Any:
    """A score as the codec stores it: a float it cannot write in JSON (NaN, an infinity) is
    `{"$": "float", "v": "nan"}`."""
    if isinstance(value, dict) and value.get("$") == "float" and isinstance(value.get("v"), str):
        try:
            return float(value["v"])
        except ValueError:
            return value
    return value


def run_index(path: Path, run_id: str) -> Index:
    """An evaluation run's samples in one pass of SQLite: each verdict parsed once (a case
    whose target failed, with no verdict, is an error sample)."""
    with read_only(path) as conn:
        index = Index(run_kind(conn, run_id))
        if index.kind != "eval":
            return index
        for key, fields in conn.execute(_INDEX, (run_id,)):
            if fields is None:
                index.unreadable += 1
                continue
            listed = _listed(key, fields)
            if listed is not None:
                index.samples.append(listed)
        for key, error in conn.execute(
            "SELECT t.key, t.error FROM results t WHERE t.run_id = ? AND t.type = 'eval_target'"
            " AND t.status != 'succeeded' AND NOT EXISTS (SELECT 1 FROM results v WHERE"
            " v.run_id = t.run_id AND v.type = 'eval_verdict' AND typeof(v.output) = 'text'"
            " AND v.output != 'null' AND v.key = substr(t.key, 1, length(t.key) - 7) ||"
            " '.verdict')",
            (run_id,),
        ):
            key = stored.shown(key)
            base, n = case_base(key)
            text = "the target failed" if error is None else stored.shown(error)
            index.samples.append(Listed(key, base, n, "error", None, error=text))
    index.samples.sort(key=lambda s: (natural(s.id), s.repeat))
    return index


@dataclass
class Filters:
    status: str = ""
    tag: str = ""
    evaluator: str = ""  # failed (or errored) by this evaluator
    text: str = ""

    @classmethod
    def of(cls, query: dict[str, str]) -> Filters:
        return cls(
            query.get("status", ""),
            query.get("tag", ""),
            query.get("evaluator", ""),
            query.get("q", "").strip(),
        )

    @property
    def any(self) -> bool:
        return bool(self.status or self.tag or self.evaluator or self.text)


def filtered(path: Path, run_id: str, index: Index, filters: Filters) -> list[Listed]:
    """The samples the filters keep: status and tag from the index; an evaluator and a text
    search in SQLite over every finding and field (bound parameters)."""
    kept = [
        s for s in index.samples
        if (not filters.status or s.status == filters.status)
        and (not filters.tag or filters.tag in s.tags)
    ]  # fmt: skip
    if not (filters.evaluator or filters.text) or not kept:
        return kept
    where, args = "", []
    if filters.evaluator:
        where += f" AND {_FAILING}"
        args.append(filters.evaluator)
    if filters.text:
        where += f" AND {_SEARCHED}"
        args.append(filters.text)
    with read_only(path) as conn:
        _connect(conn)
        query = f"{_VALID}json_type(output, '$.v') = 'object' ELSE 0 END{where}"
        keys = {k for (k,) in conn.execute(query, (run_id, *args)) if isinstance(k, str)}
    return [
        s for s in kept
        if s.key in keys
        or (s.error is not None and not filters.evaluator and _search(s.id, s.error, filters.text))
    ]  # fmt: skip


def decoded(path: Path, run_id: str, keys: list[str]) -> dict[str, Any]:
    """The decoded outputs of these task keys (a value that does not decode: missing)."""
    from ..core import cases  # noqa: F401  (registers the case and finding types)

    out: dict[str, Any] = {}
    with read_only(path) as conn:
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, text in conn.execute(
                f"SELECT key, output FROM results WHERE run_id = ? AND key IN ({marks})",
                (run_id, *chunk),
            ):
                if isinstance(key, str) and isinstance(text, str):
                    try:
                        out[key] = codec.loads(text)
                    except codec.CodecError:
                        continue
    return out


def verdicts_of(path: Path, run_id: str, ids: list[str]) -> dict[str, list[Any]]:
    """Each of these cases' decoded verdicts (one per repeat), by case id."""
    found: dict[str, list[Any]] = {}
    keys: list[str] = []
    with read_only(path) as conn:
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            keys += [
                k
                for (k,) in conn.execute(
                    f"{_VALID}json_type(output, '$.v') = 'object' ELSE 0 END"
                    f" AND json_extract(output, '$.v.id') IN ({marks})",
                    (run_id, *chunk),
                )
                if isinstance(k, str)
            ]
    for _key, value in sorted(decoded(path, run_id, keys).items()):
        case_id = getattr(value, "id", None)
        if isinstance(case_id, str):
            found.setdefault(case_id, []).append(value)
    for values in found.values():
        values.sort(key=lambda v: v.repeat if isinstance(v.repeat, int) else 0)
    return found


@dataclass(frozen=True)
class TaskRow:
    """A stored task of a run: its key, type, status, error, start and end (wall clock:
    `written` is when it finished), attempts and output as shown (JSON)."""

    key: str
    type: str
    status: str
    error: str | None
    started: float | None
    finished: float | None
    attempts: int | None
    output: Any
    has_output: bool


def task_rows(path: Path, row: RunRow) -> list[TaskRow]:
    """Every stored task of a run, in the order they finished."""
    with read_only(path) as conn:
        rows = conn.execute(
            "SELECT key, type, status, error, seconds, attempts, written, output_json"
            " FROM results WHERE run_id = ? ORDER BY written, rowid",
            (row.run_id,),
        ).fetchall()
    out = []
    for key, kind, status, error, seconds, attempts, written, shown in rows:
        if not isinstance(key, str):
            continue
        end = stored.timestamp(written)
        took = stored.number(seconds)
        start = end - took if end is not None and took is not None and took >= 0 else None
        ok, value = stored.json_value(shown)
        out.append(
            TaskRow(
                key, stored.shown(kind), stored.shown(status),
                None if error is None else stored.shown(error), start, end,
                attempts if isinstance(attempts, int) and attempts >= 0 else None,
                value, ok,
            )
        )  # fmt: skip
    return out

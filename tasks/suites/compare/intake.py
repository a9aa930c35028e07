"""Every value a comparison (and `accord view`) reads, checked once on its way in.

A run reaches `accord runs compare`, `--baseline` and `accord view` from a results file
(anyone's), from the run store (`.accord/runs.db`, which may have been edited) or from the
run just made. Each of them passes through an `Intake` once and leaves as the typed records
of records.py, in the ranges the comparison computes with; nothing after this module checks
a type or a range again.

- Shapes: a results file whose `suites`, `cases`, `tests`, evaluations, tags or `repeat` are
  not what accord writes (`cases: [1, "x"]`, `repeat: "abc"`, `repeat: 1e999`) is refused,
  exit 2, with the file, the place and what was found. JSON nesting deeper than the parser
  goes (a 100,000-deep array) is refused the same way.
- Numbers: a score is a finite number of magnitude at most `SCORE_LIMIT`. Anything else
  (NaN, Infinity, 1e308, an integer of 400 digits, text, a list) reads as missing, and the
  reason is kept in the record's `problems`, which every format of the comparison shows:
  a bad value never turns into NaN downstream, where it would compare as neither better
  nor worse and escape the regression check.
- Statuses: `passed`, `failed`, `error` or `recorded`; any other reads as `error` (so a
  tampered verdict can never count as a pass), with the reason.
- Text (ids, suite names, reasons): text or a number written as text; kept exact here (the
  JSON report keeps values exact) and escaped where it is shown: on a terminal by
  engine.report.terminal.printable, in XML by engine.report.xmltext, in HTML by html.e.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any, NoReturn

from ....engine import stored
from ....engine.errors import ConfigError
from .records import Evaluation, RunRecord, Sample

SCORE_LIMIT = 1e12  # a score's magnitude; sums over millions of cases stay finite
REPEAT_LIMIT = 1_000_000  # samples a case
STATUSES = ("passed", "failed", "error", "recorded")
PROBLEMS_KEPT = 20  # reasons listed; the rest are counted


def describe(value: Any) -> str:
    """A short, safe description of a rejected value (a 400-digit integer is not printed:
    Python refuses to write integers of over 4,300 digits as text)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if abs(value) < 10**15:
            return str(value)
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:40] + "…")
    if value is None:
        return "null"
    if isinstance(value, bytes):
        return "bytes"
    return {"dict": "an object", "list": "a list"}.get(type(value).__name__, type(value).__name__)


class Intake:
    """The checks of one source (a results file, a stored run, the run just made): wrong
    shapes of a file are refused (`refuse`), wrong values read as missing with the reason
    kept (`problems`)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.problems: list[str] = []
        self.count = 0

    def refuse(self, where: str, what: str) -> NoReturn:
        raise ConfigError(
            f"{self.source}: {where}: {what}; give a file written by `accord eval --format "
            "json` (or `accord test --output-json`)"
        )

    def problem(self, text: str) -> None:
        self.count += 1
        if len(self.problems) < PROBLEMS_KEPT:
            self.problems.append(text)

    def into(self, record: RunRecord) -> RunRecord:
        """The record with this intake's reasons (the first ones, and how many more)."""
        record.problems += [f"{self.source}: {p}" for p in self.problems]
        if self.count > len(self.problems):
            record.problems.append(
                f"{self.source}: and {self.count - len(self.problems)} more value(s) read as "
                "missing"
            )
        return record

    # --- values --------------------------------------------------------------------------

    def score(self, value: Any, where: str) -> float | None:
        """A finite score of magnitude at most SCORE_LIMIT; None (and a reason) otherwise."""
        if value is None:
            return None
        found = stored.number(value)
        if found is None or abs(found) > SCORE_LIMIT:
            self.problem(
                f"{where} {describe(value)} is not a finite number of magnitude at most "
                f"{SCORE_LIMIT:g}; read as missing"
            )
            return None
        return found

    def status(self, value: Any, where: str) -> str:
        if isinstance(value, str) and value in STATUSES:
            return value
        self.problem(f"{where}: status {describe(value)} is not one of {', '.join(STATUSES)}; "
                     "read as error")  # fmt: skip
        return "error"

    def passed(self, value: Any, where: str) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        self.problem(f"{where}: passed {describe(value)} is not true or false; read as missing")
        return None

    def text(self, value: Any, where: str) -> str | None:
        """Optional text (an error, a reason): text, a number as text, else None (a reason)."""
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return describe(value)
        self.problem(f"{where}: {describe(value)} is not text; read as missing")
        return None

    def name(self, value: Any, where: str) -> str:
        """An id or a name: text, or a number written as text; anything else is refused."""
        if isinstance(value, str):
            return value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return describe(value)
        self.refuse(where, f"{describe(value)} is not text")

    def tags(self, value: Any, where: str) -> tuple[str, ...]:
        if value is None:
            return ()
        if not isinstance(value, list):
            self.refuse(where, f"tags are {describe(value)}, not a list")
        return tuple(self.name(t, f"{where}: a tag") for t in value)

    def repeat(self, value: Any, where: str) -> int:
        if value is None:
            return 1
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= REPEAT_LIMIT:
            return value
        self.refuse(where, f"repeat {describe(value)} is not a whole number of 1 to "
                    f"{REPEAT_LIMIT:,}")  # fmt: skip

    # --- the shapes accord writes --------------------------------------------------------

    def evaluation(self, data: Any, where: str) -> Evaluation:
        if not isinstance(data, dict):
            self.refuse(where, f"an evaluation is {describe(data)}, not an object")
        name = self.name(data.get("name", "?"), f"{where}: an evaluation's name")
        at = f"{where}: evaluator {name!r}"
        return Evaluation(
            name=name,
            passed=self.passed(data.get("passed"), at),
            score=self.score(data.get("score"), f"{at}: score"),
            reason=self.text(data.get("reason"), f"{at}: reason") or "",
            error=self.text(data.get("error"), f"{at}: error") or None,
        )

    def eval_case(self, case: Any, where: str) -> tuple[str, Sample]:
        """(id, sample) of a case as `accord eval --format json` writes it."""
        if not isinstance(case, dict):
            self.refuse(where, f"a case is {describe(case)}, not an object")
        if "id" not in case:
            self.refuse(where, "a case without its 'id'")
        case_id = self.name(case["id"], f"{where}: a case's id")
        at = f"{where}: case {case_id!r}"
        findings = case.get("evaluations", case.get("findings")) or []
        if not isinstance(findings, list):
            self.refuse(at, f"its evaluations are {describe(findings)}, not a list")
        sample = Sample(
            status=self.status(case.get("status", "error"), at),
            score=self.score(case.get("score"), f"{at}: score"),
            evaluations=tuple(self.evaluation(f, at) for f in findings),
            error=self.text(case.get("error"), f"{at}: error") or None,
            tags=self.tags(case.get("tags"), at),
        )
        return case_id, sample

    def case_result(self, value: Any) -> tuple[str, Sample]:
        """(id, sample) of a `CaseResult`: stored (typed by the codec, its values unchecked)
        or of the run just made."""
        case_id = stored.shown(getattr(value, "id", "?"))
        at = f"case {case_id!r}"
        findings = getattr(value, "findings", None) or []
        sample = Sample(
            status=self.status(getattr(value, "status", "error"), at),
            score=self.score(getattr(value, "score", None), f"{at}: score"),
            evaluations=tuple(
                Evaluation(
                    stored.shown(f.name),
                    self.passed(f.passed, f"{at}: evaluator {f.name!r}"),
                    self.score(f.score, f"{at}: evaluator {f.name!r}: score"),
                    stored.shown(f.reason or ""),
                    None if not f.error else stored.shown(f.error),
                )
                for f in findings
            ),
            error=None if not getattr(value, "error", None) else stored.shown(value.error),
            tags=tuple(stored.shown(t) for t in getattr(value, "tags", None) or ()),
        )
        return case_id, sample

    def test_cases(self, test: Any, where: str) -> list[tuple[str, Sample]]:
        """(case id, sample) pairs of one `accord test` test as `--output-json` writes it
        (and the store keeps it): its cases, or the test itself when it has none (a
        consistency test, whose only figure is its accuracy)."""
        if not isinstance(test, dict):
            self.refuse(where, f"a test is {describe(test)}, not an object")
        raw = test.get("name") or f"test {test.get('test') or test.get('index')}"
        name = self.name(raw, f"{where}: a test's name")
        at = f"{where}: test {name!r}"
        cases = test.get("cases")
        if cases is not None and not isinstance(cases, list):
            self.refuse(at, f"its cases are {describe(cases)}, not a list")
        if cases:
            return [self._test_case(case, at) for case in cases]
        metrics = test.get("metrics") or {}
        accuracy = metrics.get("accuracy") if isinstance(metrics, dict) else None
        value = accuracy.get("value") if isinstance(accuracy, dict) else None
        error = self.text(test.get("error"), f"{at}: error")
        sample = Sample(
            status="error" if error else "recorded",
            score=self.score(value, f"{at}: accuracy"),
            error=error or None,
        )
        return [(name, sample)]

    def _test_case(self, case: Any, where: str) -> tuple[str, Sample]:
        if not isinstance(case, dict):
            self.refuse(where, f"a case is {describe(case)}, not an object")
        case_id = self.name(case.get("name"), f"{where}: a case's name")
        at = f"{where}: case {case_id!r}"
        scores, checks = case.get("scores") or {}, case.get("checks") or {}
        for what, found in (("scores", scores), ("checks", checks)):
            if not isinstance(found, dict):
                self.refuse(at, f"its {what} are {describe(found)}, not an object")
        passed = self.passed(case.get("passed"), at)
        error = self.text(case.get("error"), f"{at}: error")
        status = (
            "error" if error else
            "passed" if passed is True else "failed" if passed is False else "recorded"
        )  # fmt: skip
        figures = {str(k): self.score(v, f"{at}: score {k!r}") for k, v in scores.items()}
        kept = [v for v in figures.values() if v is not None]
        evaluations = tuple(
            Evaluation(str(k), self.passed(v, f"{at}: check {k!r}"), None)
            for k, v in checks.items()
        ) + tuple(Evaluation(k, None, v) for k, v in figures.items() if v is not None)
        sample = Sample(
            status=status,
            score=statistics.fmean(kept) if kept else None,
            evaluations=evaluations,
            error=error or None,
            tags=self.tags(case.get("tags"), at),
        )
        return case_id, sample


def read_json(path: Path) -> Any:
    """A results file's JSON; refused (exit 2) when it cannot be read, is not JSON or nests
    deeper than the parser goes."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; give a results file accord wrote") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise ConfigError(
            f"{path}: its JSON nests too deep to read (about a thousand levels or more); "
            "results files accord writes nest a few levels"
        ) from None
    except ValueError as exc:
        raise ConfigError(
            f"{path}: not JSON ({exc}); give a file written by `accord eval --format json` "
            "or `accord test --output-json`"
        ) from None

"""Two runs of the same suites, case by case: flips, score changes, added and removed cases,
and per suite and per evaluator the change of pass rate and mean score with a paired test.

Cases pair by id. A repeated case (`repeat: k`, trials) counts once, by its mean over its
samples, never once per sample: its samples are not independent cases. With one sample a
side, pass/fail pairs go to the exact McNemar test; when either side repeated its cases, the
per-case pass fractions go to the Wilcoxon signed-rank test instead (and the comparison says
so). Mean scores always go to the Wilcoxon signed-rank test on per-case mean scores.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from ....engine.errors import ConfigError
from .records import CaseRecord, RunRecord, SuiteRecord
from .stats import TestResult, mcnemar_exact, wilcoxon_signed_rank

# results files keep 4 decimals: a run read from one is compared with the other at that
# precision, so a stored run and its own `--format json` file compare as equal. Two stored
# runs hold their scores whole: their differences are taken to FULL places, which clears
# binary noise (1 - 2/3 and 2/3 - 1/3 differ in their last bit) so that equal changes tie
DECIMALS = 4
FULL = 12
CHANGE = 0.5 * 10**-DECIMALS


@dataclass(frozen=True)
class Figure:
    """One figure of both runs over the paired cases, with the paired test of its change."""

    name: str  # "pass rate", "mean score"
    before: float
    after: float
    n: int  # paired cases
    test: TestResult
    regressed: int = 0  # McNemar's b: passed -> not passed
    improved: int = 0  # McNemar's c

    @property
    def delta(self) -> float:
        return self.after - self.before

    def significant(self, alpha: float) -> bool:
        return self.test.n > 0 and self.test.p_value <= alpha


@dataclass(frozen=True)
class CaseChange:
    """A case whose verdict or score changed."""

    id: str
    before: str
    after: str
    score_before: float | None
    score_after: float | None
    reasons: tuple[str, ...] = ()  # why it does not pass now

    @property
    def flipped(self) -> bool:
        return self.before != self.after

    @property
    def to_failing(self) -> bool:
        return self.before == "passed" and self.after in ("failed", "error")

    @property
    def score_delta(self) -> float | None:
        if self.score_before is None or self.score_after is None:
            return None
        return self.score_after - self.score_before


@dataclass
class SuiteComparison:
    name: str
    changes: list[CaseChange]
    added: list[str]
    removed: list[str]
    paired: int
    pass_rate: Figure | None
    score: Figure | None
    evaluators: dict[str, tuple[Figure | None, Figure | None]]
    repeats: tuple[int, int]
    notes: list[str] = field(default_factory=list)

    @property
    def flips(self) -> list[CaseChange]:
        return [c for c in self.changes if c.flipped]

    def regressions(self, alpha: float) -> list[str]:
        """Why this suite regressed significantly (empty: it did not)."""
        found = []
        for figure in (self.pass_rate, self.score):
            if figure is not None and figure.delta < 0 and figure.significant(alpha):
                found.append(f"suite {self.name}: {describe(figure)}, p <= {alpha:g}")
        return found


@dataclass
class Comparison:
    baseline: str
    current: str
    suites: list[SuiteComparison]
    only_baseline: list[str]
    only_current: list[str]
    problems: list[str] = field(default_factory=list)  # values of either run read as missing

    def regressions(self, alpha: float) -> list[str]:
        return [r for s in self.suites for r in s.regressions(alpha)]

    def to_failing(self) -> list[tuple[str, CaseChange]]:
        return [(s.name, c) for s in self.suites for c in s.flips if c.to_failing]


def describe(figure: Figure) -> str:
    """`pass rate 90.00% -> 60.00% (-30.00 pts; exact McNemar p=0.0313, 5 regressed, 0
    improved, 10 paired cases)`."""
    percent = figure.name == "pass rate" or figure.name.endswith("pass rate")
    values = (
        f"{figure.before:.2%} -> {figure.after:.2%} ({figure.delta * 100:+.2f} pts"
        if percent
        else f"{figure.before:.4f} -> {figure.after:.4f} ({figure.delta:+.4f}"
    )
    test = "exact McNemar" if figure.test.test == "mcnemar-exact" else "Wilcoxon signed-rank"
    counts = (
        f", {figure.regressed} regressed, {figure.improved} improved"
        if figure.test.test == "mcnemar-exact"
        else ""
    )
    return (
        f"{figure.name} {values}; {test} p={figure.test.p_value:.4g}{counts}, "
        f"{figure.n} paired cases)"
    )


def _binary_figure(name: str, pairs: list[tuple[float, float]]) -> Figure | None:
    if not pairs:
        return None
    b = sum(1 for x, y in pairs if x == 1.0 and y == 0.0)
    c = sum(1 for x, y in pairs if x == 0.0 and y == 1.0)
    return Figure(
        name, statistics.fmean(x for x, _ in pairs), statistics.fmean(y for _, y in pairs),
        len(pairs), mcnemar_exact(b, c), b, c,
    )  # fmt: skip


def _mean_figure(
    name: str, pairs: list[tuple[float, float]], decimals: int | None = None
) -> Figure | None:
    """The change of a mean, Wilcoxon-tested on the per-case differences, each taken at the
    precision the values are compared at (`decimals`, else FULL places): the test ranks
    them, and a difference that only float arithmetic made unequal must tie."""
    if not pairs:
        return None
    places = FULL if decimals is None else decimals
    return Figure(
        name, statistics.fmean(x for x, _ in pairs), statistics.fmean(y for _, y in pairs),
        len(pairs), wilcoxon_signed_rank([round(y - x, places) for x, y in pairs]),
    )  # fmt: skip


def _pairs(
    cases: list[tuple[CaseRecord, CaseRecord]],
    value: str,
    evaluator: str | None = None,
    decimals: int | None = None,
) -> list[tuple[float, float]]:
    """Each case's value in both runs, rounded to `decimals` when one run was read from a
    results file (None: both whole, as stored)."""
    out = []
    for before, after in cases:
        if evaluator is None:
            x = before.pass_fraction if value == "pass" else before.score
            y = after.pass_fraction if value == "pass" else after.score
        else:
            x = before.evaluator(evaluator)[0 if value == "pass" else 1]
            y = after.evaluator(evaluator)[0 if value == "pass" else 1]
        if x is not None and y is not None:
            out.append((x, y) if decimals is None else (round(x, decimals), round(y, decimals)))
    return out


def _pass_figure(
    name: str, pairs: list[tuple[float, float]], repeated: bool, decimals: int | None = None
) -> Figure | None:
    return _mean_figure(name, pairs, decimals) if repeated else _binary_figure(name, pairs)


# the order changed cases are listed in, in every format: regressions (passed -> failed),
# then errors, improvements, other verdict changes, and score changes alone
_KINDS = ("regression", "error", "improvement", "changed", "score")


def change_kind(change: CaseChange) -> str:
    if not change.flipped:
        return "score"
    if change.after == "error":
        return "error"
    if change.before == "passed":
        return "regression"
    return "improvement" if change.after == "passed" else "changed"


def case_order(case_id: str) -> tuple[tuple[int, int | str], ...]:
    """Ids in natural order: `c2` before `c10`."""
    parts = re.split(r"(\d+)", case_id)
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in parts if p)


def _listing_order(change: CaseChange) -> tuple[int, tuple[tuple[int, int | str], ...], str]:
    return _KINDS.index(change_kind(change)), case_order(change.id), change.id


def compare_suite(
    before: SuiteRecord, after: SuiteRecord, decimals: int | None = DECIMALS
) -> SuiteComparison:
    """`decimals`: the precision the values are compared at (None: as stored)."""
    common = [k for k in after.cases if k in before.cases]
    pairs = [(before.cases[k], after.cases[k]) for k in common]
    repeats = (_repeat(before), _repeat(after))
    repeated = max(repeats) > 1
    changes = []
    for key in common:
        old, new = before.cases[key], after.cases[key]
        change = CaseChange(
            key, old.status, new.status, old.score, new.score,
            tuple(new.failing_reasons()) if new.status in ("failed", "error") else (),
        )  # fmt: skip
        delta = change.score_delta
        if change.flipped or (delta is not None and abs(delta) > CHANGE):
            changes.append(change)
    changes.sort(key=_listing_order)
    notes = []
    if repeated:
        notes.append(
            f"repeated cases (baseline {repeats[0]} sample(s) a case, current {repeats[1]}): "
            "each case is compared by its mean over its samples; the pass rate's change is "
            "tested with the Wilcoxon signed-rank test on per-case pass fractions"
        )
    evaluators: dict[str, tuple[Figure | None, Figure | None]] = {}
    for name in dict.fromkeys([*before.evaluator_names, *after.evaluator_names]):
        evaluators[name] = (
            _pass_figure(
                f"{name} pass rate", _pairs(pairs, "pass", name, decimals), repeated, decimals
            ),
            _mean_figure(f"{name} mean score", _pairs(pairs, "score", name, decimals), decimals),
        )
    return SuiteComparison(
        name=after.name,
        changes=changes,
        added=[k for k in after.cases if k not in before.cases],
        removed=[k for k in before.cases if k not in after.cases],
        paired=len(common),
        pass_rate=_pass_figure(
            "pass rate", _pairs(pairs, "pass", None, decimals), repeated, decimals
        ),
        score=_mean_figure("mean score", _pairs(pairs, "score", None, decimals), decimals),
        evaluators=evaluators,
        repeats=repeats,
        notes=notes,
    )


def _repeat(suite: SuiteRecord) -> int:
    return max([suite.repeat, *(len(c.samples) for c in suite.cases.values())])


def _listed(names: list[str], limit: int = 8) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "") or "none"


def compare_runs(baseline: RunRecord, current: RunRecord) -> Comparison:
    """Compare every suite the two runs share; a baseline sharing no suite, or a shared
    suite with no case in common, is refused with what differs."""
    shared = [name for name in current.suites if name in baseline.suites]
    if not shared:
        raise ConfigError(
            f"the baseline {baseline.label} is not a run of the same suite: it holds suite(s) "
            f"{_listed(list(baseline.suites))}; {current.label} holds "
            f"{_listed(list(current.suites))}; compare runs of one suite"
        )
    # a results file keeps 4 decimals: both runs at that precision; two stored runs whole
    decimals = DECIMALS if "file" in (baseline.source, current.source) else None
    suites = []
    for name in shared:
        before, after = baseline.suites[name], current.suites[name]
        if not set(before.cases) & set(after.cases):
            raise ConfigError(
                f"suite {name}: the baseline {baseline.label} has no case in common with "
                f"{current.label} (baseline cases: {_listed(list(before.cases))}; current "
                f"cases: {_listed(list(after.cases))})"
            )
        suites.append(compare_suite(before, after, decimals))
    return Comparison(
        baseline=baseline.label,
        current=current.label,
        suites=suites,
        only_baseline=[n for n in baseline.suites if n not in current.suites],
        only_current=[n for n in current.suites if n not in baseline.suites],
        problems=[*baseline.problems, *current.problems],
    )

"""The CI gates' one result type (`GateResult`, also `accord test`'s: testing/gate.py), and
`accord eval`'s gate.

`accord eval --min-pass-rate / --min-score` (`check_cases`) gates every case of every suite:
the pass rate of the judged cases (or its Wilson lower bound) and the mean case score (or the
lower bound of its t interval).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .cases import CaseResult

GateKind = Literal["mean", "lower-bound"]


@dataclass(frozen=True)
class GateResult:
    """Whether the gate passed; the failure messages or the warning to print on stderr."""

    passed: bool
    messages: tuple[str, ...] = ()
    warning: str | None = None
    failing: tuple[int, ...] = ()  # tests that fail the gate themselves (`all`, errors)
    rule: str = ""  # the options that asked for it: `--min-accuracy 0.8, ..., gate mean`

    def data(self) -> dict[str, Any]:
        """The gate in a JSON report."""
        return {"passed": self.passed, "messages": list(self.messages), "rule": self.rule}

    @property
    def line(self) -> str:
        """The gate as a report shows it: its rule and whether it passed."""
        verdict = "passed" if self.passed else "FAILED: " + "; ".join(self.messages)
        return f"{self.rule}: {verdict}"


def check_cases(
    cases: Sequence[CaseResult],
    min_score: float | None,
    min_pass_rate: float | None,
    gate: GateKind,
) -> GateResult | None:
    """Apply `--min-pass-rate` and `--min-score` to every case run (None: neither given)."""
    from .reducers import mean_metric, proportion

    if min_score is None and min_pass_rate is None:
        return None
    messages: list[str] = []
    judged = [c for c in cases if c.status != "recorded"]
    rate = proportion("pass_rate", sum(c.status == "passed" for c in judged), len(judged), "cases")
    if min_pass_rate is not None:
        if rate is None:
            messages.append("no case has a verdict, so no pass rate to gate on")
        else:
            value = rate.lower_bound if gate == "lower-bound" else rate.value
            what = "pass rate lower bound" if gate == "lower-bound" else "pass rate"
            if value < min_pass_rate:
                counted = f"({rate.successes}/{rate.n} cases)"
                messages.append(f"{what} {value:.4f} below {min_pass_rate:.4f} {counted}")
    if min_score is not None:
        scores = [c.score for c in cases if c.score is not None]
        mean = mean_metric("score", scores, "cases")
        if mean is None:
            messages.append("no case has a score, so no mean score to gate on")
        else:
            value = mean.value
            if gate == "lower-bound":
                from .reducers import mean_interval

                interval = mean_interval(scores)
                value = interval[0] if interval else mean.value
            if value < min_score:
                counted = f"({len(scores)} cases)"
                messages.append(f"mean score {value:.4f} below {min_score:.4f} {counted}")
    rules = [f"--min-pass-rate {min_pass_rate}"] if min_pass_rate is not None else []
    rules += [f"--min-score {min_score}"] if min_score is not None else []
    return GateResult(not messages, tuple(messages), rule=f"{', '.join(rules)}, gate {gate}")

"""The CI gates of `accord test` and `accord eval`, one result type for both.

`accord test --min-accuracy` (`check`) gates the tests' accuracies:

- `--threshold-mode average` (default): the mean accuracy of the tests must reach F.
- `--threshold-mode all`: every test must reach F.
- `--gate lower-bound` compares the lower bound of each accuracy's 95% Wilson interval
  instead of the accuracy itself (the mean of the lower bounds in average mode), so a test
  that scored well on few pairs does not pass by luck.

A test that produced no result (an error) cannot pass a gate: it fails it in either mode.
No accuracy metric at all is a warning, and the gate passes (as in Oxy).

`accord eval --min-pass-rate / --min-score` (`check_cases`) gates every case of every suite:
the pass rate of the judged cases (or its Wilson lower bound) and the mean case score (or the
lower bound of its t interval).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from ..testing.outcomes import TestOutcome

if TYPE_CHECKING:
    from .cases import CaseResult

Mode = Literal["average", "all"]
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


def gated_value(test: TestOutcome, gate: GateKind) -> float | None:
    """The figure the gate compares for a test: its accuracy, or the interval's lower bound."""
    metric = test.accuracy
    if metric is None:
        return None
    return metric.lower_bound if gate == "lower-bound" else metric.value


def check(tests: list[TestOutcome], threshold: float, mode: Mode, gate: GateKind) -> GateResult:
    """Apply `--min-accuracy threshold` to the tests (in file order)."""
    rule = f"--min-accuracy {threshold}, threshold mode {mode}, gate {gate}"
    return replace(_check(tests, threshold, mode, gate), rule=rule)


def _check(tests: list[TestOutcome], threshold: float, mode: Mode, gate: GateKind) -> GateResult:
    errored = [t for t in tests if t.error is not None]
    scored = [(t, v) for t in tests if (v := gated_value(t, gate)) is not None]
    if not scored and not errored:
        return GateResult(
            True,
            warning=f"no accuracy metric found: --min-accuracy {threshold:.4f} was not checked",
        )
    what = "accuracy lower bound" if gate == "lower-bound" else "accuracy"
    if mode == "all":
        below = [(t, v) for t, v in scored if v < threshold]
        failing = sorted([*(t.index for t, _ in below), *(t.index for t in errored)])
        if not failing:
            return GateResult(True)
        parts = {t.index: f"{t.label}: {v:.4f}" for t, v in below}
        parts.update({t.index: f"{t.label}: error" for t in errored})
        head = f"{len(failing)} test(s) below threshold {threshold:.4f}"
        if gate == "lower-bound":
            head += " (95% lower bound)"
        message = f"{head}: {', '.join(parts[i] for i in failing)}"
        return GateResult(False, (message,), failing=tuple(failing))
    messages: list[str] = []
    if scored:
        mean = sum(v for _, v in scored) / len(scored)
        if mean < threshold:
            messages.append(f"Average {what} {mean:.4f} below threshold {threshold:.4f}")
    if errored:
        names = ", ".join(t.label for t in errored)
        messages.append(f"{len(errored)} test(s) produced no result: {names}")
    return GateResult(not messages, tuple(messages), failing=tuple(t.index for t in errored))


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

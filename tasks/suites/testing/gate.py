"""`accord test --min-accuracy` (`check`) gates the tests' accuracies:

- `--threshold-mode average` (default): the mean accuracy of the tests must reach F.
- `--threshold-mode all`: every test must reach F.
- `--gate lower-bound` compares the lower bound of each accuracy's 95% Wilson interval
  instead of the accuracy itself (the mean of the lower bounds in average mode), so a test
  that scored well on few pairs does not pass by luck.

A test that produced no result (an error) cannot pass a gate: it fails it in either mode.
No accuracy metric at all is a warning, and the gate passes (as in Oxy).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from ..core.gate import GateKind, GateResult
from .outcomes import TestOutcome

Mode = Literal["average", "all"]


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

"""`--baseline RUN|FILE`, `--fail-on-regression [significant|any]` and `--alpha` of `accord
eval` and `accord test`: after the run, compare it with the baseline, report what changed on
stderr, and fail the command on a regression.

`significant`: exit 1 when a suite's pass rate or mean score dropped and its paired test
(exact McNemar; Wilcoxon signed-rank) has p <= alpha. `any`: also exit 1 when any case went
from passed to failed or errored. Without `--fail-on-regression` the comparison is only
reported. A baseline of another suite, or with no case in common, is refused (exit 2).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click

from ....engine.cli import FiniteFloatRange

F = TypeVar("F", bound=Callable[..., Any])
_KEY = "accord.compare.baseline"


@dataclass(frozen=True)
class BaselineRequest:
    ref: str
    fail_on: str | None
    alpha: float
    store: Path
    started: float  # `last` is the newest run of the suite started before this command


def baseline_options(fn: F) -> F:
    """The three options, for `accord eval` and `accord test` alike (apply it under
    `handle_errors`, so a bad baseline is reported as one)."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ref = kwargs.pop("baseline")
        fail_on = kwargs.pop("fail_on_regression")
        alpha = kwargs.pop("alpha")
        if ref is None and fail_on is not None:
            raise click.UsageError(
                "--fail-on-regression needs --baseline RUN|FILE: the run or results file to "
                "compare with"
            )
        if ref is not None:
            request = BaselineRequest(ref, fail_on, alpha, _store_of(kwargs), time.time())
            _check(request)
            click.get_current_context().meta[_KEY] = request
        return fn(*args, **kwargs)

    options = [
        click.option(
            "--alpha", type=FiniteFloatRange(0.0, 1.0, min_open=True, max_open=True),
            default=0.05, show_default=True,
            help="Significance level of the paired tests of --fail-on-regression.",
        ),
        click.option(
            "--fail-on-regression", type=click.Choice(["significant", "any"]), default=None,
            help="Exit 1 on a significant drop (paired test, p <= --alpha), or with 'any' "
            "also when any case flipped from passed to failing.",
        ),
        click.option(
            "--baseline", metavar="RUN|FILE", default=None,
            help="Compare with this run (id, 'last', 'last~1') or results file "
            "(--format json); the change is reported on stderr.",
        ),
    ]  # fmt: skip
    decorated: Any = wrapper
    for option in options:
        decorated = option(decorated)
    return decorated  # type: ignore[no-any-return]


def baseline_file() -> Path | None:
    """The results file `--baseline` names in this command, if it names one: an input of
    the command, which no output of it may replace."""
    from .loading import is_file_ref

    ctx = click.get_current_context(silent=True)
    request: BaselineRequest | None = ctx.meta.get(_KEY) if ctx is not None else None
    return Path(request.ref) if request is not None and is_file_ref(request.ref) else None


def _store_of(kwargs: dict[str, Any]) -> Path:
    from .loading import project_store

    files = kwargs.get("files") or ([kwargs["file"]] if kwargs.get("file") else [])
    first = next((Path(f) for f in files if Path(f).exists()), Path.cwd())
    return project_store(first)


def _check(request: BaselineRequest) -> None:
    """Refuse, before anything runs, a baseline file that cannot be read or a store with no
    runs."""
    from .loading import is_file_ref, load_ref
    from .storeview import list_rows

    if is_file_ref(request.ref):
        load_ref(request.ref, request.store)
        return
    from ....engine.errors import ConfigError

    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.command.name == "test":
        # accord test keeps no runs in the store: its baseline is always a results file
        raise ConfigError(
            f"--baseline {request.ref}: `accord test` records no runs in the run store; "
            "give a results file written by `accord test --output-json FILE`"
        )
    if not list_rows(request.store, limit=1):
        raise ConfigError(f"--baseline {request.ref}: no runs recorded yet in {request.store}")


def apply_baseline(code: int, results: Any) -> int:
    """The command's exit code once its results are compared with `--baseline` (when given).

    `results` is what the command ran: `accord eval`'s `SuiteRun`s or `accord test`'s
    `SuiteResult`.
    """
    ctx = click.get_current_context(silent=True)
    request: BaselineRequest | None = ctx.meta.get(_KEY) if ctx is not None else None
    if request is None:
        return code
    from rich.console import Console

    from ....engine.report.terminal import printable
    from .comparison import compare_runs
    from .convert import from_suite_result, from_suite_runs
    from .loading import load_ref
    from .render import change_line, render_pretty

    current = from_suite_runs(results) if isinstance(results, list) else from_suite_result(results)
    baseline = load_ref(request.ref, request.store, request.started, tuple(current.workflows))
    comparison = compare_runs(baseline, current)
    err = Console(stderr=True, soft_wrap=True, highlight=False)
    err.print(render_pretty(comparison, request.alpha).rstrip(), markup=False)
    if request.fail_on is None:
        return code
    reasons = comparison.regressions(request.alpha)
    flipped = comparison.to_failing() if request.fail_on == "any" else []
    reasons += [f"suite {suite}: {change_line(change)}" for suite, change in flipped]
    if not reasons:
        return code
    # names and ids come from the baseline (anyone's file, or the store): shown, not obeyed
    err.print(
        printable(
            f"regression against the baseline {baseline.label} (--fail-on-regression "
            f"{request.fail_on}):"
        ),
        markup=False,
    )
    for reason in reasons:
        err.print(f"  {printable(reason)}", markup=False)
    return code or 1

"""The render budget: how long one template may render and how large what it makes may grow.

Templates run on the scheduler's thread, so a render that loops for minutes or builds
gigabytes would stop the whole run (and outlive its task's timeout and SIGTERM). The
sandbox's compiled code calls `tick` at the start of every block, loop bodies included, and
the render stops with a clear error once its time is spent; the filters and operations that
can build a huge value in one step (`center`, `format`, `indent`, `replace`, `lipsum`, `~`,
`+`, `tojson(indent=...)`, `str.format` widths) check the size first.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from .errors import AccordError

RENDER_SECONDS = 30.0  # one render; a task's own timeout, when shorter, wins
MAX_TEXT = 20_000_000  # characters of any one value a template builds, and of its output
TICKS_PER_CLOCK = 1024  # read the clock every this many ticks


class BudgetError(AccordError):
    """A render ran past its budget (time or size); reported like any template error."""


@dataclass
class Budget:
    seconds: float
    deadline: float
    ticks: int = 0


_budget: ContextVar[Budget | None] = ContextVar("accord_render_budget", default=None)
_stop: list[str] = []  # a signal that asked the process to stop (renders end at once)


def request_stop(reason: str) -> None:
    """Called from a signal handler: every render under way stops at its next block."""
    _stop.append(reason)


def clear_stop() -> None:
    _stop.clear()


def start(seconds: float | None = None) -> Any:
    """Begin a render's budget (`RENDER_SECONDS`, or fewer); `finish(token)` ends it."""
    limit = RENDER_SECONDS if seconds is None else min(seconds, RENDER_SECONDS)
    return _budget.set(Budget(limit, time.monotonic() + limit))


def finish(token: Any) -> None:
    _budget.reset(token)


def tick() -> None:
    """Called by compiled templates at every block: stop a render whose time is spent."""
    if _stop:
        raise BudgetError(f"template rendering stopped: {_stop[0]}")
    budget = _budget.get()
    if budget is None:
        return
    budget.ticks += 1
    if budget.ticks % TICKS_PER_CLOCK == 0 and time.monotonic() > budget.deadline:
        raise BudgetError(
            f"template rendering took longer than {budget.seconds:g} s (the render budget): "
            "it loops too much; simplify it, or do the work in SQL"
        )


def check_size(size: int, what: str) -> None:
    if size > MAX_TEXT:
        raise BudgetError(
            f"{what} would make a value of {size:,} characters; templates may build at most "
            f"{MAX_TEXT:,} (the render budget)"
        )


def bounded_output(pieces: Iterator[str]) -> str:
    """Join a template's output, stopping once it passes the size budget."""
    out: list[str] = []
    total = 0
    for piece in pieces:
        total += len(piece)
        check_size(total, "the template's output")
        out.append(piece)
    return "".join(out)


_SPEC_NUMBERS = re.compile(r"\d+")
_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\d*)(?:\.(\d*))?")


def percent_widths(text: str, what: str) -> None:
    """Refuse `%`-format widths or precisions (`'%0999999999d'`) past the size budget."""
    for width, precision in _PERCENT_SPEC.findall(text):
        format_width(f"{width} {precision}", what)


def format_width(spec: str, what: str) -> None:
    """Refuse a format-spec width or precision past the size budget (any number in the spec
    is one of them)."""
    for number in _SPEC_NUMBERS.findall(spec):
        if len(number) > 9 or int(number) > MAX_TEXT:
            raise BudgetError(f"{what}: a width or precision past {MAX_TEXT:,} (the render budget)")


def guard_filters(filters: dict[str, Callable[..., Any]]) -> None:
    """Wrap the built-in filters that can build a huge value from small arguments."""

    def wrap(name: str, check: Callable[..., None]) -> None:
        original = filters[name]

        def guarded(*args: Any, **kwargs: Any) -> Any:
            check(*args, **kwargs)
            return original(*args, **kwargs)

        if hasattr(original, "jinja_pass_arg"):  # replace's eval-context marker, say
            guarded.jinja_pass_arg = original.jinja_pass_arg  # type: ignore[attr-defined]
        filters[name] = guarded

    def center(value: Any, width: Any = 80) -> None:
        if isinstance(width, int):
            check_size(width, "center")

    def indent(s: Any, width: Any = 4, *_: Any, **__: Any) -> None:
        lines = str(s).count("\n") + 1
        step = width if isinstance(width, int) else len(str(width))
        check_size(len(str(s)) + step * lines, "indent")

    def format_(value: Any, *args: Any, **kwargs: Any) -> None:
        percent_widths(str(value), "format")

    def replace(eval_ctx: Any, s: Any, old: Any, new: Any, count: Any = None) -> None:
        text, old, new = str(s), str(old), str(new)
        times = text.count(old) if old else len(text) + 1
        if isinstance(count, int) and count >= 0:
            times = min(times, count)
        check_size(len(text) + times * max(0, len(new) - len(old)), "replace")

    wrap("center", center)
    wrap("indent", indent)
    wrap("format", format_)
    wrap("replace", replace)


def lipsum_guard(original: Callable[..., str]) -> Callable[..., str]:
    """Jinja's `lipsum(n, html, min, max)` with `n * max` words bounded."""

    def lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
        if isinstance(n, int) and isinstance(max, int):
            check_size(n * max * 12, "lipsum")
        return original(n, html, min, max)

    return lipsum

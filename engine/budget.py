"""Expansion budgets: how much a file may make of itself when it is loaded.

A few lines can stand for far more than they hold: YAML aliases that repeat an anchor that
repeats another (the "billion laughs"), promptfoo `$ref`s that double at each level, a test's
vars whose lists multiply (6 lists of 20 values: 64 million tests), a scenario's config rows
times its tests. Each such expansion counts what it makes against one of the limits below and
is refused, with the size, before it is built (a product is computed from its factors first),
so `accord validate` answers at once instead of filling the memory.

- `MAX_VALUES`: values that aliases or references may add to a file (each repeated value
  counts once per repetition).
- `MAX_CASES`: tests (cases) a file's expansions may make in all: var lists, scenario rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .errors import AccordError

MAX_VALUES = 100_000
MAX_CASES = 1_000_000


class ExpansionError(AccordError):
    """An expansion past its budget; the caller reports it at the file's line."""


class Counter:
    """Counts the values one expansion makes; `spend` raises `ExpansionError` once they pass
    `limit`. `what` names the expansion in the message ("aliases", "$ref references")."""

    def __init__(self, what: str, limit: int = MAX_VALUES, advice: str = "") -> None:
        self.what = what
        self.limit = limit
        self.advice = advice
        self.count = 0

    def spend(self, values: int = 1) -> None:
        self.count += values
        if self.count > self.limit:
            raise ExpansionError(self.message())

    def message(self) -> str:
        advice = f": {self.advice}" if self.advice else ""
        return f"{self.what} expand to more than {self.limit:,} values{advice}"


def check_product(
    factors: Sequence[tuple[str, int]],
    what: str,
    already: int = 0,
    limit: int = MAX_CASES,
    advice: str = "",
) -> int:
    """The product of `factors` ((name, size) pairs), refused with `ExpansionError` when it,
    with the `already` made before it, passes `limit`; computed before anything is built."""
    size = math.prod(n for _name, n in factors) if factors else 1
    if already + size > limit:
        shown = " x ".join(f"{n:,} {name}" for name, n in factors)
        before = f", after {already:,} already" if already else ""
        advice = f": {advice}" if advice else ""
        raise ExpansionError(
            f"{what} make {size:,} tests ({shown}){before}; a file may make at most "
            f"{limit:,}{advice}"
        )
    return size

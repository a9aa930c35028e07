"""Values read back from accord's SQLite files (the run store), checked one column at a time.

Nothing read from `.accord/` is trusted: it may have been edited. Each function takes what
SQLite returned (with `sqlite.text_or_bytes`, text that is not UTF-8 arrives as bytes) and
gives the value of the expected type and range, or None, so that no reader crashes on a
wrong one.
"""

from __future__ import annotations

import json
import math
from typing import Any

SUMMARY_DEPTH = 20  # a run's summary is a few levels deep; a deeper one is not shown


def text(value: Any) -> str | None:
    """A TEXT column's value; None for any other type (a number, a blob, bad UTF-8)."""
    return value if isinstance(value, str) else None


def shown(value: Any) -> str:
    """A column shown as text whatever it holds: bytes decoded with replacement."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


def number(value: Any) -> float | None:
    """A finite number; None for anything else (text, a blob, NaN, an overflowing one)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        found = float(value)
    except OverflowError:  # an integer of hundreds of digits, from JSON
        return None
    return found if math.isfinite(found) else None


def timestamp(value: Any) -> float | None:
    """A timestamp that `datetime` can show (years 1-9999)."""
    found = number(value)
    if found is not None and -62_135_596_800 < found < 253_402_300_799:
        return found
    return None


def _finite_float(literal: str) -> float:
    found = float(literal)
    if not math.isfinite(found):
        raise ValueError("a number out of range")
    return found


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def json_value(value: Any) -> tuple[bool, Any]:
    """(True, value) for stored JSON text that parses and prints back as JSON (finite
    numbers only); (False, None) for anything else."""
    if not isinstance(value, str):
        return False, None
    try:
        data = json.loads(value, parse_float=_finite_float, parse_constant=_no_constant)
        json.dumps(data, allow_nan=False)  # deep enough to recurse out is refused here
    except (ValueError, TypeError, RecursionError):
        return False, None
    return True, data


def _depth(data: Any, limit: int) -> bool:
    """Whether `data` nests at most `limit` levels."""
    if limit < 0:
        return False
    if isinstance(data, dict):
        return all(_depth(v, limit - 1) for v in data.values())
    if isinstance(data, list):
        return all(_depth(v, limit - 1) for v in data)
    return True


def summary(value: Any) -> dict[str, Any] | None:
    """A run's summary: a JSON object with `seconds` a number and `tasks` counts, or None."""
    ok, data = json_value(value)
    if not ok or not isinstance(data, dict) or not _depth(data, SUMMARY_DEPTH):
        return None
    if "seconds" in data and number(data["seconds"]) is None:
        data["seconds"] = None
    tasks = data.get("tasks")
    if tasks is not None and not (
        isinstance(tasks, dict)
        and all(isinstance(n, int) and not isinstance(n, bool) for n in tasks.values())
    ):
        data["tasks"] = None
    return data

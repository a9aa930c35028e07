"""Values compared as AgentV's JavaScript compares them, for its field_accuracy grader.

`js_equal` is AgentV's `deepEqual` (evaluators/scoring.ts): JSON values equal by kind, so
`true` is not `1` (Python's `==` says it is), while `1` and `1.0` are one number.

`parse_date` is AgentV's `parseDate` (evaluators/field-accuracy.ts): JavaScript's own
`new Date(text)` first, whatever `formats` say, then `DD-MMM-YYYY` with a month's name, then
`NN/NN/YYYY` (or with dashes) read month first or day first by the formats and the values.
Its result is compared by the local calendar day (getFullYear, getMonth, getDate), so a
time with an offset or `Z` counts on the day it is where accord runs, as in AgentV.

`new Date` is V8's parser. The forms below are those it reads in the same way (checked
against node 20 for each): ISO dates and times (a date alone is UTC midnight, a time
without offset local), `YYYY/MM/DD`, `MM/DD/YYYY` and `MM-DD-YYYY` (month first, two-digit
years 00-49 as 20xx), and dates with a month's name (`15-Jan-2025`, `Jan 15 2025`,
`January 15, 2025`, `15 January 2025`, with or without a weekday). A day past the month's
end rolls over into the next month as V8 rolls it (`2025-02-30` is March 2). V8 also reads
forms no document writes as a date (`abc 2025` as 1 January 2025): those are not dates here.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

MONTHS = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4,
    "april": 4, "may": 5, "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8,
    "sep": 9, "sept": 9, "september": 9, "oct": 10, "october": 10, "nov": 11,
    "november": 11, "dec": 12, "december": 12,
}  # fmt: skip

_ISO = re.compile(
    r"(?P<y>\d{4})(?:[-/](?P<m>\d{1,2})(?:[-/](?P<d>\d{1,2}))?)?"
    r"(?:[T ](?P<H>\d{1,2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:\.\d+)?)?)?"
    r"\s*(?P<z>Z|[+-]\d{2}:?\d{2})?"
)
# only the strict form is ISO to V8 (UTC); `2025-3-7` or `2025/03/07` is its legacy reading
# (local midnight)
_STRICT_ISO_DATE = re.compile(r"\d{4}(?:-\d{2}(?:-\d{2})?)?")
_MONTH_FIRST = re.compile(r"(?P<m>\d{1,2})[/-](?P<d>\d{1,2})[/-](?P<y>\d{2}|\d{4})")
_WEEKDAY = r"(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*,?\s+)?"
_NAMED = (
    # 15-Jan-2025, 15 January 2025, 15 Jan. 2025 (not 15-Jan.-2025)
    re.compile(_WEEKDAY + r"(?P<d>\d{1,2})-(?P<name>[a-z]{3,9})-(?P<y>\d{4})", re.I),
    re.compile(_WEEKDAY + r"(?P<d>\d{1,2})\s+(?P<name>[a-z]{3,9})\.?\s+(?P<y>\d{4})", re.I),
    # Jan 15 2025, January 15, 2025, Friday, March 7, 2025
    re.compile(_WEEKDAY + r"(?P<name>[a-z]{3,9})\.?\s+(?P<d>\d{1,2}),?\s+(?P<y>\d{4})", re.I),
)
_LOCALIZED = re.compile(r"(\d{1,2})-([A-Za-z]{3,9})-(\d{4})")
_NUMERIC = re.compile(r"(\d{1,2})[/-](\d{1,2})[/-](\d{4})")


def js_equal(a: Any, b: Any) -> bool:
    """AgentV's deepEqual over JSON values."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return not (isinstance(a, float) and math.isnan(a)) and a == b
    if a is None or b is None:
        return a is b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(js_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(js_equal(a[k], b[k]) for k in a)
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return False


def js_string(value: Any) -> str:
    """JavaScript's String(value) for a JSON value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, list):
        return ",".join("" if v is None else js_string(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def _rolled(year: int, month: int, day: int) -> date | None:
    """The day `day` of the month, past its end rolled into the next (V8's legacy reading
    and JavaScript's `new Date(year, month, day)`)."""
    if not (1 <= month <= 12 and 1 <= year <= 9999) or day < 0:
        return None
    try:
        return date(year, month, 1) + timedelta(days=day - 1)
    except OverflowError:
        return None


def _v8(text: str) -> date | None:
    """The local calendar day of `new Date(text)`, for the forms named in the docstring."""
    iso = _ISO.fullmatch(text)
    if iso is not None:
        year, month, day = int(iso["y"]), int(iso["m"] or 1), int(iso["d"] or 1)
        if not 1 <= month <= 12 or not 1 <= day <= 31:
            return None
        start = _rolled(year, month, day)
        if start is None:
            return None
        if iso["H"] is None and iso["z"] is None and _STRICT_ISO_DATE.fullmatch(text):
            # an ISO date alone is UTC midnight; its local day is where accord runs
            moment = datetime(start.year, start.month, start.day, tzinfo=UTC)
            return moment.astimezone().date()
        hour, minute, second = int(iso["H"] or 0), int(iso["M"] or 0), int(iso["S"] or 0)
        if hour > 24 or minute > 59 or second > 59:
            return None
        naive = datetime(start.year, start.month, start.day) + timedelta(
            hours=hour, minutes=minute, seconds=second
        )
        if iso["z"] is None:
            return naive.date()  # a time without offset is local time
        zone = UTC if iso["z"] == "Z" else _offset(iso["z"])
        return naive.replace(tzinfo=zone).astimezone().date()
    numeric = _MONTH_FIRST.fullmatch(text)
    if numeric is not None:
        year = int(numeric["y"])
        if len(numeric["y"]) == 2:
            year += 2000 if year < 50 else 1900
        month, day = int(numeric["m"]), int(numeric["d"])
        return _rolled(year, month, day) if 1 <= day <= 31 else None
    for pattern in _NAMED:
        named = pattern.fullmatch(text)
        if named is not None and named["name"].lower() in MONTHS:
            day = int(named["d"])
            valid = 1 <= day <= 31
            return _rolled(int(named["y"]), MONTHS[named["name"].lower()], day) if valid else None
    return None


def _offset(text: str) -> timezone:
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))


def parse_date(text: str, formats: list[str]) -> date | None:
    """AgentV's parseDate: the local calendar day `text` names, or None."""
    trimmed = text.strip()
    if not trimmed:
        return None
    native = _v8(trimmed)
    if native is not None:
        return native
    localized = _LOCALIZED.fullmatch(trimmed)
    if localized is not None and localized[2].lower() in MONTHS:
        return _rolled(int(localized[3]), MONTHS[localized[2].lower()], int(localized[1]))
    numeric = _NUMERIC.fullmatch(trimmed)
    if numeric is None:
        return None
    first, second, year = int(numeric[1]), int(numeric[2]), int(numeric[3])
    us = any("MM/DD" in f or "MM-DD" in f for f in formats)
    eu = any("DD/MM" in f or "DD-MM" in f for f in formats)
    if us and not eu:
        return _rolled(year, first, second) if 1 <= first <= 12 and 1 <= second <= 31 else None
    if eu and not us:
        return _rolled(year, second, first) if 1 <= second <= 12 and 1 <= first <= 31 else None
    if first > 12 and second <= 12:
        return _rolled(year, second, first)
    if second > 12 and first <= 12:
        return _rolled(year, first, second)
    if first <= 12 and second <= 31:
        return _rolled(year, first, second)
    return None

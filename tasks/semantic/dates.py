"""Dates in filters on date and datetime fields, as Oxy reads them: `YYYY-MM-DD` as written,
or an English relative date (`now`, `today`, `yesterday`, `7 days ago`, `in 2 weeks`,
`last month`) resolved to the calendar date it means today (Oxy resolves them with
chrono-english and keeps the date only; this is the subset Oxy's examples and docs use).
"""

from __future__ import annotations

import calendar
import datetime as dt
import re

_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$")
_AGO = re.compile(r"^(\d+|an?|one)\s+(day|week|month|year)s?\s+ago$")
_AHEAD = re.compile(
    r"^(?:in\s+(\d+|an?|one)\s+(day|week|month|year)s?|(\d+|an?|one)\s+"
    r"(day|week|month|year)s?\s+from\s+now)$"
)
_LAST = re.compile(r"^(last|next)\s+(day|week|month|year)$")
_NAMED = {"now": 0, "today": 0, "yesterday": -1, "tomorrow": 1}
EXAMPLES = "YYYY-MM-DD, 'now', 'today', 'yesterday', '7 days ago', 'in 2 weeks', 'last month'"


class DateError(ValueError):
    """A value that is neither a date nor a relative date accord knows."""


def _count(text: str) -> int:
    return 1 if text in ("a", "an", "one") else int(text)


def _shift(day: dt.date, amount: int, unit: str) -> dt.date:
    if unit == "day":
        return day + dt.timedelta(days=amount)
    if unit == "week":
        return day + dt.timedelta(weeks=amount)
    months = amount * (12 if unit == "year" else 1)
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    return dt.date(year, month + 1, min(day.day, last))


def resolve_date(value: object, today: dt.date | None = None) -> object:
    """`value` as the filter compares it: a date or datetime text as written, a relative
    date as `YYYY-MM-DD`; anything else (a number, a date object) unchanged. DateError for
    text that is neither."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if _ISO.match(text):
        return text
    today = today or dt.date.today()
    spoken = re.sub(r"\s+", " ", text.lower())
    if spoken in _NAMED:
        return (today + dt.timedelta(days=_NAMED[spoken])).isoformat()
    if match := _AGO.match(spoken):
        return _shift(today, -_count(match.group(1)), match.group(2)).isoformat()
    if match := _AHEAD.match(spoken):
        amount, unit = (match.group(1), match.group(2)) if match.group(1) else match.group(3, 4)
        return _shift(today, _count(amount), unit).isoformat()
    if match := _LAST.match(spoken):
        sign = -1 if match.group(1) == "last" else 1
        return _shift(today, sign, match.group(2)).isoformat()
    raise DateError(f"'{value}' is not a date ({EXAMPLES})")

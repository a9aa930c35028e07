"""Facts in an agent's answer, as the pre-judge (`tasks.prejudge`) reads and compares them.

A fact is a number (`1,000`, `-3`, `1.2k`, `1.2 million`), an amount of money (`$1,081,395.67`,
`$1.2M`, `500 USD`), a percentage (`42.67%`, `5 percent`), percentage points, an ordinal
(`2nd`), an identifier (`Store 12`, `#1043`, `ID 7`), a date (`2024-01-15`, `January 15, 2024`,
`15 Jan 2024`, `01/15/2024` with every valid reading kept, `January 2024`, `March`) or a clock
time. `FACT_PATTERNS` finds them; `parse_fact` normalises one to a value and its displayed
precision (`$1.2M`: to $100K); `compare_facts` says whether two facts match, differ materially,
fall in the grey zone between, or are unrelated. The thresholds are listed in `tasks.prejudge`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal
from typing import Literal

Outcome = Literal["match", "grey", "material", "other"]

# ------------------------------------------------------------------------------------------------
# finding facts

_MONTH_NAMES = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
_MONTH_WORD = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_MONTH = rf"{_MONTH_WORD}\.?"
_NUM = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?!\d|,\d)"
_SIGN = r"(?:(?<![\w.,)%])[-−+])?(?<![\w.,])"
_SCALE = r"(?:(?:[kKmMbBT]|bn|Bn|BN|mn|MM|tn)(?!\w)|\s(?i:thousand|million|billion|trillion)\b)"
_AMOUNT = rf"{_NUM}{_SCALE}?"
_ORD = r"(?:st|nd|rd|th)"
FACT_PATTERNS = {  # kind -> regex; at one position, an earlier kind wins
    "date_iso": r"(?<![\w/.-])\d{4}(?:-\d{1,2}-\d{1,2}|/\d{1,2}/\d{1,2})(?![\w/-])",
    "date_mdy": rf"\b{_MONTH}\s+\d{{1,2}}{_ORD}?,?\s+\d{{4}}(?!\d)",
    "date_dmy": rf"(?<![\w.,])\d{{1,2}}{_ORD}?\s+(?:of\s+)?{_MONTH},?\s+\d{{4}}(?!\d)",
    "date_num": r"(?<![\w/.-])\d{1,2}(?:/\d{1,2}/|-\d{1,2}-)\d{4}(?![\w/-])",
    "date_my": rf"\b{_MONTH},?\s+\d{{4}}(?!\d)",
    "date_md": rf"\b{_MONTH}\s+\d{{1,2}}{_ORD}?(?![\w%]|[.,]\d)",
    "date_ym": r"(?<![\w/.-])\d{4}-\d{2}(?![\w/-])",
    "date_m": rf"\b{_MONTH_WORD}(?!\w)",
    "time": r"(?<![\w.,:])\d{1,2}:\d{2}(?::\d{2})?(?:\s?(?i:[ap]\.?m\b\.?))?(?![\w:])"
    r"|(?<![\w.,:])\d{1,2}\s?(?i:[ap]\.?m\b\.?)",
    "money": rf"{_SIGN}[$€£¥]\s?[-−]?{_AMOUNT}(?!\w)"
    rf"|{_SIGN}{_AMOUNT}\s?(?:USD|EUR|GBP|(?i:dollars?|euros?))(?!\w)",
    "pp": rf"{_SIGN}{_NUM}\s?(?i:percentage[- ]points?|pp|p\.p\.)(?!\w)",
    "percent": rf"{_SIGN}{_NUM}\s?(?:%|(?i:percent|per cent|pct)(?!\w))",
    "ordinal": rf"(?<![\w.,])\d+{_ORD}(?!\w)",
    "number": rf"{_SIGN}{_AMOUNT}(?![\w%])",
}
_DIGITS = re.compile(r"\d[\d,]*(?:\.\d+)?|\.\d+")
_SCALES = {"k": 3, "thousand": 3, "m": 6, "mm": 6, "mn": 6, "million": 6, "b": 9, "bn": 9}
_SCALES |= {"billion": 9, "t": 12, "tn": 12, "trillion": 12}
_CURRENCIES = {"$": "$", "usd": "$", "dollar": "$", "dollars": "$", "€": "€", "eur": "€"}
_CURRENCIES |= {"euro": "€", "euros": "€", "£": "£", "gbp": "£", "¥": "¥"}
_MONTH_BEFORE = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_YEAR_CONTEXT = re.compile(
    r"(?i)(?:\b(?:in|since|during|year|fy|between|until|through|before|after|vs|versus|q[1-4]"
    rf"|h[12]|{_MONTH_BEFORE}))\W*$"
)
_ID_CONTEXT = re.compile(
    r"(?i)(?:#|\b(?:id|sku|code|zip|invoice|store|customer|order|product|item|account|employee"
    r"|user|region|branch|warehouse|ticket)\s*(?:#|no\.?|id)?)\s*:?\s*$"
)


_EUROPEAN = re.compile(r"(?<![\d,.])\d{1,3}(?:\.\d{3})+(?![\d,.])")  # 1.000 could be 1000


@dataclass(frozen=True)
class Fact:
    """One normalised fact: its kind, value and displayed precision (`unit`), or its dates, or
    a `literal` text when only an exact repeat can match (a clock time, `1.000`)."""

    kind: str
    value: Decimal = Decimal(0)
    unit: Decimal = Decimal(1)
    year_like: bool = False
    year_context: bool = False
    literal: str = ""
    dates: frozenset[tuple[int, int, int]] = frozenset()


def _amount(text: str) -> tuple[Decimal, Decimal]:
    """The value and the displayed precision of the first number in `text` (with its scale)."""
    found = _DIGITS.search(text)
    assert found is not None
    digits = found.group(0).replace(",", "")
    scale = re.match(r"\s?([a-zA-Z]+)", text[found.end() :])
    exponent = _SCALES.get(scale.group(1).lower(), 0) if scale else 0
    decimals = len(digits.partition(".")[2])
    value = Decimal(digits).scaleb(exponent)
    if re.search(r"[-−]", text[: found.start()]):
        value = -value
    return value, Decimal(1).scaleb(exponent - decimals)


def _currency(text: str) -> str:
    symbol = re.search(r"[$€£¥]", text)
    if symbol:
        return _CURRENCIES[symbol.group(0)]
    unit = re.search(r"[A-Za-z]+$", text)
    return _CURRENCIES.get(unit.group(0).lower(), "?") if unit else "?"


def _valid(year: int, month: int, day: int) -> bool:
    try:
        date(year or 2000, month, day or 1)
    except ValueError:
        return False
    return True


def _month(text: str) -> int:
    name = re.search(r"[A-Za-z]{3,}", text)
    return _MONTH_NAMES.index(name.group(0)[:3].lower()) + 1 if name else 0


def _date_options(kind: str, text: str) -> set[tuple[int, int, int]]:
    """Every valid (year, month, day) reading of a date; 0 stands for a missing part."""
    nums = [int(n) for n in re.findall(r"\d+", text)]
    month = _month(text)
    if kind == "date_num":
        readings = [(nums[2], nums[0], nums[1]), (nums[2], nums[1], nums[0])]
    elif kind in ("date_mdy", "date_dmy"):
        readings = [(nums[-1], month, nums[0])]
    elif kind == "date_my":
        readings = [(nums[0], month, 0)]
    elif kind == "date_md":
        readings = [(0, month, nums[0])]
    elif kind == "date_m":
        readings = [(0, month, 0)]
    else:  # date_iso (year, month, day), date_ym (year, month)
        readings = [(nums[0], nums[1], nums[2] if len(nums) > 2 else 0)]
    return {r for r in readings if _valid(*r)}


def parse_fact(kind: str, text: str, before: str) -> Fact | None:
    """Parse one matched fact; `before` is the text preceding it on its line."""
    if kind.startswith("date"):
        options = _date_options(kind, text)
        return Fact("date", dates=frozenset(options)) if options else None
    if kind == "time":  # a clock time: equal or not, never material
        return Fact("time", literal=re.sub(r"[\s.]", "", text.lower()))
    fact = _number_fact(kind, text, before)
    european = _EUROPEAN.search(text)
    return replace(fact, literal=european.group(0)) if european else fact


def _number_fact(kind: str, text: str, before: str) -> Fact:
    value, unit = _amount(text)
    if kind == "money":
        return Fact(f"money{_currency(text)}", value, unit)
    if kind != "number":
        return Fact(kind, value, unit)
    plain = re.fullmatch(r"\d+", text) is not None
    if plain and _ID_CONTEXT.search(before):
        return Fact("id", value, unit)
    year_like = plain and len(text) == 4 and 1800 <= value <= 2100
    year_context = year_like and _YEAR_CONTEXT.search(before) is not None
    return Fact("number", value, unit, year_like, year_context)


# ------------------------------------------------------------------------------------------------
# comparing facts


def _rounds_to(a: Fact, b: Fact) -> bool:
    """True when the finer figure rounds to the coarser one at the coarser precision."""
    return abs(a.value - b.value) * 2 <= max(a.unit, b.unit)


def _compare_numbers(a: Fact, b: Fact) -> Outcome:
    if a.year_like or b.year_like:
        return "material" if a.year_context and b.year_context else "grey"
    if (a.value < 0) != (b.value < 0):
        return "grey" if abs(abs(a.value) - abs(b.value)) * 10 < abs(a.value) else "material"
    diff = abs(a.value - b.value)
    low, high = sorted((abs(a.value), abs(b.value)))
    money = a.kind.startswith("money")
    if low > 0 and (diff * 1000 < low or _rounding_match(a, b, money)):
        return "match"
    if not _rounds_to(a, b) and diff * 10 >= high and (not money or diff > 10):
        return "material"
    return "grey"


def _rounding_match(a: Fact, b: Fact, money: bool) -> bool:
    """Percentages equal after rounding (not to 0 or 100), currency under $1 off by rounding."""
    if not _rounds_to(a, b):
        return False
    if a.kind == "percent":
        coarser = a if a.unit >= b.unit else b
        return coarser.value not in (0, 100)
    return money and abs(a.value - b.value) < 1


def _compare_dates(a: Fact, b: Fact) -> Outcome:
    if a.dates == b.dates and len(a.dates) == 1:
        return "match"
    shape = {tuple(part == 0 for part in d) for d in a.dates | b.dates}
    if not a.dates & b.dates and len(shape) == 1:
        return "material"
    return "grey"


def compare_facts(a: Fact, b: Fact) -> Outcome:
    if a.kind != b.kind:
        return "other"
    if a.kind == "date":
        return _compare_dates(a, b)
    if a.literal or b.literal:  # a clock time, or `1.000`: one or one thousand
        return "match" if (a.literal, a.value) == (b.literal, b.value) else "grey"
    if a.value == b.value:
        return "match"
    if a.kind == "id":
        return "material"
    return _compare_numbers(a, b)

"""The deterministic pre-judge: settles pairs of agent answers before any LLM judge call (SPEC §5).

`prejudge(first, second, mode)` returns "A" (consistent), "B" (disagreement) or None (abstain:
the pair goes to the LLM judge). It is built to make no wrong decision; when unsure it abstains.

`identical` mode: "A" when `normalise` makes both answers equal (whitespace collapsed, case
folded, trailing `.!,;:` trimmed; a trailing `?` is kept), else None. `normalise` is also the key
that clusters identical outputs. `tolerant` mode applies the built-in prompt's rules:

Reading. Each answer becomes a sequence of content tokens, sentence by sentence:
- facts: numbers (`1,000`, `-3`, `1.2k`, `1.2 million`), currency (`$1,081,395.67`, `$1.2M`,
  `500 USD`), percentages (`42.67%`, `5 percent`), percentage points, ordinals (`2nd`),
  identifiers (`Store 12`, `#1043`, `ID 7`), dates (`2024-01-15`, `January 15, 2024`,
  `15 Jan 2024`, `01/15/2024` with every valid reading kept, `January 2024`, `March`) and clock
  times, each normalised to a value and its displayed precision (`$1.2M`: to $100K);
- direction words: class, polarity and synonym group (increased = rose = grew = up; decreased =
  fell = declined = dropped = down; surged/plunged; higher/lower; more/less; highest/lowest;
  most/least; best/worst; positive/negative; profit/loss; improved/worsened);
- negations (`not`, `no`, `never`, `n't`, ...);
- other words, lower-cased, contractions expanded (`there're` -> `there are`), a final `s`
  dropped, `mean` = `average`; stopwords (articles, be/have/do, pronouns, `in`, `of`, `by`,
  `and`, ...) and approximations (`about`, `~`) dropped, but not acronyms (`US`, `IT`).
  Markdown (bullets, numbering, headings, bold, table pipes and rules) is ignored.

Alignment. Same length: position by position. Otherwise one answer must be the other plus whole
prose sentences of at most 12 plain words (no fact, direction, negation, hedge, contrast word
such as `but`/`only`/`missing`, no word naming one thing such as `leads`, no list item or table
row, no word of the shorter answer), or the shorter is a bare answer (facts only) that the longer
restates. Anything else abstains: word order matters, so `South: $3M, North: $5M` is not judged.

Each aligned pair is a match, grey, material or unrelated:
- match: equal facts or words; numbers within 0.1 % relative; percentages equal at the coarser
  precision (42.67 % = 42.7 %; 42 % = 42.4 %; never rounding to 0 % or 100 %); currency under $1
  apart when that is a rounding ($12 = $12.40); dates equal;
- material: a number at least 10 % off (and over $10 for currency) that no rounding explains
  ($500,000 vs $450,000; but not $1M vs $1.4M); another date, identifier or year (a year only in
  a year context: `in 2024`); a reversed direction word (increased vs decreased); another proper
  name in a sentence that names one thing (`The top region is West` vs `... East`: a Title-case
  word inside the sentence, the sentence with `top`, `most`, `leads`, `busiest`, `only`,
  `except`, ... or a table cell; not a generic data word, not a prefix or a one- or two-letter
  spelling variant, not named anywhere in the other answer);
- grey: a gap between the thresholds, a sign flip, a year-like number out of context, a clock
  time or a `1.000` (one, or one thousand?) that is not repeated exactly, dates of different
  precision or with two readings;
- unrelated: any other difference (other words, other kinds of fact, a fact against a word).

Verdict: any unrelated pair abstains. A material pair gives "B" unless its sentence holds a
negation, a hedge (`if`, `or`, `may`, `about`, ...), the agent narrating its work (`I`,
`query`, `step`, ...) or a negative number, or the sentence reverses two directions (`lower
prices, more sales` vs `higher prices, fewer sales`). Otherwise a grey pair abstains, and all
matches give "A".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal
from typing import Literal

Verdict = Literal["A", "B"]
Mode = Literal["identical", "tolerant"]
Outcome = Literal["match", "grey", "material", "other"]
TokenKind = Literal["word", "dir", "neg", "fact"]

__all__ = ["Verdict", "normalise", "prejudge"]

# ------------------------------------------------------------------------------------------------
# identical mode


_TRAILING = ".!,;:… \t"


def normalise(text: str) -> str:
    """Collapse whitespace, fold case and trim trailing sentence punctuation (not `?`)."""
    return " ".join(text.split()).casefold().rstrip(_TRAILING)


def prejudge(first: str, second: str, mode: Mode) -> Verdict | None:
    """Settle a pair when certain: "A" consistent, "B" disagreement, None to ask the judge."""
    if mode not in ("identical", "tolerant"):
        raise ValueError(f"unknown pre-judge mode {mode!r}")
    if normalise(first) == normalise(second):
        return "A"
    if mode == "identical":
        return None
    return _tolerant(_read(first), _read(second))


# ------------------------------------------------------------------------------------------------
# vocabulary


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOPWORDS = _words(
    "a an the is are was were be been being am has have had having do does did done "
    "it its this that these those there here which who whom whose we our us i my me you your "
    "they their them in on at of by for with as and into within go goes went gone"
)
_APPROXIMATE = _words("approximately approx about around roughly circa ~ ≈")
_NEGATIONS = _words("not no never none nothing neither nor without cannot")
_PROCESS = _words(
    "i my me query queries sql tool step steps attempt attempts ran executed analyzed analysed "
    "checked searched retrieved fetched looked"
)  # the agent narrating its work: a number there is not the answer
_HEDGES = (
    _APPROXIMATE
    | _PROCESS
    | _words(
        "if unless whether or either may might could possibly perhaps maybe probably likely "
        "unlikely estimate estimated assuming assume expected projected forecast"
    )
)
_CONTRAST = (
    _NEGATIONS
    | _HEDGES
    | _words(
        "but however although though whereas while yet despite except excluding exclude excluded "
        "only instead rather actually correction corrected incorrect wrong error mistake unclear "
        "unknown uncertain also tie tied same different previously revised missing incomplete "
        "partial unavailable approximate exactly precisely ?"
    )
)
_SYNONYMS = {"mean": "average", "avg": "average", "sum": "total", "percentage": "percent"}
_GENERIC = _words(
    "revenue sale total average median count number profit margin cost price order customer "
    "user unit quantity amount growth rate region product category month year quarter week day "
    "date store summary overview analysis result answer insight finding note conclusion table "
    "data value share percent change trend top item key metric report"
)
_EXCLUSIVE = _words(
    "top highest largest biggest greatest maximum max most best lowest smallest bottom minimum "
    "min least fewest worst lead leads led leading leader busiest popular dominant primary main "
    "mainly mostly primarily largely first winner strongest weakest peak peaked except only"
)  # a sentence with one of these names one thing: another name in its slot contradicts it
_CONTRACTIONS = {"n't": ["not"], "'re": ["are"], "'ve": ["have"], "'ll": ["will"], "'d": ["would"]}
_CONTRACTIONS |= {"'m": ["am"], "'s": []}
_IRREGULAR = {"won't": ["will", "not"], "can't": ["can", "not"], "cannot": ["can", "not"]}

_DIRECTIONS: dict[str, str] = {}


def _direction(cls: str, polarity: str, group: str, words: str) -> None:
    for word in words.split():
        _DIRECTIONS[word] = f"{cls}:{polarity}:{group}"


_direction(
    "trend",
    "+",
    "up",
    "increase increases increased increasing rise rises rose risen rising grow grows grew "
    "grown growing growth climb climbs climbed climbing gain gains gained gaining up upward "
    "upwards",
)
_direction("trend", "+", "sharp", "surge surges surged surging soar soars soared jump jumped")
_direction(
    "trend",
    "-",
    "down",
    "decrease decreases decreased decreasing decline declines declined declining fall falls "
    "fell fallen falling drop drops dropped dropping shrink shrinks shrank shrunk shrinking "
    "down downward downwards downturn reduce reduced reduces reduction lose loses lost losing",
)
_direction("trend", "-", "sharp", "plunge plunged plummet plummeted slump slumped crashed")
_direction("compare", "+", "more", "higher more greater larger bigger above over")
_direction("compare", "-", "less", "lower less fewer smaller below under")
_direction("extreme", "+", "top", "highest largest biggest greatest top maximum max")
_direction("extreme", "+", "most", "most")
_direction("extreme", "+", "best", "best")
_direction("extreme", "-", "bottom", "lowest smallest bottom minimum min")
_direction("extreme", "-", "least", "least fewest")
_direction("extreme", "-", "worst", "worst")
_direction("sign", "+", "positive", "positive")
_direction("sign", "-", "negative", "negative")
_direction("outcome", "+", "profit", "profit profits profitable surplus")
_direction("outcome", "-", "loss", "loss losses unprofitable deficit")
_direction("quality", "+", "better", "improve improves improved improving improvement better")
_direction("quality", "-", "worse", "worsen worsens worsened worsening deteriorated worse")

# ------------------------------------------------------------------------------------------------
# facts

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
_PATTERNS = {
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
    "word": r"[^\W\d_](?:[\w'’-]*\w)?|\d(?:[\w'’-]*\w)?",
    "stop": r"[.!?;]+(?=\s|$)",
    "colon": r":(?=\s|$)",
    "approx": r"[~≈]",
}
_MASTER = re.compile("|".join(f"(?P<{name}>{rx})" for name, rx in _PATTERNS.items()))
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


def _fact(kind: str, text: str, before: str) -> Fact | None:
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
# reading an answer


@dataclass(frozen=True)
class _Token:
    kind: TokenKind
    key: str
    sent: int
    cap: bool = False
    fact: Fact | None = None


@dataclass
class _Answer:
    """An answer read as content tokens, with the sentences where a difference is not trusted."""

    tokens: list[_Token] = field(default_factory=list)
    blocked: set[int] = field(default_factory=set)
    exclusive: set[int] = field(default_factory=set)
    items: set[int] = field(default_factory=set)
    keys: set[str] = field(default_factory=set)
    sent: int = 0
    initial: bool = True
    prev_title: bool = False
    prev_token: int | None = None

    def end_sentence(self, initial: bool = True) -> None:
        if self.tokens and self.tokens[-1].sent == self.sent:
            self.sent += 1
        self.initial = initial
        self.forget()

    def forget(self) -> None:
        """The next word has no previous word next to it."""
        self.prev_title = False
        self.prev_token = None

    def add(self, token: _Token) -> None:
        self.tokens.append(token)
        if token.kind == "word":
            self.keys.add(token.key)

    def block(self) -> None:
        self.blocked.add(self.sent)


_TABLE_RULE = re.compile(r"\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*")
_MARKER = re.compile(r"^\s*(?:>\s*)*(?:#+\s*|[-*+•]\s+|\d{1,2}[.)]\s+)?")
_ITEM = re.compile(r"\s*(?:[-*+•]|\d{1,2}[.)])\s")
_BOLD_LINE = re.compile(r"\s*(?:\*\*|__)[^*_]+(?:\*\*|__):?\s*")


def _heading(line: str, following: str) -> bool:
    """A Markdown heading, a bold-only line, a table header or a line in Title Case."""
    words = re.findall(r"[^\W\d_]+", line)
    return (
        line.lstrip().startswith("#")
        or _BOLD_LINE.fullmatch(line) is not None
        or _TABLE_RULE.fullmatch(following) is not None
        or (len(words) > 1 and all(word[0].isupper() for word in words))
    )


def _read(text: str) -> _Answer:
    """Read an answer line by line; Markdown markers and table rules are skipped."""
    answer = _Answer()
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if _TABLE_RULE.fullmatch(line):
            continue
        heading = _heading(line, lines[index + 1] if index + 1 < len(lines) else "")
        row = line.lstrip().startswith("|")
        answer.initial = not row
        first, count = answer.sent, len(answer.tokens)
        marker = _MARKER.match(line)
        _read_line(answer, line[marker.end() if marker else 0 :], heading)
        if row:  # a table cell holds one value
            answer.exclusive.update(range(first, answer.sent + 1))
        if row or _ITEM.match(line):
            answer.items.update(range(count, len(answer.tokens)))
        answer.end_sentence()
    return answer


def _read_line(answer: _Answer, line: str, heading: bool) -> None:
    shouting = not any(char.islower() for char in line)
    for match in _MASTER.finditer(line):
        kind = match.lastgroup or ""
        text = match.group(0)
        if kind in ("stop", "colon"):
            if "?" in text:
                answer.add(_Token("word", "?", answer.sent))
            answer.end_sentence(initial=kind == "stop")
        elif kind == "word":
            label = line[match.end() : match.end() + 1] == ":"
            acronym = text.isupper() and len(text) > 1 and not shouting  # US, IT: not stopwords
            _read_word(answer, text, heading or label, acronym)
        elif kind == "approx":
            answer.block()
        else:
            _read_fact(answer, kind, text, line[: match.start()])


def _read_fact(answer: _Answer, kind: str, text: str, before: str) -> None:
    fact = _fact(kind, text, before)
    if fact is None:
        _read_word(answer, text, True)
        return
    if fact.kind != "date" and fact.value < 0:
        answer.block()
    answer.add(_Token("fact", "", answer.sent, fact=fact))
    answer.initial = False
    answer.forget()


def _expand(word: str) -> list[str]:
    """Lower-case a word and expand its contraction (`there're` -> `there`, `are`)."""
    lower = word.lower().replace("’", "'")
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    for suffix, parts in _CONTRACTIONS.items():
        if lower.endswith(suffix) and len(lower) > len(suffix):
            return [lower[: -len(suffix)], *parts]
    return [lower.replace("'", "")]


def _stem(word: str) -> str:
    word = _SYNONYMS.get(word, word)
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return _SYNONYMS.get(word[:-1], word[:-1])
    return word


def _read_word(answer: _Answer, raw: str, plain: bool, acronym: bool = False) -> None:
    """Read one word; a Title-case word inside a sentence, alone, may be a proper name."""
    title = raw[:1].isupper() and not raw.isupper()
    cap = title and not (plain or answer.initial or answer.prev_title)
    if title and answer.prev_token is not None:
        previous = answer.tokens[answer.prev_token]
        answer.tokens[answer.prev_token] = replace(previous, cap=False)
    count = len(answer.tokens)
    for part in [raw.lower()] if acronym else _expand(raw):
        _read_part(answer, part, cap, acronym)
        cap = False
    answer.prev_title = title and not answer.initial
    answer.initial = False
    answer.prev_token = count if len(answer.tokens) > count else None


def _read_part(answer: _Answer, part: str, cap: bool, keep: bool = False) -> None:
    if part in _NEGATIONS or part in _HEDGES:
        answer.block()
    if part in _NEGATIONS:
        answer.add(_Token("neg", part, answer.sent))
    elif part in _DIRECTIONS:
        answer.add(_Token("dir", _DIRECTIONS[part], answer.sent))
    elif keep or (part and part not in _STOPWORDS and part not in _APPROXIMATE):
        answer.add(_Token("word", _stem(part), answer.sent, cap=cap))
    if part in _EXCLUSIVE or any(piece in _EXCLUSIVE for piece in part.split("-")):
        answer.exclusive.add(answer.sent)


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


def _compare_facts(a: Fact, b: Fact) -> Outcome:
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


# ------------------------------------------------------------------------------------------------
# comparing tokens and deciding


def _edits(a: str, b: str) -> int:
    """Levenshtein distance."""
    row = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, other in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (char != other))
    return row[-1]


def _variant(a: str, b: str) -> bool:
    """Could be two spellings of one name: a prefix (abbreviation) or a near miss."""
    if a.startswith(b) or b.startswith(a):
        return True
    distance = _edits(a, b)
    return distance <= 1 or (distance <= 2 and min(len(a), len(b)) >= 6)


def _categorical(a: _Token, b: _Token, first: _Answer, second: _Answer) -> bool:
    """Two different proper names in the same slot of a sentence that names one thing (a top
    item, a table cell): a different categorical fact."""
    if not (a.cap and b.cap) or a.key in _GENERIC or b.key in _GENERIC:
        return False
    if a.sent not in first.exclusive and b.sent not in second.exclusive:
        return False
    if a.key in second.keys or b.key in first.keys:
        return False
    return not _variant(a.key, b.key)


def _compare(a: _Token, b: _Token, first: _Answer, second: _Answer) -> Outcome:
    if a.kind != b.kind:
        return "other"
    if a.fact is not None and b.fact is not None:
        return _compare_facts(a.fact, b.fact)
    if a.key == b.key:
        return "match"
    if a.kind == "dir" and a.key.split(":")[0] == b.key.split(":")[0]:
        same_polarity = a.key.split(":")[1] == b.key.split(":")[1]
        return "other" if same_polarity else "material"
    if a.kind == "word" and _categorical(a, b, first, second):
        return "material"
    return "other"


Pairs = list[tuple[int, int]]


def _extra_ok(extra: list[int], long: _Answer, short: _Answer) -> bool:
    """A small extension: at most 12 plain prose words, none contrasting, naming one thing or
    repeating the shorter answer (a list item or a table row is not an extension)."""
    if len(extra) > 12 or long.items.intersection(extra):
        return False
    banned = _CONTRAST | _EXCLUSIVE | short.keys
    return all(long.tokens[i].kind == "word" and long.tokens[i].key not in banned for i in extra)


def _sentence_edges(tokens: list[_Token], start: int, end: int) -> bool:
    starts = start == 0 or tokens[start - 1].sent != tokens[start].sent
    ends = end == len(tokens) or tokens[end].sent != tokens[end - 1].sent
    return starts and ends


def _alignments(short: _Answer, long: _Answer) -> list[tuple[Pairs, list[int]]]:
    """Candidate alignments of the shorter answer inside the longer, with the extra positions."""
    size, tokens = len(short.tokens), long.tokens
    if all(t.kind == "fact" for t in short.tokens):
        facts = [i for i, t in enumerate(tokens) if t.kind == "fact"]
        if len(facts) != size:
            return []
        rest = [i for i, t in enumerate(tokens) if t.kind != "fact"]
        return [(list(zip(range(size), facts, strict=True)), rest)]
    found = []
    for start in range(len(tokens) - size + 1):
        if _sentence_edges(tokens, start, start + size):
            pairs = [(i, start + i) for i in range(size)]
            found.append((pairs, [*range(start), *range(start + size, len(tokens))]))
    return found


def _align(first: _Answer, second: _Answer) -> Pairs | None:
    """Position pairs (first, second) of the single acceptable alignment, else None."""
    if len(first.tokens) == len(second.tokens):
        return [(i, i) for i in range(len(first.tokens))]
    swap = len(first.tokens) > len(second.tokens)
    short, long = (second, first) if swap else (first, second)
    usable = []
    for pairs, extra in _alignments(short, long):
        outcomes = {_compare(short.tokens[i], long.tokens[j], short, long) for i, j in pairs}
        if "other" not in outcomes and _extra_ok(extra, long, short):
            usable.append([(j, i) for i, j in pairs] if swap else pairs)
    return usable[0] if len(usable) == 1 else None


def _tolerant(first: _Answer, second: _Answer) -> Verdict | None:
    if not first.tokens or not second.tokens:
        return None
    pairs = _align(first, second)
    if pairs is None:
        return None
    return _decide([(first.tokens[i], second.tokens[j]) for i, j in pairs], first, second)


def _decide(pairs: list[tuple[_Token, _Token]], first: _Answer, second: _Answer) -> Verdict | None:
    """Any unrelated difference abstains; a trusted material one is "B"; all matches are "A"."""
    outcomes = [_compare(a, b, first, second) for a, b in pairs]
    if "other" in outcomes:
        return None
    material = [pair for pair, seen in zip(pairs, outcomes, strict=True) if seen == "material"]
    if any(a.sent in first.blocked or b.sent in second.blocked for a, b in material):
        return None
    reversals = Counter(a.sent for a, _ in material if a.kind == "dir")
    if any(count > 1 for count in reversals.values()):
        return None  # "lower prices, more sales" vs "higher prices, fewer sales"
    if material:
        return "B"
    return None if "grey" in outcomes else "A"

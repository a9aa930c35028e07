"""An agent's answer as the pre-judge (`tasks.prejudge`) reads it: content tokens, sentence by
sentence, and the word lists its rules use.

`read_answer` reads line by line, skipping Markdown (bullets, numbering, headings, bold, table
pipes and rules), into facts (`tasks.prejudge_facts`), direction words (class, polarity and
synonym group: increased = rose, higher vs lower, ...), negations, and other words (lower-cased,
contractions expanded, a final `s` dropped, stopwords and approximations dropped, acronyms
kept). It marks the sentences where a difference is not trusted (a negation, a hedge, the agent
narrating its work, a negative number, `~`), the sentences that name one thing (`top`, `only`,
a table cell), the tokens of list items and table rows, and the Title-case words inside a
sentence that may be proper names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Literal

from .facts import FACT_PATTERNS, Fact, parse_fact

TokenKind = Literal["word", "dir", "neg", "fact"]

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
CONTRAST = (
    _NEGATIONS
    | _HEDGES
    | _words(
        "but however although though whereas while yet despite except excluding exclude excluded "
        "only instead rather actually correction corrected incorrect wrong error mistake unclear "
        "unknown uncertain also tie tied same different previously revised missing incomplete "
        "partial unavailable approximate exactly precisely ?"
    )
)  # an added sentence with one of these may change what the answer says
_SYNONYMS = {"mean": "average", "avg": "average", "sum": "total", "percentage": "percent"}
GENERIC = _words(
    "revenue sale total average median count number profit margin cost price order customer "
    "user unit quantity amount growth rate region product category month year quarter week day "
    "date store summary overview analysis result answer insight finding note conclusion table "
    "data value share percent change trend top item key metric report"
)  # data words: another one in a name's slot is not another name
EXCLUSIVE = _words(
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
# reading an answer


@dataclass(frozen=True)
class Token:
    """One content token: a fact, a direction (`key` is `class:polarity:group`), a negation or
    a word, with its sentence and whether it may be a proper name (`cap`)."""

    kind: TokenKind
    key: str
    sent: int
    cap: bool = False
    fact: Fact | None = None


@dataclass
class Answer:
    """An answer read as content tokens, with the sentences where a difference is not trusted."""

    tokens: list[Token] = field(default_factory=list)
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

    def add(self, token: Token) -> None:
        self.tokens.append(token)
        if token.kind == "word":
            self.keys.add(token.key)

    def block(self) -> None:
        self.blocked.add(self.sent)


_TOKEN_PATTERNS = {
    **FACT_PATTERNS,
    "word": r"[^\W\d_](?:[\w'’-]*\w)?|\d(?:[\w'’-]*\w)?",
    "stop": r"[.!?;]+(?=\s|$)",
    "colon": r":(?=\s|$)",
    "approx": r"[~≈]",
}
_MASTER = re.compile("|".join(f"(?P<{name}>{rx})" for name, rx in _TOKEN_PATTERNS.items()))
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


def read_answer(text: str) -> Answer:
    """Read an answer line by line; Markdown markers and table rules are skipped."""
    answer = Answer()
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


def _read_line(answer: Answer, line: str, heading: bool) -> None:
    shouting = not any(char.islower() for char in line)
    for match in _MASTER.finditer(line):
        kind = match.lastgroup or ""
        text = match.group(0)
        if kind in ("stop", "colon"):
            if "?" in text:
                answer.add(Token("word", "?", answer.sent))
            answer.end_sentence(initial=kind == "stop")
        elif kind == "word":
            label = line[match.end() : match.end() + 1] == ":"
            acronym = text.isupper() and len(text) > 1 and not shouting  # US, IT: not stopwords
            _read_word(answer, text, heading or label, acronym)
        elif kind == "approx":
            answer.block()
        else:
            _read_fact(answer, kind, text, line[: match.start()])


def _read_fact(answer: Answer, kind: str, text: str, before: str) -> None:
    fact = parse_fact(kind, text, before)
    if fact is None:
        _read_word(answer, text, True)
        return
    if fact.kind != "date" and fact.value < 0:
        answer.block()
    answer.add(Token("fact", "", answer.sent, fact=fact))
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


def _read_word(answer: Answer, raw: str, plain: bool, acronym: bool = False) -> None:
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


def _read_part(answer: Answer, part: str, cap: bool, keep: bool = False) -> None:
    if part in _NEGATIONS or part in _HEDGES:
        answer.block()
    if part in _NEGATIONS:
        answer.add(Token("neg", part, answer.sent))
    elif part in _DIRECTIONS:
        answer.add(Token("dir", _DIRECTIONS[part], answer.sent))
    elif keep or (part and part not in _STOPWORDS and part not in _APPROXIMATE):
        answer.add(Token("word", _stem(part), answer.sent, cap=cap))
    if part in EXCLUSIVE or any(piece in EXCLUSIVE for piece in part.split("-")):
        answer.exclusive.add(answer.sent)

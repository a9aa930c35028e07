"""The deterministic pre-judge: settles pairs of agent answers before any LLM judge call (SPEC §5).

`prejudge(first, second, mode)` returns "A" (consistent), "B" (disagreement) or None (abstain:
the pair goes to the LLM judge). It is built to make no wrong decision; when unsure it abstains.
This module aligns two answers and decides; `tasks.prejudge_reading` reads an answer into
tokens and `tasks.prejudge_facts` finds, normalises and compares its facts.

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

from collections import Counter
from typing import Literal

from .facts import Outcome, compare_facts
from .reading import CONTRAST, EXCLUSIVE, GENERIC, Answer, Token, read_answer

Verdict = Literal["A", "B"]
Mode = Literal["identical", "tolerant"]

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
    return _tolerant(read_answer(first), read_answer(second))


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


def _categorical(a: Token, b: Token, first: Answer, second: Answer) -> bool:
    """Two different proper names in the same slot of a sentence that names one thing (a top
    item, a table cell): a different categorical fact."""
    if not (a.cap and b.cap) or a.key in GENERIC or b.key in GENERIC:
        return False
    if a.sent not in first.exclusive and b.sent not in second.exclusive:
        return False
    if a.key in second.keys or b.key in first.keys:
        return False
    return not _variant(a.key, b.key)


def _compare(a: Token, b: Token, first: Answer, second: Answer) -> Outcome:
    if a.kind != b.kind:
        return "other"
    if a.fact is not None and b.fact is not None:
        return compare_facts(a.fact, b.fact)
    if a.key == b.key:
        return "match"
    if a.kind == "dir" and a.key.split(":")[0] == b.key.split(":")[0]:
        same_polarity = a.key.split(":")[1] == b.key.split(":")[1]
        return "other" if same_polarity else "material"
    if a.kind == "word" and _categorical(a, b, first, second):
        return "material"
    return "other"


Pairs = list[tuple[int, int]]


def _extra_ok(extra: list[int], long: Answer, short: Answer) -> bool:
    """A small extension: at most 12 plain prose words, none contrasting, naming one thing or
    repeating the shorter answer (a list item or a table row is not an extension)."""
    if len(extra) > 12 or long.items.intersection(extra):
        return False
    banned = CONTRAST | EXCLUSIVE | short.keys
    return all(long.tokens[i].kind == "word" and long.tokens[i].key not in banned for i in extra)


def _sentence_edges(tokens: list[Token], start: int, end: int) -> bool:
    starts = start == 0 or tokens[start - 1].sent != tokens[start].sent
    ends = end == len(tokens) or tokens[end].sent != tokens[end - 1].sent
    return starts and ends


def _alignments(short: Answer, long: Answer) -> list[tuple[Pairs, list[int]]]:
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


def _align(first: Answer, second: Answer) -> Pairs | None:
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


def _tolerant(first: Answer, second: Answer) -> Verdict | None:
    if not first.tokens or not second.tokens:
        return None
    pairs = _align(first, second)
    if pairs is None:
        return None
    return _decide([(first.tokens[i], second.tokens[j]) for i, j in pairs], first, second)


def _decide(pairs: list[tuple[Token, Token]], first: Answer, second: Answer) -> Verdict | None:
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

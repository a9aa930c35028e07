"""promptfoo's scored comparisons and budgets: levenshtein, rouge-n, bleu, cost, latency
(0.118, `src/assertions/levenshtein.ts`, `rouge.ts` with js-rouge's `n`, `bleu.ts`,
`cost.ts`, `latency.ts`).

- levenshtein: pass when the edit distance is at most `threshold` (default 5); score 1 or
  0; `not-` is ignored, as in promptfoo. The distance is rapidfuzz's.
- rouge-n: js-rouge's ROUGE-N with n = 1 (promptfoo passes no options): the F1 of the
  unigram overlap of Penn-Treebank-style tokens, case-sensitive; pass when the score reaches
  `threshold` (default 0.75) XOR `not-`; the score is 1 - score under `not-`.
- bleu: promptfoo's own BLEU-4 (lower-cased whitespace tokens, clipped n-gram precisions
  over the references, a zero precision smoothed to 1e-7, the brevity penalty against the
  reference closest in length); pass at `threshold` (default 0.5) XOR `not-`, the score
  1 - score under `not-`.
- cost, latency: pass when the target's cost (USD) or latency (ms) is at most `threshold`;
  both need a threshold; `not-` is ignored.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from .....evaluators.base import EvaluatorFailure, Finding
from .base import PromptfooAssertion, output_string

if TYPE_CHECKING:
    from .....evaluators.cases import Case, Output


def _js_number(value: float) -> str:
    """A threshold as JavaScript prints a number (0.5, 5)."""
    return f"{value:g}" if not float(value).is_integer() else str(int(value))


class Levenshtein(PromptfooAssertion):
    async def evaluate(self, ev: Any, case: Case, output: Output) -> Finding:
        value = self.rendered(case)
        if not isinstance(value, str):
            raise EvaluatorFailure('"levenshtein" assertion type must have a string value')
        # imported when used: 9 ms of the start of every run of a promptfoo config otherwise
        from rapidfuzz.distance import Levenshtein as _Levenshtein

        distance = _Levenshtein.distance(output_string(output), value)
        limit = self.pass_threshold if self.pass_threshold is not None else 5.0
        ok = distance <= limit
        reason = (
            ""
            if ok
            else f"Levenshtein distance {distance} is greater than threshold {_js_number(limit)}"
        )
        return self.result(ok, reason=reason, metadata={"distance": distance})


# --- ROUGE-N ---------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=\S)")
# words whose period ends no sentence: titles, common, place, date and company
# abbreviations, as English sentence splitters keep them
ABBREVIATIONS = frozenset(
    [
        "jr",
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "sr",
        "sen",
        "rep",
        "gov",
        "atty",
        "supt",
        "det",
        "rev",
        "col",
        "gen",
        "lt",
        "cmdr",
        "adm",
        "capt",
        "sgt",
        "cpl",
        "maj",
        "esq",
        "phd",
        "hon",
        "messrs",
        "mlle",
        "mme",
        "pvt",
        "st",
        "mt",
        "rd",
        "ave",
        "blvd",
        "hwy",
        "co",
        "corp",
        "inc",
        "ltd",
        "bros",
        "dept",
        "univ",
        "assn",
        "vs",
        "etc",
        "esp",
        "ft",
        "ca",
        "cca",
        "circa",
        "ex",
        "al",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "nov",
        "dec",
        "calif",
        "fla",
        "penn",
        "tex",
        "wash",
        "e.g",
        "i.e",
        "v.s",
        "b.c",
        "a.d",
        "a.m",
        "p.m",
        "u.s",
        "u.s.a",
        "e.u",
    ]
)
_CONTRACTIONS = re.compile(r"(?i)('s|'m|'d|'ll|'re|'ve|n't)$")
# the Penn Treebank's words of two tokens
_TWO_WORDS = re.compile(
    r"(?i)^(?:(can)(not)|(d)('ye)|(gim)(me)|(gon)(na)|(got)(ta)|(lem)(me)|(more)('n)"
    r"|(wan)(na)|('t)(is)|('t)(was))$"
)


def treebank_tokens(text: str) -> list[str]:
    """Penn-Treebank-style tokens of a text, sentence by sentence: punctuation, brackets
    and quotes split off; a sentence's final period split off (not an abbreviation's inner
    ones); contractions split (`can't` -> `ca`, `n't`). js-rouge's tokenizer follows these
    rules; its sentence splitter knows more abbreviations than this one."""
    tokens: list[str] = []
    for sentence in _sentences(" ".join(text.split())):
        tokens.extend(_sentence_tokens(sentence))
    return tokens


def _sentences(text: str) -> list[str]:
    """The text cut after each `.`, `!` or `?` that ends a word and is followed by more
    text, unless that word is a known abbreviation."""
    out: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        word = text[start : match.start()].rsplit(" ", 1)[-1]
        if word.endswith(".") and word[:-1].lower().lstrip("(\"'") in ABBREVIATIONS:
            continue
        out.append(text[start : match.start()])
        start = match.end()
    out.append(text[start:])
    return [s for s in out if s]


def _sentence_tokens(sentence: str) -> list[str]:
    text = sentence.replace('"', " '' ")
    text = text.replace("...", " ... ")
    text = re.sub(r"[:,](?!\d)", r" \g<0> ", text)
    text = re.sub(r"[;@#$%&?!\[\](){}<>]", r" \g<0> ", text)
    text = text.replace("--", " -- ")
    # a final period is split off, but not the last one of a dotted abbreviation (p.m.)
    text = re.sub(r"([^.])(?<!\b[A-Za-z]\.[A-Za-z])(\.)([\])}>'\s]*)$", r"\1 \2\3 ", text.rstrip())
    out: list[str] = []
    for word in text.split():
        pair = _TWO_WORDS.match(word)
        match = _CONTRACTIONS.search(word)
        if pair:
            out.extend(part for part in pair.groups() if part)
        elif match and match.start() > 0:
            out.extend([word[: match.start()], word[match.start() :]])
        elif len(word) > 1 and word.endswith("'") and word != "''":
            out.extend([word[:-1], "'"])
        else:
            out.append(word)
    return out


def rouge_n(candidate: str, reference: str, n: int = 1) -> float:
    """js-rouge's `n`: F1 of the n-gram overlap (each reference n-gram matched once)."""
    if not candidate.strip():
        raise EvaluatorFailure("Candidate cannot be an empty string")
    if not reference.strip():
        raise EvaluatorFailure("Reference cannot be an empty string")
    cand, ref = treebank_tokens(candidate), treebank_tokens(reference)
    if len(cand) < n or len(ref) < n:
        return 0.0
    cand_grams = [tuple(cand[i : i + n]) for i in range(len(cand) - n + 1)]
    ref_grams = Counter(tuple(ref[i : i + n]) for i in range(len(ref) - n + 1))
    matches = sum((Counter(cand_grams) & ref_grams).values())
    if matches == 0:
        return 0.0
    precision = matches / len(cand_grams)
    recall = matches / sum(ref_grams.values())
    if precision == recall:
        return precision
    return 2 * precision * recall / (precision + recall)


class RougeN(PromptfooAssertion):
    async def evaluate(self, ev: Any, case: Case, output: Output) -> Finding:
        value = self.rendered(case)
        if not isinstance(value, str):
            raise EvaluatorFailure('"rouge" assertion type must be a string value')
        score = rouge_n(output_string(output), value)
        limit = self.pass_threshold if self.pass_threshold is not None else 0.75
        ok = (score >= limit) != self.inverse
        relation = "is greater than or equal to" if ok else "is less than"
        reason = f"ROUGE-N score {score:.2f} {relation} threshold {_js_number(limit)}"
        return self.result(ok, 1 - score if self.inverse else score, reason)


# --- BLEU --------------------------------------------------------------------------------------


def _grams(words: list[str], n: int) -> list[str]:
    return (
        [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)] if n <= len(words) else []
    )


def _words(text: str) -> list[str]:
    stripped = text.lower().strip()
    return re.split(r"\s+", stripped) if stripped else [""]


def bleu(candidate: str, references: list[str]) -> float:
    """promptfoo's `calculateBleuScore` with its default weights (1/4 each)."""
    if not candidate or not references:
        raise EvaluatorFailure("Invalid inputs")
    words = _words(candidate)
    lengths = [len(_words(r)) for r in references]
    closest = lengths[0]
    for length in lengths[1:]:
        if abs(length - len(words)) < abs(closest - len(words)):
            closest = length
    log_sum = 0.0
    for n in range(1, 5):
        grams = Counter(_grams(words, n))
        total = sum(grams.values())
        best = 0
        for reference in references:
            ref = Counter(_grams(_words(reference), n))
            best = max(best, sum(min(c, ref.get(g, 0)) for g, c in grams.items()))
        precision = best / total if total else 0.0
        log_sum += 0.25 * math.log(precision or 1e-7)
    penalty = 1.0 if len(words) > closest else math.exp(1 - len(words) / closest)
    return penalty * math.exp(log_sum)


class Bleu(PromptfooAssertion):
    async def evaluate(self, ev: Any, case: Case, output: Output) -> Finding:
        value = self.rendered(case)
        if isinstance(value, str):
            references = [value]
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            references = value
        else:
            raise EvaluatorFailure(
                '"bleu" assertion type must have a string or array of strings value'
            )
        score = bleu(output_string(output), references)
        limit = self.pass_threshold if self.pass_threshold is not None else 0.5
        ok = (score >= limit) != self.inverse
        side = "greater" if self.inverse else "less"
        reason = (
            "" if ok else f"BLEU score {score:.4f} is {side} than threshold {_js_number(limit)}"
        )
        return self.result(ok, 1 - score if self.inverse else score, reason)


# --- budgets -----------------------------------------------------------------------------------


class Cost(PromptfooAssertion):
    async def evaluate(self, ev: Any, case: Case, output: Output) -> Finding:
        if not self.pass_threshold:
            raise EvaluatorFailure("Cost assertion must have a threshold")
        if output.cost is None:
            raise EvaluatorFailure(
                "Cost assertion does not support providers that do not return cost"
            )
        limit = self.pass_threshold
        ok = output.cost <= limit
        reason = (
            "" if ok else f"Cost {output.cost:.2g} is greater than threshold {_js_number(limit)}"
        )
        return self.result(ok, reason=reason, metadata={"cost": output.cost})


class Latency(PromptfooAssertion):
    async def evaluate(self, ev: Any, case: Case, output: Output) -> Finding:
        if not self.pass_threshold:
            raise EvaluatorFailure("Latency assertion must have a threshold in milliseconds")
        if output.duration_ms is not None:
            latency = output.duration_ms
        elif output.seconds > 0:
            latency = output.seconds * 1000
        else:
            raise EvaluatorFailure(
                "Latency assertion does not support cached results: run again with --cache off"
            )
        ms = round(latency)
        ok = ms <= self.pass_threshold
        reason = (
            ""
            if ok
            else f"Latency {ms}ms is greater than threshold {_js_number(self.pass_threshold)}ms"
        )
        return self.result(ok, reason=reason, metadata={"latency_ms": ms})

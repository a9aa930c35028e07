"""Retrieval (RAG) evaluators after Ragas' definitions, scores clipped to [0, 1].

Contexts: `retrieved` are what the target returned (`Output.contexts`); `reference` are the
case's `contexts`; the reference answer is the case's `expected`. Each metric asks a judge when
one is configured (`model` here, or the suite's judge model) and `mode` is not `lexical`;
otherwise it computes a string-similarity score. The finding's `scoring` says which
(`model` or `lexical`), as the report does.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from ...engine.errors import AccordError
from .base import EvaluatorFailure, EvaluatorSpec, Finding, ThresholdSpec, clip, evaluator

if TYPE_CHECKING:
    from .cases import Case, Output
    from .judging import EvalContext

Mode = Literal["auto", "model", "lexical"]


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(";").strip().lower()


def string_similarity(a: str, b: str, *, normalise: bool = True) -> float:
    """Normalised Levenshtein similarity (Ragas' non-LLM string comparison); with
    `normalise`, whitespace runs, a trailing `;` and letter case are ignored first (Oxy's
    recall of SQL), without it the texts are compared as they are (Ragas)."""
    from rapidfuzz.distance import Levenshtein

    if normalise:
        a, b = _normalise(a), _normalise(b)
    return float(Levenshtein.normalized_similarity(a, b))


def best_similarity(text: str, others: Sequence[str], *, normalise: bool = True) -> float:
    return max(
        (string_similarity(text, o, normalise=normalise) for o in others if o.strip()),
        default=0.0,
    )


def mean_best_similarity(references: Sequence[str], retrieved: Sequence[str]) -> float:
    """Mean, over the reference contexts, of the best similarity to a retrieved one (Oxy's
    context recall); 0 when nothing was retrieved."""
    if not references:
        raise ValueError("context recall needs at least one reference context")
    return sum(best_similarity(ref, retrieved) for ref in references) / len(references)


_WORD = re.compile(r"[\w']+")


def token_cosine(a: str, b: str) -> float:
    """Cosine of the two texts' word-count vectors (the lexical stand-in for embeddings)."""
    ca, cb = Counter(_WORD.findall(a.lower())), Counter(_WORD.findall(b.lower()))
    dot = sum(ca[w] * cb[w] for w in ca)
    norm = math.sqrt(sum(v * v for v in ca.values())) * math.sqrt(sum(v * v for v in cb.values()))
    return dot / norm if norm else 0.0


def average_precision(verdicts: Sequence[bool]) -> float:
    """Ragas' context precision: the mean of precision@k over the relevant positions k."""
    relevant = sum(verdicts)
    if not relevant:
        return 0.0
    total, hits = 0.0, 0
    for k, verdict in enumerate(verdicts, start=1):
        if verdict:
            hits += 1
            total += hits / k
    return total / relevant


def parse_json_list(reply: str) -> list[Any] | None:
    """The first JSON array in a reply (fenced or not), or None."""
    text = reply.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1).strip()
    start, end = text.find("["), text.rfind("]")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(text[start : end + 1])
    except ValueError:
        return None
    return data if isinstance(data, list) else None


def _verdict_list(reply: str, key: str = "verdict") -> list[dict[str, Any]] | None:
    """A JSON array of objects each with a 0/1 (or true/false) `key`, or None."""
    data = parse_json_list(reply)
    if data is None or not all(isinstance(d, dict) and key in d for d in data):
        return None
    for item in data:
        value = item[key]
        if isinstance(value, bool) or value in (0, 1, "0", "1"):
            item[key] = int(value)
        else:
            return None
    return data


class _Rag(EvaluatorSpec):
    deterministic: ClassVar[bool] = False
    default_threshold: ClassVar[ThresholdSpec | None] = None
    mode: Mode = Field("auto", description="model: ask a judge; lexical: string similarity; "
                       "auto: a judge when one is configured.")  # fmt: skip
    model: str | None = Field(None, description="The judge model (default: the suite's).")
    similarity_threshold: float = Field(
        0.5, ge=0, le=1, description="Lexical mode: the similarity at which two texts match."
    )

    def uses_model(self, judge_model: str | None) -> bool:
        if self.mode == "lexical":
            return False
        if self.mode == "model":
            return True
        return bool(self.model or judge_model)

    def calls_model(self, judge_model: str | None) -> bool:
        return self.uses_model(judge_model)

    def _retrieved(self, output: Output) -> list[str]:
        return [c for c in output.contexts if c.strip()]

    def _references(self, case: Case) -> list[str]:
        if not case.contexts:
            raise EvaluatorFailure(f"{self.type} needs the case's reference 'contexts'")
        return list(case.contexts)

    def _reference_answer(self, case: Case) -> str:
        if case.expected_text is None:
            raise EvaluatorFailure(f"{self.type} needs the case's expected answer")
        return case.expected_text

    async def _judge_list(
        self, ev: EvalContext, prompt: str, key: str = "verdict"
    ) -> list[dict[str, Any]]:
        found, _reply = await ev.ask(
            prompt, lambda r: _verdict_list(r, key), model=self.model,
            missing=f"JSON list of objects with '{key}' 0 or 1",
        )  # fmt: skip
        return found

    def _scored(self, score: float, reason: str, scoring: str, **metadata: Any) -> Finding:
        return self.finding(clip(score), reason, scoring=scoring, metadata=metadata)


def _numbered(items: Sequence[str]) -> str:
    return "\n".join(f"{i}. {text}" for i, text in enumerate(items, start=1))


@evaluator("context_precision")
class ContextPrecision(_Rag):
    """How high the relevant retrieved chunks rank: mean precision@k over relevant chunks."""

    type: Literal["context_precision"] = "context_precision"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        retrieved = self._retrieved(output)
        if not retrieved:
            return self._scored(0.0, "nothing retrieved", "none")
        if self.uses_model(ev.judge_model):
            reference = self._reference_answer(case)
            prompt = (
                f"Question: {case.prompt}\nReference answer: {reference}\n\nFor each numbered "
                f"context below, say whether it was useful in arriving at the reference answer."
                f"\n\n{_numbered(retrieved)}\n\nReply with a JSON array, one object per context "
                'in order: [{"reason": "...", "verdict": 1 or 0}, ...]'
            )
            verdicts = await self._judge_list(ev, prompt)
            if len(verdicts) != len(retrieved):
                raise EvaluatorFailure(
                    f"the judge gave {len(verdicts)} verdicts for {len(retrieved)} contexts"
                )
            flags = [bool(v["verdict"]) for v in verdicts]
            scoring = "model"
        else:
            references = self._references(case)
            threshold = self.similarity_threshold
            # Ragas: the raw texts; a context is relevant at or above the threshold
            flags = [
                best_similarity(c, references, normalise=False) >= threshold for c in retrieved
            ]
            scoring = "lexical"
        score = average_precision(flags)
        return self._scored(
            score, f"{sum(flags)} of {len(flags)} retrieved contexts relevant", scoring
        )


@evaluator("context_recall")
class ContextRecall(_Rag):
    """How much of the reference is found in what was retrieved.

    With a model: the share of the reference answer's claims attributable to the retrieved
    contexts. Without: the share of reference contexts matched by a retrieved one at
    `similarity_threshold`; with `similarity_threshold: null`, the mean best similarity of
    each reference context (Oxy's recall, reported as `recall` by Oxy's tests).
    """

    type: Literal["context_recall"] = "context_recall"
    similarity_threshold: float | None = Field(0.5, ge=0, le=1)  # type: ignore[assignment]
    needs_contexts: ClassVar[bool] = True

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        retrieved = self._retrieved(output)
        if self.uses_model(ev.judge_model):
            reference = self._reference_answer(case)
            prompt = (
                f"Contexts:\n{_numbered(retrieved) or '(none)'}\n\nReference answer:\n{reference}"
                "\n\nSplit the reference answer into its statements. For each, say whether it "
                "can be attributed to the contexts. Reply with a JSON array: "
                '[{"statement": "...", "reason": "...", "attributed": 1 or 0}, ...]'
            )
            verdicts = await self._judge_list(ev, prompt, "attributed")
            if not verdicts:
                raise EvaluatorFailure("the judge found no statements in the reference")
            hits = sum(v["attributed"] for v in verdicts)
            return self._scored(
                hits / len(verdicts), f"{hits} of {len(verdicts)} statements attributed", "model"
            )
        references = self._references(case)
        if self.similarity_threshold is None:
            score = mean_best_similarity(references, retrieved)
            return self._scored(score, "mean best similarity", "lexical")
        # Ragas: the raw texts; a reference is found only above the threshold
        best = [best_similarity(ref, retrieved, normalise=False) for ref in references]
        hits = sum(b > self.similarity_threshold for b in best)
        return self._scored(
            hits / len(best), f"{hits} of {len(best)} reference contexts found", "lexical"
        )


_ENTITY = re.compile(r"\b(?:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*|\d[\d,.]*)\b")


def lexical_entities(text: str) -> set[str]:
    """Capitalised phrases and numbers: the lexical stand-in for named entities."""
    return {m.group(0).lower().rstrip(".,") for m in _ENTITY.finditer(text)}


@evaluator("context_entities_recall")
class ContextEntitiesRecall(_Rag):
    """Share of the reference's entities that also appear in the retrieved contexts."""

    type: Literal["context_entities_recall"] = "context_entities_recall"

    async def _entities(self, ev: EvalContext, text: str) -> set[str]:
        prompt = (
            "List the named entities (people, places, organisations, dates, numbers, things) "
            f"in the text below as a JSON array of strings.\n\nText:\n{text}"
        )
        found, _ = await ev.ask(
            prompt, lambda r: _strings(parse_json_list(r)), model=self.model,
            missing="JSON array of entity strings",
        )  # fmt: skip
        return {e.strip().lower() for e in found if e.strip()}

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        reference = self._reference_answer(case)
        joined = "\n".join(self._retrieved(output))
        if self.uses_model(ev.judge_model):
            ref_entities = await self._entities(ev, reference)
            ctx_entities = await self._entities(ev, joined) if joined else set()
            scoring = "model"
        else:
            ref_entities, ctx_entities = lexical_entities(reference), lexical_entities(joined)
            scoring = "lexical"
        if not ref_entities:
            return self.finding(
                None, "no entities in the reference", skipped="no entities", scoring=scoring
            )
        common = ref_entities & ctx_entities
        return self._scored(
            len(common) / len(ref_entities),
            f"{len(common)} of {len(ref_entities)} entities",
            scoring,
        )


def _strings(data: list[Any] | None) -> list[str] | None:
    if data is None or not all(isinstance(x, str) for x in data):
        return None
    return data


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def _supported_lexically(claim: str, sources: Sequence[str], threshold: float) -> bool:
    words = set(_WORD.findall(claim.lower()))
    if not words:
        return True
    return any(
        len(words & set(_WORD.findall(s.lower()))) / len(words) >= threshold for s in sources
    )


class _Claims(_Rag):
    """Metrics over the claims of a text, each checked against sources."""

    async def _claims_checked(
        self, ev: EvalContext, text: str, sources: str, against: str
    ) -> list[dict[str, Any]]:
        prompt = (
            f"Text:\n{text}\n\n{against}:\n{sources}\n\nBreak the text into short standalone "
            f"claims. For each, say whether it is supported by the {against.lower()}. Reply "
            'with a JSON array: [{"claim": "...", "reason": "...", "verdict": 1 or 0}, ...]'
        )
        return await self._judge_list(ev, prompt)

    async def _support(
        self, ev: EvalContext, text: str, sources: Sequence[str], against: str
    ) -> tuple[int, int, str]:
        """(supported claims, claims, scoring)."""
        if self.uses_model(ev.judge_model):
            checked = await self._claims_checked(ev, text, "\n".join(sources), against)
            return sum(c["verdict"] for c in checked), len(checked), "model"
        claims = sentences(text)
        hits = sum(_supported_lexically(c, sources, self.similarity_threshold) for c in claims)
        return hits, len(claims), "lexical"


@evaluator("faithfulness")
class Faithfulness(_Claims):
    """Share of the answer's claims supported by the retrieved contexts."""

    type: Literal["faithfulness"] = "faithfulness"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        retrieved = self._retrieved(output)
        if not retrieved:
            return self._scored(0.0, "nothing retrieved to support the answer", "none")
        hits, total, scoring = await self._support(ev, output.text, retrieved, "Contexts")
        if not total:
            return self.finding(
                None, "no claims in the answer", skipped="no claims", scoring=scoring
            )
        return self._scored(hits / total, f"{hits} of {total} claims supported", scoring)


@evaluator("factual_correctness")
class FactualCorrectness(_Claims):
    """Claims of the answer against the reference answer: precision (answer claims the
    reference supports), recall (reference claims the answer supports) or their F1."""

    type: Literal["factual_correctness"] = "factual_correctness"
    measure: Literal["precision", "recall", "f1"] = Field("f1", description="Ragas' mode.")

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        reference = self._reference_answer(case)
        tp, answer_claims, scoring = await self._support(ev, output.text, [reference], "Reference")
        precision = tp / answer_claims if answer_claims else 0.0
        recall = 0.0
        if self.measure != "precision":
            found, ref_claims, _ = await self._support(ev, reference, [output.text], "Answer")
            recall = found / ref_claims if ref_claims else 0.0
        score = {"precision": precision, "recall": recall}.get(self.measure)
        if score is None:
            score = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return self._scored(score, f"precision {precision:.2f}, recall {recall:.2f}", scoring,
                            precision=precision, recall=recall)  # fmt: skip


@evaluator("noise_sensitivity")
class NoiseSensitivity(_Claims):
    """Share of the answer's claims that are wrong (not supported by the reference) yet
    supported by the retrieved contexts: how often noise misleads the answer. Lower is better."""

    type: Literal["noise_sensitivity"] = "noise_sensitivity"

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        reference = self._reference_answer(case)
        retrieved = self._retrieved(output)
        claims = sentences(output.text)
        if self.uses_model(ev.judge_model):
            prompt = (
                f"Answer:\n{output.text}\n\nReference:\n{reference}\n\nContexts:\n"
                f"{_numbered(retrieved) or '(none)'}\n\nBreak the answer into short claims. For "
                "each, give `correct` (1 when the reference supports it) and `from_context` (1 "
                "when some context supports it). Reply with a JSON array: "
                '[{"claim": "...", "correct": 1 or 0, "from_context": 1 or 0}, ...]'
            )
            checked = await self._judge_list(ev, prompt, "correct")
            wrong = sum(
                1 for c in checked if not c["correct"] and c.get("from_context") in (1, True, "1")
            )
            total, scoring = len(checked), "model"
        else:
            wrong = sum(
                1 for c in claims
                if not _supported_lexically(c, [reference], self.similarity_threshold)
                and _supported_lexically(c, retrieved, self.similarity_threshold)
            )  # fmt: skip
            total, scoring = len(claims), "lexical"
        if not total:
            return self.finding(
                None, "no claims in the answer", skipped="no claims", scoring=scoring
            )
        return self._scored(
            wrong / total, f"{wrong} of {total} claims misled by the contexts", scoring
        )


class _Embedded(_Rag):
    embedding_model: str | None = Field(
        None, description="litellm embedding model (default: defaults.embedding_model)."
    )

    def _embedding_model(self, ev: EvalContext) -> str | None:
        if self.mode == "lexical":
            return None
        project = ev.suite.project
        default = project.config.defaults.embedding_model if project is not None else None
        return self.embedding_model or default

    async def _cosines(
        self, ev: EvalContext, anchor: str, others: list[str]
    ) -> tuple[list[float], str]:
        model = self._embedding_model(ev)
        if model is None:
            return [token_cosine(anchor, o) for o in others], "lexical"
        vectors = await embed(ev, model, [anchor, *others])
        return [cosine(vectors[0], v) for v in vectors[1:]], "embedding"


async def embed(ev: EvalContext, model: str, texts: list[str]) -> list[list[float]]:
    """Embeddings through the models door: a config.yml model or a litellm string, the call
    cache (errors are this evaluation's)."""
    ev.task.run.count("embedding_calls")
    try:
        return await ev.task.run.models().embed(model, texts, task=ev.task.key)
    except AccordError as exc:
        raise EvaluatorFailure(f"embedding call to {model} failed: {exc.message}") from None
    except Exception as exc:  # the provider's error, named
        raise EvaluatorFailure(f"embedding call to {model} failed: {exc}") from None


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


@evaluator("semantic_similarity")
class SemanticSimilarity(_Embedded):
    """Cosine similarity of the answer and the reference answer (embeddings; a lexical
    word-vector cosine when no embedding model is configured)."""

    type: Literal["semantic_similarity"] = "semantic_similarity"
    deterministic: ClassVar[bool] = True

    def calls_model(self, judge_model: str | None) -> bool:
        return False

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        (score,), scoring = await self._cosines(ev, self._reference_answer(case), [output.text])
        return self._scored(score, f"cosine {score:.3f} ({scoring})", scoring)


@evaluator("response_relevancy")
class ResponseRelevancy(_Embedded):
    """Questions the answer would answer, generated by a judge, compared with the real
    question (mean cosine); without a judge, the answer itself is compared."""

    type: Literal["response_relevancy"] = "response_relevancy"
    questions: int = Field(3, ge=1, le=10, description="How many questions to generate.")

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        if self.uses_model(ev.judge_model):
            prompt = (
                f"Answer:\n{output.text}\n\nWrite {self.questions} different questions this "
                "answer answers, and say whether the answer is noncommittal (evasive, vague). "
                'Reply with a JSON array: [{"question": "...", "noncommittal": 1 or 0}, ...]'
            )
            generated = await self._judge_list(ev, prompt, "noncommittal")
            if any(g["noncommittal"] for g in generated):
                return self._scored(0.0, "the answer is noncommittal", "model")
            texts = [str(g.get("question", "")) for g in generated]
        else:
            texts = [output.text]
        values, scoring = await self._cosines(ev, case.prompt, texts)
        score = sum(values) / len(values) if values else 0.0
        judged = "model" if self.uses_model(ev.judge_model) else "lexical"
        return self._scored(score, f"mean cosine {score:.3f}", f"{judged}+{scoring}")

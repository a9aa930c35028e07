"""promptfoo's model-graded assertions and `similar` (0.118, `src/matchers.ts`:
`matchesLlmRubric`, `matchesClosedQa`, `matchesFactuality`, `matchesAnswerRelevance`,
`matchesContextRecall`, `matchesContextRelevance`, `matchesContextFaithfulness`,
`matchesSimilarity`).

Every judge call goes through the run's models door (`EvalContext.complete`: cache, limits,
retries, usage). The judge is the assertion's `provider`, else the test's
`options.provider`, else the suite's judge model (config.yml `defaults.judge_model`); the
embedding model likewise, else `defaults.embedding_model`. The default prompts ask what
promptfoo's ask, in accord's words, and name the same reply format, which is read as
promptfoo reads it. A reply that format cannot be read from is asked once more, then is an
error on the assertion: promptfoo would score it 0, accord gives no score it did not get.
A custom `rubricPrompt` (text, or a JSON list of chat messages) is used as written, its
templates filled as promptfoo fills them.

As in promptfoo, only `similar` reads the `not-` prefix; the others ignore it.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from ......engine.errors import AccordError
from .....evaluators.base import EvaluatorFailure, Finding
from .....evaluators.rag import cosine, embed
from .base import (
    PromptfooAssertion,
    case_options,
    case_prompt,
    case_vars,
    fill_template,
    output_string,
    output_value,
)
from .structure import json_objects

if TYPE_CHECKING:
    from .....evaluators.cases import Case, Output
    from .....evaluators.judging import EvalContext

T = TypeVar("T")
EPSILON = sys.float_info.epsilon  # JavaScript's Number.EPSILON

# provider id prefixes that name a model of a provider accord reaches through litellm
PROVIDER_PREFIXES = {
    "openai": "openai",
    "anthropic": "anthropic",
    "azure": "azure",
    "azureopenai": "azure",
    "bedrock": "bedrock",
    "vertex": "vertex_ai",
    "mistral": "mistral",
    "groq": "groq",
    "ollama": "ollama_chat",  # `ollama:chat:` asks /api/chat, as promptfoo's does
    "openrouter": "openrouter",
    "google": "gemini",
    "togetherai": "together_ai",
}
KIND_WORDS = {"chat", "completion", "messages", "embedding", "embeddings"}


def model_of(provider: Any, kind: str = "text") -> str | None:
    """The accord model a promptfoo grading provider names: `openai:chat:gpt-4o` is
    `openai/gpt-4o`; an id without a known prefix is a config.yml model name (or a litellm
    string) as it is. A mapping is `{id: ...}`, or `{text: ..., embedding: ...}` per use."""
    if isinstance(provider, dict):
        if kind in provider:
            return model_of(provider[kind], kind)
        provider = provider.get("id")
    if not isinstance(provider, str) or not provider:
        return None
    prefix, _, rest = provider.partition(":")
    if not rest or prefix not in PROVIDER_PREFIXES:
        return provider
    head, _, tail = rest.partition(":")
    name = tail if head in KIND_WORDS and tail else rest
    return f"{PROVIDER_PREFIXES[prefix]}/{name}"


def js_number(value: Any) -> float:
    """JavaScript's `Number(value)` of a JSON value (NaN where it gives NaN)."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if value is None:
        return 0.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return 0.0
        try:
            return float(text)
        except ValueError:
            return math.nan
    return math.nan


def js_text(value: float) -> str:
    """A number as JavaScript prints it (1, 0.5)."""
    return str(int(value)) if float(value).is_integer() else repr(value)


def template_value(value: Any) -> Any:
    """A value as promptfoo hands it to a grading template: objects as JSON text."""
    if isinstance(value, list):
        return [js_json(v) if isinstance(v, dict | list) else v for v in value]
    if isinstance(value, dict):
        return js_json(value)
    return value


def js_json(value: Any) -> str:
    """JavaScript's `JSON.stringify(value)`: no spaces, other scripts left as they are
    (matchers.ts processContextForTemplating hands objects to the grader so)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def parsed_output(text: str) -> Any:
    """promptfoo's `tryParse`: the output as JSON when it is JSON, else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


class Graded(PromptfooAssertion):
    """What every model-graded assertion shares: its judge and its prompt."""

    deterministic: ClassVar[bool] = False
    settles: ClassVar[int] = 2

    def grading(self, case: Case) -> dict[str, Any]:
        """promptfoo's `getFinalTest(...).options`: the test's options, the assertion's
        provider and rubricPrompt over them."""
        options = dict(case_options(case))
        if self.provider is not None:
            options["provider"] = self.provider
        if self.rubric_prompt is not None:
            options["rubricPrompt"] = self.rubric_prompt
        return options

    def judge(self, ev: EvalContext, case: Case) -> str:
        model = model_of(self.grading(case).get("provider"), "text") or ev.judge_model
        if model is None:
            raise EvaluatorFailure(
                f"{self.base_type} needs a grading model: give the assertion or the test's "
                "options a 'provider', or set defaults.judge_model in config.yml"
            )
        return model

    def embedding_model(self, case: Case, default: str | None) -> str | None:
        """The embedding model: the assertion's or the test's embedding provider, else
        `default` (config.yml's `defaults.embedding_model`)."""
        provider = self.grading(case).get("provider")
        model = model_of(provider, "embedding") if isinstance(provider, dict) else None
        if model is None and isinstance(provider, str) and ":embedding" in provider:
            model = model_of(provider, "embedding")
        return model or default

    def embedder(self, ev: EvalContext, case: Case) -> str:
        project = ev.suite.project
        default = project.config.defaults.embedding_model if project is not None else None
        model = self.embedding_model(case, default)
        if model is None:
            raise EvaluatorFailure(
                f"{self.base_type} needs an embedding model: set defaults.embedding_model in "
                "config.yml, or give an embedding provider ('openai:embedding:MODEL')"
            )
        return model

    def messages(
        self, case: Case, default: list[dict[str, str]], context: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """The grading messages: the file's `rubricPrompt` with its templates filled, else
        the default ones (filled the same way)."""
        custom = self.grading(case).get("rubricPrompt")
        filled = {k: template_value(v) for k, v in context.items()}
        if custom in (None, "", {}, []):
            return [{"role": m["role"], "content": fill(m["content"], filled)} for m in default]
        if isinstance(custom, dict | list):
            custom = json.dumps(custom)
        if not isinstance(custom, str):
            raise EvaluatorFailure("rubricPrompt must be a string or a list of chat messages")
        try:
            written = json.loads(custom)
        except ValueError:
            written = None
        if isinstance(written, list) and all(isinstance(m, dict) and "role" in m for m in written):
            return [{**m, "content": fill(str(m.get("content", "")), filled)} for m in written]
        return [{"role": "user", "content": fill(custom, filled)}]

    async def ask(
        self,
        ev: EvalContext,
        case: Case,
        messages: list[dict[str, Any]],
        parse: Callable[[str], T | None],
        what: str,
        sample: int = 0,
    ) -> tuple[T, str]:
        """(what `parse` read, the reply); asked twice at most, then an error."""
        model = self.judge(ev, case)
        reply = ""
        for attempt in range(2):
            completion = await ev.complete(messages, model, sample=sample * 2 + attempt)
            reply = completion.text or ""
            found = parse(reply) if reply.strip() else None
            if found is not None:
                return found, reply
        raise EvaluatorFailure(
            f"the grader's reply has no {what}: {reply.strip()[-300:]!r}"
            if reply.strip()
            else f"the grader gave an empty reply (no {what})"
        )


def fill(template: str, context: dict[str, Any]) -> str:
    """A grading template with the values filled in (`{{ name }}`, filters such as
    `join`), a missing name rendering as nothing (nunjucks' way)."""
    try:
        return fill_template(template, context)
    except AccordError as exc:
        raise EvaluatorFailure(f"the grading prompt could not be filled: {exc.message}") from None


# --- llm-rubric --------------------------------------------------------------------------------

RUBRIC_SYSTEM = (
    "You check an output against a rubric written by a user: the output passes when what "
    "the rubric states holds for it. Reply with one JSON object and nothing else: "
    '{"reason": "<why>", "pass": <true or false>, "score": <a number from 0.0 to 1.0>}.'
)
RUBRIC_USER = "<Output>\n{{ output }}\n</Output>\n<Rubric>\n{{ rubric }}\n</Rubric>"


class LlmRubric(Graded):
    """The judge's `{pass, score, reason}` (pass defaults to true; a score that is no
    number is the pass as 1 or 0); with `threshold`, pass also needs score >= threshold."""

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        rubric = self.rendered(case)
        if rubric is not None and not isinstance(rubric, str | dict | list):
            raise EvaluatorFailure('"llm-rubric" assertion type must have a string or object value')
        text = output_string(output)
        context = {"output": parsed_output(text), "rubric": rubric or "", **case_vars(case)}
        default = [
            {"role": "system", "content": RUBRIC_SYSTEM},
            {"role": "user", "content": RUBRIC_USER},
        ]
        verdict, _reply = await self.ask(
            ev, case, self.messages(case, default, context), _first_object, "JSON object"
        )
        passed, score = self.read_verdict(verdict)
        limit = self.pass_threshold
        if limit is not None:
            passed = passed and score >= limit
        shown = js_text(limit) if limit is not None else "undefined"
        failed = f"Score {js_text(score)} below threshold {shown}"
        reason = verdict.get("reason") or ("Grading passed" if passed else failed)
        return self.result(passed, score, str(reason))

    def read_verdict(self, verdict: dict[str, Any]) -> tuple[bool, float]:
        """(pass, score) of the judge's object, before the threshold."""
        passed = verdict.get("pass", True)
        if passed is None:
            passed = True
        if not isinstance(passed, bool):
            passed = read_pass(passed)
        if "score" not in verdict:
            # JavaScript's Number(undefined) is NaN, so the pass decides (matchers.ts
            # matchesLlmRubric); a `score: null` is Number(null), 0, read below
            return passed, float(passed)
        return passed, read_score(verdict["score"], passed)


def read_pass(value: Any) -> bool:
    """promptfoo's reading of a pass that is no boolean: true, yes, pass or y."""
    return re.fullmatch(r"(?i)true|yes|pass|y", str(value)) is not None


def read_score(value: Any, passed: bool) -> float:
    """A score as promptfoo reads it: a number, else Number(value), else the pass as 1/0."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    number = js_number(value)
    return number if math.isfinite(number) else float(passed)


def _first_object(reply: str) -> dict[str, Any] | None:
    found = json_objects(reply)
    return found[0] if found and isinstance(found[0], dict) else None


# --- model-graded-closedqa -----------------------------------------------------------------------

CLOSED_QA = """You judge whether a submitted answer to a task meets a criterion.

[Task]: {{input}}

[Submission]: {{completion}}

[Criterion]: {{criteria}}

Reason step by step about whether the submission meets the criterion before concluding; do \
not open with the verdict. Then write the single letter Y (it meets the criterion) or N (it \
does not) on a line of its own, and end your reply with that same letter alone on a last \
line."""


class ClosedQa(Graded):
    """Pass when the judge's reply ends with `Y`, fail when it ends with `N`."""

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        criteria = self.rendered(case)
        if not isinstance(criteria, str):
            raise EvaluatorFailure("model-graded-closedqa assertion type must have a string value")
        context = {
            "input": case_prompt(case),
            "criteria": criteria,
            "completion": parsed_output(output_string(output)),
            **case_vars(case),
        }
        default = [{"role": "system", "content": CLOSED_QA}]
        verdict, reply = await self.ask(
            ev, case, self.messages(case, default, context), _y_or_n, "final Y or N"
        )
        if verdict:
            return self.result(True, reason=f"The submission meets the criterion:\n{reply}")
        return self.result(False, reason=f"The submission does not meet the criterion:\n{reply}")


def _y_or_n(reply: str) -> bool | None:
    end = reply.rstrip()
    return True if end.endswith("Y") else False if end.endswith("N") else None


# --- factuality ---------------------------------------------------------------------------------

CATEGORIES = {
    "A": "The submitted answer is a subset of the expert answer and is fully consistent with it.",
    "B": "The submitted answer is a superset of the expert answer and is fully consistent with it.",
    "C": "The submitted answer contains all the same details as the expert answer.",
    "D": "There is a disagreement between the submitted answer and the expert answer.",
    "E": (
        "The answers differ, but these differences don't matter from the perspective of factuality."
    ),
}
FACTUALITY_SYSTEM = (
    "You compare the facts of a submitted answer with those of an expert answer to the same "
    "question, ignoring style, grammar and punctuation. Put the submission in exactly one "
    "category:\n"
    + "\n".join(f"({k}) {v}" for k, v in CATEGORIES.items())
    + '\n\nReply with one JSON object and nothing else: {"category": "<one letter A-E>", '
    '"reason": "<a detailed explanation>"}.'
)
FACTUALITY_USER = """Compare these answers.

<question>
{{input}}
</question>

<expert_answer>
{{ideal}}
</expert_answer>

<submitted_answer>
{{completion}}
</submitted_answer>"""
# grading option keys per category, and their default scores
FACTUALITY_SCORES = {
    "A": ("subset", 1.0),
    "B": ("superset", 1.0),
    "C": ("agree", 1.0),
    "D": ("disagree", 0.0),
    "E": ("differButFactual", 1.0),
}


class Factuality(Graded):
    """The judge's category A-E; each category's score is 1 but D's 0 (the test's
    `options.factuality` may set others); pass when the score is above 0."""

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        ideal = self.rendered(case)
        if not isinstance(ideal, str):
            raise EvaluatorFailure("factuality assertion type must have a string value")
        context = {
            "input": case_prompt(case),
            "ideal": ideal,
            "completion": parsed_output(output_string(output)),
            **case_vars(case),
        }
        default = [
            {"role": "system", "content": FACTUALITY_SYSTEM},
            {"role": "user", "content": FACTUALITY_USER},
        ]
        (letter, reason), _ = await self.ask(
            ev, case, self.messages(case, default, context), _category, "category A-E"
        )
        settings = self.grading(case).get("factuality") or {}
        key, fallback = FACTUALITY_SCORES[letter]
        value = settings.get(key, fallback) if isinstance(settings, dict) else fallback
        score = float(value) if isinstance(value, int | float) else fallback
        passed = score > 0
        return self.result(passed, score, reason or f"Category {letter}: {CATEGORIES[letter]}")


def _category(reply: str) -> tuple[str, str] | None:
    """(letter, the judge's reason): from the JSON object's `category`, else from a
    `(X)` at the reply's start, as promptfoo reads older graders."""
    objects = json_objects(reply)
    first = objects[0] if objects else None
    if isinstance(first, dict) and isinstance(first.get("category"), str) and first["category"]:
        letter = first["category"].strip().upper()
        if letter not in CATEGORIES:
            return None
        return letter, str(first.get("reason") or "").strip()
    match = re.search(r"\s*\(?([a-eA-E])\)", reply)
    if match is None:
        return None
    rest = re.search(r"\)\s*(.*)", reply, re.DOTALL)
    return match.group(1).upper(), (rest.group(1).strip() if rest and rest.group(1) else reply)


# --- similar and answer-relevance ---------------------------------------------------------------


class Similar(Graded):
    """The cosine similarity of the embeddings of the value and the output; pass at
    `threshold` (default 0.75), under `not-` at most that; score the similarity (1 - it
    under `not-`). A list of values passes when one of them does."""

    embeds: ClassVar[bool] = True  # its embedding model is checked at load (config.py)

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        value = self.rendered(case)
        if not isinstance(value, str | list):
            raise EvaluatorFailure(
                "Similarity assertion type must have a string or array of strings value"
            )
        limit = self.pass_threshold if self.pass_threshold is not None else 0.75
        model = self.embedder(ev, case)
        text = output_string(output)
        expected = [value] if isinstance(value, str) else [str(v) for v in value]
        vectors = await embed(ev, model, [text, *expected])
        lowest = math.inf
        last: Finding | None = None
        for vector in vectors[1:]:
            similarity = cosine(vector, vectors[0])
            within = similarity <= limit + EPSILON
            ok = within if self.inverse else similarity >= limit - EPSILON
            score = 1 - similarity if self.inverse else similarity
            above = f"Similarity {similarity:.2f} is greater than threshold {js_text(limit)}"
            below = f"Similarity {similarity:.2f} is less than threshold {js_text(limit)}"
            reason = (below if ok else above) if self.inverse else (above if ok else below)
            last = self.result(ok, score, reason, scoring="embedding")
            if ok:
                return last
            lowest = min(lowest, score)
        if isinstance(value, str) and last is not None:
            return last
        return self.result(
            False, lowest, "None of the provided values met the similarity threshold"
        )


QUESTION_FROM_ANSWER = """Write the question that the given answer answers.

Answer: The PSLV-C56 mission is scheduled to be launched on Sunday, 30 July 2023 at 06:30 \
IST / 01:00 UTC. It will be launched from the Satish Dhawan Space Centre, Sriharikota, \
Andhra Pradesh, India
Question: When is the PSLV-C56 mission scheduled to launch, and from where?

Answer: {{answer}}
Question:"""


class AnswerRelevance(Graded):
    """Three questions the judge writes for the output, each compared with the query (the
    `query` var, else the prompt) by embedding; score the mean cosine, pass at `threshold`
    (default 0)."""

    embeds: ClassVar[bool] = True

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        value = output_value(output)
        if not isinstance(value, str):
            raise EvaluatorFailure("answer-relevance assertion type must evaluate a string output")
        query = case_vars(case).get("query")
        question = query if isinstance(query, str) else case_prompt(case)
        default = [{"role": "user", "content": QUESTION_FROM_ANSWER}]
        messages = self.messages(case, default, {"answer": parsed_output(value)})
        questions = []
        for sample in range(3):
            asked, _ = await self.ask(ev, case, messages, _text, "question", sample=sample)
            questions.append(asked)
        vectors = await embed(ev, self.embedder(ev, case), [question, *questions])
        similarities = [cosine(vectors[0], v) for v in vectors[1:]]
        mean = sum(similarities) / len(similarities)
        limit = self.pass_threshold or 0.0
        ok = mean >= limit - EPSILON
        relation = "greater" if ok else "less"
        return self.result(
            ok,
            mean,
            f"Relevance {mean:.2f} is {relation} than threshold {js_text(limit)}",
            metadata={
                "generatedQuestions": [
                    {"question": q, "similarity": s}
                    for q, s in zip(questions, similarities, strict=True)
                ],
                "averageSimilarity": mean,
            },
            scoring="embedding",
        )


def _text(reply: str) -> str | None:
    return reply if reply.strip() else None

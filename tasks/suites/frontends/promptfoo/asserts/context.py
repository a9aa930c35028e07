"""promptfoo's RAG assertions: context-recall, context-relevance, context-faithfulness
(0.118, `src/assertions/context*.ts`, `contextUtils.ts` `resolveContext`, and
`src/matchers.ts`). The context is the test's `context` var (context-recall falls back to
the prompt); each is scored as promptfoo scores it, pass at `threshold` (default 0):

- recall: the judge classifies each sentence of the expected value as attributed to the
  context or not, one per line; score = lines marked `[Attributed]` / non-empty lines.
- relevance: the judge copies the context's sentences needed to answer the `query` var (or
  says `Insufficient Information`); score = lines copied / non-empty lines of the context.
- faithfulness: the judge turns the output into statements (one per line), then gives each
  a verdict against the context; score = 1 - statements not supported / statements.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .....evaluators.base import EvaluatorFailure, Finding
from .base import case_prompt, case_vars, output_value
from .graded import EPSILON, Graded, fill, js_text, parsed_output, template_value

if TYPE_CHECKING:
    from .....evaluators.cases import Case, Output
    from .....evaluators.judging import EvalContext

ATTRIBUTED = "[Attributed]"
INSUFFICIENT = "Insufficient Information"
FINAL_VERDICTS = "final verdict for each statement in order:"

RECALL = """Decide, for each sentence of the answer below, whether what it says can be \
found in the context. Reason briefly first. Then list the answer's sentences, numbered, one \
per line, each ending with [Attributed] when the context supports it and [Not Attributed] \
when it does not. For example:

1. Einstein was born in 1879. The context gives his date of birth. So [Attributed]
2. He published 4 papers in 1905. The context says nothing of his papers. So [Not Attributed]

context: {{context}}
answer: {{groundTruth}}
classification:
"""

RELEVANCE = """From the context below, copy the sentences that are needed to answer the \
query, unchanged, one per line. If none are, or the query cannot be answered from the \
context, reply only with the words "Insufficient Information".

query: {{query}}
context: {{context}}
candidate sentences:
"""

STATEMENTS = """Break the answer to the question below into short statements, one or more \
for each of its sentences, one statement per line and nothing else.

question: {{question}}
answer: {{answer}}
statements:
"""

VERDICTS = """Natural language inference: decide for each statement whether the context \
supports it. Explain each briefly and end its explanation with "Verdict: Yes." or \
"Verdict: No.". Finish with one line of the form "Final verdict for each statement in \
order: Yes. No. ..." with one verdict per statement, in order.

context:
{{context}}
statements:
{{statements|join("\\n")}}
Answer:
"""


def _lines(text: str) -> list[str]:
    """promptfoo's `splitIntoSentences`: the non-empty lines."""
    return [line for line in text.split("\n") if line.strip()]


def _context(assertion: Graded, case: Case, fallback: str | None) -> str:
    found = case_vars(case).get("context")
    context = found if isinstance(found, str) and found else fallback
    if not context:
        raise EvaluatorFailure(
            "Context is required for context-based assertions: give the test a 'context' var"
        )
    return context


def _query(assertion: Graded, case: Case) -> str:
    query = case_vars(case).get("query")
    if not isinstance(query, str):
        raise EvaluatorFailure(
            f'{assertion.base_type} assertion requires a "query" variable with the user question'
        )
    return query


def _scored(assertion: Graded, label: str, score: float, **extra: Any) -> Finding:
    limit = assertion.pass_threshold or 0.0
    ok = score >= limit - EPSILON
    sign = ">=" if ok else "<"
    return assertion.result(ok, score, f"{label} {score:.2f} is {sign} {js_text(limit)}", **extra)


class ContextRecall(Graded):
    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        truth = self.rendered(case)
        if not isinstance(truth, str):
            raise EvaluatorFailure(
                "context-recall assertion requires a string value (expected answer or fact "
                "to verify)"
            )
        context = _context(self, case, case_prompt(case))
        filled = {"context": context, "groundTruth": truth, **case_vars(case)}
        default = [{"role": "user", "content": RECALL}]
        lines, _ = await self.ask(
            ev, case, self.messages(case, default, filled), _classified, "sentence classified"
        )
        attributed = sum(ATTRIBUTED in line for line in lines)
        return _scored(
            self, "Recall", attributed / len(lines),
            metadata={"context": context, "totalSentences": len(lines),
                      "attributedSentences": attributed},
        )  # fmt: skip


def _classified(reply: str) -> list[str] | None:
    lines = _lines(reply)
    return lines if any("Attributed]" in line for line in lines) else None


class ContextRelevance(Graded):
    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        query = _query(self, case)
        context = _context(self, case, None)
        default = [{"role": "user", "content": RELEVANCE}]
        filled = {"context": context, "query": query}
        reply, _ = await self.ask(
            ev, case, self.messages(case, default, filled), _nonempty, "sentences"
        )
        insufficient = INSUFFICIENT in reply
        relevant = 0 if insufficient else len(_lines(reply))
        total = len(_lines(context))
        return _scored(
            self, "Relevance", relevant / total if total else 0.0,
            metadata={"context": context, "totalContextSentences": total,
                      "relevantSentenceCount": relevant, "insufficientInformation": insufficient},
        )  # fmt: skip


def _nonempty(reply: str) -> str | None:
    return reply if reply.strip() else None


class ContextFaithfulness(Graded):
    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        query = _query(self, case)
        answer = output_value(output)
        if not isinstance(answer, str):
            raise EvaluatorFailure(
                "context-faithfulness assertion requires string output from the provider"
            )
        context = _context(self, case, None)
        first, second = self._prompts(case)
        variables = case_vars(case)
        asked = self.messages_from(
            first, {"question": query, "answer": parsed_output(answer), **variables}
        )
        statements, _ = await self.ask(ev, case, asked, _statements, "statements")
        judged = self.messages_from(
            second, {"context": context, "statements": statements, **variables}
        )
        unsupported, _ = await self.ask(
            ev, case, judged, lambda r: _unsupported(r), "verdicts", sample=1
        )
        score = 1 - unsupported / len(statements)
        return _scored(self, "Faithfulness", score, metadata={"context": context})

    def _prompts(self, case: Case) -> tuple[str, str]:
        """The two prompts: the file's `rubricPrompt` (a list of two) or the defaults."""
        custom = self.grading(case).get("rubricPrompt")
        if custom in (None, "", []):
            return STATEMENTS, VERDICTS
        if not isinstance(custom, list):
            raise EvaluatorFailure("rubricPrompt must be an array")
        texts = [
            m if isinstance(m, str) else m.get("content", "") if isinstance(m, dict) else ""
            for m in custom
        ]
        texts += ["", ""]
        return texts[0] or STATEMENTS, texts[1] or VERDICTS

    def messages_from(self, template: str, context: dict[str, Any]) -> list[dict[str, Any]]:
        filled = {k: template_value(v) for k, v in context.items()}
        return [{"role": "user", "content": fill(template, filled)}]


def _statements(reply: str) -> list[str] | None:
    lines = _lines(reply)
    return lines or None


def _unsupported(reply: str) -> int | None:
    """How many statements the judge found unsupported: after the final verdict line, the
    verdicts that are not `yes`; else the `verdict: no` written. None: neither is there."""
    verdicts = reply.lower().strip()
    if FINAL_VERDICTS in verdicts:
        tail = verdicts[verdicts.index(FINAL_VERDICTS) + len(FINAL_VERDICTS) :]
        return len([a for a in tail.split(".") if a.strip() and "yes" not in a])
    if "verdict:" not in verdicts:
        return None
    return verdicts.count("verdict: no")

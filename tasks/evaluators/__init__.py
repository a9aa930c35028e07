"""The evaluator registry's members, one module per family: `deterministic` (no model),
`judged` (an LLM judge decides), `rag` (retrieval, after Ragas), `battle` (against a
baseline). Importing this package registers them.

What they are written against is the library's own: `base` (the spec, `Finding`, the
registry), `cases` (`Case`, `Output`), `judging` (`EvalContext`, choices and asking a judge).
Nothing here imports the suites (`accord.tasks.suites`), which build cases and run them.

A new evaluator is one decorated class in one of these modules (or in a plugin).
"""

from . import battle, deterministic, judged, rag
from .base import EVALUATORS, EvaluatorFailure, EvaluatorSpec, Finding, ThresholdSpec, evaluator

__all__ = [
    "EVALUATORS",
    "EvaluatorFailure",
    "EvaluatorSpec",
    "Finding",
    "ThresholdSpec",
    "battle",
    "deterministic",
    "evaluator",
    "judged",
    "rag",
]

"""The evaluator registry's members, one module per family: `judged` (an LLM judge decides),
`rag` (retrieval measured against reference contexts). Importing this package registers them.

A new evaluator is one decorated class in one of these modules (or in a plugin).
"""

from accord.tasks.evaluators import judged, rag
from accord.tasks.evaluators.base import EVALUATORS, CaseEvaluation, Evaluator, evaluator

__all__ = ["EVALUATORS", "CaseEvaluation", "Evaluator", "evaluator", "judged", "rag"]

"""promptfoo's assertions (release 0.118) as evaluators of the evaluation core (AgentV 4's,
promptfoo's form plus AgentV's additions, are agentv/v4/checks/).

`build_assertion(entry, base_dir=..., where=...)` turns one entry of a test's `assert:` list
into an evaluator spec; `combine(findings, ...)` is promptfoo's test result from its
assertions' findings (the weighted mean score; pass when every assertion passed, or, with
the test's `threshold`, when the score reaches it; the named scores of `metric`).
"""

from __future__ import annotations

from .base import PROMPTFOO, PromptfooAssertion, PromptfooCase
from .building import build_assertion, supported_types
from .combine import combine, named_scores

__all__ = [
    "PROMPTFOO",
    "PromptfooAssertion",
    "PromptfooCase",
    "build_assertion",
    "combine",
    "named_scores",
    "supported_types",
]

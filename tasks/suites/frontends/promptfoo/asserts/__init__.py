"""promptfoo's assertions (release 0.118) as evaluators of the evaluation core, and AgentV
4's (`agentv`: promptfoo's form plus AgentV's additions, with AgentV's test score).

`build_assertion(entry, base_dir=..., where=...)` turns one entry of a test's `assert:` list
into an evaluator spec; `combine(findings, ...)` is promptfoo's test result from its
assertions' findings (the weighted mean score; pass when every assertion passed, or, with
the test's `threshold`, when the score reaches it; the named scores of `metric`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import PROMPTFOO, PromptfooAssertion, PromptfooCase
from .building import build_assertion, supported_types
from .combine import combine, named_scores

if TYPE_CHECKING:
    from ...agentv.v4.checks.build import build_agentv_assertion, combine_agentv


def __getattr__(name: str) -> Any:
    # AgentV's assertions import the model-graded ones: loaded when an AgentV file asks
    if name in ("build_agentv_assertion", "combine_agentv"):
        from ...agentv.v4.checks import build as agentv

        return getattr(agentv, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "PROMPTFOO",
    "PromptfooAssertion",
    "PromptfooCase",
    "build_agentv_assertion",
    "build_assertion",
    "combine",
    "combine_agentv",
    "named_scores",
    "supported_types",
]

"""accord's Python API: `from accord import run_workflow, compile_workflow, AccordError`.

The public API is four namespaces: `accord` (running workflows, their results and the
errors), `accord.evals` (test cases, evaluators and `run_test_suite`), `accord.conversations`
(conversation tests) and `accord.scenarios` (scenario suites). The names of the last three are
also importable from `accord` itself, as they were before the namespaces existed.

The engine lives in `accord.engine` and the task types and evaluation in `accord.tasks`; only
the `accord` name is put on the import path, so a user project's own `tasks.py` or `engine/`
never collides with them. Names are imported on first use: `import accord` costs nothing, and
`accord --help` stays fast. A type checker sees every name with its real type (the imports
under TYPE_CHECKING below; the package ships `py.typed`), and a name accord does not export is
an error to it, not `Any`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_NAMESPACES = ("evals", "conversations", "scenarios")
_EXPORTS = {
    "AccordError": "accord.engine.errors",
    "ValidationError": "accord.engine.errors",
    "TaskError": "accord.engine.errors",
    "ModelError": "accord.engine.errors",
    "ConfigError": "accord.engine.errors",
    "compile_workflow": "accord.engine.runner",
    "run_workflow": "accord.engine.runner",
    "execute": "accord.engine.runner",
    "RunOptions": "accord.engine.runner",
    "RunResult": "accord.engine.results",
    "TaskResult": "accord.engine.results",
    "Status": "accord.engine.results",
    "Plan": "accord.engine.plan",
    "SuiteRun": "accord.tasks.suites.core.verdicts",
    "UserTurn": "accord.tasks.suites.frontends.conversations.turns",
    "AgentTurn": "accord.tasks.suites.frontends.conversations.turns",
    "ToolCall": "accord.tasks.suites.frontends.conversations.turns",
    "ConversationRunner": "accord.tasks.suites.frontends.conversations.runner",
    "ConversationFailed": "accord.tasks.suites.frontends.conversations.runner",
    "JudgeNeeded": "accord.tasks.suites.frontends.conversations.runner",
    "ModelAgent": "accord.tasks.suites.frontends.conversations.agents",
    "RegressionRunner": "accord.tasks.suites.frontends.scenarios.runner",
    "macro": "accord.tasks.suites.frontends.scenarios.macros",
    "BaseTestCase": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseTestEvaluator": "accord.tasks.suites.frontends.autoblocks.api",
    "Evaluation": "accord.tasks.suites.frontends.autoblocks.api",
    "Threshold": "accord.tasks.suites.frontends.autoblocks.api",
    "ScoreChoice": "accord.tasks.suites.frontends.autoblocks.api",
    "Assertion": "accord.tasks.suites.frontends.autoblocks.api",
    "EvaluationOverride": "accord.tasks.suites.frontends.autoblocks.api",
    "run_test_suite": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseEvaluator": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseEventEvaluator": "accord.tasks.suites.frontends.autoblocks.api",
    "HasAllSubstrings": "accord.tasks.suites.frontends.autoblocks.api",
    "AutomaticBattle": "accord.tasks.suites.frontends.autoblocks.api",
    "ManualBattle": "accord.tasks.suites.frontends.autoblocks.api",
    "TestCaseConfig": "accord.tasks.suites.frontends.autoblocks.api",
    "HumanReviewField": "accord.tasks.suites.frontends.autoblocks.api",
    "HumanReviewFieldContentType": "accord.tasks.suites.frontends.autoblocks.api",
    "CreateHumanReviewJob": "accord.tasks.suites.frontends.autoblocks.api",
    "EvaluationOverrideField": "accord.tasks.suites.frontends.autoblocks.api",
    "EvaluationOverrideComment": "accord.tasks.suites.frontends.autoblocks.api",
    "EvaluationWithId": "accord.tasks.suites.frontends.autoblocks.api",
    "TracerEvent": "accord.tasks.suites.frontends.autoblocks.api",
    "md5": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseIsEquals": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseIsValidJSON": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseHasAllSubstrings": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseAssertions": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseLLMJudge": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseAccuracy": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseNSFW": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseToxicity": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseManualBattle": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseAutomaticBattle": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseRagasLLMContextPrecisionWithReference": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseRagasNonLLMContextPrecisionWithReference": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseRagasLLMContextRecall": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseRagasNonLLMContextRecall": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseRagasContextEntitiesRecall": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseRagasNoiseSensitivity": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseRagasResponseRelevancy": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseRagasFaithfulness": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseRagasFactualCorrectness": "accord.tasks.suites.frontends.autoblocks.api",
    "BaseRagasSemanticSimilarity": "accord.tasks.suites.frontends.autoblocks.api",
}

if TYPE_CHECKING:
    from .conversations import (
        AgentTurn,
        ConversationFailed,
        ConversationRunner,
        JudgeNeeded,
        ModelAgent,
        ToolCall,
        UserTurn,
    )
    from .engine.errors import AccordError, ConfigError, ModelError, TaskError, ValidationError
    from .engine.plan import Plan
    from .engine.results import RunResult, Status, TaskResult
    from .engine.runner import RunOptions, compile_workflow, execute, run_workflow
    from .evals import (
        Assertion,
        AutomaticBattle,
        BaseAccuracy,
        BaseAssertions,
        BaseAutomaticBattle,
        BaseEvaluator,
        BaseEventEvaluator,
        BaseHasAllSubstrings,
        BaseIsEquals,
        BaseIsValidJSON,
        BaseLLMJudge,
        BaseManualBattle,
        BaseNSFW,
        BaseRagasContextEntitiesRecall,
        BaseRagasFactualCorrectness,
        BaseRagasFaithfulness,
        BaseRagasLLMContextPrecisionWithReference,
        BaseRagasLLMContextRecall,
        BaseRagasNoiseSensitivity,
        BaseRagasNonLLMContextPrecisionWithReference,
        BaseRagasNonLLMContextRecall,
        BaseRagasResponseRelevancy,
        BaseRagasSemanticSimilarity,
        BaseTestCase,
        BaseTestEvaluator,
        BaseToxicity,
        CreateHumanReviewJob,
        Evaluation,
        EvaluationOverride,
        EvaluationOverrideComment,
        EvaluationOverrideField,
        EvaluationWithId,
        HasAllSubstrings,
        HumanReviewField,
        HumanReviewFieldContentType,
        ManualBattle,
        ScoreChoice,
        SuiteRun,
        TestCaseConfig,
        Threshold,
        TracerEvent,
        md5,
        run_test_suite,
    )
    from .scenarios import RegressionRunner, macro
else:
    # at run time only: to a type checker, a name missing above is an error, not `Any`
    def __getattr__(name: str) -> Any:
        if name in _NAMESPACES:  # `import accord` then `accord.evals.run_test_suite`
            return importlib.import_module(f"accord.{name}")
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module 'accord' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS, *_NAMESPACES})


__all__ = [
    "AccordError",
    "AgentTurn",
    "Assertion",
    "AutomaticBattle",
    "BaseAccuracy",
    "BaseAssertions",
    "BaseAutomaticBattle",
    "BaseEvaluator",
    "BaseEventEvaluator",
    "BaseHasAllSubstrings",
    "BaseIsEquals",
    "BaseIsValidJSON",
    "BaseLLMJudge",
    "BaseManualBattle",
    "BaseNSFW",
    "BaseRagasContextEntitiesRecall",
    "BaseRagasFactualCorrectness",
    "BaseRagasFaithfulness",
    "BaseRagasLLMContextPrecisionWithReference",
    "BaseRagasLLMContextRecall",
    "BaseRagasNoiseSensitivity",
    "BaseRagasNonLLMContextPrecisionWithReference",
    "BaseRagasNonLLMContextRecall",
    "BaseRagasResponseRelevancy",
    "BaseRagasSemanticSimilarity",
    "BaseTestCase",
    "BaseTestEvaluator",
    "BaseToxicity",
    "ConfigError",
    "ConversationFailed",
    "ConversationRunner",
    "CreateHumanReviewJob",
    "Evaluation",
    "EvaluationOverride",
    "EvaluationOverrideComment",
    "EvaluationOverrideField",
    "EvaluationWithId",
    "HasAllSubstrings",
    "HumanReviewField",
    "HumanReviewFieldContentType",
    "JudgeNeeded",
    "ManualBattle",
    "ModelAgent",
    "ModelError",
    "Plan",
    "RegressionRunner",
    "RunOptions",
    "RunResult",
    "ScoreChoice",
    "Status",
    "SuiteRun",
    "TaskError",
    "TaskResult",
    "TestCaseConfig",
    "Threshold",
    "ToolCall",
    "TracerEvent",
    "UserTurn",
    "ValidationError",
    "compile_workflow",
    "execute",
    "macro",
    "md5",
    "run_test_suite",
    "run_workflow",
]

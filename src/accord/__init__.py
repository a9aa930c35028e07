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
    "UserTurn": "accord.tasks.suites.conversations.turns",
    "AgentTurn": "accord.tasks.suites.conversations.turns",
    "ToolCall": "accord.tasks.suites.conversations.turns",
    "ConversationRunner": "accord.tasks.suites.conversations.runner",
    "ConversationFailed": "accord.tasks.suites.conversations.runner",
    "JudgeNeeded": "accord.tasks.suites.conversations.runner",
    "ModelAgent": "accord.tasks.suites.conversations.agents",
    "RegressionRunner": "accord.tasks.suites.scenarios.runner",
    "macro": "accord.tasks.suites.scenarios.macros",
    "BaseTestCase": "accord.tasks.suites.pyapi",
    "BaseTestEvaluator": "accord.tasks.suites.pyapi",
    "Evaluation": "accord.tasks.suites.pyapi",
    "Threshold": "accord.tasks.suites.pyapi",
    "ScoreChoice": "accord.tasks.suites.pyapi",
    "Assertion": "accord.tasks.suites.pyapi",
    "EvaluationOverride": "accord.tasks.suites.pyapi",
    "run_test_suite": "accord.tasks.suites.pyapi",
    "BaseEvaluator": "accord.tasks.suites.pyapi",
    "BaseEventEvaluator": "accord.tasks.suites.pyapi",
    "HasAllSubstrings": "accord.tasks.suites.pyapi",
    "AutomaticBattle": "accord.tasks.suites.pyapi",
    "ManualBattle": "accord.tasks.suites.pyapi",
    "TestCaseConfig": "accord.tasks.suites.pyapi",
    "HumanReviewField": "accord.tasks.suites.pyapi",
    "HumanReviewFieldContentType": "accord.tasks.suites.pyapi",
    "CreateHumanReviewJob": "accord.tasks.suites.pyapi",
    "EvaluationOverrideField": "accord.tasks.suites.pyapi",
    "EvaluationOverrideComment": "accord.tasks.suites.pyapi",
    "EvaluationWithId": "accord.tasks.suites.pyapi",
    "TracerEvent": "accord.tasks.suites.pyapi",
    "md5": "accord.tasks.suites.pyapi",
    "BaseIsEquals": "accord.tasks.suites.pyapi",
    "BaseIsValidJSON": "accord.tasks.suites.pyapi",
    "BaseHasAllSubstrings": "accord.tasks.suites.pyapi",
    "BaseAssertions": "accord.tasks.suites.pyapi",
    "BaseLLMJudge": "accord.tasks.suites.pyapi",
    "BaseAccuracy": "accord.tasks.suites.pyapi",
    "BaseNSFW": "accord.tasks.suites.pyapi",
    "BaseToxicity": "accord.tasks.suites.pyapi",
    "BaseManualBattle": "accord.tasks.suites.pyapi",
    "BaseAutomaticBattle": "accord.tasks.suites.pyapi",
    "BaseRagasLLMContextPrecisionWithReference": "accord.tasks.suites.pyapi",
    "BaseRagasNonLLMContextPrecisionWithReference": "accord.tasks.suites.pyapi",
    "BaseRagasLLMContextRecall": "accord.tasks.suites.pyapi",
    "BaseRagasNonLLMContextRecall": "accord.tasks.suites.pyapi",
    "BaseRagasContextEntitiesRecall": "accord.tasks.suites.pyapi",
    "BaseRagasNoiseSensitivity": "accord.tasks.suites.pyapi",
    "BaseRagasResponseRelevancy": "accord.tasks.suites.pyapi",
    "BaseRagasFaithfulness": "accord.tasks.suites.pyapi",
    "BaseRagasFactualCorrectness": "accord.tasks.suites.pyapi",
    "BaseRagasSemanticSimilarity": "accord.tasks.suites.pyapi",
}

if TYPE_CHECKING:
    from accord.conversations import (
        AgentTurn,
        ConversationFailed,
        ConversationRunner,
        JudgeNeeded,
        ModelAgent,
        ToolCall,
        UserTurn,
    )
    from accord.engine.errors import (
        AccordError,
        ConfigError,
        ModelError,
        TaskError,
        ValidationError,
    )
    from accord.engine.plan import Plan
    from accord.engine.results import RunResult, Status, TaskResult
    from accord.engine.runner import RunOptions, compile_workflow, execute, run_workflow
    from accord.evals import (
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
    from accord.scenarios import RegressionRunner, macro
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

"""What an AgentV eval file may hold (SPEC §9.5), validated with lines like every file."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from ......engine.specbase import Spec

CASE_KEYS = ("tests", "cases", "evalcases", "eval_cases")


class ScriptSpec(Spec):
    """A workspace script: argv, run with the case as JSON on stdin."""

    script: list[str] = Field(min_length=1, description="argv, e.g. [python, setup.py].")
    cwd: str | None = Field(None, description="Working folder, relative to the eval file.")
    timeout_ms: float | None = Field(None, gt=0, allow_inf_nan=False)


class WorkspaceSpec(Spec):
    """Scripts around the cases; a case's own replace the file's one by one."""

    template: str | None = Field(None, description="A folder copied into each workspace.")
    setup: ScriptSpec | None = None
    teardown: ScriptSpec | None = None
    before_all: ScriptSpec | None = None
    before_each: ScriptSpec | None = None
    after_each: ScriptSpec | None = None
    after_all: ScriptSpec | None = None


class TrialsSpec(Spec):
    """Run each case up to `count` times and combine the trials."""

    count: int = Field(ge=1, le=1000)
    strategy: Literal["pass_at_k", "mean", "confidence_interval"] = "pass_at_k"
    cost_limit_usd: float | None = Field(None, gt=0, allow_inf_nan=False)


class ExecutionSpec(Spec):
    target: str | None = Field(None, min_length=1, description="A target of targets.yaml.")
    evaluators: list[Any] | None = None
    trials: TrialsSpec | None = None


class BlockSpec(Spec):
    type: Literal["text", "file"]
    value: str = Field(description="The text, or the file's path (from the eval file's folder).")


Content = str | dict[str, Any] | list[str | BlockSpec] | None


class MessageSpec(Spec):
    role: Literal["system", "user", "assistant", "tool"]
    content: Content = None
    tool_calls: list[dict[str, Any]] | None = None
    name: str | None = None
    tool_call_id: str | None = None


Messages = str | MessageSpec | list[MessageSpec] | dict[str, Any]


class TestSpec(Spec):
    """One test of an AgentV eval file."""

    id: str = Field(min_length=1, description="Unique in the file.")
    criteria: str | None = Field(None, description="What a correct answer does.")
    expected_outcome: str | None = Field(None, description="The old name of 'criteria'.")
    input: Messages | None = None
    input_messages: Messages | None = None
    expected_output: Any = None
    expected_messages: Any = None
    conversation_id: str | None = None
    execution: ExecutionSpec | None = None
    evaluators: list[Any] | None = None
    evaluator: str | None = None
    workspace: WorkspaceSpec | None = None
    metadata: dict[str, Any] | None = None
    rubrics: list[str | dict[str, Any]] | None = None
    sidecar: Any = None
    note: str | None = None
    description: str | None = None
    reference_answer: Any = Field(
        None,
        description="Read and ignored, as AgentV does (the reference is the last "
        "expected message).",
    )

    @model_validator(mode="after")
    def _complete(self) -> TestSpec:
        if not (self.criteria or self.expected_outcome):
            raise ValueError("test needs 'criteria': what a correct answer does")
        if self.input is None and self.input_messages is None:
            raise ValueError("test needs 'input' (a text or a list of messages)")
        return self


class FileSpec(Spec):
    """An AgentV eval file without its tests (or a JSONL dataset's YAML sidecar)."""

    schema_: Any = Field(None, alias="$schema")
    name: str | None = None
    description: str | None = None
    dataset: str | None = None
    execution: ExecutionSpec | None = None
    evaluator: Literal["llm_judge"] | None = Field(
        None, description="The evaluator of tests with none (AgentV's default: llm_judge)."
    )
    target: str | None = Field(None, min_length=1, description="Old place of execution.target.")
    workspace: WorkspaceSpec | None = None
    metadata: dict[str, Any] | None = None
    tests: list[Any] | None = None
    cases: list[Any] | None = None
    evalcases: list[Any] | None = None
    eval_cases: list[Any] | None = None

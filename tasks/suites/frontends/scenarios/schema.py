"""The scenario file (seed 003): global settings, then `scenarios:`, each of which may override
`agent_config`, `agent_name`, `metrics`, `agent_class`, `judge_model_id`, `agent_model_config`
and `pass_threshold` (the scenario's value wins over the file's, the file's over the command
line's), and may give `config_overrides` (what a reference-style agent's `ainvoke` gets as
`config`). A scenario needs `expected_output` or `evaluation_criteria`, as in the reference.
Unknown keys are errors, as in every accord file.

accord adds three file-level keys: `allow_env` (names ENV may read), `allow_hosts` (hosts
HTTP_GET may reach) and `timeout` (seconds an agent has for one scenario).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from .....engine.specbase import Spec

BUILTIN_METRICS = ("correctness", "relevance", "safety")
DEFAULT_THRESHOLD = 7.0

AgentClass = str | dict[str, Any]
ModelConfig = dict[str, Any] | list[dict[str, Any]]


class _Overridable(Spec):
    """The settings a scenario may override."""

    agent_config: dict[str, Any] | str | None = Field(
        None, description="The agent's configuration, or a YAML file holding it."
    )
    agent_name: str | None = Field(
        None, min_length=1, description="A reference-style agent's agent_name (default: the "
        "scenario file's name)."
    )  # fmt: skip
    metrics: list[str] | None = Field(None, description="Metrics the judge scores (0-10).")
    agent_class: AgentClass | None = Field(
        None, description="module.Class of the agent, or an accord target ({type: ...})."
    )
    judge_model_id: str | None = Field(None, description="The judge model.")
    agent_model_config: ModelConfig | None = Field(
        None, description="One model configuration, or a list: every scenario runs on each."
    )
    pass_threshold: float | None = Field(
        None, ge=0, le=10, allow_inf_nan=False, description="Mean metric score to pass (0-10)."
    )

    @field_validator("metrics")
    @classmethod
    def _metrics(cls, value: list[str] | None) -> list[str] | None:
        if value is not None:
            if not value:
                raise ValueError("an empty list of metrics scores nothing: leave 'metrics' out")
            if len(set(value)) != len(value):
                raise ValueError("a metric is listed twice")
        return value

    @field_validator("agent_model_config")
    @classmethod
    def _matrix(cls, value: ModelConfig | None) -> ModelConfig | None:
        if isinstance(value, list) and not value:
            raise ValueError("an empty model matrix runs nothing: leave it out")
        return value


class ScenarioSpec(_Overridable):
    """One scenario."""

    name: str = Field(min_length=1)
    description: str | None = None
    input_message: str = Field(description="What the agent is given (macros expand).")
    expected_output: str | None = None
    evaluation_criteria: str | None = None
    config_overrides: dict[str, Any] | None = Field(
        None, description="What a reference-style agent's ainvoke() gets as config."
    )

    @model_validator(mode="after")
    def _judged_against_something(self) -> ScenarioSpec:
        # the reference's TestScenario.__post_init__: an empty string counts as missing
        if not self.expected_output and not self.evaluation_criteria:
            raise ValueError(
                "a scenario needs expected_output or evaluation_criteria (the judge scores "
                "the answer against them); give one"
            )
        return self


class ScenarioFileSpec(_Overridable):
    """A scenario file."""

    scenarios: list[ScenarioSpec] = Field(min_length=1)
    allow_env: list[str] = Field(default_factory=list, description="Names ENV may read.")
    allow_hosts: list[str] = Field(
        default_factory=list, description="Hosts HTTP_GET may reach (`*.example.com` too)."
    )
    timeout: float = Field(
        300, gt=0, allow_inf_nan=False, description="Seconds an agent has for one scenario."
    )

"""AgentV's `execution_metrics` evaluator: what the target's run spent (tool calls, model
calls, tokens, cost, time) and how much of it was reading, against thresholds."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, model_validator

from .....evaluators.base import Finding
from ..common.wire import output_messages, trace_summary
from .evaluators import AgentVEvaluator, agentv

if TYPE_CHECKING:
    from .....evaluators.cases import Case, Output
    from .....evaluators.judging import EvalContext


# trace.ts DEFAULT_EXPLORATION_TOOLS: the calls that read rather than change
EXPLORATION_TOOLS = (
    "read", "grep", "glob", "search", "list", "Read", "Grep", "Glob", "WebSearch", "WebFetch",
)  # fmt: skip


@agentv("execution_metrics")
class ExecutionMetrics(AgentVEvaluator):
    """What the target's run spent, against AgentV's thresholds (execution-metrics.ts):
    `max_tool_calls`, `max_llm_calls` (assistant messages), `max_tokens` (input + output),
    `max_cost_usd`, `max_duration_ms` (reported, else measured), `target_exploration_ratio`
    (share of reading calls, within `exploration_tolerance`, default 0.2). Score: the share
    of checks met; a figure the target did not report is an unmet check, as in AgentV."""

    type: Literal["execution_metrics"] = "execution_metrics"
    max_tool_calls: float | None = Field(None, ge=0, allow_inf_nan=False)
    max_llm_calls: float | None = Field(None, ge=0, allow_inf_nan=False)
    max_tokens: float | None = Field(None, ge=0, allow_inf_nan=False)
    max_cost_usd: float | None = Field(None, ge=0, allow_inf_nan=False)
    max_duration_ms: float | None = Field(None, ge=0, allow_inf_nan=False)
    target_exploration_ratio: float | None = Field(None, ge=0, allow_inf_nan=False)
    exploration_tolerance: float = Field(0.2, ge=0, allow_inf_nan=False)

    @model_validator(mode="after")
    def _some_threshold(self) -> ExecutionMetrics:
        limits = (
            self.max_tool_calls, self.max_llm_calls, self.max_tokens, self.max_cost_usd,
            self.max_duration_ms, self.target_exploration_ratio,
        )  # fmt: skip
        if all(limit is None for limit in limits):
            raise ValueError(
                "give at least one of max_tool_calls, max_llm_calls, max_tokens, max_cost_usd, "
                "max_duration_ms, target_exploration_ratio"
            )
        return self

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        summary = trace_summary(output_messages(output), output)
        hits: list[str] = []
        misses: list[str] = []

        def check(label: str, value: float | None, limit: float | None, unit: str = "") -> None:
            if limit is None:
                return
            if value is None:
                misses.append(f"{label} data not available")
                return
            line = f"{label} {value:g}{unit} {'<=' if value <= limit else '>'} {limit:g}{unit} max"
            (hits if value <= limit else misses).append(line)

        check("Tool calls", summary["event_count"], self.max_tool_calls)
        check("LLM calls", summary["llm_call_count"], self.max_llm_calls)
        usage = summary.get("token_usage")
        tokens = usage["input"] + usage["output"] if usage else None
        check("Total tokens", tokens, self.max_tokens)
        check("Cost", summary.get("cost_usd"), self.max_cost_usd, " USD")
        took = output.duration_ms if output.duration_ms is not None else output.seconds * 1000
        check("Duration", took, self.max_duration_ms, "ms")
        if self.target_exploration_ratio is not None:
            events = summary["event_count"]
            if not events:
                misses.append("Exploration ratio not available (no tool calls)")
            else:
                counts = summary["tool_calls_by_name"]
                ratio = sum(counts.get(tool, 0) for tool in EXPLORATION_TOOLS) / events
                diff = abs(ratio - self.target_exploration_ratio)
                line = (
                    f"Exploration ratio {ratio:.2f} against target "
                    f"{self.target_exploration_ratio:g} (tolerance {self.exploration_tolerance:g})"
                )
                (hits if diff <= self.exploration_tolerance else misses).append(line)
        total = len(hits) + len(misses)
        return self.scored(len(hits) / total if total else 0.0, hits, misses)

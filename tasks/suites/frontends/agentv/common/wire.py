"""What a code judge reads on stdin, in the form AgentV's SDK validates
(packages/eval/src/schemas.ts, `CodeJudgeInputSchema`, sent snake_case).

A message's `content` is a text, an object or a list of objects, or absent: never null (the
SDK's schema refuses null, so a judge written with `defineCodeJudge` would exit 1 on it).
Tool calls are `{tool, input, output, id, duration_ms}`. `trace_summary` is AgentV's
computeTraceSummary of the output messages merged with the target's token usage, cost and
duration (trace.ts).
"""

from __future__ import annotations

from typing import Any

from .....evaluators.cases import Output
from ..v2.cases import AgentVCase


def judge_payload(
    case: AgentVCase, output: Output, config: dict[str, Any] | None
) -> dict[str, Any]:
    messages = output_messages(output)
    return {
        "question": case.question,
        "criteria": case.criteria or "",
        "candidate_answer": output.text,
        "reference_answer": case.reference_answer,
        "expected_messages": wire_messages(case.expected_messages),
        "input_messages": wire_messages(case.raw_input),
        "output_messages": messages,
        "input_files": list(case.input_files),
        "guideline_files": list(case.guideline_files),
        "trace_summary": trace_summary(messages, output),
        "metadata": case.metadata or None,
        "sidecar": case.sidecar,
        "workspace_path": output.workspace,
        "config": config,
    }


def wire_messages(messages: Any) -> list[dict[str, Any]]:
    """Messages without null fields, their tool calls in AgentV's form."""
    out: list[dict[str, Any]] = []
    for message in messages or ():
        if not isinstance(message, dict):
            continue
        wired = {k: v for k, v in message.items() if v is not None and k != "tool_calls"}
        if "content" in wired and not _content_ok(wired["content"]):
            wired["content"] = str(wired["content"])
        calls = message.get("tool_calls")
        if isinstance(calls, list) and calls:
            wired["tool_calls"] = [wire_call(c) for c in calls if isinstance(c, dict)]
        out.append(wired)
    return out


def _content_ok(content: Any) -> bool:
    if isinstance(content, str | dict):
        return True
    return isinstance(content, list) and all(isinstance(item, dict) for item in content)


def wire_call(call: dict[str, Any]) -> dict[str, Any]:
    """A tool call as AgentV's ToolCallSchema has it (`tool`, then what is known)."""
    wired: dict[str, Any] = {"tool": str(call.get("tool", call.get("name", "")))}
    arguments = call.get("input", call.get("arguments", call.get("args")))
    if arguments is not None:
        wired["input"] = arguments
    for key in ("output", "id", "start_time", "end_time"):
        if call.get(key) is not None:
            wired[key] = call[key]
    duration = call.get("duration_ms")
    if isinstance(duration, int | float) and not isinstance(duration, bool):
        wired["duration_ms"] = duration
    return wired


def output_messages(output: Output) -> list[dict[str, Any]]:
    """The target's messages (a program's trace), else one assistant message holding the
    answer and the tool calls it reported."""
    if output.messages:
        return wire_messages(output.messages)
    message: dict[str, Any] = {"role": "assistant", "content": output.text}
    if output.tool_calls:
        message["tool_calls"] = [wire_call(c) for c in output.tool_calls]
    return [message]


def trace_summary(messages: list[dict[str, Any]], output: Output) -> dict[str, Any]:
    """AgentV's computeTraceSummary (trace.ts) with mergeExecutionMetrics."""
    counts: dict[str, int] = {}
    durations: dict[str, list[float]] = {}
    events = 0
    for message in messages:
        for call in message.get("tool_calls", ()):
            name = call["tool"]
            counts[name] = counts.get(name, 0) + 1
            events += 1
            if "duration_ms" in call:
                durations.setdefault(name, []).append(call["duration_ms"])
    summary: dict[str, Any] = {
        "event_count": events,
        "tool_names": sorted(counts),
        "tool_calls_by_name": counts,
        "error_count": 0,
        "llm_call_count": sum(m.get("role") == "assistant" for m in messages),
    }
    if durations:
        summary["tool_durations"] = durations
    if output.usage:
        usage = {"input": output.usage.get("input", 0), "output": output.usage.get("output", 0)}
        if "cached" in output.usage:
            usage["cached"] = output.usage["cached"]
        summary["token_usage"] = usage
    if output.cost is not None:
        summary["cost_usd"] = output.cost
    if output.duration_ms is not None:
        summary["duration_ms"] = output.duration_ms
    return summary

"""The minimal sub-DAG a test runs, and its per-run copies.

A test of `task_ref: X` runs the top-level tasks X depends on (transitively) and X itself,
never the rest of the workflow. Each of its n runs is a copy of that sub-plan in which every
agent call is a distinct sample (its cache key carries the run index, so n runs are n
answers, never one cached answer repeated), and exports and pinned caches are switched off
(a test must not write the workflow's files n times, nor replay a pinned output).
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any, Literal

from ....engine.kinds import register_task
from ....engine.plan import Plan, PlannedTask
from ....engine.render import jsonable
from ....engine.spec import TaskSpec
from ...agent import AgentTaskSpec, answer
from ...consistency import AgentSampleSpec, AgentSampleSpecBase

if TYPE_CHECKING:
    from ....engine.context import TaskContext

NESTED_STRIDE = 1000  # sample index of consistency run j in test run i: i * 1000 + j


def ancestors(plan: Plan, task_ref: str) -> set[str]:
    """`task_ref` and every task of `plan` it depends on, directly or not."""
    by_name = plan.by_name
    wanted: set[str] = set()
    stack = [task_ref]
    while stack:
        name = stack.pop()
        if name in wanted:
            continue
        wanted.add(name)
        stack.extend(by_name[name].deps)
    return wanted


def sub_plan(plan: Plan, task_ref: str) -> Plan:
    """The plan restricted to what `task_ref` needs, priorities recomputed for the subset."""
    wanted = ancestors(plan, task_ref)
    tasks = [t for t in plan.tasks if t.name in wanted]
    priority = _priorities(tasks)
    kept = tuple(dataclasses.replace(t, priority=priority[t.name]) for t in tasks)
    return dataclasses.replace(plan, name=f"{plan.name}:{task_ref}", tasks=kept)


def _priorities(tasks: list[PlannedTask]) -> dict[str, int]:
    dependants: dict[str, list[str]] = {t.name: [] for t in tasks}
    for task in tasks:
        for dep in task.deps:
            dependants[dep].append(task.name)
    priority: dict[str, int] = {}
    for task in reversed(tasks):  # tasks are in YAML order; deps may point forward
        _longest(task.name, dependants, priority)
    return priority


def _longest(name: str, dependants: dict[str, list[str]], memo: dict[str, int]) -> int:
    if name not in memo:
        memo[name] = 1 + max((_longest(d, dependants, memo) for d in dependants[name]), default=0)
    return memo[name]


def sampled(plan: Plan, run: int) -> Plan:
    """A copy of `plan` for run `run`: agent calls sampled, exports and pinned caches off."""
    return dataclasses.replace(plan, tasks=tuple(_sampled_task(t, run) for t in plan.tasks))


def _sampled_task(task: PlannedTask, run: int) -> PlannedTask:
    children = {label: sampled(child, run) for label, child in task.children.items()}
    spec: TaskSpec = task.spec.model_copy(update={"export": None, "cache": None})
    if isinstance(spec, AgentTaskSpec) and spec.consistency_run == 1:
        spec = SampledAgentSpec(
            name=spec.name, retry=spec.retry, timeout=spec.timeout, sample=run, task=spec
        )
    elif isinstance(spec, AgentSampleSpec):
        spec = spec.model_copy(update={"sample": run * NESTED_STRIDE + spec.sample})
    return dataclasses.replace(task, spec=spec, children=children)


class SampledAgentSpec(AgentSampleSpecBase):
    """An agent task inside a test run: sample `sample` of its prompt (compiled only)."""

    type: Literal["test_agent_run"] = "test_agent_run"


@register_task("test_agent_run", SampledAgentSpec, internal=True)
async def run_sampled_agent(task: PlannedTask, ctx: TaskContext) -> Any:
    spec = task.spec
    assert isinstance(spec, SampledAgentSpec)
    return await answer(spec.task, ctx, sample=spec.sample)


def output_text(plan: Plan, task_ref: str, output: Any) -> str:
    """The text a test compares for the output of `task_ref`.

    A loop's output is the list of its iterations; the text is each iteration's last
    subtask output (Oxy's choice for a loop), one per paragraph. Maps and lists are JSON.
    """
    task = plan.by_name[task_ref]
    if isinstance(output, list) and len(task.children) == 1 and output:
        (body,) = task.children.values()
        last = body.tasks[-1].name if body.tasks else None
        if last is not None and all(isinstance(item, dict) for item in output):
            return "\n\n".join(_text(item.get(last)) for item in output)
    return _text(output)


def _text(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(jsonable(value), ensure_ascii=False, default=str)
    return str(value)


def contexts_of(outputs: Any, depth: int = 0) -> list[str]:
    """The SQL behind outputs (query results, agent answers), for context recall."""
    found: list[str] = []
    sql = getattr(outputs, "sql", None)
    if isinstance(sql, str) and sql.strip():
        found.append(sql)
    if depth < 4 and isinstance(outputs, dict):
        for value in outputs.values():
            found.extend(contexts_of(value, depth + 1))
    elif depth < 4 and isinstance(outputs, list):
        for value in outputs:
            found.extend(contexts_of(value, depth + 1))
    return found

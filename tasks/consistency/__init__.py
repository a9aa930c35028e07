"""Consistency selection: n answers to one prompt, reduced by pairwise judging.

`consistency_run: n` on an agent task compiles into n `agent_sample` nodes and one
`consistency_select` node in the same DAG. The select node clusters identical answers, lets
the deterministic pre-judge settle what it can, and schedules one judge node per remaining
distinct pair. Every pair judged consistent gives +1 to both answers; score = wins / (k - 1);
the highest score wins and ties go to the lowest run index.

`select` holds the reduction (`Selection`, `select_consistent`, `ConsistencyResult`), `nodes`
the compiled nodes and their task types. Beside them: `judge` (the default prompt, verdict
parsing, one judge call), `prejudge` (the deterministic comparator) with `facts` (numbers,
dates, directions) and `reading` (how an answer's text is read for them).
"""

from .nodes import (
    AgentSampleSpec,
    AgentSampleSpecBase,
    ConsistencySelectSpec,
    consistency_children,
    run_sample,
    run_select,
)
from .select import ConsistencyResult, SampleFailure, Selection, pair_plan, select_consistent

__all__ = [
    "AgentSampleSpec",
    "AgentSampleSpecBase",
    "ConsistencyResult",
    "ConsistencySelectSpec",
    "SampleFailure",
    "Selection",
    "consistency_children",
    "pair_plan",
    "run_sample",
    "run_select",
    "select_consistent",
]

"""Validation of `tests:` entries: each problem becomes an issue at the entry's line.

A `task_ref` to an unknown task is the compiler's issue (engine.compile); the checks here
add what only the test runner knows: agent tests need `task_description`, custom tests need
a readable dataset and known metrics, `evaluators:` must be the library's, judge prompts must
only use the names they are given.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pydantic

from .....engine.catalog import ModelCatalog
from .....engine.errors import AccordError, Issue, ValidationError
from .....engine.loader import Loaded, pydantic_text
from .....engine.plan import Plan
from .....engine.project import Project
from .....engine.render import BUILTIN_NAMES, TemplateError, referenced_names
from .....engine.spec import AgentSpec, variable_spec
from .....engine.yamlmarks import Loc
from ....consistency.judge import DEFAULT_PROMPT
from ....evaluators.base import EVALUATORS, EvaluatorSpec
from ....evaluators.judged import JUDGE_NAMES
from ....evaluators.parsing import parse_evaluators
from ...testing.prepared import CaseInput, Judging, PreparedTest
from .datasets import load_dataset
from .specs import MetricSpec, TestSpecBase, tests_of

DEFAULT_METRICS = ("similarity",)


class TestChecker:
    """Checks the tests of one workflow or agent file and prepares the valid ones."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        loaded: Loaded,
        project: Project,
        kind: str,
        *,
        plan: Plan | None = None,
        agent: AgentSpec | None = None,
    ) -> None:
        self.loaded = loaded
        self.project = project
        self.kind = kind
        self.plan = plan
        self.agent = agent
        self.issues: list[Issue] = []
        self.catalog = ModelCatalog(project.config)

    def issue(self, loc: Loc, message: str) -> None:
        self.issues.append(self.loaded.issue(loc, message))

    # -- workflows and agents ---------------------------------------------------------------

    def workflow_tests(self) -> list[PreparedTest]:
        spec = self.loaded.spec
        names = [t.name for t in spec.tasks]
        out: list[PreparedTest] = []
        for index, test in enumerate(spec.tests):
            task_ref = test.task_ref or (names[-1] if names else None)
            if task_ref is None or task_ref not in names:
                continue  # reported by the compiler
            self.check_required_variables(index, test)
            prepared = self.prepare(index, test, task_ref, self.task_model(task_ref))
            if prepared is not None:
                out.append(prepared)
        return out

    def check_required_variables(self, index: int, test: TestSpecBase) -> None:
        """A test cannot be given variables: each one needs a default (or is the query's)."""
        variables = self.loaded.spec.variables
        required = [n for n, v in variables.items() if not variable_spec(v).has_default]
        for name in required:
            if name != test.workflow_variable_name:
                self.issue(
                    ("tests", index),
                    f"variable '{name}' has no default and a test cannot set it: "
                    "give it a default in 'variables:'",
                )

    def agent_tests(self) -> list[PreparedTest]:
        assert self.agent is not None
        out: list[PreparedTest] = []
        for index, test in enumerate(tests_of(self.agent)):
            loc: Loc = ("tests", index)
            if test.task_ref is not None:
                self.issue(
                    (*loc, "task_ref"),
                    "task_ref applies to workflow tests; an agent is tested with "
                    "'task_description' (consistency) or a 'dataset' (custom)",
                )
            if test.type == "consistency" and not (test.task_description or "").strip():
                self.issue(
                    loc,
                    "a consistency test on an agent needs 'task_description': the question "
                    "sent to the agent n times",
                )
                continue
            prepared = self.prepare(index, test, None, self.agent.model)
            if prepared is not None:
                out.append(prepared)
        return out

    def prepare(
        self, index: int, test: TestSpecBase, task_ref: str | None, model: str | None
    ) -> PreparedTest | None:
        """One test, or None (with issues) when it cannot run."""
        loc: Loc = ("tests", index)
        before = len(self.issues)
        judging = self.judging(test, loc, model)
        prepared: PreparedTest | None
        if test.type == "consistency":
            if test.n < 2:
                self.issue((*loc, "n"), f"a consistency test needs n >= 2 runs (got {test.n})")
            evaluators = parse_evaluators(test.evaluators, self.loaded, loc, self.issues)
            for position, spec in enumerate(evaluators):
                if spec.needs_expected or spec.needs_contexts:
                    self.issue(
                        (*loc, "evaluators", position),
                        f"evaluator '{spec.id}' compares with an expected answer or reference "
                        "contexts, and a consistency test has none: use it in a custom test "
                        "with a dataset",
                    )
            prepared = PreparedTest(
                index=index + 1,
                name=test.name or _consistency_name(task_ref, test.task_description),
                kind="consistency",
                n=test.n,
                judging=judging,
                task_ref=task_ref,
                task_description=test.task_description,
                evaluators=evaluators,
            )
        else:
            prepared = self.custom(index, test, task_ref, judging)
        return prepared if len(self.issues) == before else None

    def custom(
        self, index: int, test: TestSpecBase, task_ref: str | None, judging: Judging
    ) -> PreparedTest | None:
        loc: Loc = ("tests", index)
        variable = self.query_variable(test, loc)
        cases = self.dataset(test, loc)
        metrics, models, prompts = self.metrics(test, loc)
        evaluators = parse_evaluators(test.evaluators, self.loaded, loc, self.issues, metrics)
        if cases is None:
            return None
        self.check_cases(test, loc, cases, (*metrics, *(e.id for e in evaluators)), evaluators)
        similarity_prompt = prompts.get("similarity")
        judging = replace(
            judging,
            prompt=similarity_prompt or judging.prompt,
            prejudge=test.consistency_prejudge
            or ("identical" if similarity_prompt else judging.prejudge),
            correctness_prompt=prompts.get("correctness"),
        )
        return PreparedTest(
            index=index + 1,
            name=test.name or f"custom: {test.dataset}",
            kind="custom",
            n=test.n if "n" in test.model_fields_set else 1,
            judging=judging,
            task_ref=task_ref,
            task_description=test.task_description,
            cases=tuple(cases),
            metrics=metrics,
            variable=variable,
            metric_models=models,
            evaluators=evaluators,
        )

    # -- pieces -----------------------------------------------------------------------------

    def judging(self, test: TestSpecBase, loc: Loc, model: str | None) -> Judging:
        workflow_prompt = getattr(self.loaded.spec, "consistency_prompt", None)
        custom = test.prompt or workflow_prompt
        if test.prompt:
            self.check_template((*loc, "prompt"), test.prompt, JUDGE_NAMES)
        mode = test.consistency_prejudge or ("identical" if custom else "tolerant")
        judge = self.project.config.defaults.judge_model or model or self.project.default_model
        return Judging(judge, custom or DEFAULT_PROMPT, mode, test.pairs)

    def check_template(self, loc: Loc, source: str, allowed: frozenset[str]) -> None:
        try:
            unknown = referenced_names(source) - BUILTIN_NAMES - allowed
        except TemplateError as exc:
            self.issue(loc, str(exc))
            return
        for name in sorted(unknown):
            self.issue(
                loc,
                f"unknown name '{name}' in the judge prompt: it sees {', '.join(sorted(allowed))}",
            )

    def query_variable(self, test: TestSpecBase, loc: Loc) -> str | None:
        name = test.workflow_variable_name
        if self.kind != "workflow":
            return None
        declared = sorted(self.loaded.spec.variables)
        if name is None:
            self.issue(
                loc,
                "a custom test on a workflow needs 'workflow_variable_name': the variable "
                f"that receives each query (variables: {', '.join(declared) or 'none'})",
            )
        elif name not in declared:
            self.issue(
                (*loc, "workflow_variable_name"),
                f"the workflow declares no variable '{name}' "
                f"(variables: {', '.join(declared) or 'none'})",
            )
        return name

    def dataset(self, test: TestSpecBase, loc: Loc) -> list[CaseInput] | None:
        if test.dataset is None:
            self.issue(
                loc,
                "a custom test needs 'dataset': a YAML, JSONL or CSV file of rows "
                "{query, response, relevant_contexts}",
            )
            return None
        path = self.project.root / test.dataset
        if not path.is_file():
            self.issue(
                (*loc, "dataset"),
                f"dataset file '{test.dataset}' not found under the project root "
                f"{self.project.root} (paths are relative to it, not to this file)",
            )
            return None
        try:
            rows = load_dataset(path)
        except ValidationError as exc:
            self.issues.extend(exc.issues)
            return None
        return [
            CaseInput(
                row.name or f"case {number}",
                row.query,
                row.response,
                tuple(row.relevant_contexts),
                tuple(row.tags),
            )
            for number, row in enumerate(rows, start=1)
        ]

    def metrics(
        self, test: TestSpecBase, loc: Loc
    ) -> tuple[tuple[str, ...], dict[str, str | None], dict[str, str | None]]:
        """Metric names in file order, their judge models and prompts."""
        names: list[str] = []
        models: dict[str, str | None] = {}
        prompts: dict[str, str | None] = {}
        default = [] if test.evaluators else list(DEFAULT_METRICS)
        for position, item in enumerate(test.metrics or default):
            metric = self.metric((*loc, "metrics", position), item)
            if metric is None or metric.type in names:
                continue
            names.append(metric.type)
            models[metric.type] = metric.model or metric.model_ref
            prompts[metric.type] = metric.prompt
        return tuple(names), models, prompts

    def metric(self, loc: Loc, item: Any) -> MetricSpec | None:
        data = {"type": item} if isinstance(item, str) else item
        try:
            metric = MetricSpec.model_validate(data)
        except pydantic.ValidationError as exc:
            problems = "; ".join(_pydantic_message(e) for e in exc.errors(include_url=False))
            self.issue(loc, f"invalid metric: {problems}")
            return None
        model = metric.model or metric.model_ref
        if model is not None and (problem := self.catalog.problem(model)):
            self.issue(loc, problem)
        if metric.prompt:
            allowed = EVALUATORS.get(metric.type).prompt_names
            self.check_template((*loc, "prompt"), metric.prompt, allowed)
        return metric

    def check_cases(
        self,
        test: TestSpecBase,
        loc: Loc,
        cases: list[CaseInput],
        names: tuple[str, ...],
        evaluators: tuple[EvaluatorSpec, ...],
    ) -> None:
        """Every metric and evaluator finds in the rows what it compares with."""
        where = (*loc, "dataset")
        kinds = {e.id: type(e) for e in evaluators}

        def kind(name: str) -> type[EvaluatorSpec]:
            return kinds.get(name) or EVALUATORS.get(name)

        for metric in (m for m in names if kind(m).needs_expected):
            missing = [c.name for c in cases if c.expected is None]
            if missing:
                self.issue(
                    where,
                    f"dataset '{test.dataset}': {', '.join(missing[:5])} "
                    f"{'has' if len(missing) == 1 else 'have'} no 'response', the expected "
                    f"answer that {metric} compares with",
                )
        for metric in (m for m in names if kind(m).needs_contexts):
            if not any(c.contexts for c in cases):
                self.issue(
                    where,
                    f"dataset '{test.dataset}': {metric} needs 'relevant_contexts' in the rows",
                )

    def task_model(self, task_ref: str) -> str | None:
        """The model of the tested task, when it is an agent task (the judge's default)."""
        if self.plan is None:
            return None
        spec = self.plan.by_name[task_ref].spec
        model = getattr(spec, "model", None)
        ref = getattr(spec, "agent_ref", None)
        if model is not None or ref is None:
            return model
        return _agent_model(self.project.root / ref)


def _agent_model(path: Path) -> str | None:
    from ....agent import load_agent

    try:
        return load_agent(path).model
    except AccordError:
        return None  # reported by the compiler


def _consistency_name(task_ref: str | None, description: str | None) -> str:
    if task_ref is not None:
        return f"consistency of '{task_ref}'"
    text = " ".join((description or "").split())
    return f"consistency: {text[:60]}{'…' if len(text) > 60 else ''}"


def _pydantic_message(error: Any) -> str:
    where = ".".join(str(p) for p in error["loc"])
    text = pydantic_text(error)
    return f"{where}: {text}" if where else text

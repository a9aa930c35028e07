"""`accord test FILE`: load a workflow, an agent or a `.test.yml` into a `PreparedSuite`.

Every problem (a `task_ref` to an unknown task, an agent test without `task_description`,
a missing or malformed dataset, ...) is an issue with file and line, raised together with
the file's other problems as one `ValidationError` (exit 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .....engine.catalog import ModelCatalog
from .....engine.compile import compile_workflow
from .....engine.errors import AccordError, Issue, LoadError, ValidationError
from .....engine.loader import Loaded, agent_model, is_workflow_file, load_spec, load_workflow
from .....engine.paths import PathError, inside
from .....engine.project import Project, load_project
from .....engine.spec import AgentSpec
from .....engine.yamlmarks import Loc, parse_yaml, read_text
from ....evaluators.base import EVALUATORS, EvaluatorSpec
from ....evaluators.parsing import parse_evaluators
from ...testing.prepared import CaseInput, Judging, PreparedSuite, PreparedTest
from .checks import TestChecker
from .specs import TestSpecBase, TestSuiteSpec, tests_of

AGENT_SUFFIXES = (".agent.yml", ".agent.yaml")
SUITE_SUFFIXES = (".test.yml", ".test.yaml")


def prepare(path: Path, *, text: str | None = None) -> PreparedSuite:
    """Load and validate `path` (a workflow, an agent or a `.test.yml`); `text`: a
    `.test.yml`'s, read already (it is read once)."""
    if not path.exists():
        raise LoadError(f"{path}: file not found")
    if path.is_dir():
        raise LoadError(f"{path}: is a folder; give a .workflow.yml, .agent.yml or .test.yml")
    if is_workflow_file(path):
        return _prepare_workflow(path)
    if path.name.endswith(AGENT_SUFFIXES):
        return _prepare_agent(path)
    if path.name.endswith(SUITE_SUFFIXES):
        return _prepare_suite(path, read_text(path) if text is None else text)
    raise LoadError(
        f"{path}: accord test takes a .workflow.yml (or .procedure.yml / .automation.yml), "
        "an .agent.yml or a .test.yml file"
    )


def _no_tests(path: Path) -> LoadError:
    return LoadError(
        f"{path}: has no tests: add a 'tests:' list (type: consistency or custom); "
        "see docs/testing.md"
    )


def _prepare_workflow(path: Path) -> PreparedSuite:
    issues: list[Issue] = []
    plan = None
    try:
        _project, plan = compile_workflow(path)
    except ValidationError as exc:
        issues.extend(exc.issues)
    project = load_project(path)
    try:
        loaded = load_workflow(path)
    except ValidationError:
        _raise_all(path, issues)  # the compiler's issues already say why
        raise
    checker = TestChecker(loaded, project, "workflow", plan=plan)
    tests = checker.workflow_tests()
    _raise_all(path, [*issues, *checker.issues])
    assert plan is not None
    if not tests:
        raise _no_tests(path)
    return PreparedSuite(
        path=path,
        project=project,
        kind="workflow",
        name=plan.name,
        tests=tuple(tests),
        plan=plan,
        max_concurrency=tests_concurrency(loaded.spec.tests),
    )


def _prepare_agent(path: Path) -> PreparedSuite:
    project = load_project(path)
    loaded = load_spec(path, agent_model(), kind="agent")
    agent: AgentSpec = loaded.spec
    checker = TestChecker(loaded, project, "agent", agent=agent)
    tests = checker.agent_tests()
    _raise_all(path, checker.issues)
    if not tests:
        raise _no_tests(path)
    return PreparedSuite(
        path=path,
        project=project,
        kind="agent",
        name=_stem(path, AGENT_SUFFIXES),
        tests=tuple(tests),
        agent=agent,
        agent_path=path,
        max_concurrency=tests_concurrency(tests_of(agent)),
    )


def _prepare_suite(path: Path, text: str) -> PreparedSuite:
    data, _marks = parse_yaml(text, path)
    if isinstance(data, list):
        raise LoadError(
            f"{path}: this file is a list of rows, i.e. a dataset for a custom test "
            "(Oxy's {query, response, relevant_contexts}), not a test suite. Reference it "
            "from an agent or workflow test ('type: custom', 'dataset: <path>') and run "
            "accord test on that file; a .test.yml suite is a mapping with 'target' and 'cases'."
        )
    project = load_project(path)
    loaded = load_spec(path, TestSuiteSpec, kind="test", text=text)
    suite: TestSuiteSpec = loaded.spec
    issues: list[Issue] = []
    agent, agent_path = _suite_target(loaded, project, issues)
    _check_case_names(loaded, issues)
    settings = suite.settings
    judge = settings.judge_model or project.config.defaults.judge_model
    judge = judge or (agent.model if agent else None) or project.default_model
    _check_model(loaded, project, judge, ("settings", "judge_model"), issues)
    metrics = ("correctness",)
    evaluators = parse_evaluators(suite.evaluators, loaded, (), issues, metrics)
    cases = tuple(
        CaseInput(
            c.name or f"case {number}", c.prompt, c.expected, (), tuple(c.tags),
            (
                *parse_evaluators(c.evaluators, loaded, ("cases", number), issues, metrics),
                *tool_check(c.tool),
            ),
        )
        for number, c in enumerate(suite.cases)
    )  # fmt: skip
    _raise_all(path, issues)
    assert agent is not None and agent_path is not None
    name = suite.name or _stem(path, SUITE_SUFFIXES)
    test = PreparedTest(
        index=1,
        name=name,
        kind="cases",
        n=settings.runs,
        judging=Judging(model=judge, prompt="", correctness_prompt=settings.judge_prompt),
        cases=cases,
        metrics=metrics,
        evaluators=evaluators,
    )
    return PreparedSuite(
        path=path,
        project=project,
        kind="suite",
        name=name,
        tests=(test,),
        agent=agent,
        agent_path=agent_path,
        max_concurrency=settings.concurrency,
    )


def tests_concurrency(tests: list[TestSpecBase]) -> int | None:
    """The tests' `concurrency` (Oxy): the smallest one given caps the file's test work."""
    given = [t.concurrency for t in tests if t.concurrency is not None]
    return min(given) if given else None


def tool_check(tool: str | None) -> tuple[EvaluatorSpec, ...]:
    """A case's `tool`: the agent's tool calls must include it (a required evaluator)."""
    if tool is None:
        return ()
    spec: EvaluatorSpec = EVALUATORS.get("tool_calls").model_validate(
        {"type": "tool_calls", "name": "tool", "calls": [tool], "required": True}
    )
    return (spec,)


def suite_target(path: Path, suite: TestSuiteSpec, project: Project) -> str | None:
    """The agent tested: `target`, else (as Oxy) the file named like the test file without
    `.test` (`sales.agent.test.yml` tests `sales.agent.yml`), relative to the root."""
    if suite.target is not None:
        return suite.target
    for suffix in SUITE_SUFFIXES:
        if path.name.endswith(suffix):
            beside = path.with_name(path.name[: -len(suffix)] + ".yml")
            try:
                return beside.resolve().relative_to(project.root.resolve()).as_posix()
            except ValueError:
                return None
    return None


def _suite_target(
    loaded: Loaded, project: Project, issues: list[Issue]
) -> tuple[AgentSpec | None, Path | None]:
    suite: TestSuiteSpec = loaded.spec
    ref = suite_target(loaded.path, suite, project)
    if ref is None or not ref.endswith(AGENT_SUFFIXES):
        got = f"got '{ref}'" if suite.target is not None else "the file names none"
        issues.append(
            loaded.issue(
                ("target",) if suite.target is not None else (),
                f"the target must be an .agent.yml file ({got}): give 'target: "
                "agents/x.agent.yml', or name the test file after its agent "
                "(x.agent.test.yml tests x.agent.yml beside it)",
            )
        )
        return None, None
    try:
        target = inside(project.root, ref, "target")
    except PathError as exc:
        issues.append(loaded.issue(("target",) if suite.target is not None else (), exc.message))
        return None, None
    if not target.is_file():
        issues.append(
            loaded.issue(
                ("target",) if suite.target is not None else (),
                f"file '{ref}' not found under {project.root}"
                + ("" if suite.target is not None else " (the target the file name implies)"),
            )
        )
        return None, None
    try:
        agent: AgentSpec = load_spec(target, agent_model(), kind="agent").spec
    except ValidationError as exc:
        issues.extend(exc.issues)
        return None, None
    except AccordError as exc:
        issues.append(loaded.issue(("target",), exc.message))
        return None, None
    if agent.model is not None:
        _check_model(loaded, project, agent.model, ("target",), issues)
    return agent, target


def _check_case_names(loaded: Loaded, issues: list[Issue]) -> None:
    seen: dict[str, int] = {}
    for index, case in enumerate(loaded.spec.cases):
        if case.name is None:
            continue
        if case.name in seen:
            issues.append(
                loaded.issue(
                    ("cases", index, "name"),
                    f"duplicate case name '{case.name}' (first used by cases[{seen[case.name]}])",
                )
            )
        seen.setdefault(case.name, index)


def _check_model(
    loaded: Loaded, project: Project, name: str | None, loc: Loc, issues: list[Issue]
) -> None:
    if name is None:
        return
    problem = ModelCatalog(project.config).problem(name)
    if problem is not None:
        issues.append(loaded.issue(loc, problem))


def _raise_all(path: Path, issues: list[Issue]) -> None:
    if not issues:
        return
    unique: dict[tuple[Any, ...], Issue] = {}
    for issue in issues:
        unique.setdefault((str(issue.file), issue.line, issue.column, issue.message), issue)
    ordered = sorted(
        unique.values(), key=lambda i: (str(i.file) != str(path), str(i.file), i.line or 0)
    )
    raise ValidationError(ordered)


def _stem(path: Path, suffixes: tuple[str, ...]) -> str:
    for suffix in suffixes:
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)]
    return path.stem

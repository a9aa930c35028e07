"""`.eval.yml`: accord's own suite file (targets, evaluators, cases), compiled to a `Suite`.

```yaml
name: greetings            # default: the file name
target: echo               # the default target; or name targets under `targets:`
targets:
  mini: {type: model, model: openai/gpt-4o-mini}
judge_model: local         # default: config.yml's defaults.judge_model, else its model
repeat: 1                  # runs of each case (pass@k)
short_circuit: true        # no judge for a case a deterministic evaluator failed
evaluators:                # applied to every case (a case may add or replace by name)
  - {type: contains, value: hello}
cases:
  - id: hi
    input: hello world     # text, or a list of {role, content} messages
    expected: hello world
    tags: [smoke]
```
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from pydantic import Field, create_model

from ....engine.errors import Issue, ValidationError
from ....engine.loader import Loaded, load_spec
from ....engine.project import Project, load_project
from ....engine.specbase import Spec
from ...evaluators.cases import Case, case_digest
from ...evaluators.parsing import evaluator_union
from ..core.cases import Suite
from ..core.frontend import FrontEnd, Request, Source
from ..core.targets import ModelTarget, Target, target_from

EVAL_SUFFIXES = (".eval.yml", ".eval.yaml")


class CaseSpecBase(Spec):
    """One case of an eval file."""

    id: str | None = Field(None, min_length=1, description="Unique in the file (default: case_N).")
    input: str | list[dict[str, Any]] | dict[str, Any] = Field(
        description="What the target is given: text, or a list of {role, content} messages."
    )
    expected: Any = Field(None, description="What the output is compared with.")
    criteria: str | None = None
    rubrics: list[Any] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    target: str | None = Field(None, description="A target of `targets:` (or a shorthand).")
    contexts: list[str] = Field(default_factory=list, description="Reference contexts (RAG).")
    baseline: str | None = Field(None, description="A manual battle's baseline.")


class EvalFileSpecBase(Spec):
    """An `.eval.yml` file."""

    name: str | None = None
    description: str | None = None
    target: str | dict[str, Any] | None = Field(None, description="The default target.")
    targets: dict[str, str | dict[str, Any]] = Field(default_factory=dict)
    judge_model: str | None = None
    repeat: int = Field(1, ge=1, le=1000)
    short_circuit: bool = False
    pass_score: float | None = Field(
        None, ge=0, le=1, description="A case passes when its weighted score reaches this."
    )
    max_concurrency: int | None = Field(None, ge=1)
    timeout: float | None = Field(None, gt=0, allow_inf_nan=False)


@cache
def case_model() -> type[CaseSpecBase]:
    union = evaluator_union()
    model: type[CaseSpecBase] = create_model(
        "CaseSpec",
        __base__=CaseSpecBase,
        evaluators=(list[union], Field(default_factory=list)),  # type: ignore[valid-type]
    )
    return model


@cache
def eval_file_model() -> type[EvalFileSpecBase]:
    """The model of an `.eval.yml`, its cases left as written: the loader validates them
    one at a time with `case_model` and lets each go once read."""
    union = evaluator_union()
    model: type[EvalFileSpecBase] = create_model(
        "EvalFileSpec",
        __base__=EvalFileSpecBase,
        evaluators=(list[union], Field(default_factory=list)),  # type: ignore[valid-type]
        cases=(list[Any], Field(min_length=1)),
    )
    return model


def is_eval_file(path: Path) -> bool:
    return path.name.endswith(EVAL_SUFFIXES)


def load_eval_file(
    path: Path,
    *,
    judge_model: str | None = None,
    repeat: int | None = None,
    text: str | None = None,
) -> Suite:
    """Validate an `.eval.yml` and build its suite; every problem at once, with lines.
    `text`: the file's, read already."""
    project = load_project(path)
    each = ("cases", case_model())
    loaded = load_spec(path, eval_file_model(), kind="eval", text=text, each=each)
    spec: Any = loaded.spec
    issues: list[Issue] = []
    targets = _targets(loaded, project, issues)
    default = "default" if spec.target is not None else None
    if default is None and len(targets) == 1:
        default = next(iter(targets))
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for index in range(len(spec.cases)):
        item, problems = loaded.item("cases", index, each[1])
        spec.cases[index] = None  # let the case as written go once it is read
        if item is None:
            issues.extend(problems)
            continue
        case_id = item.id or f"case_{index + 1}"
        line = loaded.marks.find(("cases", index))[0]
        if case_id in seen:
            issues.append(
                loaded.issue(
                    ("cases", index, "id"),
                    f"duplicate case id '{case_id}' (also case {seen[case_id] + 1})",
                )
            )
        seen[case_id] = index
        name = item.target or default
        if item.target is not None and item.target not in targets:
            try:
                targets[item.target] = target_from(item.target)
                _check_target(
                    loaded, project, ("cases", index, "target"), targets[item.target], issues
                )
            except ValueError as exc:
                issues.append(loaded.issue(("cases", index, "target"), str(exc)))
        if name is None:
            issues.append(
                loaded.issue(
                    ("cases", index), "no target: give the file a 'target', or this case one"
                )
            )
        case = Case(
            id=case_id, input=item.input, expected=item.expected, criteria=item.criteria,
            rubrics=tuple(item.rubrics), metadata=item.metadata, tags=tuple(item.tags),
            target=name, evaluators=tuple(item.evaluators), contexts=tuple(item.contexts),
            baseline=item.baseline, line=line,
        )  # fmt: skip
        cases.append(_with_digest(case))
    judge = judge_model or spec.judge_model or project.default_judge
    problem = project_catalog(project).problem(judge)
    if problem is not None:
        issues.append(loaded.issue(("judge_model",), problem))
    if not spec.evaluators and not any(c.evaluators for c in cases):
        issues.append(
            loaded.issue((), "no evaluators: add 'evaluators:' to the file or to its cases")
        )
    if issues:
        raise ValidationError(sorted(issues, key=lambda i: (i.line or 0, i.column or 0)))
    return Suite(
        id=spec.name or _stem(path),
        cases=cases,
        targets=targets,
        evaluators=tuple(spec.evaluators),
        default_target=default,
        repeat=repeat or spec.repeat,
        short_circuit=spec.short_circuit,
        pass_score=spec.pass_score,
        judge_model=judge,
        path=path,
        project=project,
        max_concurrency=spec.max_concurrency,
        timeout=spec.timeout,
    )


def _with_digest(case: Case) -> Case:
    from dataclasses import replace

    return replace(case, digest=case_digest(case))


def project_catalog(project: Project) -> Any:
    from ....engine.catalog import ModelCatalog

    return ModelCatalog(project.config)


def _targets(loaded: Loaded, project: Project, issues: list[Issue]) -> dict[str, Target]:
    spec: Any = loaded.spec
    out: dict[str, Target] = {}
    entries: list[tuple[tuple[str | int, ...], str, Any]] = [
        (("targets", name), name, value) for name, value in spec.targets.items()
    ]
    if spec.target is not None:
        if isinstance(spec.target, str) and spec.target in spec.targets:
            entries.append((("target",), "default", spec.targets[spec.target]))
        else:
            entries.append((("target",), "default", spec.target))
    for loc, name, value in entries:
        try:
            out[name] = target_from(value)
        except ValueError as exc:
            issues.append(loaded.issue(loc, _first_line(exc)))
            continue
        _check_target(loaded, project, loc, out[name], issues)
    return out


def _first_line(exc: Exception) -> str:
    import pydantic

    if isinstance(exc, pydantic.ValidationError):
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in error["loc"])
        return f"invalid target: {where + ': ' if where else ''}{error['msg']}"
    return str(exc)


def _check_target(
    loaded: Loaded,
    project: Project,
    loc: tuple[str | int, ...],
    target: Target,
    issues: list[Issue],
) -> None:
    root = project.root
    if isinstance(target, ModelTarget):
        problem = project_catalog(project).problem(target.model)
        if problem is not None:
            issues.append(loaded.issue(loc, problem))
    problem = target.problem(root) or target.admission(loaded.path, root)
    if problem is not None:
        issues.append(loaded.issue(loc, problem))


def _stem(path: Path) -> str:
    name = path.name
    for suffix in EVAL_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def _load(source: Source, request: Request) -> list[Suite]:
    return [
        load_eval_file(
            source.path, judge_model=request.judge_model, repeat=request.repeat, text=source.text
        )
    ]


FRONTEND = FrontEnd(
    name="eval",
    describe="an .eval.yml suite",
    claims=lambda source: is_eval_file(source.path),
    load=_load,
)

"""YAML text -> validated spec, with file, line and column for every error.

All the problems of one file are collected and raised together as one `ValidationError`.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Union

import pydantic
from pydantic import BaseModel, Field, TypeAdapter, create_model

from . import log
from .errors import Issue, ValidationError, did_you_mean
from .kinds import sections, task_types, workflow_kind
from .spec import AgentSpec, ConfigSpec, InvalidTask, Spec, TaskSpec, WorkflowSpecBase
from .yamlmarks import Loc, Marks, format_path, parse_yaml, read_text

WORKFLOW_SUFFIXES = (".workflow.yml", ".workflow.yaml", ".procedure.yml", ".automation.yml")


@cache
def task_union() -> Any:
    """The discriminated union of every registered task spec, nested task lists resolved."""
    specs = [t.spec for t in task_types().values() if not t.internal]
    union: Any = Annotated[Union[tuple(specs)], Field(discriminator="type")]  # noqa: UP007
    for spec in specs:
        spec.model_rebuild(force=True, _types_namespace={"AnyTask": union})
    return union


@cache
def workflow_model() -> type[WorkflowSpecBase]:
    """`WorkflowSpec`: the base workflow fields, the sections plugins add, and `tasks`, a list
    of the task union."""
    union = task_union()
    model: type[WorkflowSpecBase] = create_model(
        "WorkflowSpec",
        __base__=WorkflowSpecBase,
        **_sections("workflow"),
        tasks=(
            list[union],  # type: ignore[valid-type]
            Field(min_length=1, description="The tasks, at least one."),
        ),
    )
    return model


@cache
def agent_model() -> type[AgentSpec]:
    """An `.agent.yml`'s model: `AgentSpec` and the sections plugins add."""
    model: type[AgentSpec] = create_model("AgentSpec", __base__=AgentSpec, **_sections("agent"))
    return model


def _sections(file: str) -> dict[str, Any]:
    return {section.name: (section.annotation, section.field) for section in sections(file)}


def is_workflow_file(path: Path) -> bool:
    """Whether the file name says it is a workflow (any of Oxy's names, or a kind of file a
    plugin runs as one)."""
    return path.name.endswith(WORKFLOW_SUFFIXES) or workflow_kind(path) is not None


class Loaded(typing.NamedTuple):
    """A validated spec with the text and marks it came from."""

    spec: Any
    marks: Marks
    path: Path
    text: str
    issues: tuple[Issue, ...] = ()

    def issue(self, loc: Loc, message: str) -> Issue:
        """An issue at `loc` of this file, with its line and column."""
        line, column = self.marks.find(loc)
        return Issue(self.path, line, column, format_path(loc), message)

    def item(self, key: str, index: int, model: Any) -> tuple[Any, list[Issue]]:
        """Item `index` of the raw list under `key` (see `load_spec`'s `each`), validated by
        `model`: (the value, []) or (None, its problems)."""
        raw = self.spec[key] if isinstance(self.spec, dict) else getattr(self.spec, key)
        try:
            return _adapter(model).validate_python(raw[index]), []
        except pydantic.ValidationError as exc:
            at = (key, index)
            return None, pydantic_issues_at(exc, raw[index], self.marks, self.path, model, at)


def load_spec(
    path: Path,
    model: type[BaseModel] | Any,
    *,
    kind: str,
    text: str | None = None,
    each: tuple[str, Any] | None = None,
) -> Loaded:
    """Read, parse and validate one file against `model` (a class or an annotated type);
    `text`: the file's, read already (a file is read once).

    `each`: (key, item model) of a list the model leaves raw (`list[Any]`), whose items the
    caller validates one at a time with `Loaded.item` and lets go: a file of 1,000,000 cases
    never holds 1,000,000 validated models beside its data. When the file's other keys are
    wrong, the items' problems are reported with theirs, all at once.
    """
    text = read_text(path) if text is None else text
    data, marks = parse_yaml(text, path)
    if data is None:
        data = {}
    if not isinstance(data, dict) and kind != "dataset":
        raise ValidationError(
            [Issue(path, 1, 1, "", f"expected a mapping of keys at the top of a {kind} file")]
        )
    try:
        spec = TypeAdapter(model).validate_python(data)
    except pydantic.ValidationError as exc:
        issues = pydantic_issues(exc, data, marks, path, model)
        if each is not None:
            loaded = Loaded(data, marks, path, text)
            items = data.get(each[0]) if isinstance(data, dict) else None
            for index in range(len(items) if isinstance(items, list) else 0):
                issues.extend(loaded.item(each[0], index, each[1])[1])
        raise ValidationError(sorted(issues, key=lambda i: (i.line or 0, i.column or 0))) from None
    _log_ignored(spec, path)
    return Loaded(spec, marks, path, text)


@cache
def _adapter(model: Any) -> TypeAdapter[Any]:
    return TypeAdapter(model)


def load_workflow(path: Path) -> Loaded:
    """Load a workflow file.

    When only some tasks are invalid, the others are kept (the invalid ones replaced by
    `InvalidTask`) and the issues travel with the result, so the compiler can add its own
    findings and the user sees every problem of the file at once.
    """
    load = workflow_kind(path)
    if load is not None:
        loaded: Loaded = load(path)
        return loaded
    try:
        return load_spec(path, workflow_model(), kind="workflow")
    except ValidationError as exc:
        partial = _partial_workflow(path, exc.issues)
        if partial is None:
            raise
        return partial


def _partial_workflow(path: Path, issues: list[Issue]) -> Loaded | None:
    text = read_text(path)
    data, marks = parse_yaml(text, path)
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
        return None
    adapter: TypeAdapter[Any] = TypeAdapter(task_union())
    tasks: list[Any] = []
    for item in data["tasks"]:
        try:
            tasks.append(adapter.validate_python(item))
        except pydantic.ValidationError:
            name = item.get("name") if isinstance(item, dict) else None
            tasks.append(InvalidTask.model_construct(name=str(name or ""), type="invalid"))
    probe = {**data, "tasks": [{"name": "probe", "type": "formatter", "template": ""}]}
    # unknown top-level keys are already reported and change nothing the compiler checks
    known = workflow_model().model_fields
    probe = {key: value for key, value in probe.items() if key in known}
    try:
        top = workflow_model().model_validate(probe)
    except pydantic.ValidationError:
        return None
    return Loaded(top.model_copy(update={"tasks": tasks}), marks, path, text, tuple(issues))


def load_config(path: Path) -> Loaded:
    """Load a `config.yml`."""
    return load_spec(path, ConfigSpec, kind="config")


def pydantic_issues(
    exc: pydantic.ValidationError, data: Any, marks: Marks, path: Path, model: Any
) -> list[Issue]:
    """Translate pydantic's errors into issues with positions and advice."""
    issues: list[Issue] = []
    seen: set[tuple[Loc, str]] = set()
    located = [(data_loc(data, e["loc"], e["type"]), e) for e in exc.errors(include_url=False)]
    reader = "JSON" if path.suffix.lower() in (".json", ".jsonl") else "YAML"
    for loc, error in _drop_misspelt_missing(_drop_union_noise(located)):
        message = describe(error, data, loc, model, reader)
        if (loc, message) in seen:
            continue
        seen.add((loc, message))
        is_key = error["type"] == "extra_forbidden"
        line, column = marks.find(loc, key=is_key)
        issues.append(Issue(path, line, column, format_path(loc), message))
    issues.sort(key=lambda i: (i.line or 0, i.column or 0))
    return issues


def pydantic_issues_at(
    exc: pydantic.ValidationError, data: Any, marks: Marks, path: Path, model: Any, at: Loc
) -> list[Issue]:
    """`pydantic_issues` of `data` that sits at `at` of a file (`marks` are the whole
    file's): lines from the file, field paths from its top."""
    prefix = format_path(at)
    issues = []
    for issue in pydantic_issues(exc, data, marks.under(at), path, model):
        inner = issue.path
        joined = prefix + (inner if inner.startswith("[") else f".{inner}") if inner else prefix
        issues.append(dataclasses.replace(issue, path=joined if prefix else inner))
    return issues


def data_loc(data: Any, loc: tuple[int | str, ...], kind: str = "missing") -> Loc:
    """Keep the parts of pydantic's `loc` that exist in the data.

    Other parts are union members' tags (a task type, `VariableSpec`, `str`), except the last
    part of a `missing` error: the name of the missing field.
    """
    out: list[str | int] = []
    current = data
    for index, part in enumerate(loc):
        if (isinstance(current, dict) and part in current) or (
            isinstance(current, list) and isinstance(part, int) and part < len(current)
        ):
            out.append(part)
            current = current[part]  # type: ignore[index]
        elif isinstance(current, dict) and kind == "missing" and index == len(loc) - 1:
            out.append(part)
            current = None
    return tuple(out)


def _drop_misspelt_missing(errors: list[tuple[Loc, Any]]) -> list[tuple[Loc, Any]]:
    """`templat: x` gives "unknown key 'templat': did you mean 'template'?"; the "required key
    'template' is missing" that comes with it says the same thing again, so it is dropped."""
    unknown: dict[Loc, list[str]] = {}
    for loc, error in errors:
        if error["type"] == "extra_forbidden" and loc:
            unknown.setdefault(loc[:-1], []).append(str(loc[-1]))
    kept = []
    for loc, error in errors:
        if error["type"] == "missing" and loc and unknown.get(loc[:-1]):
            field = str(loc[-1])
            if any(did_you_mean(key, [field]) for key in unknown[loc[:-1]]):
                continue
        kept.append((loc, error))
    return kept


def _is_type_error(kind: str) -> bool:
    return kind.endswith("_type")


def _drop_union_noise(errors: list[tuple[Loc, Any]]) -> list[tuple[Loc, Any]]:
    """A plain union reports one error per member (`VariableSpec`, `str`, `int`, ...).

    Keep the errors of the member that fits the data best: a "should be a valid X" error is
    dropped when another member got further (an error deeper in the same value) or found a
    more specific problem at the same place.
    """
    kept = []
    for loc, error in errors:
        if _is_type_error(error["type"]):
            shadowed = any(
                (len(other) > len(loc) and other[: len(loc)] == loc)
                or (other == loc and not _is_type_error(e["type"]))
                for other, e in errors
            )
            if shadowed:
                continue
        kept.append((loc, error))
    return kept or errors


def describe(error: Any, data: Any, loc: Loc, model: Any, reader: str = "YAML") -> str:
    """A message that says what is wrong and what to do (`reader`: the format the data was
    read from, YAML or JSON)."""
    kind = error["type"]
    ctx = error.get("ctx") or {}
    if kind == "extra_forbidden":
        key = str(loc[-1]) if loc else "?"
        allowed = allowed_keys(model, data, loc[:-1])
        hint = did_you_mean(key, allowed, before=": ")
        return f"unknown key '{key}'{hint}"
    if kind == "missing":
        return f"required key '{loc[-1] if loc else '?'}' is missing: add it"
    if kind == "union_tag_invalid":
        tag = ctx.get("tag", "?")
        # the tags of the union that failed (task types, or database types in config.yml)
        expected = str(ctx.get("expected_tags", ""))
        options = [t.strip(" '") for t in expected.split(",") if t.strip(" '")]
        options = sorted(options) or sorted(task_types())
        hint = did_you_mean(str(tag), options, before=": ")
        return f"unknown type '{tag}'{hint}; known types: {', '.join(options)}"
    if kind == "union_tag_not_found":
        return "missing 'type': say which kind of entry this is"
    if kind == "string_pattern_mismatch" and loc and loc[-1] in ("name", "depends_on"):
        return (
            f"'{_value_at(data, loc)}' is not a valid name: use letters, digits and '_', "
            "not starting with a digit"
        )
    text = pydantic_text(error)
    value = _value_at(data, loc)
    if kind == "literal_error" and isinstance(value, str):
        options = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        hint = did_you_mean(value, options, before=": ")
        return f"{text[0].lower()}{text[1:]} (got {value!r}){hint}"
    if kind == "string_type" and isinstance(value, bool | int | float):
        # `name: yes` or `name: 2024`: YAML reads these as a boolean or a number
        return (
            f"{text[0].lower()}{text[1:]} ({reader} read this value as {value!r}): put it in "
            "quotes to make it text"
        )
    if kind.endswith("_type") or kind.endswith("_parsing") or kind == "literal_error":
        return f"{text[0].lower()}{text[1:]} (got {value!r})"
    return text[0].lower() + text[1:]


def pydantic_text(error: Any) -> str:
    """A pydantic error's message; a validator's own words as it raised them."""
    raised = (error.get("ctx") or {}).get("error")
    if error.get("type") == "value_error" and raised is not None:
        return str(raised)
    if error.get("type") == "model_type":
        # pydantic names its class ("instance of ScriptSpec"), which no file ever says
        return "Input should be a mapping (key: value lines)"
    return str(error["msg"])


def _value_at(data: Any, loc: Loc) -> Any:
    current = data
    for part in loc:
        try:
            current = current[part]
        except (KeyError, IndexError, TypeError):
            return None
    return current


def allowed_keys(model: Any, data: Any, loc: Loc) -> list[str]:
    """Field names of the model that validates the mapping at `loc` (best effort)."""
    target = _model_at(model, data, loc)
    if target is None:
        return []
    names = []
    for name, info in target.model_fields.items():
        names.append(info.alias or name)
    return names


def _model_at(model: Any, data: Any, loc: Loc) -> type[BaseModel] | None:
    current_type: Any = model
    current_data = data
    for part in loc:
        current_type = _resolve(current_type, current_data)
        if current_type is None:
            return None
        if isinstance(part, str):
            if not (isinstance(current_type, type) and issubclass(current_type, BaseModel)):
                return None
            field = current_type.model_fields.get(part)
            if field is None:
                return None
            current_type = field.annotation
        else:
            args = typing.get_args(current_type)
            current_type = args[0] if args else None
        current_data = _value_at(current_data, (part,))
    resolved = _resolve(current_type, current_data)
    if isinstance(resolved, type) and issubclass(resolved, BaseModel):
        return resolved
    return None


def _resolve(tp: Any, data: Any) -> Any:
    """Unwrap Optional/Annotated/unions to the member that fits `data`."""
    for _ in range(8):
        origin = typing.get_origin(tp)
        if origin is Annotated:
            tp = typing.get_args(tp)[0]
            continue
        if origin in (Union, getattr(__import__("types"), "UnionType", None)):
            members = typing.get_args(tp)
            tp = _pick_member(members, data)
            continue
        return tp
    return tp


def _pick_member(members: tuple[Any, ...], data: Any) -> Any:
    models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
    if isinstance(data, dict) and "type" in data:
        for member in models:
            field = member.model_fields.get("type")
            if field is not None and data["type"] in typing.get_args(field.annotation):
                return member
    if isinstance(data, dict) and models:
        return models[0]
    if isinstance(data, list):
        for member in members:
            if typing.get_origin(member) is list:
                return member
    return models[0] if models else (members[0] if members else None)


def _log_ignored(spec: Any, path: Path) -> None:
    """Debug line for each Oxy key that accord accepts and does not use."""
    if not isinstance(spec, Spec | BaseModel):
        return
    for name, info in type(spec).model_fields.items():
        value = getattr(spec, name, None)
        extra = info.json_schema_extra
        if isinstance(extra, dict) and extra.get("oxy_ignored") and value is not None:
            log.get().debug("oxy_key_ignored", file=str(path), key=name)
        elif isinstance(value, TaskSpec | Spec):
            _log_ignored(value, path)
        elif isinstance(value, list):
            for item in value:
                _log_ignored(item, path)

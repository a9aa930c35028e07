"""Oxy's data apps (`.app.yml`) as accord reads them: `tasks` are workflow tasks, `controls`
(top-level, or `control` / `controls` blocks of `display`) become the object variable
`controls` their templates read (`{{ controls.region }}`), and `display` becomes one more
task, `display`, that runs after the tasks it shows and writes the page.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from ...engine.errors import Issue, ValidationError
from ...engine.loader import Loaded, load_spec, workflow_model
from ...engine.spec import TaskSpec, VariableSpec

APP_SUFFIXES = (".app.yml", ".app.yaml")


class _Block(BaseModel):
    # Oxy ignores keys it does not know on these blocks (its examples carry `chart_type`,
    # `x_axis`, a markdown `title`): accepted here too
    model_config = ConfigDict(extra="ignore", frozen=True)


class MarkdownBlock(_Block):
    type: Literal["markdown"]
    content: str


class TableBlock(_Block):
    type: Literal["table"]
    data: str = Field(min_length=1, description="The task whose table is shown.")
    title: str | None = None


class BarChartBlock(_Block):
    type: Literal["bar_chart"]
    data: str = Field(min_length=1)
    x: str
    y: str
    series: str | None = None
    title: str | None = None


class LineChartBlock(BarChartBlock):
    type: Literal["line_chart"]  # type: ignore[assignment]
    x_axis_label: str | None = None
    y_axis_label: str | None = None


class PieChartBlock(_Block):
    type: Literal["pie_chart"]
    data: str = Field(min_length=1)
    name: str = Field(description="Column of the slices' labels.")
    value: str = Field(description="Column of the slices' sizes.")
    title: str | None = None


class ControlSpec(BaseModel):
    """A control: its value reaches the tasks' templates as `{{ controls.NAME }}`."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    label: str | None = None
    control_type: Literal["select", "toggle", "date"] = Field(alias="type")
    source: str | None = Field(None, description="Task whose first column lists the options.")
    options: list[Any] | None = None
    default: Any = None


class ControlBlock(_Block):
    """A control written among the display blocks (`control_type`, as `type` is taken)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["control"]
    name: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    label: str | None = None
    control_type: Literal["select", "toggle", "date"]
    source: str | None = None
    options: list[Any] | None = None
    default: Any = None


class ControlsBlock(_Block):
    type: Literal["controls"]
    items: list[ControlSpec]


class RowBlock(_Block):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: Literal["row"]
    columns: int | None = Field(None, ge=1, description="Equal columns (default: children).")
    children: list[Block] = Field(min_length=1)


Block = Annotated[
    MarkdownBlock
    | TableBlock
    | BarChartBlock
    | LineChartBlock
    | PieChartBlock
    | RowBlock
    | ControlBlock
    | ControlsBlock,
    Field(discriminator="type"),
]
RowBlock.model_rebuild()
DataBlock = TableBlock | BarChartBlock | LineChartBlock | PieChartBlock


class AppPageSpec(TaskSpec):
    """The page of an app: made by the loader from `display`, never written in a file."""

    type: Literal["app_page"]
    app: str
    title: str | None = None
    description: str = ""
    display: list[Any] = Field(default_factory=list)
    controls: list[ControlSpec] = Field(default_factory=list)
    data: list[str] = Field(default_factory=list, description="Tasks the page shows.")

    def references(self) -> Any:
        for name in self.data:
            yield ("data",), name


class AppChoicesSpec(TaskSpec):
    """The choices of the selects whose options a task gives (`source`): made by the loader,
    never written in a file. It runs after those tasks and before every task that reads
    `controls`: a select given no value takes its first option, and a value given with `-v`
    must be one of them."""

    type: Literal["app_choices"]
    controls: list[ControlSpec] = Field(default_factory=list)

    def references(self) -> Any:
        for control in self.controls:
            if control.source is not None:
                yield ("controls",), control.source


@cache
def app_model() -> Any:
    """The top of an `.app.yml`: a workflow's keys plus Oxy's `title`, `controls`, `display`."""
    return create_model(
        "AppSpec",
        __base__=workflow_model(),
        title=(str | None, None),
        description=(str | None, None),
        controls=(list[ControlSpec], Field(default_factory=list)),
        display=(list[Block], Field(min_length=1)),
    )


def app_name(path: Path) -> str:
    """Oxy names an app after its file (`insights.app.yml` is `insights`)."""
    for suffix in APP_SUFFIXES:
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)]
    return path.stem


def load_app(path: Path) -> Loaded:
    """The app file as a workflow: its tasks, the `controls` variable, the `display` task."""
    loaded = load_spec(path, app_model(), kind="app")
    spec = loaded.spec
    names = {task.name for task in spec.tasks}
    found = _Found(loaded, names)
    found.controls += [(("controls", i), c) for i, c in enumerate(spec.controls)]
    found.visit(spec.display, ("display",))
    variable = found.controls_variable()
    if found.issues:
        raise ValidationError(sorted(found.issues, key=lambda i: (i.line or 0, i.column or 0)))
    name = app_name(path)
    page = AppPageSpec(
        name=_free("display", names),
        type="app_page",
        app=name,
        title=spec.title or spec.name,
        description=spec.description or "",
        display=list(spec.display),
        controls=[
            c.model_copy(update={"options": [_rendered(o) for o in c.options]}) if c.options else c
            for _loc, c in found.controls
        ],
        data=found.data,
    )
    variables = dict(spec.variables)
    if variable is not None:
        variables["controls"] = variable
    tasks = [*spec.tasks, page]
    fed = [c for _loc, c in found.controls if c.control_type == "select" and c.source]
    if fed:
        choices = AppChoicesSpec(name=_free("choices", names | {page.name}), type="app_choices",
                                 controls=fed)  # fmt: skip
        sources = {c.source for c in fed}
        tasks = [
            _after(task, choices.name) if task.name not in sources and _reads_controls(task)
            else task
            for task in tasks
        ] + [choices]  # fmt: skip
    return loaded._replace(
        spec=spec.model_copy(update={"name": name, "variables": variables, "tasks": tasks})
    )


class _Found:
    """What the display blocks name: controls, the tasks shown, and the problems."""

    def __init__(self, loaded: Loaded, names: set[str]) -> None:
        self.loaded = loaded
        self.names = names
        self.issues: list[Issue] = []
        self.controls: list[tuple[tuple[str | int, ...], ControlSpec]] = []
        self.data: list[str] = []

    def visit(self, blocks: list[Any], loc: tuple[str | int, ...]) -> None:
        for index, block in enumerate(blocks):
            at = (*loc, index)
            if isinstance(block, RowBlock):
                self.visit(block.children, (*at, "children"))
            elif isinstance(block, ControlBlock):
                fields = block.model_dump(exclude={"type"})
                fields["type"] = fields.pop("control_type")
                self.controls.append((at, ControlSpec.model_validate(fields)))
            elif isinstance(block, ControlsBlock):
                self.controls += [((*at, "items", i), c) for i, c in enumerate(block.items)]
            elif isinstance(block, DataBlock):
                self.shown(block.data, (*at, "data"))

    def shown(self, task: str, loc: tuple[str | int, ...]) -> None:
        if task not in self.names:
            self.issues.append(self.loaded.issue(loc, _unknown(task, self.names)))
        elif task not in self.data:
            self.data.append(task)

    def controls_variable(self) -> VariableSpec | None:
        """The object variable `controls`: a key per control, with its default."""
        if not self.controls:
            return None
        properties: dict[str, Any] = {}
        defaults: dict[str, Any] = {}
        required: list[str] = []
        for loc, control in self.controls:
            if control.name in properties:
                self.issues.append(
                    self.loaded.issue((*loc, "name"), f"control '{control.name}' twice")
                )
                continue
            if control.source is not None:
                self.shown(control.source, (*loc, "source"))
            schema, default, problem = control_schema(control)
            if problem is not None:
                self.issues.append(self.loaded.issue((*loc, "default"), problem))
            properties[control.name] = schema
            if default is not None:
                defaults[control.name] = default
            elif not (control.control_type == "select" and control.source is not None):
                required.append(control.name)  # a task-fed select starts at its first option
        return VariableSpec.model_validate(
            {
                "type": "object",
                "properties": properties,
                "required": required or None,
                "additionalProperties": False,
                "default": defaults,
            }
        )


def control_schema(control: ControlSpec) -> tuple[dict[str, Any], Any, str | None]:
    """(JSON schema of the control's value, its default, what is wrong with the default)."""
    if control.control_type == "toggle":
        default = False if control.default is None else control.default
        problem = None if isinstance(default, bool) else "a toggle's default is true or false"
        return {"type": "boolean"}, default, problem
    if control.control_type == "date":
        default = None if control.default is None else str(control.default)
        return {"type": "string"}, default, None
    options = [_rendered(o) for o in control.options or []]
    schema: dict[str, Any] = {"enum": options} if options and control.source is None else {}
    default = control.default
    if default is None and options:
        default = options[0]  # what a select shows before anything is chosen
    if options and control.source is None and default not in options:
        return schema, default, f"default {default!r} is not one of the options {options}"
    return schema, default, None


def _reads_controls(task: TaskSpec) -> bool:
    from ...engine.render import referenced_names

    return task.type == "app_page" or any(
        "controls" in referenced_names(source) for _loc, source in task.templates()
    )


def _after(task: TaskSpec, name: str) -> TaskSpec:
    return task.model_copy(update={"depends_on": [*task.depends_on, name]})


def _rendered(option: Any) -> Any:
    """Oxy renders an option written as a template when the app starts
    (`"{{ now(fmt='%Y') | int - 1 }}"`)."""
    if not isinstance(option, str) or "{" not in option:
        return option
    from ...engine.render import render

    return render(option, {})


def _unknown(name: str, names: set[str]) -> str:
    return f"no task '{name}' in the app (tasks: {', '.join(sorted(names)) or 'none'})"


def _free(name: str, taken: set[str]) -> str:
    number = 1
    candidate = name
    while candidate in taken:
        number += 1
        candidate = f"{name}_{number}"
    return candidate

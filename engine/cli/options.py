"""Each command's options, declared once, and the parameter types of their values.

A command's options are the fields of its dataclass (`RunCommand`, `TestCommand`,
`EvalCommand`): a field is declared by its click option (`option(...)`, `argument(...)`), or
by an option of `SHARED`, the one table of the options several commands take (`shared(...)`,
which may word the help for the command, or offer its own formats). The field's name is the
parameter's name. `declared_options(Command)` puts the fields' options on the click command,
in field order (the order `--help` lists them); the callback takes `**params` and builds its
dataclass with `Command.from_params(params)`:

    @dataclass(frozen=True)
    class GreetCommand(CommandParams):
        file: Path = argument(type=click.Path(path_type=Path))
        loud: bool = option("--loud", is_flag=True, help="Shout.")
        quiet: bool = shared("quiet", help="Say nothing.")

    @click.command("greet")
    @declared_options(GreetCommand)
    @handle_errors
    def greet(**params: Any) -> None:
        run_greet(GreetCommand.from_params(params))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Self, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

_DECLARED = "accord.engine.cli.options"  # the fields' metadata key


# --- parameter types -----------------------------------------------------------------------------


class FiniteFloatRange(click.FloatRange):
    """A float option in a range that refuses NaN and the infinities (NaN compares false
    with every bound, so `--min-accuracy nan` would pass any range check and turn a gate
    off)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        import math

        number = super().convert(value, param, ctx)
        if isinstance(number, float) and not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


class OutputFile(click.Path):
    """A file an option writes. A path ending in '/' names a folder: refused, as a folder
    is (converted to a Path, it would lose the '/' and a file named like the folder would
    be written)."""

    def __init__(self, example: str = "results.json") -> None:
        super().__init__(path_type=Path)
        self.example = example

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.endswith(("/", "\\")):
            problem = f"{value} names a folder; give a file in it, e.g. {value}{self.example}"
            self.fail(problem, param, ctx)
        return super().convert(value, param, ctx)


def check_resume(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """`--resume`: an empty value is refused (it named no run); the value is stripped."""
    if value is not None and not value.strip():
        raise click.BadParameter(
            "it is empty: give a run id (see `accord runs list`) or 'last', "
            "or leave --resume out to start fresh"
        )
    return value.strip() if value is not None else None


# --- declarations ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Declared:
    """A parameter's click declaration without its name (the field's name is the name):
    `flags` for an option, none for an argument. `shared`: the `SHARED` entry it is, whose
    field must bear that name."""

    flags: tuple[str, ...]
    settings: Mapping[str, Any]
    shared: str | None = None

    def apply(self, name: str, fn: F) -> F:
        if self.shared is not None and self.shared != name:
            raise TypeError(f"the shared option '{self.shared}' is declared by a field '{name}'")
        if not self.flags:
            return click.argument(name, **self.settings)(fn)
        return click.option(*self.flags, name, **self.settings)(fn)

    def changed(self, **changes: Any) -> Declared:
        return Declared(self.flags, {**self.settings, **changes}, self.shared)


def option(*flags: str, **settings: Any) -> Any:
    """A command field declared by its click option (`click.option`'s flags and settings)."""
    return field(metadata={_DECLARED: Declared(flags, settings)})


def argument(**settings: Any) -> Any:
    """A command field declared by its click argument."""
    return field(metadata={_DECLARED: Declared((), settings)})


def _shared(name: str, flags: tuple[str, ...], **settings: Any) -> tuple[str, Declared]:
    return name, Declared(flags, settings, shared=name)


# The options several commands take, by the name of the field they fill. A command words
# their help for itself where it differs, and offers its own formats (`type=`).
SHARED: dict[str, Declared] = dict(
    (
        _shared("variables", ("-v", "--var"), multiple=True, metavar="NAME=VALUE"),
        _shared(
            "fmt", ("--format",), default="pretty", show_default=True,
            help="Output format (stdout, or --output).",
        ),
        _shared("output", ("-o", "--output"), type=OutputFile(), help="Write the result here."),
        _shared(
            "report", ("--report",), type=OutputFile("report.html"), default=None,
            help="Also write a self-contained HTML report.",
        ),
        _shared("tags", ("--tag",), multiple=True, help="Only cases with this tag (repeatable)."),
        _shared("cases", ("--case",), multiple=True),
        _shared("quiet", ("-q", "--quiet"), is_flag=True),
        _shared(
            "resume", ("--resume",), metavar="RUN", callback=check_resume,
            help="Finish an interrupted run: its id, or 'last'.",
        ),
        _shared(
            "max_concurrency", ("--max-concurrency",), type=click.IntRange(min=1), default=None
        ),
        _shared(
            "cache_mode", ("--cache",), type=click.Choice(["on", "off", "readonly", "replay"]),
            default="on", show_default=True,
            help="Model-call cache; replay fails on any call not recorded before.",
        ),
        _shared(
            "gate", ("--gate",), type=click.Choice(["mean", "lower-bound"]), default="mean",
            show_default=True,
            help="Gate on the figure, or on the lower bound of its 95% interval.",
        ),
    )
)  # fmt: skip


def shared(name: str, **changes: Any) -> Any:
    """A command field declared by the shared option `name`, its settings changed where the
    command words them its own way (`help=`, the formats it offers as `type=`)."""
    return field(metadata={_DECLARED: SHARED[name].changed(**changes)})


def _choose_executor(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    from .. import executor

    name, address = executor.chosen()
    if param.name == "executor":
        name = value
    else:
        address = value
    executor.choose(name, address)
    return value


def executor_options(fn: F) -> F:
    """`--executor local|ray` and `--ray-address ADDR` (run, test, eval): where node bodies
    do their work, for every run of the command (default: config.yml's `executor:`). They
    fill no field: the choice is the process's (engine/executor)."""
    fn = click.option(
        "--ray-address", expose_value=False, callback=_choose_executor,
        help="The Ray cluster to use (ray://host:10001, auto); default: a local one.",
    )(fn)  # fmt: skip
    return click.option(
        "--executor", type=click.Choice(["local", "ray"]), expose_value=False,
        callback=_choose_executor,
        help="Where model calls, queries, programs and evaluators run (default: config.yml's, "
        "else local).",
    )(fn)  # fmt: skip


# --- a command's dataclass ---------------------------------------------------------------------


def _declared_fields(cls: type[Any]) -> list[tuple[str, Declared]]:
    return [
        (f.name, f.metadata[_DECLARED]) for f in dataclasses.fields(cls) if _DECLARED in f.metadata
    ]


def declared_options(cls: type[Any]) -> Callable[[F], F]:
    """The click options and arguments that declare the fields of the command dataclass
    `cls`, in field order."""

    def decorate(fn: F) -> F:
        for name, declared in reversed(_declared_fields(cls)):
            fn = declared.apply(name, fn)
        return fn

    return decorate


class CommandParams:
    """The base of a command's dataclass: built from click's parameters."""

    @classmethod
    def from_params(cls, params: Mapping[str, Any], **given: Any) -> Self:
        """The command's options from click's `params` (those its fields declare), with
        `given`: the fields no option declares, and values the command settles itself."""
        values = {name: params[name] for name, _declared in _declared_fields(cls)}
        return cls(**{**values, **given})

    @classmethod
    def others(cls, params: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters no field declares (the front-ends' own options, for `accord eval`)."""
        declared = {name for name, _declared in _declared_fields(cls)}
        return {name: value for name, value in params.items() if name not in declared}


def file_argument(**kwargs: Any) -> Callable[[F], F]:
    return click.argument("file", type=click.Path(path_type=Path), **kwargs)

"""The options the commands share, and the parameter types of their values."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

cache_option = click.option(
    "--cache",
    "cache_mode",
    type=click.Choice(["on", "off", "readonly", "replay"]),
    default="on",
    show_default=True,
    help="Model-call cache; replay fails on any call not recorded before.",
)


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
    do their work, for every run of the command (default: config.yml's `executor:`)."""
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


def variables_option(help_text: str) -> Callable[[F], F]:
    """`-v/--var NAME=VALUE`, repeatable (the run and test commands)."""
    return click.option(
        "-v", "--var", "variables", multiple=True, metavar="NAME=VALUE", help=help_text
    )


def max_concurrency_option(help_text: str) -> Callable[[F], F]:
    """`--max-concurrency N` (the run, test and eval commands)."""
    return click.option(
        "--max-concurrency", type=click.IntRange(min=1), default=None, help=help_text
    )


def check_resume(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise click.BadParameter(
            "it is empty: give a run id (see `accord runs list`) or 'last', "
            "or leave --resume out to start fresh"
        )
    return value.strip() if value is not None else None


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


def file_argument(**kwargs: Any) -> Callable[[F], F]:
    return click.argument("file", type=click.Path(path_type=Path), **kwargs)

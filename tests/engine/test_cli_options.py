"""Each option of `accord run`, `accord test` and `accord eval` is declared once: a field of the
command's dataclass, declared by its click option (engine/cli/options.py)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import click
import pytest
from click.testing import CliRunner

from accord.engine.cli import SHARED, CommandParams, declared_options, option, shared
from accord.engine.cli.run import RunCommand
from accord.engine.cli.run import run as run_command
from accord.tasks.suites.commands import test as accord_test
from accord.tasks.suites.commands.eval import EvalCommand, eval_command

BASELINE = {"baseline", "fail_on_regression", "alpha"}  # compare/gate.baseline_options


@pytest.mark.parametrize(
    ("command", "cls"),
    [
        (run_command, RunCommand),
        (accord_test.test_command, accord_test.TestCommand),
        (eval_command, EvalCommand),
    ],
)
def test_every_parameter_is_a_field_of_the_commands_dataclass(
    command: click.Command, cls: type[Any]
) -> None:
    fields = [f.name for f in dataclasses.fields(cls) if f.name != "options"]
    params = [p.name for p in command.params if p.expose_value and p.name not in BASELINE]
    assert params == fields  # in field order: the order --help lists them


def test_the_shared_options_are_declared_by_the_table() -> None:
    by_name = {
        name: [
            p
            for c in (run_command, accord_test.test_command, eval_command)
            for p in c.params
            if p.name == name
        ]
        for name in SHARED
    }
    for name, params in by_name.items():
        assert params, name
        assert {tuple(p.opts) for p in params} == {SHARED[name].flags}, name
    gates = by_name["gate"]
    assert [p.type.choices for p in gates] == [("mean", "lower-bound")] * 2  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Greet(CommandParams):
    name: str = option("--name", default="world")
    quiet: bool = shared("quiet", help="Say nothing.")


@click.command("greet")
@declared_options(Greet)
def greet(**params: Any) -> None:
    command = Greet.from_params(params)
    click.echo("" if command.quiet else f"hello {command.name}")


def test_a_command_built_from_its_fields() -> None:
    assert CliRunner().invoke(greet, ["--name", "you"]).output == "hello you\n"
    assert CliRunner().invoke(greet, ["-q"]).output == "\n"
    assert "Say nothing." in CliRunner().invoke(greet, ["--help"]).output


def test_a_shared_option_must_fill_the_field_of_its_name() -> None:
    @dataclass(frozen=True)
    class Wrong(CommandParams):
        silent: bool = shared("quiet")

    with pytest.raises(TypeError, match="shared option 'quiet' is declared by a field 'silent'"):
        declared_options(Wrong)(lambda **params: None)

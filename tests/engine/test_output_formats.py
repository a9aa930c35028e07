"""Output formats are one registry (engine/report/formats.py): each command's `--format`
offers its registered formats, and an `--output` file's suffix may pick another one."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TextIO

from click.testing import CliRunner

from accord.cli import main
from accord.engine.report.formats import FORMATS, CommandFormats, formats_of


def offered(command: str) -> list[str]:
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0, result.output
    found = re.search(r"--format \[([a-z|]+)\]", result.output)
    assert found is not None, result.output
    return found.group(1).split("|")


def test_every_command_offers_its_registered_formats() -> None:
    assert offered("run") == formats_of("run").choices() == ["pretty", "json"]
    assert offered("test") == formats_of("test").choices() == ["pretty", "json", "junit", "html"]
    assert offered("eval") == formats_of("eval").choices() == ["pretty", "json", "junit", "html"]
    compare = CliRunner().invoke(main, ["runs", "compare", "--help"]).output
    assert "[pretty|json|junit|html]" in compare
    assert {"run", "test", "eval", "compare"} <= set(FORMATS)


def test_a_suffix_picks_its_format_and_only_then() -> None:
    table: CommandFormats[str] = CommandFormats("demo")

    @table.register("text", file="out.txt")
    def text(report: str, out: TextIO) -> None:
        out.write(report)

    @table.register("lines", file="out.jsonl", suffix=".jsonl", choice=False)
    def lines(report: str, out: TextIO) -> None:
        out.write(f'"{report}"\n')

    assert table.choices() == ["text"]
    assert table.for_file(Path("a/r.jsonl"), "text").name == "lines"
    assert table.for_file(Path("a/r.json"), "text").name == "text"
    assert formats_of("eval").for_file(Path("r.jsonl"), "pretty").file == "results.jsonl"

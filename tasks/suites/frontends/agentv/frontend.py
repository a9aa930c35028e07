"""AgentV eval files' front-end: YAML with `tests:` (or `cases`, `evalcases`, `eval_cases`),
or a JSONL dataset (with its YAML sidecar of defaults, if any)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .....engine.errors import LoadError
from ...core.frontend import FrontEnd, Request, Source
from .v2.schema import CASE_KEYS

if TYPE_CHECKING:
    from ...core.cases import Suite

# a key only an AgentV test has: tells a JSONL dataset found in a folder from other data
_TEST_KEY = re.compile(r'"(?:criteria|expected_outcome|input_messages|expected_messages)"\s*:')


def claims(source: Source) -> bool:
    """YAML with a top-level case key; a `.jsonl` named on the command line, and one found in
    a folder (`accord validate DIR`) when it has a sidecar or reads as AgentV tests."""
    path = source.path
    if path.suffix != ".jsonl":
        return source.has_top_level_key(*CASE_KEYS)
    if source.named or path.with_suffix(".yaml").is_file() or path.with_suffix(".yml").is_file():
        return True
    try:
        return _TEST_KEY.search(source.text) is not None
    except LoadError:
        return False


def is_agentv_file(path: Path) -> bool:
    """Whether `accord eval` reads `path` as an AgentV file (`claims`)."""
    return claims(Source(path))


def load(source: Source, request: Request) -> list[Suite]:
    from .v2.files import load_agentv_file

    text = None if source.path.suffix == ".jsonl" else source.text  # JSONL: its own reader
    suite = load_agentv_file(
        source.path, target=request.options.get("target"),
        targets_file=request.options.get("targets_file"), judge_model=request.judge_model,
        repeat=request.repeat, text=text,
    )  # fmt: skip
    return [suite]


FRONTEND = FrontEnd(
    name="agentv",
    describe="an AgentV eval file with 'tests:'",
    claims=claims,
    load=load,
    options=(
        click.Option(["--target"], help="AgentV eval files: the target of tests that name none."),
        click.Option(
            ["--targets", "targets_file"],
            type=click.Path(path_type=Path),
            help="AgentV eval files: the targets file (default: the nearest .agentv/targets.yaml).",
        ),
    ),
)

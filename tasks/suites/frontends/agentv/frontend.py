"""AgentV's two front-ends, in the order they claim files: AgentV 4 eval files
(`FRONTEND_V4`, promptfoo's form with AgentV's additions: agentv/v4/), asked before promptfoo
configs; and the older AgentV eval files (`FRONTEND`: YAML with `tests:` (or `cases`,
`evalcases`, `eval_cases`), or a JSONL dataset with its YAML sidecar of defaults, if any:
agentv/v2/), asked last."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .....engine.errors import LoadError, ValidationError
from ...core.frontend import FrontEnd, Request, Source
from ...reports.formats import EVAL_FORMATS, EvalReport
from ..promptfoo.frontend import CONFIG_NAMES, parsed
from .v2.schema import CASE_KEYS

if TYPE_CHECKING:
    from typing import TextIO

    from ...core.cases import Suite

# top-level keys of AgentV 4 files that no promptfoo config has
AGENTV_KEYS = ("name", "environment", "governance", "default_test", "assert", "threshold",
               "evaluate_options", "defaults", "version")  # fmt: skip


def claims_v4(source: Source) -> bool:
    """An AgentV 4 file (not the older AgentV format, not a plain promptfoo config) has
    `tests` or `scenarios`, promptfoo's `prompts` or `providers`, and something only AgentV
    writes: one of AGENTV_KEYS at its top, a test's `id`, or an assertion given as text.
    The file parsed to tell is parsed once: its load takes the parse."""
    if source.path.name in CONFIG_NAMES:
        return False
    if ".agentv" in source.path.parts:  # AgentV's project configuration, no eval file
        return False
    if not (
        source.has_top_level_key("tests", "scenarios")
        and source.has_top_level_key("prompts", "providers")
    ):
        return False
    if source.has_top_level_key(*AGENTV_KEYS):
        return True
    if not source.has_top_level_key("prompts"):
        return True  # providers without prompts: each test's own input (v4/rows.py)
    try:
        data = parsed(source)[0]
    except (LoadError, ValidationError):
        return False  # the loader that claims it says what is wrong
    tests = data.get("tests") if isinstance(data, dict) else None
    return isinstance(tests, list) and any(
        isinstance(t, dict)
        and ("id" in t or any(isinstance(a, str) for a in t.get("assert") or []))
        for t in tests
    )


def load_v4(source: Source, request: Request) -> list[Suite]:
    from .v4.file import load as load_file

    return load_file(source, request)


FRONTEND_V4 = FrontEnd(
    name="agentv4",
    describe="an AgentV 4 eval file ('tests:' with 'prompts:' or 'providers:')",
    claims=claims_v4,
    load=load_v4,
)


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


@EVAL_FORMATS.register("jsonl", file="results.jsonl", suffix=".jsonl", choice=False)
def _results_jsonl(report: EvalReport, out: TextIO) -> None:
    """AgentV's result records (`--output results.jsonl`), for the runs of any suite."""
    from .common.results import render_jsonl

    out.write(render_jsonl(report.runs))

"""promptfoo configs' front-end: `promptfooconfig.y*ml`, or YAML with top-level `prompts` and
`providers` (or `targets`, or `tests`). Asked before the scenario and AgentV front-ends: a
promptfoo config has `tests:`, and its `scenarios:` are promptfoo's."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from accord.tasks.suites.frontends import FrontEnd, OwnFiles, Request, Source

if TYPE_CHECKING:
    from accord.engine.paths import Output
    from accord.tasks.suites.core.cases import Suite
    from accord.tasks.suites.core.verdicts import SuiteRun

# promptfoo's own names (util/config/default.js: yaml, yml, json, then JavaScript, which accord
# does not run)
CONFIG_NAMES = ("promptfooconfig.yaml", "promptfooconfig.yml", "promptfooconfig.json")


def claims(source: Source) -> bool:
    if source.path.name in CONFIG_NAMES and not source.path.is_dir():
        return True
    return source.has_top_level_key("prompts") and source.has_top_level_key(
        "providers", "targets", "tests"
    )


def load(source: Source, request: Request) -> list[Suite]:
    from accord.tasks.suites.promptfoo.config import load as load_config

    suite = load_config(
        source.path, judge_model=request.judge_model, repeat=request.repeat, text=source.text
    )
    return [suite]


# promptfoo's own files (outputs.py, imported when a config runs): `-o FILE` (`--output`) in
# promptfoo's shapes, else each config's `outputPath`


def takes_output(suites: Sequence[Suite], output: Path) -> bool:
    from accord.tasks.suites.promptfoo import outputs

    return outputs.takes_output(suites, output)


def planned(suites: Sequence[Suite], output: Path | None) -> list[Output]:
    from accord.tasks.suites.promptfoo import outputs

    return outputs.planned_outputs(suites, output)


def write(runs: Sequence[SuiteRun], output: Path | None) -> None:
    from accord.tasks.suites.promptfoo import outputs

    outputs.write_all(runs, output)


PROMPTFOO_FILES = OwnFiles(takes_output=takes_output, planned=planned, write=write)

FRONTEND = FrontEnd(
    name="promptfoo",
    describe="a promptfoo config with 'prompts:' and 'providers:'",
    claims=claims,
    load=load,
    files=PROMPTFOO_FILES,
    default_files=CONFIG_NAMES,
)

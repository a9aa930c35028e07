"""promptfoo configs' front-end: `promptfooconfig.y*ml`, or YAML with top-level `prompts` and
`providers` (or `targets`, or `tests`). Asked before the scenario and AgentV front-ends: a
promptfoo config has `tests:`, and its `scenarios:` are promptfoo's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from accord.tasks.suites.frontends import FrontEnd, Request, Source

if TYPE_CHECKING:
    from accord.tasks.suites.core.cases import Suite

CONFIG_NAMES = ("promptfooconfig.yaml", "promptfooconfig.yml")


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


FRONTEND = FrontEnd(
    name="promptfoo",
    describe="a promptfoo config with 'prompts:' and 'providers:'",
    claims=claims,
    load=load,
)

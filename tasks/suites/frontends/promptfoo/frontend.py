"""promptfoo configs' front-end: `promptfooconfig.y*ml`, or YAML with top-level `prompts` and
`providers` (or `targets`, or `tests`). Asked before the scenario and AgentV front-ends: a
promptfoo config has `tests:`, and its `scenarios:` are promptfoo's."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...core.frontend import FilesOption, FrontEnd, OwnFiles, Request, Source

if TYPE_CHECKING:
    from .....engine.paths import Output
    from .....engine.yamlmarks import Marks
    from ...core.cases import Suite
    from ...core.verdicts import SuiteRun

# promptfoo's own names (util/config/default.js: yaml, yml, json, then JavaScript, which accord
# does not run)
CONFIG_NAMES = ("promptfooconfig.yaml", "promptfooconfig.yml", "promptfooconfig.json")


# a file's data and marks parsed to tell whose it is (another tool's dialect of this form,
# agentv/frontend.py), kept for its load to take: the file is parsed once
_PARSED: weakref.WeakKeyDictionary[Source, tuple[Any, Marks]] = weakref.WeakKeyDictionary()


def parsed(source: Source) -> tuple[Any, Marks]:
    """The file's data and marks as the loader parses them (YAML 1.2's core schema), kept
    until its load `taken`s them; the parser's `LoadError` or `ValidationError` as it is."""
    found = _PARSED.get(source)
    if found is None:
        from .....engine.yamlmarks import parse_yaml

        found = _PARSED[source] = parse_yaml(source.text, source.path, core=True)
    return found


def taken(source: Source) -> tuple[Any, Marks] | None:
    """The file's data and marks if a claim parsed them (given to the loader, not kept)."""
    return _PARSED.pop(source, None)


def claims(source: Source) -> bool:
    if source.path.name in CONFIG_NAMES and not source.path.is_dir():
        return True
    return source.has_top_level_key("prompts") and source.has_top_level_key(
        "providers", "targets", "tests"
    )


def load(source: Source, request: Request) -> list[Suite]:
    import dataclasses

    from .config import load as load_config
    from .expansions import evaluate_options

    suite = load_config(
        source.path, judge_model=request.judge_model, repeat=request.repeat, text=source.text,
        parsed=taken(source),
    )  # fmt: skip
    # evaluateOptions: its repeat and maxConcurrency, unless the command line gives them (as
    # promptfoo's command line wins over the config's, commands/eval.ts). promptfoo takes
    # `repeat` as the default of its --repeat option, read from the working folder's own
    # config (loadDefaultConfig): a config named from elsewhere runs once
    repeat, concurrency = evaluate_options(suite)
    if request.repeat is None and repeat is not None and _working_folders(source.path):
        suite = dataclasses.replace(suite, repeat=repeat)
    if request.max_concurrency is None and concurrency is not None:
        suite = dataclasses.replace(suite, max_concurrency=concurrency)
    return [suite]


def _working_folders(path: Path) -> bool:
    """Whether `path` is the config `promptfoo eval` finds in the working folder."""
    found = next((Path.cwd() / n for n in CONFIG_NAMES if (Path.cwd() / n).is_file()), None)
    return found is not None and found.resolve() == path.resolve()


# promptfoo's own files (outputs.py, imported when a config runs): `-o FILE` (`--output`) in
# promptfoo's shapes, else each config's `outputPath`


def takes_output(suites: Sequence[Suite], output: Path) -> bool:
    from . import outputs

    return outputs.takes_output(suites, output)


def planned(suites: Sequence[Suite], output: Path | None) -> list[Output]:
    from . import outputs

    return outputs.planned_outputs(suites, output)


def write(runs: Sequence[SuiteRun], output: Path | None) -> None:
    from . import outputs

    outputs.write_all(runs, output)


PROMPTFOO_FILES = OwnFiles(takes_output=takes_output, planned=planned, write=write)

FRONTEND = FrontEnd(
    name="promptfoo",
    describe="a promptfoo config with 'prompts:' and 'providers:'",
    claims=claims,
    load=load,
    files=PROMPTFOO_FILES,
    default_files=CONFIG_NAMES,
    options=(
        FilesOption(
            ["-c", "--config", "configs"],
            help="A promptfoo config to run (promptfoo's -c; the same as naming it).",
        ),
    ),
)

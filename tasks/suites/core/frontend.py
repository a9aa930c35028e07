"""Suite front-ends: the file kinds `accord eval` runs and `accord validate` checks.

A front-end is one `FrontEnd`, declared in its own package (`agentv/frontend.py`,
`scenarios/frontend.py`, `oxy/frontend.py`; accord's `.eval.yml` in `evalfile.py`) and listed
in `BUILTIN` below, in the order the front-ends are asked whether a file is theirs. A new
front-end is a package whose module holds `FRONTEND = FrontEnd(...)`, plus its line in
`BUILTIN` (a plugin calls `register(FRONTEND)` from its `accord.plugins` entry point instead).

    FrontEnd(
        name="agentv",                        # unique; suites it loads carry it (suite.frontend)
        describe="an AgentV eval file with 'tests:'",  # for a file no front-end claims
        claims=lambda source: ...,            # by name and content: source.text is read once
        load=lambda source, request: [...],   # list[Suite]; every problem at once, raised as
                                              # ValidationError (file, line) or LoadError
        options=(click.Option(["--target"], help="AgentV eval files: ..."),),
        # its own `accord eval` options; their values reach `load` as request.options[name]
        # (a `FilesOption`'s values are files `accord eval` runs, as if named)
        checked=True,          # `accord validate` loads its files (False: another check does)
        problems=None,         # (suites) -> [Issue]: what validate also refuses in a file that
                               # loads (a scenario's macro that would fail it when run)
        folders=False,         # True: a folder given to `accord eval` is this front-end's
        writes=None,           # (suites) -> the folders it writes into after the run when no
                               # --output-dir is given, refused before the run when they cannot
                               # be written (engine/paths)
        before_run=None,       # (suites, stderr console) -> None: lines said before the run
        after_run=None,        # (runs, output_dir, stderr console) -> None: its own files
        no_result_exit=None,   # the exit code instead of 3 when none of its cases gave a result
        files=None,            # OwnFiles: the files it writes itself after the run (promptfoo's
                               # `-o` and `outputPath`), and whether `--output` is one of them
        default_files=(),      # names `accord eval` looks for in the working folder when it is
                               # given no file (promptfoo: promptfooconfig.yaml, .yml, .json)
    )

A file is read once: `Source.text` reads it on first use and keeps it, for every front-end's
claim and for the loader that claims it.

The commands use: `load(path, request)` (the suites of a file or folder, tagged with their
front-end), `by_frontend(items, suite_of)` (suites or runs grouped by front-end, for the hooks),
`OptionsCommand` (a click command that also takes every front-end's options, as keyword
arguments of its callback), `check_file(path)` (`accord validate`'s check, registered by
accord.tasks), `combined(errors)` and `load_each(sources, load)` (every invalid file's
problems at once).
"""

from __future__ import annotations

import importlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ....engine.errors import AccordError, Issue, LoadError, ValidationError
from ....engine.registry import Registry, RegistryError
from ....engine.yamlmarks import read_text

if TYPE_CHECKING:
    from rich.console import Console

    from ....engine.paths import Output
    from .cases import Suite
    from .verdicts import SuiteRun

# `module:attribute` of each built-in front-end, in the order they claim files (a YAML file with
# `scenarios:` is a scenario file whatever its name, as it always was)
BUILTIN = (
    # before promptfoo configs: an AgentV 4 file has promptfoo's `prompts:` and `tests:` too,
    # and is told apart by what only AgentV writes (agentv/frontend.py)
    "accord.tasks.suites.frontends.agentv.frontend:FRONTEND_V4",
    # before scenario and AgentV files: a promptfoo config has `tests:` and `scenarios:`
    "accord.tasks.suites.frontends.promptfoo.frontend:FRONTEND",
    "accord.tasks.suites.frontends.scenarios.frontend:FRONTEND",
    "accord.tasks.suites.frontends.evalfile:FRONTEND",
    "accord.tasks.suites.frontends.oxy.frontend:FRONTEND",
    "accord.tasks.suites.frontends.agentv.frontend:FRONTEND",
)
YAML_SUFFIXES = (".yaml", ".yml")


class Source:
    """A file (or folder) given to a command: its text read at most once, on first use."""

    def __init__(self, path: Path, *, named: bool = True) -> None:
        self.path = path
        self.named = named  # False: found in a folder, not named by the user

    @cached_property
    def text(self) -> str:
        """The file's text; a `LoadError` naming the file when it cannot be read."""
        return read_text(self.path)

    @cached_property
    def json_keys(self) -> frozenset[str]:
        """A .json file's top-level keys (none when it is not a JSON object: its loader, if
        any, says why)."""
        try:
            data = json.loads(self.text)
        except (LoadError, ValueError, RecursionError):
            return frozenset()
        return frozenset(data) if isinstance(data, dict) else frozenset()

    def has_top_level_key(self, *keys: str) -> bool:
        """Whether a .yaml/.yml file has one of `keys` at its top level: the text is searched,
        not parsed (the loader parses it, and shows a syntax error); an unreadable file has
        none (its loader, if any, says why). A .json file is parsed (JSON has no lines to
        search: promptfoo and AgentV configs may be JSON)."""
        if self.path.is_dir():
            return False
        if self.path.suffix == ".json":
            return not self.json_keys.isdisjoint(keys)
        if self.path.suffix not in YAML_SUFFIXES:
            return False
        try:
            text = self.text
        except LoadError:
            return False
        names = "|".join(re.escape(k) for k in keys)
        return re.search(rf"^(?:{names})\s*:", text, re.MULTILINE) is not None


@dataclass(frozen=True)
class Request:
    """What the command adds to every file it loads; `options` holds the front-ends' own
    options by parameter name (a front-end reads its own)."""

    judge_model: str | None = None
    repeat: int | None = None
    max_concurrency: int | None = None
    resume: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OwnFiles:
    """Files a front-end writes itself after the run, beside accord's reports.

    `takes_output(suites, output)`: whether `--output` is the front-end's own file when its
    suites are all the run has (an `AccordError` when its form is wrong: refused before the
    run). `planned(suites, output)`: the files it will write (`output` when it takes it, else
    None), checked before the run (engine/paths.check_outputs: nothing a project keeps is
    replaced). `write(runs, output)`: writes them."""

    takes_output: Callable[[Sequence[Suite], Path], bool]
    planned: Callable[[Sequence[Suite], Path | None], list[Output]]
    write: Callable[[Sequence[SuiteRun], Path | None], None]


@dataclass(frozen=True)
class FrontEnd:
    """One file kind of `accord eval` (see the module's docstring)."""

    name: str
    describe: str
    claims: Callable[[Source], bool]
    load: Callable[[Source, Request], list[Suite]]
    options: tuple[click.Option, ...] = ()
    checked: bool = True
    folders: bool = False
    writes: Callable[[Sequence[Suite]], list[Path]] | None = None
    before_run: Callable[[Sequence[Suite], Console], None] | None = None
    after_run: Callable[[Sequence[SuiteRun], Path | None, Console], None] | None = None
    no_result_exit: int | None = None
    problems: Callable[[Sequence[Suite]], list[Issue]] | None = None
    files: OwnFiles | None = None
    # file names `accord eval` looks for in the working folder, in this order, when it is
    # given no file (promptfoo's `promptfoo eval` reads promptfooconfig.yaml there)
    default_files: tuple[str, ...] = ()


FRONTENDS: Registry[FrontEnd] = Registry("suite front-end")
_builtins_loaded = False


def register(frontend: FrontEnd) -> FrontEnd:
    """Add a front-end, asked after those before it. An option another front-end declares
    already is refused (a bug in the front-end, not in a user's file)."""
    taken = {name for other in frontends() for o in other.options for name in _names(o)}
    clash = sorted(taken & {name for o in frontend.options for name in _names(o)})
    if clash:
        raise RegistryError(f"suite front-end '{frontend.name}': option {clash[0]} is taken")
    return FRONTENDS.add(frontend.name, frontend)


def _names(option: click.Option) -> set[str]:
    return {*option.opts, *option.secondary_opts, str(option.name)}


def default_file(folder: Path) -> Path | None:
    """The first file a front-end names as its default that `folder` holds, if any."""
    for frontend in frontends():
        for name in frontend.default_files:
            if (folder / name).is_file():
                return folder / name
    return None


def default_names() -> list[str]:
    return [name for frontend in frontends() for name in frontend.default_files]


def frontends() -> list[FrontEnd]:
    """Every front-end, in the order they claim files."""
    global _builtins_loaded
    if not _builtins_loaded:
        _builtins_loaded = True
        for entry in BUILTIN:
            module, _, attribute = entry.partition(":")
            frontend = getattr(importlib.import_module(module), attribute)
            if frontend.name not in FRONTENDS:
                register(frontend)
    return [frontend for _name, frontend in FRONTENDS.items()]


def claimant(source: Source) -> FrontEnd | None:
    """The first front-end that claims the file (a folder: the first that takes folders)."""
    if source.path.is_dir():
        return next((f for f in frontends() if f.folders), None)
    return next((f for f in frontends() if f.claims(source)), None)


def load(path: Path, request: Request) -> list[Suite]:
    """The suites a file (or folder) holds, loaded by the front-end that claims it."""
    if not path.exists():
        raise LoadError(f"{path}: no such file")
    source = Source(path)
    frontend = claimant(source)
    if frontend is None:
        kinds = ", ".join(f.describe for f in frontends())
        raise LoadError(
            f"{path}: not an evaluation file accord knows ({kinds}); run the tests of "
            "workflows and agents with `accord test`"
        )
    suites = frontend.load(source, request)
    for suite in suites:
        suite.frontend = frontend.name
    return suites


def by_frontend(
    items: Sequence[Any], suite_of: Callable[[Any], Suite]
) -> list[tuple[FrontEnd, list[Any]]]:
    """`items` (suites, or runs) grouped by the front-end of their suite, in claim order."""
    groups: dict[str, list[Any]] = {}
    for item in items:
        groups.setdefault(suite_of(item).frontend, []).append(item)
    return [(f, groups[f.name]) for f in frontends() if f.name in groups]


def output_owner(
    kinds: Sequence[tuple[FrontEnd, list[Any]]], output: Path | None
) -> FrontEnd | None:
    """The front-end whose own file `--output` is (`kinds`: `by_frontend` of the run's suites):
    one whose suites are all the run has and that takes it; else None (accord's formats)."""
    if output is None or len(kinds) != 1:
        return None
    frontend, suites = kinds[0]
    if frontend.files is not None and frontend.files.takes_output(suites, output):
        return frontend
    return None


def check_file(path: Path) -> str | None:
    """`accord validate` on a file a front-end claims: loaded as `accord eval` loads it (no
    case runs, no model is called); a summary, or None for a file no front-end checks."""
    from ....engine.loader import is_workflow_file

    # a workflow's or an agent's `tests:` are theirs to check (`accord test` runs them)
    if path.is_dir() or is_workflow_file(path) or path.name.endswith((".agent.yml", ".agent.yaml")):
        return None
    source = Source(path, named=False)
    frontend = claimant(source)
    if frontend is None or not frontend.checked:
        return None
    suites = frontend.load(source, Request())
    issues = frontend.problems(suites) if frontend.problems is not None else []
    if issues:
        raise ValidationError(issues)
    notes = [n for s in suites for n in s.notes]
    if notes:  # said as `accord eval` says them, values from the environment masked
        import sys

        from ....engine.masking import masked

        err = masked(sys.stderr)
        for note in notes:
            err.write(f"warning: {note}\n")
    count = sum(len(s.cases) for s in suites)
    return f"{frontend.name} suite, {count} case{'' if count == 1 else 's'}"


class FilesOption(click.Option):
    """A front-end's option whose values are more files for `accord eval` to run, as if named
    on the command line (promptfoo's `-c/--config`); repeatable."""

    def __init__(self, flags: Sequence[str], help: str) -> None:
        super().__init__(list(flags), multiple=True, type=click.Path(path_type=Path), help=help)


class OptionsCommand(click.Command):
    """A command that also takes every front-end's own options (looked up when it parses,
    so a front-end registered later has its options too); their values reach the callback
    as keyword arguments."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)
        own = {name for p in params if isinstance(p, click.Option) for name in _names(p)}
        extra = [o for f in frontends() for o in f.options if not _names(o) & own]
        help_option = self.get_help_option(ctx)
        rest = [p for p in params if p is not help_option]
        return [*rest, *extra, *([help_option] if help_option is not None else [])]


def combined(errors: Sequence[AccordError]) -> AccordError:
    """Several files' problems as one error: every issue with its file and line, then the
    message of each file that did not parse (which says where in its own words)."""
    issues = [i for exc in errors if isinstance(exc, ValidationError) for i in exc.issues]
    unread = [exc.text for exc in errors if not isinstance(exc, ValidationError)]
    error: AccordError = ValidationError(issues) if issues else LoadError(unread.pop(0))
    error.message = "\n".join([error.message, *unread])
    return error


def load_each(sources: Sequence[Source], load: Callable[[Source], Suite]) -> list[Suite]:
    """`load` on each file; every invalid file's problems at once (`combined`)."""
    suites: list[Suite] = []
    errors: list[AccordError] = []
    for source in sources:
        try:
            suites.append(load(source))
        except (ValidationError, LoadError) as exc:
            errors.append(exc)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise combined(errors)
    return suites

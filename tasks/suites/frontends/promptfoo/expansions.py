"""The parts of a promptfoo config read from elsewhere, or filled in, before the loader
(config.py) reads them: provider files and the templates of a provider's id and label,
scenario files, and `evaluateOptions`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .....engine import keys
from .....engine.errors import AccordError
from .....engine.yamlmarks import Loc, load_core, parse_yaml, read_text
from . import sources, templating
from .providers import SOURCE

if TYPE_CHECKING:
    from ...core.cases import Suite
    from .form import _Loader

# evaluateOptions (types/index.ts EvaluateOptions) accord applies: `repeat` as --repeat,
# `maxConcurrency` as --max-concurrency (frontend.py; the command line's win), and
# `showProgressBar`, which changes no result
EVALUATE_KEYS = {"repeat", "maxConcurrency", "showProgressBar"}
NOT_SUPPORTED_EVALUATE = {"delay", "timeoutMs", "maxEvalTimeMs", "cache", "generateSuggestions"}


def evaluate_options_of(loader: _Loader, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, dict):
        loader.issue(("evaluateOptions",), "evaluateOptions is a mapping (repeat, "
                     "maxConcurrency)")  # fmt: skip
        return
    loader.keys(value, ("evaluateOptions",), EVALUATE_KEYS, NOT_SUPPORTED_EVALUATE,
                "evaluateOptions")  # fmt: skip
    for key in ("repeat", "maxConcurrency"):
        number = value.get(key)
        if key in value and (isinstance(number, bool) or not isinstance(number, int)
                             or number < 1):  # fmt: skip
            loader.issue(("evaluateOptions", key), f"evaluateOptions.{key} is a whole number "
                         "of 1 or more")  # fmt: skip


def evaluate_options(suite: Suite) -> tuple[int | None, int | None]:
    """(repeat, maxConcurrency) of a loaded config's evaluateOptions, None where not given."""
    options = getattr(suite, "config", {}).get("evaluateOptions")
    if not isinstance(options, dict):
        return None, None
    return options.get("repeat"), options.get("maxConcurrency")


def rendered_provider(
    loader: _Loader, key: str, entry: dict[str, Any], loc: tuple[Any, ...]
) -> dict[str, Any]:
    """A provider's id and label with their templates filled as promptfoo's loadApiProvider
    fills them (providers/index.ts: rendered with `env`, the process environment alone: the
    config's `env:` is not yet in place when providers load); its config is left as
    written, as promptfoo leaves it."""
    out = dict(entry)
    for name in ("id", "label"):
        value = out.get(name)
        if isinstance(value, str) and ("{{" in value or "{%" in value):
            try:
                # each variable looked up is read through engine/keys.py: masked (F15)
                out[name] = templating.render_vars(value, {}, keys.environment())
            except (templating.NunjucksDifference, AccordError) as exc:
                loader.issue((key, *loc, name), getattr(exc, "message", None) or str(exc))
    return out


def provider_files(
    loader: _Loader, key: str, entries: list[tuple[dict[str, Any], tuple[Any, ...]]]
) -> list[tuple[dict[str, Any], tuple[Any, ...]]]:
    """Each `file://X.yaml` (`.yml`, `.json`) given as a provider replaced by the providers
    the file holds, one `{id, ...}` or a list of them (providers/index.ts
    loadProvidersFromFile), each placed at the line naming the file."""
    out: list[tuple[dict[str, Any], tuple[Any, ...]]] = []
    for entry, loc in entries:
        pid = entry.get("id")
        if not (list(entry) == ["id"] and isinstance(pid, str) and pid.startswith("file://")
                and pid.endswith((".yaml", ".yml", ".json"))):  # fmt: skip
            out.append((entry, loc))
            continue
        try:
            ((path, _shown),) = sources.expand(loader.base, loader.root, pid[7:], "provider file")
            found, marks = parse_yaml(read_text(path), path, core=True)
        except (sources.SourceProblem, ValueError, AccordError) as exc:
            loader.issue((key, *loc), getattr(exc, "message", None) or str(exc))
            continue
        for index, item in enumerate(found if isinstance(found, list) else [found]):
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                loader.issue((key, *loc), f"{pid[7:]}: a provider file holds a provider "
                             "{id, label, config} or a list of them, each with an id")  # fmt: skip
                continue
            # the provider file writes the entry: its trust decides where keys go (keys.py)
            at: Loc = (index,) if isinstance(found, list) else ()
            line = marks.find((*at, "config", "apiBaseUrl"))[0] or marks.find(at)[0]
            out.append(({**item, SOURCE: (str(path), line)}, loc))
    return out


def scenario_files(loader: _Loader, value: Any) -> list[Any]:
    """`scenarios` with each `file://` entry (or the whole value given as one) replaced by
    the scenario, or the list of scenarios, each file it names holds (globs too), as
    promptfoo's maybeLoadFromExternalFile loads them."""
    items = value if isinstance(value, list) else [value]
    out: list[Any] = []
    for index, item in enumerate(items):
        if not (isinstance(item, str) and item.startswith("file://")):
            out.append(item)
            continue
        loc: Loc = ("scenarios", index) if isinstance(value, list) else ("scenarios",)
        try:
            for path, _shown in sources.expand(loader.base, loader.root, item[7:],
                                               "scenario file"):  # fmt: skip
                found = load_core(read_text(path))
                out += found if isinstance(found, list) else [found]
        except (sources.SourceProblem, ValueError, AccordError) as exc:
            loader.issue(loc, getattr(exc, "message", None) or str(exc))
    return out

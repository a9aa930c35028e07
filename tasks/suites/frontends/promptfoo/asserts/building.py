"""One entry of a promptfoo `assert:` list as an evaluator spec.

The keys promptfoo reads on an assertion (0.118, `src/types/index.ts` `AssertionSchema`):
`type`, `value`, `threshold`, `weight`, `metric`, `provider`, `rubricPrompt`, `config`,
`transform`, `contextTransform`; an `assert-set` has `assert` instead of `value`. Any other
key, a type accord does not compute, or a field of the wrong kind is refused here, naming
the entry's place in its file.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pydantic

from ......engine.errors import AccordError, ConfigError, did_you_mean
from .base import PROMPTFOO, PromptfooAssertion
from .sets import AssertSet

COMMON_KEYS = frozenset(
    {"type", "value", "threshold", "weight", "metric", "provider", "rubricPrompt", "config"}
)
# keys promptfoo has that accord does not apply yet: refused, never ignored, since each
# changes what is compared
NOT_SUPPORTED_KEYS = {
    "contextTransform": "a 'contextTransform' (context-* assertions read 'context' from vars)",
}


def supported_types() -> list[str]:
    """The assertion types accord computes (each also with `not-`)."""
    return sorted(PROMPTFOO.names())


def build_assertion(
    entry: dict[str, Any], *, base_dir: Path, where: str, name: str | None = None
) -> PromptfooAssertion:
    """The evaluator of one `assert:` entry. `base_dir` is the folder `file://` values are
    read from; `where` (`file:line`) starts every message; `name` is the evaluator's id in
    reports (default: the entry's `metric`, else its type): the assertions of one case need
    distinct names."""
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: an assertion is a mapping with a 'type', not {entry!r}")
    kind = entry.get("type")
    if not isinstance(kind, str) or not kind:
        raise ConfigError(f"{where}: an assertion needs a 'type' (for example 'contains')")
    if "transform" in entry and kind != "assert-set":
        from .transforms import with_transform

        inner = {k: v for k, v in entry.items() if k != "transform"}
        built = build_assertion(inner, base_dir=base_dir, where=where, name=name)
        return with_transform(built, entry["transform"], base_dir, where)
    inverse = kind.startswith("not-")
    base = kind[4:] if inverse else kind
    if base not in PROMPTFOO:
        raise ConfigError(f"{where}: {_unknown(kind, base)}")
    cls = PROMPTFOO.get(base)
    allowed = COMMON_KEYS | cls.own_keys
    if cls is AssertSet:
        if inverse:
            raise ConfigError(f"{where}: an assertion set has no 'not-' form")
        allowed = (COMMON_KEYS - {"value"}) | {"assert"}
    for key in entry:
        if key in NOT_SUPPORTED_KEYS:
            raise ConfigError(
                f"{where}: {NOT_SUPPORTED_KEYS[key]} is not supported by accord; "
                f"remove '{key}' from this assertion"
            )
        if key not in allowed:
            keys = ", ".join(sorted(allowed))
            raise ConfigError(f"{where}: '{key}' is no key of a {kind} assertion (keys: {keys})")
    fields = _fields(entry, kind, where)
    data: dict[str, Any] = {
        "type": kind,
        "base_type": base,
        "inverse": inverse,
        "name": name or fields["metric"] or kind,
        **fields,
        **{key: entry[key] for key in cls.own_keys if key in entry},
    }
    if "value" in entry:
        data["value"] = entry["value"]
    if cls is AssertSet:
        data["asserts"] = _set_members(entry, base_dir, where, data["name"])
    try:
        spec = cls.model_validate(data).prepared(base_dir)
    except pydantic.ValidationError as exc:
        problems = "; ".join(_problem(error) for error in exc.errors())
        raise ConfigError(f"{where}: {kind} assertion: {problems}") from None
    except AccordError as exc:
        raise ConfigError(f"{where}: {kind} assertion: {exc.message}") from None
    return spec


def _set_members(
    entry: dict[str, Any], base_dir: Path, where: str, name: str
) -> list[PromptfooAssertion]:
    items = entry.get("assert")
    if not isinstance(items, list) or not items:
        raise ConfigError(f"{where}: an assert-set needs 'assert': a list of assertions")
    members = []
    for position, item in enumerate(items):
        if isinstance(item, dict) and item.get("type") == "assert-set":
            raise ConfigError(f"{where}: assert[{position}]: an assert-set cannot hold another")
        members.append(
            build_assertion(
                item,
                base_dir=base_dir,
                where=f"{where} (assert[{position}])",
                name=f"{name}.{position}",
            )
        )
    return members


def _fields(entry: dict[str, Any], kind: str, where: str) -> dict[str, Any]:
    """The keys every assertion has, checked as promptfoo reads them."""
    out: dict[str, Any] = {"metric": None, "pass_threshold": None, "weight": 1.0}
    if "threshold" in entry and entry["threshold"] is not None:
        out["pass_threshold"] = _number(entry["threshold"], "threshold", where)
    if "weight" in entry and entry["weight"] is not None:
        weight = _number(entry["weight"], "weight", where)
        if weight < 0:
            raise ConfigError(
                f"{where}: 'weight' of a {kind} assertion is 0 or more, not {weight:g}"
            )
        out["weight"] = weight
    if "metric" in entry and entry["metric"] is not None:
        if not isinstance(entry["metric"], str) or not entry["metric"]:
            raise ConfigError(f"{where}: 'metric' is a name (a string), not {entry['metric']!r}")
        out["metric"] = entry["metric"]
    if "provider" in entry:
        out["provider"] = entry["provider"]
    if "rubricPrompt" in entry:
        out["rubric_prompt"] = entry["rubricPrompt"]
    if "config" in entry:
        if not isinstance(entry["config"], dict):
            raise ConfigError(f"{where}: 'config' is a mapping, not {entry['config']!r}")
        out["config"] = entry["config"]
    return out


def _number(value: Any, key: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{where}: '{key}' is a number, not {value!r}")
    return float(value)


def _problem(error: Any) -> str:
    place = ".".join(str(p) for p in error.get("loc", ()))
    return f"{place}: {error.get('msg')}" if place else str(error.get("msg"))


def _unknown(kind: str, base: str) -> str:
    known = supported_types()
    hint = did_you_mean(base, known)
    return (
        f"the assertion type '{kind}' is not supported by accord{hint} "
        f"(supported, each also with 'not-': {', '.join(known)})"
    )

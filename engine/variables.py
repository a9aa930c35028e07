"""Workflow variables: defaults, command-line values converted to the declared type, and
validation against the variable's JSON Schema."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import yaml

from .errors import ConfigError
from .spec import VariableSpec


def parse_assignments(pairs: tuple[str, ...] | list[str]) -> dict[str, str]:
    """`["month=3", "region=EU"]` -> `{"month": "3", "region": "EU"}`."""
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"-v expects name=value, got '{pair}'")
        if name.strip() in out:
            raise ConfigError(f"-v {name.strip()} is given twice: give each variable once")
        out[name.strip()] = value
    return out


_INFERRED = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (list, "array"),
    (dict, "object"),
)


def _declared_types(spec: VariableSpec) -> list[str]:
    """The declared JSON types; a bare default (`n: 3`) declares its own type."""
    if spec.type is not None:
        return [spec.type] if isinstance(spec.type, str) else list(spec.type)
    for python_type, json_type in _INFERRED:
        if isinstance(spec.default, python_type):
            return [json_type]
    return []


_SHAPE_ONLY = {"type", "enum", "default", "description", "title", "examples"}


def _is_type(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    expected = {"string": str, "boolean": bool, "array": list, "object": dict}.get(kind)
    if kind == "null":
        return value is None
    return expected is None or isinstance(value, expected)


def default_problem(name: str, spec: VariableSpec) -> str | None:
    """Why a declared default breaks the variable's own schema (None when it does not).

    Type and enum are checked here; other keywords (minimum, pattern, ...) by jsonschema,
    imported only for such variables (it costs ~90 ms, and `validate` must stay quick).
    """
    if not spec.has_default or spec.default is None:
        return None  # `default: null` is how some files say "no default"
    value = spec.default
    types = _declared_types(spec)
    if types and not any(_is_type(value, kind) for kind in types):
        return f"default {value!r} is not of type {' or '.join(types)}"
    if spec.enum is not None and value not in spec.enum:
        return f"default {value!r} is not one of {spec.enum}"
    if set(spec.json_schema()) - _SHAPE_ONLY:
        problem = schema_problem(value, spec)
        if problem is not None:
            return f"default {value!r}: {problem}"
    return None


def convert(name: str, raw: Any, spec: VariableSpec) -> Any:
    """Convert a value given as text (command line) or any type (parent workflow)."""
    types = _declared_types(spec)
    if not types or not isinstance(raw, str):
        return _coerce_structured(name, raw, types)
    for kind in types:
        converted = _from_text(raw, kind)
        if converted is not _FAIL:
            return _convert_items(converted, spec) if kind == "array" else converted
    raise ConfigError(f"variable '{name}': {raw!r} is not of type {' or '.join(types)}")


_FAIL = object()


def _convert_items(values: list[Any], spec: VariableSpec) -> list[Any]:
    """`-v ids=1,2` with `items: {type: integer}` gives `[1, 2]`, not `["1", "2"]`."""
    kind = (spec.items or {}).get("type")
    if not isinstance(kind, str):
        return values
    out = []
    for value in values:
        converted = _from_text(value, kind) if isinstance(value, str) else _FAIL
        out.append(value if converted is _FAIL else converted)
    return out


def _to_int(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        return _FAIL


def _to_number(text: str) -> Any:
    try:
        number = float(text)
    except ValueError:
        return _FAIL
    if not math.isfinite(number):  # NaN passes every minimum and maximum: a number it is not
        return _FAIL
    looks_integral = number.is_integer() and not any(c in text.lower() for c in ".e")
    return int(number) if looks_integral else number


_TRUE = ("true", "yes", "1", "on")
_FALSE = ("false", "no", "0", "off")


def _to_bool(text: str) -> Any:
    lowered = text.lower()
    return True if lowered in _TRUE else False if lowered in _FALSE else _FAIL


def _to_structure(text: str, kind: str) -> Any:
    try:
        value = json.loads(text)
    except RecursionError:
        raise ConfigError(f"a value nested too deeply for {kind}: flatten it") from None
    except json.JSONDecodeError:
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            return _FAIL
    if kind == "array" and isinstance(value, list):
        return value
    if kind == "object" and isinstance(value, dict):
        return value
    if kind == "array" and isinstance(value, str | int | float | bool):
        # `-v regions=EU,US` and `-v regions=EU`: comma-separated items, kept as text
        return [v.strip() for v in text.split(",")]
    return _FAIL


def _from_text(raw: str, kind: str) -> Any:
    text = raw.strip()
    if kind == "string":
        return raw
    if kind == "integer":
        return _to_int(text)
    if kind == "number":
        return _to_number(text)
    if kind == "boolean":
        return _to_bool(text)
    if kind in ("array", "object"):
        return _to_structure(text, kind)
    if kind == "null":
        return None if text.lower() in ("", "null", "none") else _FAIL
    return _FAIL


def _coerce_structured(name: str, raw: Any, types: list[str]) -> Any:
    if not types or not isinstance(raw, str):
        if "integer" in types and isinstance(raw, float) and raw.is_integer():
            return int(raw)
        return raw
    return raw


def validate(name: str, value: Any, spec: VariableSpec) -> None:
    """Check the value against the variable's JSON Schema (Draft 7)."""
    problem = schema_problem(value, spec)
    if problem is not None:
        raise ConfigError(f"variable '{name}': {problem}")


def schema_problem(value: Any, spec: VariableSpec) -> str | None:
    """What breaks the variable's JSON Schema (Draft 7) in `value`, or None."""
    schema = spec.json_schema()
    if not schema or set(schema) <= {"description", "title", "examples"}:
        return None
    import jsonschema

    try:
        # a broken sub-schema (`items: {type: 0string}`) makes validation itself crash
        jsonschema.Draft7Validator.check_schema(schema)
        jsonschema.Draft7Validator(schema).validate(value)
    except jsonschema.ValidationError as exc:
        return exc.message
    except jsonschema.SchemaError as exc:
        return f"its schema is invalid: {exc.message}"
    return None


def _keys_of_objects(
    specs: Mapping[str, VariableSpec], given: Mapping[str, Any], where: str
) -> Mapping[str, Any]:
    """`-v controls.region=EU` sets one key of the object variable `controls` (the others
    keep their defaults), converted by that key's own schema in `properties`."""
    out = {name: value for name, value in given.items() if name.partition(".")[0] not in specs
           or "." not in name}  # fmt: skip
    for name, raw in given.items():
        head, _, key = name.partition(".")
        if not key or head not in specs or name in specs:
            continue
        spec = specs[head]
        if "object" not in _declared_types(spec):
            raise ConfigError(f"{where}: -v {name}: variable '{head}' is not an object")
        base = out.get(head, given.get(head, spec.default if spec.has_default else None))
        if isinstance(base, str):
            base = convert(head, base, spec)
        properties = spec.properties or {}
        if key not in properties and spec.additional_properties is False:
            raise ConfigError(
                f"{where}: -v {name}: '{head}' has no key '{key}' "
                f"(keys: {', '.join(properties) or 'none'})"
            )
        value = raw
        if isinstance(properties.get(key), dict):
            try:
                value = convert(name, raw, VariableSpec.model_validate(properties[key]))
            except ConfigError as exc:
                raise ConfigError(f"{where}: {exc.message}") from None
        out[head] = {**(base if isinstance(base, dict) else {}), key: value}
    return out


def resolve(
    specs: Mapping[str, VariableSpec],
    given: Mapping[str, Any],
    *,
    where: str,
    lines: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """The variables' values: given ones converted and validated, else defaults.

    A variable without a default must be given; an unknown given name is an error.
    """
    given = _keys_of_objects(specs, given, where)
    unknown = sorted(set(given) - set(specs))
    if unknown:
        declared = ", ".join(sorted(specs)) or "none"
        raise ConfigError(
            f"{where}: unknown variable '{unknown[0]}' (declared variables: {declared})"
        )
    out: dict[str, Any] = {}
    for name, spec in specs.items():
        place = f"{where}:{lines[name]}" if lines and name in lines else where
        try:
            if name in given:
                value = convert(name, given[name], spec)
            elif spec.has_default:
                value = spec.default
            else:
                raise ConfigError(
                    f"variable '{name}' is required (it has no default): "
                    f"pass it with -v {name}=<value>"
                )
            validate(name, value, spec)
        except ConfigError as exc:
            raise ConfigError(f"{place}: {exc.message}") from None
        out[name] = value
    return out

"""Oxy's row-level `filters`: a database entry declares each filter's JSON schema (its type,
an optional default); a run gives values (`accord run --filter tenant_id=12345`, as an Oxy
API request gives `filters`), and the database applies them to every query's session, where
the database's own row policies read them (ClickHouse: settings named `settings_prefix` +
name; Snowflake: session variables named in upper case).

As Oxy processes them: a run that gives no filter applies none (the database's policies
see no value); once any is given, every declared filter needs a value or a default, a
filter the database does not declare is refused, and each value is converted to its
schema's type (a number from its text, a list from a JSON list or a comma-separated text).
Values of a database that declares no filters are passed over with a warning.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ..errors import ConfigError

SNOWFLAKE_LIMIT = 256  # bytes of all a session's variable values, Snowflake's own limit


def parse_assignments(given: tuple[str, ...]) -> dict[str, Any]:
    """`NAME=VALUE` pairs of the command line; a value that reads as JSON is taken as JSON
    (`ids=[1,2]`, `n=3`), any other as text."""
    out: dict[str, Any] = {}
    for item in given:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError(f"--filter {item!r}: write NAME=VALUE, e.g. --filter tenant_id=42")
        try:
            value: Any = json.loads(text)
        except ValueError:
            value = text
        out[name.strip()] = value
    return out


def process(database: str, schemas: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """The filter values a database applies: `given` checked against its `schemas`."""
    out: dict[str, Any] = {}
    for name, schema in schemas.items():
        schema = schema if isinstance(schema, dict) else {}
        if name in given:
            out[name] = convert(database, name, given[name], schema)
        elif "default" in schema:
            out[name] = schema["default"]
        else:
            raise ConfigError(
                f"database '{database}': filter '{name}' has no value and no default: give "
                f"--filter {name}=VALUE, or a default in config.yml"
            )
    unknown = sorted(set(given) - set(schemas))
    if unknown:
        raise ConfigError(
            f"database '{database}': unknown filter '{unknown[0]}' (its filters: "
            f"{', '.join(sorted(schemas)) or 'none'})"
        )
    return out


def convert(database: str, name: str, value: Any, schema: dict[str, Any]) -> Any:
    """`value` as the type `schema` names (one type, or the first of a list that fits)."""
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds] if kinds else []
    if not kinds:
        return value
    problems = []
    for kind in kinds:
        try:
            return _as(kind, value, schema, database, name)
        except ValueError as exc:
            problems.append(str(exc))
    raise ConfigError(f"database '{database}': filter '{name}': {'; '.join(problems)}")


def _as(kind: str, value: Any, schema: dict[str, Any], database: str, name: str) -> Any:
    if value is None:
        if kind == "null":
            return None
        raise ValueError(f"expected {kind}, got null")
    if kind == "array":
        items = value
        if isinstance(value, str):
            items = [part.strip() for part in value.split(",") if part.strip()]
        if not isinstance(items, list):
            items = [items]
        item_schema = schema.get("items")
        item_schema = item_schema if isinstance(item_schema, dict) else {}
        return [convert(database, name, item, item_schema) for item in items]
    scalar = _SCALARS.get(kind)
    return value if scalar is None else scalar(value)


def _integer(value: Any) -> int:
    number = value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise ValueError(f"cannot convert {value!r} to integer") from None
    if isinstance(number, bool):
        raise ValueError(f"expected integer, got {value!r}")
    if isinstance(number, int):
        return number
    if isinstance(number, float) and number.is_integer():
        return int(number)
    raise ValueError(f"cannot convert {value!r} to integer")


def _number(value: Any) -> float | int:
    if isinstance(value, bool):
        raise ValueError(f"expected number, got {value!r}")
    if isinstance(value, int | float):
        return value
    try:
        return float(str(value).strip())
    except ValueError:
        raise ValueError(f"cannot convert {value!r} to number") from None


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "on", "y"):
        return True
    if text in ("false", "no", "0", "off", "n"):
        return False
    raise ValueError(f"cannot convert {value!r} to boolean")


def _string(value: Any) -> str:
    if isinstance(value, list | dict):
        raise ValueError(f"expected string, got {type(value).__name__}")
    return value if isinstance(value, str) else json.dumps(value)


def _object(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    raise ValueError(f"expected object, got {value!r}")


_SCALARS: dict[str, Callable[[Any], Any]] = {
    "integer": _integer,
    "number": _number,
    "boolean": _boolean,
    "string": _string,
    "object": _object,
}


def session_value(value: Any) -> str:
    """A filter value as the text a session setting or variable holds (a list: its items
    joined by commas), as Oxy writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(session_value(v) for v in value)
    if value is None:
        return ""
    if isinstance(value, dict):
        return json.dumps(value)
    return str(value)

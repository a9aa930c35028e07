"""JSON as accord reads data files: JSONL datasets (custom tests, AgentV), JSON cells of CSV
datasets, JSON a macro extracts. YAML goes through `yamlmarks.parse_yaml`, which has the same
depth bound.

Two rules on top of the JSON grammar, each a clear error at the file's line:

- NaN, Infinity and -Infinity are refused. The JSON spec (RFC 8259) has no such numbers;
  Python's `json` reads them, and a NaN score or expected value then compares false with
  everything and passes or fails checks at random. Write `null`, or the value as a string.
- Values nest at most `MAX_DEPTH` levels, as in YAML files: Python's decoder recurses, so a
  value 200,000 levels deep was a RecursionError (an internal error, exit 70), and one a few
  hundred deep loads but breaks later (reports, copies, templates).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .errors import Issue
from .yamlmarks import MAX_DEPTH, read_text


class DataProblem(ValueError):
    """Why a JSON text is not data accord reads, and at which column (1-based) if known."""

    def __init__(self, message: str, column: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.column = column


def _refuse_constant(name: str) -> Any:
    raise DataProblem(
        f"{name} is not a JSON number (the JSON spec has no NaN or Infinity, and accord "
        "reads none): write null, or the value as a string"
    )


def _too_deep() -> DataProblem:
    return DataProblem(f"the value is nested more than {MAX_DEPTH} levels deep: flatten it")


def parse_json(text: str) -> Any:
    """One JSON value, by the module's rules; a `DataProblem` otherwise."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise _too_deep() from None
    except json.JSONDecodeError as exc:
        raise DataProblem(f"invalid JSON: {exc.msg}", exc.colno) from None
    except DataProblem:
        raise
    except ValueError as exc:  # a number of more than 4300 digits, say
        raise DataProblem(f"invalid JSON: {exc}") from None
    if nests_deeper(value, MAX_DEPTH):
        raise _too_deep()
    return value


def nests_deeper(value: Any, limit: int) -> bool:
    """Whether lists and mappings in `value` nest more than `limit` levels (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def jsonl_values(path: Path) -> tuple[list[tuple[int, Any]], list[Issue]]:
    """The value of each non-blank line of a JSONL file with its line number, and an issue
    (file, line, column) for each line that is not one."""
    values: list[tuple[int, Any]] = []
    issues: list[Issue] = []
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            values.append((number, parse_json(line)))
        except DataProblem as exc:
            issues.append(Issue(path, number, exc.column, "", exc.message))
    return values, issues

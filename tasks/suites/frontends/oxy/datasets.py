"""Datasets of custom tests: YAML, JSONL or CSV rows of `{query, response, relevant_contexts}`.

Every problem names the dataset file and the line of the row at fault; all the problems of
one file are raised together.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pydantic

from .....engine.datafiles import DataProblem, jsonl_values, parse_json
from .....engine.errors import Issue, LoadError, ValidationError
from .....engine.loader import load_spec, pydantic_issues
from .....engine.yamlmarks import Marks, read_text
from .specs import DatasetRow


def load_dataset(path: Path) -> list[DatasetRow]:
    """The rows of a dataset file, or a `ValidationError` naming file and line."""
    suffix = path.suffix.lower()
    if suffix in (".yml", ".yaml"):
        rows = _yaml_rows(path)
    elif suffix == ".jsonl":
        rows = _jsonl_rows(path)
    elif suffix == ".csv":
        rows = _csv_rows(path)
    else:
        raise LoadError(f"{path}: a dataset must be a .yml, .yaml, .jsonl or .csv file")
    if not rows:
        raise ValidationError([Issue(path, 1, 1, "", "the dataset has no rows: add at least one")])
    return rows


def _yaml_rows(path: Path) -> list[DatasetRow]:
    loaded = load_spec(path, list[DatasetRow], kind="dataset")
    rows: list[DatasetRow] = loaded.spec
    return rows


def _validate(path: Path, items: list[tuple[int, Any]]) -> list[DatasetRow]:
    """Validate (line, data) pairs; every bad row becomes an issue at its line."""
    rows: list[DatasetRow] = []
    issues: list[Issue] = []
    for line, item in items:
        try:
            rows.append(DatasetRow.model_validate(item))
        except pydantic.ValidationError as exc:
            marks = Marks()
            marks.put((), line, 1)
            for issue in pydantic_issues(exc, item, marks, path, DatasetRow):
                issues.append(Issue(path, line, 1, issue.path, issue.message))
    if issues:
        raise ValidationError(issues)
    return rows


def _jsonl_rows(path: Path) -> list[DatasetRow]:
    items: list[tuple[int, Any]] = []
    values, issues = jsonl_values(path)
    for number, data in values:
        if not isinstance(data, dict):
            issues.append(Issue(path, number, 1, "", "each line must be a JSON object"))
            continue
        items.append((number, data))
    if issues:
        raise ValidationError(issues)
    return _validate(path, items)


def _csv_rows(path: Path) -> list[DatasetRow]:
    reader = csv.DictReader(io.StringIO(read_text(path), newline=""))
    header = reader.fieldnames or []
    if "query" not in header:
        found = ", ".join(header) or "none"
        raise ValidationError(
            [Issue(path, 1, 1, "", f"the header needs a 'query' column (columns: {found})")]
        )
    items: list[tuple[int, Any]] = []
    try:
        for record in reader:
            items.append((reader.line_num, _csv_record(record)))
    except csv.Error as exc:
        raise ValidationError(
            [Issue(path, reader.line_num, 1, "", f"invalid CSV: {exc}")]
        ) from None
    except DataProblem as exc:
        raise ValidationError([Issue(path, reader.line_num, 1, "", exc.message)]) from None
    return _validate(path, items)


def _csv_record(record: dict[str | Any, Any]) -> dict[str, Any]:
    """A CSV row as row data: empty cells dropped; list cells as JSON arrays or one value."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if key is None:
            out["<extra cells>"] = value
            continue
        if value is None or value == "":
            continue
        if key in ("relevant_contexts", "tags"):
            out[key] = _list_cell(value)
        else:
            out[key] = value
    return out


def _list_cell(value: str) -> Any:
    text = value.strip()
    if text.startswith("["):
        try:
            return parse_json(text)
        except DataProblem as exc:
            if exc.message.startswith("invalid JSON"):
                return value  # text that starts with "[": one value
            raise
    return [value]

"""An AgentV 4 test file (`tests: file://cases.csv`, `.json`, `.jsonl`, `.yaml`) read as
AgentV reads it (packages/core/src/evaluation/loaders/case-file-loader.ts, commit 58f316ca2),
not as promptfoo does: an AgentV eval file takes tests only in AgentV's shapes.

CSV (parseCsvRows, parseCsvCases, parseAssertionFromString):
- Cells split on commas; a cell opened by `"` runs to its closing quote (`""` is a quote,
  newlines kept); a leading byte-order mark dropped; blank lines skipped; headers trimmed, an
  empty header's column dropped, a missing cell read as ''. An unclosed quote is refused.
- `id` is the test's id (an empty one: `row-N`, N the row's number), `input` its input
  (`__prefix` + input + `__suffix`), `__description` its criteria, `__threshold` its
  execution threshold, `__metadata:KEY` (`KEY[]`: a list split on commas, `\\,` keeping
  one) its metadata, `vars.a.b` a nested var and any other column a var.
- Each non-empty `__expected…` cell is an assertion: `TYPE:VALUE`, `not-TYPE:…` (negate),
  `TYPE(N):…` (a threshold: `min_score`, a latency's limit, a cost's budget) for contains,
  icontains (with -any/-all, split on commas), starts-with, ends-with, regex, is-json, equals,
  latency, cost; `python:PATH` and `file://PATH.py` a script run as `uv run python PATH`; any
  other text is `equals` it. `__metric` names them; `__config:__expectedN:threshold` sets
  the N-th one's `min_score`. A `cost(N)` cell (AgentV's cost grader, a budget) is refused:
  accord does not run that grader.
- What AgentV refuses, accord refuses at the row (exit 2): `__provider_output`, another
  `__config` key, an unknown `TYPE:` or `TYPE(N)`, a latency or cost without its limit, a
  `file://` cell that is no `.py`. What AgentV reads but cannot run is refused too: a
  `grade:`/`llm-rubric:` cell becomes an `llm-grader` assertion, which AgentV's grader parser
  refuses (it skips the row); a `javascript:`/`fn:`/`eval:` cell an `inline-assert` with no
  function, which fails at run time.

JSON (an array of tests, or an object whose `tests` is one), JSONL (one object a line) and
YAML (an array of tests); an empty file has no tests (AgentV warns and goes on). Their
`{{ env.NAME }}` are filled in when the file is read, as in the eval file (file.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ......engine import keys
from ......engine.yamlmarks import load_core, read_text
from ...promptfoo import sources
from ...promptfoo.sources import SourceProblem

if TYPE_CHECKING:
    from ...promptfoo.form import _Loader

# parseAssertionFromString: the types a `TYPE:VALUE` cell may name
_TYPES = ("contains", "contains-any", "contains-all", "icontains", "icontains-any",
          "icontains-all", "starts-with", "ends-with", "regex", "is-json", "equals",
          "latency", "cost")  # fmt: skip
_LISTS = ("contains-any", "contains-all", "icontains-any", "icontains-all")
_CELL = re.compile(r"^((?:not-)?[a-z][a-z0-9-]*)(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$")
_FUNCTIONS = ("javascript:", "fn:", "eval:")
# JavaScript's parseFloat: the longest number at the start of the text (after spaces)
_FLOAT = re.compile(r"^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def tests_from_file(
    path: Path, shown: str, loader: _Loader | None = None
) -> list[tuple[Any, int | None]]:
    """The tests of one AgentV test file, each with its line where the format has lines;
    a JSON, JSONL or YAML file's `{{ env.NAME }}` filled in as AgentV fills them when it
    reads the file (interpolateEnv; a CSV file's are not)."""
    found = _read(path, shown)
    if loader is None or path.suffix.lower() == ".csv":
        return found
    from .interpolation import env_interpolated

    env = keys.environment()
    return [(env_interpolated(loader, test, env), line) for test, line in found]


def _read(path: Path, shown: str) -> list[tuple[Any, int | None]]:
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json", ".yaml", ".yml"):
        return sources.tests_from_file(path, shown)  # JSONL as AgentV reads it; others refused
    text = read_text(path)
    if not text.strip():
        return []
    if suffix == ".csv":
        # read again without newline translation: a quoted cell keeps its CRLF, as in AgentV
        return tests_from_csv(path.read_bytes().decode("utf-8"), path)
    if suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SourceProblem(f"invalid JSON: {exc}", path) from None
        if isinstance(data, dict) and isinstance(data.get("tests"), list):
            data = data["tests"]
    else:
        try:
            data = load_core(text)
        except yaml.YAMLError as exc:
            raise SourceProblem(f"invalid YAML: {exc}", path) from None
    if not isinstance(data, list):
        whole = "an array of tests, or an object whose 'tests' is one" if suffix == ".json" else (
            "a list of tests")  # fmt: skip
        raise SourceProblem(f"an AgentV test file holds {whole} (AgentV refuses any other)", path)
    return [(item, None) for item in data]


def rows(text: str, path: Path) -> list[tuple[list[str], int]]:
    """parseCsvRows: each row's cells, with the line it starts on."""
    found: list[tuple[list[str], int]] = []
    row: list[str] = []
    cell: list[str] = []
    quoted, row_start = False, True
    line = start = 1
    source = text.removeprefix("\ufeff")
    index = 0
    while index < len(source):
        char = source[index]
        after = source[index + 1] if index + 1 < len(source) else ""
        index += 1
        if quoted:
            if char == '"' and after == '"':
                cell.append('"')
                index += 1
            elif char == '"':
                quoted = False
            else:
                line += char == "\n" or (char == "\r" and after != "\n")
                cell.append(char)
            continue
        if char == '"' and not cell:
            quoted, row_start = True, False
        elif char == ",":
            row.append("".join(cell))
            cell, row_start = [], False
        elif char in "\r\n":
            index += char == "\r" and after == "\n"
            row.append("".join(cell))
            if not row_start or any(row):
                found.append((row, start))
            row, cell, row_start = [], [], True
            line += 1
            start = line
        else:
            cell.append(char)
            row_start = False
    if quoted:
        raise SourceProblem("a quoted cell is never closed (AgentV refuses the file: "
                            "\"unterminated quoted cell\"): close its quote",
                            path, start)  # fmt: skip
    if not row_start or cell or row:
        row.append("".join(cell))
        found.append((row, start))
    return found


def tests_from_csv(text: str, path: Path) -> list[tuple[Any, int | None]]:
    """parseCsvCases: each row after the header as a test, with its line."""
    table = rows(text, path)
    if not table:
        return []
    headers = [h.strip() for h in table[0][0]]
    out: list[tuple[Any, int | None]] = []
    for number, (cells, line) in enumerate(table[1:], start=1):
        record: dict[str, str] = {}
        for column, header in enumerate(headers):
            if header:
                record[header] = cells[column] if column < len(cells) else ""
        out.append((_row_test(record, number, path, line), line))
    return out


def _row_test(record: dict[str, str], number: int, path: Path, line: int) -> dict[str, Any]:
    variables: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    asserts: list[dict[str, Any]] = []
    configs: dict[int, float] = {}
    test_id = input_text = criteria = metric = None
    prefix = suffix = ""
    threshold: float | None = None

    def refuse(message: str) -> SourceProblem:
        return SourceProblem(message, path, line)

    for key, value in record.items():
        if key == "id":
            test_id = value
        elif key == "input":
            input_text = value
        elif key.startswith("__expected"):
            if value.strip():
                asserts.append(_assertion(value.strip(), key, path, refuse))
        elif key == "__prefix":
            prefix = value
        elif key == "__suffix":
            suffix = value
        elif key == "__description":
            criteria = value
        elif key == "__metric":
            metric = value
        elif key == "__threshold":
            threshold = _parse_float(value)
        else:
            _other(key, value, variables, metadata, configs, refuse)
    _named(asserts, metric, configs, metadata)
    test: dict[str, Any] = {"id": test_id if test_id and test_id.strip() else f"row-{number}"}
    if input_text is not None:
        test["input"] = f"{prefix}{input_text}{suffix}"
    parts = {"criteria": criteria or None, "assert": asserts, "threshold": threshold,
             "execution": {"threshold": threshold} if threshold is not None else None,
             "vars": variables, "metadata": metadata}  # fmt: skip
    return {**test, **{k: v for k, v in parts.items() if v not in (None, [], {})}}


def _named(
    asserts: list[dict[str, Any]], metric: str | None, configs: dict[int, float],
    metadata: dict[str, Any],
) -> None:  # fmt: skip
    """`__metric` as each assertion's metric and name (`METRIC-N` when there are several),
    a `__config` threshold as its min_score (and the row's metadata.threshold)."""
    for index, entry in enumerate(asserts):
        if metric:
            entry["metric"] = metric
            entry["name"] = metric if len(asserts) == 1 else f"{metric}-{index + 1}"
        if index in configs:
            entry["min_score"] = configs[index]
            metadata["threshold"] = configs[index]


def _other(
    key: str, value: str, variables: dict[str, Any], metadata: dict[str, Any],
    configs: dict[int, float], refuse: Any,
) -> None:  # fmt: skip
    """A column other than the test's own fields: refused, metadata, a config or a var."""
    if key in ("__provider_output", "__providerOutput"):
        raise refuse(f"AgentV refuses the column {key} (removed from its CSV tests): give "
                     "fixed answers through a target of their own (a cli or replay "
                     "provider)")  # fmt: skip
    if key.startswith("__metadata:"):
        _metadata(metadata, key[len("__metadata:") :], value)
    elif key.startswith("__config:"):
        index, number_value = _config(key, value, refuse)
        configs[index] = number_value
    elif key:
        _set_var(variables, key, value)


def _parse_float(value: str) -> float | None:
    """Number.parseFloat, None where it gives NaN (AgentV then ignores the cell)."""
    match = _FLOAT.match(value)
    return float(match.group(0)) if match else None


def _script(cell: str, column: str, refuse: Any) -> str:
    """A python: cell's script; an option (`-c CODE`) would make the cell's text Python code,
    and a cell is data."""
    script = cell[7:].strip()
    if not script or script.startswith("-"):
        raise refuse(f"{column} '{cell[:40]}': a python: cell names a script file of the "
                     "project (python:graders/check.py), not python's options")  # fmt: skip
    return script


def _assertion(cell: str, column: str, path: Path, refuse: Any) -> dict[str, Any]:
    """parseAssertionFromString, refusing what AgentV refuses or cannot run."""
    if cell.startswith(("grade:", "llm-rubric:")):
        raise refuse(f"{column} '{cell[:40]}': AgentV makes a grade:/llm-rubric: cell an "
                     "'llm-grader' assertion, which it refuses (\"Unsupported grader "
                     "'llm-grader'\") and skips the row: put the rubric in the row's "
                     "__description column (its criteria, graded as a rubric when the row "
                     "has no other assertion), or write the test in a YAML or JSONL test file "
                     "with {type: llm-rubric, value: ...}")  # fmt: skip
    if cell.startswith(_FUNCTIONS):
        raise refuse(f"{column} '{cell[:40]}': AgentV makes a javascript:/fn:/eval: cell an "
                     "'inline-assert' with no function to run, which fails the test with an "
                     "error: write the test in a YAML or JSONL test file with {type: "
                     "javascript, value: ...}")  # fmt: skip
    if cell.startswith("python:"):
        return {"type": "script", "command": ["uv", "run", "python", _script(cell, column, refuse)]}
    if cell.startswith("file://"):
        script = cell[7:].strip()
        if not script.endswith(".py"):
            raise refuse(f"{column} '{cell[:60]}': AgentV reads only file://*.py script "
                         "graders in a CSV cell")  # fmt: skip
        return {"type": "script", "command": ["uv", "run", "python",
                                              str((path.parent / script).resolve())]}  # fmt: skip
    match = _CELL.match(cell)
    if match is None:
        return {"type": "equals", "value": cell}
    raw_type, limit_text, raw_value = match.groups()
    negate = raw_type.startswith("not-")
    kind = raw_type[4:] if negate else raw_type
    value = raw_value.strip() if raw_value is not None else None
    limit = float(limit_text) if limit_text else (0.75 if kind == "starts-with" else None)
    if kind not in _TYPES:
        if raw_value is not None or limit_text is not None:
            raise refuse(f"{column} '{cell[:40]}': AgentV's CSV tests have no assertion "
                         f"'{kind}' (it refuses the file); they take "
                         f"{', '.join(_TYPES)}")  # fmt: skip
        return {"type": "equals", "value": cell}
    if kind in ("latency", "cost") and limit is None:
        raise refuse(f"{column} '{cell[:40]}': a {kind} cell needs its limit, e.g. "
                     f"{kind}(1) (AgentV refuses the file without it)")  # fmt: skip
    if kind == "cost":
        # AgentV's cost grader (graders/cost.ts: `budget` in USD, 0 without cost data) is
        # not one accord runs; promptfoo's cost (a `threshold`) differs where cost is unknown
        raise refuse(f"{column} '{cell[:40]}': AgentV's cost grader (a budget in USD) is not "
                     "supported by accord: remove the cell (docs/agentv.md)")  # fmt: skip
    entry: dict[str, Any] = {"type": kind}
    if negate:
        entry["negate"] = True
    if kind in _LISTS:
        entry["value"] = [part.strip() for part in value.split(",")] if value else []
    elif value is not None:
        entry["value"] = value
    if limit is not None:
        entry[{"latency": "threshold", "cost": "budget"}.get(kind, "min_score")] = limit
    return entry


def _metadata(metadata: dict[str, Any], key: str, value: str) -> None:
    """parseMetadataValue: `KEY[]` a list split on unescaped commas, an empty cell none."""
    if not value.strip():
        return
    if key.endswith("[]"):
        parts = [p.strip().replace("\\,", ",") for p in re.split(r"(?<!\\),", value)]
        metadata[key[:-2]] = [p for p in parts if p]
    else:
        metadata[key] = value


def _config(key: str, value: str, refuse: Any) -> tuple[int, float]:
    """`__config:__expectedN:threshold`: the N-th assertion's min_score (N 1 when absent)."""
    parts = key[len("__config:") :].split(":")
    expected, setting = parts[0], parts[1] if len(parts) > 1 else None
    if setting != "threshold":
        raise refuse(f"column '{key}': AgentV's __config columns set only 'threshold' "
                     "(__config:__expectedN:threshold)")  # fmt: skip
    index = 0 if expected == "__expected" else (
        int(expected[len("__expected") :]) - 1 if re.fullmatch(r"__expected\d+", expected)
        else -1)  # fmt: skip
    if index < 0:
        raise refuse(f"column '{key}': '{expected}' names no __expected column "
                     "(__expected, __expected1, __expected2, ...)")  # fmt: skip
    number = _parse_float(value)
    if number is None:
        raise refuse(f"column '{key}': '{value}' is no number (AgentV refuses the file)")
    return index, number


def _set_var(variables: dict[str, Any], key: str, value: str) -> None:
    """assignCsvVar: `vars.a.b` nests, any other column is a var of its own name."""
    path = [s.strip() for s in key[len("vars.") :].split(".")] if key.startswith("vars.") else []
    path = [s for s in path if s]
    if not path:
        variables[key] = value
        return
    current = variables
    for segment in path[:-1]:
        if not isinstance(current.get(segment), dict):
            current[segment] = {}
        current = current[segment]
    current[path[-1]] = value

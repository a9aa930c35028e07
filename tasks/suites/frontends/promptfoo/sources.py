"""What a promptfoo config reads from files: prompts (inline, `file://` text, JSON or YAML),
tests (`file://` CSV, JSON, JSONL, YAML), and vars that name files.

Semantics from promptfoo 0.118 (`src/prompts/processors/*.ts`, `src/csv.ts`,
`src/util/testCaseReader.ts`, `src/evaluatorHelpers.ts`): a text file holds one prompt per
block between lines of `---`, labelled `FILE: PROMPT`; a JSON file is one prompt (a chat
when it is a list of messages); a CSV row is a test whose columns are vars, except the
`__expected*`, `__description`, `__prefix`, `__suffix`, `__metric`, `__threshold` and
`__metadata:KEY` columns. Every file named stays inside the project.
"""

from __future__ import annotations

import csv
import glob
import io
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .....engine import budget
from .....engine.paths import PathError, inside, is_private
from .....engine.yamlmarks import load_core, read_text

PROMPT_DELIMITER = "---"
# promptfoo's prompt file kinds (prompts/constants.ts VALID_FILE_EXTENSIONS); .txt splits
# on `---` lines, .md and .j2 are one prompt each
PROMPT_SUFFIXES = (".cjs", ".cts", ".j2", ".js", ".json", ".jsonl", ".md", ".mjs", ".mts",
                   ".py", ".ts", ".txt", ".yml", ".yaml")  # fmt: skip
# promptfoo's assertion types (types/index.ts BaseAssertionTypesSchema), for `__expected`
ASSERTION_TYPES = (
    "answer-relevance", "bleu", "classifier", "contains", "contains-all", "contains-any",
    "contains-html", "contains-json", "contains-sql", "contains-xml", "context-faithfulness",
    "context-recall", "context-relevance", "conversation-relevance", "cost", "equals",
    "factuality", "finish-reason", "g-eval", "gleu", "guardrails", "icontains", "icontains-all",
    "icontains-any", "is-html", "is-json", "is-refusal", "is-sql", "is-valid-function-call",
    "is-valid-openai-function-call", "is-valid-openai-tools-call", "is-xml", "javascript",
    "latency", "levenshtein", "llm-rubric", "pi", "meteor", "model-graded-closedqa",
    "model-graded-factuality", "moderation", "perplexity", "perplexity-score", "python",
    "regex", "rouge-n", "similar", "starts-with", "trace-error-spans", "trace-span-count",
    "trace-span-duration", "webhook", "select-best", "human", "max-score", "assert-set",
)  # fmt: skip
_EXPECTED = re.compile(
    rf"^(not-)?({'|'.join(re.escape(t) for t in ASSERTION_TYPES)})(?:\((\d+(?:\.\d+)?)\))?"
    r"(?::([\s\S]*))?$"
)
_THRESHOLD_TYPES = {
    "answer-relevance", "classifier", "context-faithfulness", "context-recall",
    "context-relevance", "cost", "latency", "levenshtein", "perplexity-score", "perplexity",
    "rouge-n", "similar", "starts-with",
}  # fmt: skip


class SourceProblem(ValueError):
    """A file a config names that cannot be read as promptfoo reads it."""

    def __init__(self, message: str, file: Path | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line


@dataclass(frozen=True)
class Prompt:
    """One prompt: its raw template, its label, and whether it was given an id or label
    (promptfoo's prompt id hashes the label then, else the raw text)."""

    raw: str
    label: str
    named: bool = False


def project_file(base: Path, root: Path, relative: str, what: str) -> Path:
    """`base / relative`, refused outside the project root; a missing file is a problem."""
    try:
        path = inside(root, (base / relative).resolve().relative_to(root.resolve()), what)
    except ValueError:
        raise SourceProblem(
            f"{what} '{relative}' is outside the project root {root}: keep the files a "
            "config names inside its project"
        ) from None
    except PathError as exc:
        raise SourceProblem(exc.message) from None
    return path


def expand(base: Path, root: Path, pattern: str, what: str) -> list[tuple[Path, str]]:
    """The files a `file://` path or glob names, each with the path as promptfoo shows it."""
    if any(c in pattern for c in "*?["):
        # a match that is a .env file or under .accord/ is left out (engine/paths.py)
        found = [f for f in sorted(glob.glob(str(base / pattern), recursive=True))
                 if not is_private(root, Path(f))]  # fmt: skip
        if not found:
            raise SourceProblem(f"{what} '{pattern}' matches no file")
        return [
            # relpath, not relative_to: an absolute pattern's files are named from `base`
            # too (then refused by project_file as outside the project, not a crash)
            (project_file(base, root, os.path.relpath(f, base), what), _shown(base, f))
            for f in found
        ]
    path = project_file(base, root, pattern, what)
    if not path.is_file():
        raise SourceProblem(f"{what} '{pattern}' not found (relative to {base})")
    return [(path, _shown(base, str(base / pattern)))]


def _shown(base: Path, path: str) -> str:
    """The path joined to the config's folder as it was named (`-c dir/promptfooconfig.yaml`
    shows `dir/prompts/a.txt`), as promptfoo's labels show it."""
    try:
        relative = os.path.relpath(path, base)
    except ValueError:
        return path
    return os.path.normpath(os.path.join(str(base), relative))


def maybe_file_path(text: str) -> bool:
    """promptfoo's `maybeFilePath`: a prompt string it reads as a path (a `/`, a `*`, a
    suffix of two or three letters, a prompt file suffix), unless it has a line break."""
    if "\n" in text:
        return False
    last = text.split(":")
    return (
        any(part.endswith(PROMPT_SUFFIXES) for part in last[-2:])
        or text[-3:-2] == "."
        or text[-4:-3] == "."
        or any(c in text for c in "*/\\")
    )


def prompts_from_file(path: Path, shown: str, label: str | None) -> list[Prompt]:
    """The prompts of one file, as promptfoo's processors read it."""
    text = read_text(path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        try:
            raw = json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
        except ValueError:
            raw = text
        return [Prompt(raw, label or f"{shown}: {raw}", named=True)]
    if suffix in (".yaml", ".yml"):
        try:
            raw = json.dumps(load_core(text), separators=(",", ":"), ensure_ascii=False)
        except yaml.YAMLError:
            raw = text
        return [Prompt(raw, label or f"{shown}: {raw[:80]}", named=True)]
    if suffix in (".md", ".j2"):
        return [Prompt(text, label or f"{shown}: {text[:50]}...", named=True)]
    if suffix == ".csv":
        return _csv_prompts(text, label)
    if suffix == ".jsonl":
        lines = [line for line in re.split(r"\r?\n", text) if line]
        if len(lines) == 1:
            return [Prompt(lines[0], label or shown, named=True)]
        return [Prompt(line, f"{label or shown}: {line}", named=True) for line in lines]
    if suffix != ".txt":
        raise SourceProblem(
            f"prompt file '{shown}': accord reads .txt, .md, .j2, .json, .jsonl, .csv and .yaml "
            "prompt files, "
            f"not '{suffix or 'no suffix'}' (promptfoo skips a file of no kind it knows; "
            "JavaScript and Python prompt functions are not supported)"
        )
    prompts: list[Prompt] = []
    block: list[str] = []
    for line in [*text.splitlines(), PROMPT_DELIMITER]:
        if line.strip() != PROMPT_DELIMITER:
            block.append(line)
            continue
        raw = "\n".join(block).strip()
        block = []
        if raw:
            shown_label = f"{label}: {shown}: {raw}" if label else f"{shown}: {raw}"
            prompts.append(Prompt(raw, shown_label, named=True))
    return prompts


def _csv_prompts(text: str, label: str | None) -> list[Prompt]:
    """A CSV prompt file as promptfoo's `processCsvPrompts` reads it: a `prompt` column (and
    an optional `label` one), or, without a comma, one prompt a line under an optional
    `prompt` header."""
    if "," not in text:
        lines = [line for line in re.split(r"\r?\n", text) if line.strip()]
        start = 1 if lines and lines[0].strip().lower() == "prompt" else 0
        return [
            Prompt(line, label or f"Prompt {i} - {line}", named=True)
            for i, line in enumerate(lines[start:], 1)
        ]
    rows = csv.DictReader(io.StringIO(text.removeprefix("\ufeff")), skipinitialspace=True)
    prompts: list[Prompt] = []
    for row in rows:
        cells = {(k or "").strip(): (v or "").strip() for k, v in row.items() if isinstance(v, str)}
        if cells.get("prompt"):
            shown = cells.get("label") or label or f"Prompt {len(prompts) + 1} - {cells['prompt']}"
            prompts.append(Prompt(cells["prompt"], shown, named=True))
    return prompts


def assertion_from_string(expected: str) -> dict[str, Any]:
    """A CSV `__expected` cell as promptfoo's `assertionFromString` reads it."""
    for prefix in ("javascript:", "fn:", "eval:"):
        if expected.startswith(prefix):
            return {"type": "javascript", "value": expected[len(prefix) :].strip()}
    for prefix in ("grade:", "llm-rubric:"):
        if expected.startswith(prefix):
            return {"type": "llm-rubric", "value": expected[len(prefix) :]}
    if expected.startswith("python:"):
        return {"type": "python", "value": expected[len("python:") :].strip()}
    if expected.startswith("file://") and (expected.endswith(".py") or ".py:" in expected):
        return {"type": "python", "value": expected[len("file://") :].strip()}
    match = _EXPECTED.match(expected)
    if match is None:
        return {"type": "equals", "value": expected}
    negated, kind, threshold, value = match.groups()
    full = f"not-{kind}" if negated else kind
    if kind in ("contains-all", "contains-any", "icontains-all", "icontains-any"):
        return {"type": full, "value": [v.strip() for v in value.split(",")] if value else value}
    if kind in ("contains-json", "is-json"):
        return {"type": full, "value": value}
    stripped = value.strip() if isinstance(value, str) else value
    if kind in _THRESHOLD_TYPES:
        default = 0.8 if kind == "similar" else 0.75
        return {"type": full, "value": stripped,
                "threshold": float(threshold) if threshold else default}  # fmt: skip
    entry: dict[str, Any] = {"type": full}
    if stripped is not None:
        entry["value"] = stripped
    return entry


def _metadata_cell(metadata: dict[str, Any], name: str, value: str) -> None:
    """A `__metadata:KEY` cell; `KEY[]` splits on commas (`\\,` keeps one)."""
    if name.endswith("[]") and value.strip():
        parts = re.split(r"(?<!\\),", value)
        metadata[name[:-2]] = [p.strip().replace("\\,", ",") for p in parts]
    elif value.strip():
        metadata[name] = value


def _threshold_cell(value: str) -> dict[str, float]:
    """A `__threshold` cell as the test's `threshold`; an empty one is none (promptfoo's
    parseFloat('') is NaN, which it passes over as it does an absent threshold)."""
    if not value.strip():
        return {}
    try:
        return {"threshold": float(value)}
    except ValueError:
        raise SourceProblem(f"__threshold '{value}' is not a number") from None


def test_from_csv_row(row: dict[str, str]) -> dict[str, Any]:
    """A CSV row as a test (promptfoo's `testCaseFromCsvRow`)."""
    variables: dict[str, Any] = {}
    asserts: list[dict[str, Any]] = []
    options: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    test: dict[str, Any] = {}
    metric: str | None = None
    for raw_key, value in row.items():
        key = raw_key.strip()
        if key.startswith("__expected"):
            if value.strip():
                asserts.append(assertion_from_string(value.strip()))
        elif key in ("__prefix", "__suffix"):
            options[key[2:]] = value
        elif key == "__description":
            test["description"] = value
        elif key == "__metric":
            metric = value
        elif key == "__threshold":
            test.update(_threshold_cell(value))
        elif key.startswith("__metadata:"):
            _metadata_cell(metadata, key[len("__metadata:") :], value)
        elif key == "__providerOutput":
            raise SourceProblem("the __providerOutput column is not supported by accord")
        elif key != "__metadata":
            variables[key] = value
    if metric is not None:  # else promptfoo sets it undefined, which JSON leaves out
        asserts = [{**entry, "metric": metric} for entry in asserts]
    test.update(vars=variables, assert_=asserts, options=options)
    if metadata:
        test["metadata"] = metadata
    test["assert"] = test.pop("assert_")
    if not test.get("threshold"):
        test.pop("threshold", None)
    return test


def tests_from_file(path: Path, shown: str) -> list[tuple[dict[str, Any], int | None]]:
    """The tests of one file, each with its line where the format has lines."""
    text = read_text(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
        out: list[tuple[dict[str, Any], int | None]] = []
        for row in reader:
            if None in row:
                raise SourceProblem("a row has more cells than the header", path, reader.line_num)
            out.append((test_from_csv_row(row), reader.line_num))
        return out
    if suffix == ".jsonl":
        out = []  # one list for both formats
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    out.append((json.loads(line), number))
                except ValueError as exc:
                    raise SourceProblem(f"invalid JSON: {exc}", path, number) from None
        return out
    if suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SourceProblem(f"invalid JSON: {exc}", path) from None
    elif suffix in (".yaml", ".yml"):
        try:
            data = load_core(text)
        except yaml.YAMLError as exc:
            raise SourceProblem(f"invalid YAML: {exc}", path) from None
    else:
        raise SourceProblem(
            f"test file '{shown}': accord reads tests from CSV, JSON, JSONL and YAML files, "
            f"not '{suffix}' (test generators in JavaScript or Python are not supported)",
            path,
        )
    items = data if isinstance(data, list) else [data]
    return [(t, None) for t in items]


def vars_files(value: str | list[str], base: Path, root: Path) -> dict[str, Any]:
    """A test's `vars` given as a path or glob (or a list of them), as promptfoo's
    testCaseReader readTestFiles reads them: each YAML (or JSON) file a mapping of vars, later
    files overriding earlier ones. promptfoo resolves the text as a plain path, so a
    `file://` prefix finds no file there (the test runs with no vars): refused, saying so."""
    out: dict[str, Any] = {}
    for pattern in [value] if isinstance(value, str) else value:
        if pattern.startswith("file://"):
            raise SourceProblem(
                f"vars '{pattern}': promptfoo reads a vars file by its plain path and finds "
                f"none named '{pattern}' (it runs the test with no vars): write "
                f"'{pattern[len('file://') :]}'"
            )
        for path, shown in expand(base, root, pattern, "vars file"):
            try:
                data = load_core(read_text(path))
            except yaml.YAMLError as exc:
                raise SourceProblem(f"vars file '{shown}': invalid YAML: {exc}", path) from None
            if data is None:
                continue
            if not isinstance(data, dict):
                raise SourceProblem(f"vars file '{shown}' holds a mapping of vars", path)
            out.update(data)
    return out


def var_value(value: str, base: Path, root: Path) -> list[str]:
    """A `file://` var's values: each matching file's text (trimmed); YAML as JSON."""
    values = []
    for path, shown in expand(base, root, value[len("file://") :], "var file"):
        suffix = path.suffix.lower()
        if suffix in (".js", ".cjs", ".mjs", ".ts", ".py"):
            raise SourceProblem(
                f"var file '{shown}': vars computed by JavaScript or Python are not supported"
            )
        text = read_text(path)
        if suffix in (".yaml", ".yml"):
            text = json.dumps(load_core(text), separators=(",", ":"), ensure_ascii=False)
        values.append(text.strip())
    return values


def var_combinations(
    variables: dict[str, Any], base: Path, root: Path, already: int = 0, each: int = 1
) -> list[dict[str, Any]]:
    """promptfoo's `generateVarCombinations`: a list of strings (or a `file://` glob) gives
    one test per value, the product over vars; any other list stays one value.

    The product's size is checked before it is built (engine/budget.py): with the `already`
    tests made before, each combination making `each` (prompt x provider), it stays within
    `MAX_CASES`, else `ExpansionError` names the vars and their sizes."""
    lists: list[tuple[str, list[Any]]] = []
    for key, value in variables.items():
        if isinstance(value, str) and value.startswith("file://"):
            values: list[Any] = var_value(value, base, root)
        elif isinstance(value, list) and value and isinstance(value[0], str):
            values = list(value)
        else:
            values = [value]
        lists.append((key, values))
    factors = [(f"values of '{key}'", len(values)) for key, values in lists if len(values) != 1]
    if each > 1:
        factors.append(("prompt x provider pairs", each))
    budget.check_product(factors, "this test's vars", already=already,
                         advice="give fewer values, or split the test")  # fmt: skip
    combos: list[dict[str, Any]] = [{}]
    for key, values in lists:
        combos = [{**combo, key: v} for combo in combos for v in values]
    return combos

"""Parts of an AgentV 4 eval file kept in files of their own, read as AgentV reads them.

- `default_test: file://PATH`: yaml-parser.ts loadDefaultTestFile. The path is looked for
  from the eval file's folder up to the project root (AgentV's buildSearchRoots walks up to
  its repository root); the file is a mapping, without `description`, and with `assert`
  (never `assertions`). Its problems are reported at the file's own lines.
- a prompt written `{file: PATH}` or `{prompt: TEXT}` (yaml-parser.ts parsePromptDefinition):
  the file's text (CRLF made LF, as readPromptFile reads it; a JSON chat array in it is
  sent as those messages, as shorthand-expansion.ts expandInputShorthand parses one) or
  the text, labelled by `label`, else (a file) by its path as written.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from accord.engine.errors import LoadError, ValidationError
from accord.engine.paths import PathError
from accord.engine.yamlmarks import Loc

if TYPE_CHECKING:
    from accord.tasks.suites.promptfoo.config import _Loader


def search_roots(loader: _Loader) -> list[Path]:
    """The eval file's folder and each one above it up to the project root
    (file-resolver.ts buildSearchRoots, bounded by the project as every path accord reads)."""
    roots, here = [], loader.path.parent.resolve()
    root = loader.root.resolve()
    while True:
        roots.append(here)
        if here == root or here.parent == here or not here.is_relative_to(root):
            break
        here = here.parent
    return roots


def resolve(loader: _Loader, reference: str, what: str, loc: Loc) -> Path | None:
    """The file a `file://` reference names (the first search root that holds it), or None
    with the problem reported at `what`'s place."""
    from accord.tasks.suites.promptfoo.agentv4 import _within

    relative = reference.strip().removeprefix("file://").lstrip("/\\")
    for base in search_roots(loader):
        candidate = base / relative
        if candidate.is_file():
            try:
                return _within(loader, candidate, what)
            except PathError as exc:
                loader.issue(loc, exc.message)
                return None
    looked = ", ".join(str(r) for r in search_roots(loader))
    loader.issue(loc, f"{what} file not found: {relative} (looked in {looked})")
    return None


def default_test(loader: _Loader, reference: str) -> dict[str, Any] | None:
    """The mapping a `default_test: file://PATH` names; None when it cannot be read (the
    problem reported)."""
    from accord.engine.yamlmarks import parse_yaml, read_text

    text = reference.strip()
    if text.startswith("ref://"):
        loader.issue(("default_test",), "default_test 'ref://NAME' names an entry of "
                     "AgentV's config.yaml refs, which accord does not read: write "
                     "'file://PATH'")  # fmt: skip
        return None
    if not text.startswith("file://"):
        loader.issue(("default_test",), f"default_test '{reference}' is neither a mapping nor "
                     "'file://PATH' (AgentV's loadDefaultTestFile)")  # fmt: skip
        return None
    path = resolve(loader, text, "default_test", ("default_test",))
    if path is None:
        return None
    try:
        data, marks = parse_yaml(read_text(path), path, core=True)
    except ValidationError as exc:
        loader.issues.extend(exc.issues)
        return None
    except LoadError as exc:
        loader.issue(("default_test",), str(exc))
        return None
    if not isinstance(data, dict):
        loader.issue(("default_test",), f"default_test file must contain a YAML mapping: {path}")
        return None
    for key, message in (
        ("description", "a default_test file must not define description"),
        ("assertions", "a default_test file uses 'assert', not 'assertions'"),
    ):
        if key in data:
            loader.issue((key,), message, file=path, line=marks.find((key,), key=True)[0])
            return None
    return data


def prompts(loader: _Loader, value: Any) -> Any:
    """The file's `prompts` with each `{file: PATH}` and `{prompt: TEXT}` entry made the
    `{raw, label}` the promptfoo loader reads; other entries as they are."""
    entries = value if isinstance(value, list) else [value]
    out: list[Any] = []
    for index, entry in enumerate(entries):
        loc = ("prompts", index) if isinstance(value, list) else ("prompts",)
        if not isinstance(entry, dict) or not ({"file", "prompt"} & entry.keys()):
            out.append(entry)
            continue
        label = entry.get("label")
        extra = sorted(set(entry) - {"id", "label", "file", "prompt"})
        for key in extra:
            loader.issue((*loc, key), f"'{key}' beside '{'file' if 'file' in entry else 'prompt'}'"
                         " in a prompt is not supported by accord: remove it")  # fmt: skip
        if "file" in entry:
            reference = entry["file"]
            if not isinstance(reference, str) or not reference.strip():
                loader.issue((*loc, "file"), "a prompt's 'file' is a path")
                continue
            path = resolve(loader, reference, "prompt", (*loc, "file"))
            if path is None:
                continue
            text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
            shown = reference.removeprefix("file://").lstrip("/\\")
            out.append({"raw": text, "label": label if label else shown})
        else:
            text = entry["prompt"]
            if not isinstance(text, str):
                loader.issue((*loc, "prompt"), "a prompt's 'prompt' is text here (accord does "
                             "not read a chat message list in it: write it in a file)")  # fmt: skip
                continue
            out.append({"raw": text, **({"label": label} if label else {})})
    return out if isinstance(value, list) else out[0] if out else value


def defaults(loader: _Loader, value: Any) -> None:
    """A file's `defaults`: AgentV reads its `provider` and `grader` only (yaml-parser.ts
    extractSuiteDefaults), and nothing else in it changes a run; those two pick catalog
    labels accord does not choose that way, so they are refused; `target` AgentV refuses."""
    if value is None:
        return
    if not isinstance(value, dict):
        loader.issue(("defaults",), "'defaults' is a mapping (AgentV's extractSuiteDefaults)")
        return
    if "target" in value:
        loader.issue(("defaults", "target"), "defaults.target has been removed by AgentV: use "
                     "'providers'", key=True)  # fmt: skip
    if "provider" in value:
        loader.issue(("defaults", "provider"), "defaults.provider (the provider of a file "
                     "without 'providers') is not supported by accord: list it in 'providers'",
                     key=True)  # fmt: skip
    if "grader" in value:
        loader.issue(("defaults", "grader"), "defaults.grader (the grader's catalog label) is "
                     "not supported by accord: set defaults.judge_model in config.yml",
                     key=True)  # fmt: skip

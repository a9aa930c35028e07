"""Parts of an AgentV 4 eval file kept in files of their own, read as AgentV reads them.

- `default_test: file://PATH`: yaml-parser.ts loadDefaultTestFile. The path is looked for
  from the eval file's folder up to the project root (AgentV's buildSearchRoots walks up to
  its repository root); the file is a mapping, without `description`, and with `assert`
  (never `assertions`). Its problems are reported at the file's own lines.
- a prompt written `{file: PATH}` or `{prompt: TEXT}` (yaml-parser.ts parsePromptDefinition):
  the file's text (CRLF made LF, as readPromptFile reads it; a JSON chat array in it is
  sent as those messages, as shorthand-expansion.ts expandInputShorthand parses one) or
  the text, labelled by `label`, else (a file) by its path as written.
- a file content part of a prompt's message (`{type: file, value: PATH}`): the file's text,
  found as a default_test file is (message-processor.ts, file-resolver.ts; an absolute path
  inside the project as it is), sent to the model and quoted to the judge as AgentV's
  prompt-builder.ts and segment-formatter.ts write it in 'lm' mode (`<file path="PATH">`).
  A missing file is left out of the message with a warning naming the eval file, the
  part's line and the paths tried, as AgentV warns and leaves it out; a path leaving the
  project is refused at the part's line.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ......engine.errors import LoadError, ValidationError
from ......engine.paths import PathError, inside
from ......engine.yamlmarks import Loc
from .interpolation import WHOLE_VAR
from .state import state

if TYPE_CHECKING:
    from ...promptfoo.form import _Loader, _Test


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
    relative = reference.strip().removeprefix("file://").lstrip("/\\")
    for base in search_roots(loader):
        candidate = base / relative
        if candidate.is_file():
            try:
                return within(loader, candidate, what)
            except PathError as exc:
                loader.issue(loc, exc.message)
                return None
    looked = ", ".join(str(r) for r in search_roots(loader))
    loader.issue(loc, f"{what} file not found: {relative} (looked in {looked})")
    return None


def default_test(loader: _Loader, reference: str) -> dict[str, Any] | None:
    """The mapping a `default_test: file://PATH` names; None when it cannot be read (the
    problem reported)."""
    from ......engine.yamlmarks import parse_yaml, read_text

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
    state(loader).prompt_ids = []
    for index, entry in enumerate(entries):
        loc = ("prompts", index) if isinstance(value, list) else ("prompts",)
        if isinstance(entry, str) and entry.startswith("file://"):
            # AgentV reads the whole file as one prompt (readPromptFile), labelled and
            # identified by its path as written
            entry = {"file": entry}
        if not isinstance(entry, dict) or not ({"file", "prompt"} & entry.keys()):
            out.append(entry)
            state(loader).prompt_ids.append(_prompt_identity(entry))
            continue
        label = entry.get("label")
        given = entry.get("id")
        explicit = given.strip() if isinstance(given, str) else None
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
            state(loader).prompt_ids.append(explicit or shown)
        else:
            text = entry["prompt"]
            if not isinstance(text, str):
                loader.issue((*loc, "prompt"), "a prompt's 'prompt' is text here (accord does "
                             "not read a chat message list in it: write it in a file)")  # fmt: skip
                continue
            out.append({"raw": text, **({"label": label} if label else {})})
            state(loader).prompt_ids.append(explicit or f"string-{_digest(text)}")
    return out if isinstance(value, list) else out[0] if out else value


def _digest(value: Any) -> str:
    """yaml-parser.ts stablePromptId: the sha256 of the value's JSON, its first 12 digits
    (JSON as JavaScript's JSON.stringify writes it: no spaces, non-ASCII as it is)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _prompt_identity(entry: Any) -> str:
    """The id AgentV gives a prompt written as text or as `{raw}` (yaml-parser.ts
    parsePromptDefinition): `prompt-HASH` for text, its own `id`, else `string-HASH` of
    the raw text; other forms the loader refuses."""
    if isinstance(entry, str):
        return f"prompt-{_digest(entry)}"
    if isinstance(entry, dict):
        explicit = entry.get("id")
        if isinstance(explicit, str) and explicit.strip() and entry.get("raw") is not None:
            return explicit.strip()
        if isinstance(entry.get("raw"), str):
            return f"string-{_digest(entry['raw'])}"
        if isinstance(explicit, str) and explicit.strip():
            return explicit.strip()
    return f"prompt-{_digest(entry)}"


# yaml-parser.ts safePromptId: each run of other characters one '-', none at either end,
# at most 48 characters (an id left empty is its hash)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def case_id(test_id: str, prompt_id: str) -> str:
    """A test's id under one of several prompts (yaml-parser.ts expandPromptMatrix):
    `ID__prompt_PROMPTID`, the prompt's id made safe."""
    safe = _UNSAFE.sub("-", prompt_id.strip()).strip("-")
    return f"{test_id}__prompt_{safe[:48] if safe else _digest(prompt_id)}"


def defaults(loader: _Loader, value: Any) -> None:
    """A file's `defaults`: AgentV reads its `provider` and `grader` only (yaml-parser.ts
    extractSuiteDefaults), and nothing else in it changes a run; `target` AgentV refuses.
    `grader` is the label of the catalog's provider that judges (run-eval.ts: the file's
    `defaults.grader` over .agentv/config.yaml's, --grader-provider over both): here the
    judge, the catalog entry as a model (`--judge-model` still wins). `provider` is
    refused."""
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
    label = value.get("grader")
    if label is None:
        return
    if not isinstance(label, str) or not label.strip():
        loader.issue(("defaults", "grader"), "defaults.grader is the label of a provider of "
                     ".agentv/providers.yaml")  # fmt: skip
        return
    state(loader).judge = _grader(loader, label.strip())


def _grader(loader: _Loader, label: str) -> Any:
    """The model a `defaults.grader` label names in the catalog, or None (reported)."""
    from ...promptfoo.providers import ProviderProblem, build_target
    from . import catalog as agentv_catalog

    loc: Loc = ("defaults", "grader")
    found: dict[str, Any] | None = {"id": label}
    if not agentv_catalog.RUNNABLE.match(label):
        found = agentv_catalog._catalog_entry(loader, label, loc)
    if found is None:
        return None  # the catalog's problem is reported
    name = f"promptfoo:{label} (grader)"
    try:
        _target, model = build_target(found, loader.base, loader.root, name, env=loader.env,
                                      file=loader.path,
                                      special=agentv_catalog.special_target)  # fmt: skip
    except ProviderProblem as exc:
        loader.issue(loc, f"defaults.grader '{label}': {exc.message}", file=exc.file,
                     line=exc.line)  # fmt: skip
        return None
    if model is None:
        loader.issue(loc, f"defaults.grader '{label}' is not a model (a grader asks a model "
                     "its judge prompt): name a model provider of the catalog")  # fmt: skip
    return model


def inline_files(
    loader: _Loader, item: _Test, raw: str, variables: dict[str, Any]
) -> dict[str, Any]:
    """The vars with each file content part of the prompt's messages (`{type: file, value:
    PATH}`, the prompt being one var of messages) given the file's `path` as AgentV shows it
    and its `text` (message-processor.ts processMessages: the path with its leading
    separators trimmed, looked for from the eval file's folder up; CRLF made LF). A
    missing file's part is left out (a warning); a path outside the project is reported
    at the part's place."""
    found = WHOLE_VAR.match(raw)
    name = found.group(1) if found else None
    messages = variables.get(name) if name else None
    if not isinstance(messages, list):
        return variables
    where: dict[str, Any] = {"file": item.file, "line": item.line} if item.file else {}
    out = []
    for index, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            out.append(message)
            continue
        parts = []
        for number, part in enumerate(content):
            value = part.get("value") if isinstance(part, dict) else None
            if isinstance(part, dict) and part.get("type") == "file" and isinstance(value, str):
                loc: Loc = (*item.loc, "vars", str(name), index, "content", number, "value")
                kept = _file_part(loader, part, value, loc, where)
                if kept is None:  # missing: AgentV drops the part with a warning
                    continue
                part = kept
            parts.append(part)
        out.append({**message, "content": parts})
    return {**variables, str(name): out}


def _file_part(
    loader: _Loader, part: dict[str, Any], value: str, loc: Loc, where: dict[str, Any]
) -> dict[str, Any] | None:
    """The part with its file's `path` and `text`; None when no file is found (AgentV's
    message-processor.ts warns "File not found" and leaves the part out), said on stderr.
    A path leaving the project (read from the eval file's folder) is refused, found or
    not."""
    shown = value.lstrip("/\\") or value
    # an absolute path as it is first, then the path under each search root
    candidates = [Path(value)] if Path(value).is_absolute() else []
    candidates += [base / shown for base in search_roots(loader)]
    for candidate in candidates:
        if candidate.is_file():
            try:
                path = within(loader, candidate, "file content part")
            except PathError as exc:
                _report(loader, loc, exc.message, where)
                return part
            text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
            return {**part, "path": shown, "text": text}
    try:  # the path as read from the eval file's folder must stay in the project
        within(loader, loader.base / shown, "file content part")
    except PathError as exc:
        _report(loader, loc, exc.message, where)
        return part
    looked = ", ".join(str(c) for c in candidates)
    line = where.get("line") or loader.marks.find(loc)[0]
    place = f"{where.get('file') or loader.path}:{line}" if line else str(loader.path)
    note = (f"{place}: file content part not found: {value} (tried {looked}); the part is "
            "left out of the message, as AgentV leaves it out")  # fmt: skip
    if note not in loader.notes:  # a test's prompt is rendered once per provider
        loader.notes.append(note)
    return None


def _report(loader: _Loader, loc: Loc, message: str, where: dict[str, Any]) -> None:
    # a test's prompt is rendered once per provider: its file named once
    before = list(loader.issues)
    loader.issue(loc, message, **where)
    if loader.issues[-1] in before:
        loader.issues.pop()


def segments(content: Any) -> list[dict[str, Any]]:
    """A message's content as AgentV's segments (input-message-utils.ts
    extractContentSegments)."""
    if isinstance(content, str):
        return [{"type": "text", "value": content}] if content.strip() else []
    if isinstance(content, dict):
        return [{"type": "text", "value": json.dumps(content, indent=2, ensure_ascii=False)}]
    if not isinstance(content, list):
        return []
    out: list[dict[str, Any]] = []
    for part in content:
        if isinstance(part, str):
            if part.strip():
                out.append({"type": "text", "value": part})
        elif isinstance(part, dict):
            out.append(part)
    return out


def format_segment(segment: dict[str, Any]) -> str | None:
    """segment-formatter.ts formatSegment in 'lm' mode: a text's value; a file's text,
    trimmed, in `<file path="PATH">` tags."""
    kind = segment.get("type")
    if kind == "text":
        value = segment.get("value", segment.get("text"))
        return value if isinstance(value, str) else None
    text, path = segment.get("text"), segment.get("path")
    if kind == "file" and isinstance(text, str) and text and isinstance(path, str) and path:
        return f'<file path="{path}">\n{text.strip()}\n</file>'
    return None


def visible(parts: list[dict[str, Any]]) -> bool:
    """hasVisibleContent: a text or a file's text that is not blank."""
    for part in parts:
        kind = part.get("type")
        value = part.get("value", part.get("text")) if kind == "text" else part.get("text")
        if kind in ("text", "file") and isinstance(value, str) and value.strip():
            return True
    return False


def role_marked(messages: list[dict[str, Any]]) -> bool:
    """prompt-builder.ts needsRoleMarkers: an assistant or tool message, or more than one
    message with visible content."""
    if any(m.get("role") in ("assistant", "tool") for m in messages):
        return True
    return sum(visible(segments(m.get("content"))) for m in messages) > 1


def joined(parts: list[dict[str, Any]], separator: str = "\n") -> str:
    return separator.join(t for t in map(format_segment, parts) if t)


def flat_question(messages: list[dict[str, Any]]) -> str:
    """buildPromptInputs' single-turn question: every segment trimmed, blank ones left out,
    joined by a blank line."""
    texts = (format_segment(s) for m in messages for s in segments(m.get("content")))
    return "\n\n".join(t.strip() for t in texts if t and t.strip())


def chat_prompt(given: list[dict[str, Any]], default_system: str) -> list[dict[str, Any]]:
    """The messages AgentV's model providers send (llm-providers.ts buildChatPrompt): with
    role markers (prompt-builder.ts buildChatPromptFromSegments), the leading system
    messages as one and each other message's segments formatted (a file as its
    `<file>`-tagged text), a later system or tool message as the assistant's; else the
    lone question trimmed. `default_system` first when the test gives no system message."""
    count = next((i for i, m in enumerate(given) if m.get("role") != "system"), len(given))
    leading = given[:count]
    system = "\n\n".join(t for m in leading if (t := joined(segments(m.get("content")))))
    if not role_marked(given):
        return [{"role": "system", "content": system.strip() or default_system},
                {"role": "user", "content": flat_question(given).strip()}]  # fmt: skip
    out = [{"role": "system", "content": system}] if system else []
    for message in given[count:]:
        role, prefix = str(message.get("role")), []
        if role in ("system", "tool"):
            role, prefix = "assistant", [f"@[{role.capitalize()}]:"]
        content = "\n".join([*prefix, *filter(None, [joined(segments(message.get("content")))])])
        if content:
            out.append({"role": role, "content": content})
    if not any(m["role"] == "system" for m in out):
        out.insert(0, {"role": "system", "content": default_system})
    return out


def within(loader: _Loader, path: Path, what: str) -> Path:
    """A path the file names, kept inside the project (as every path of a project file)."""
    absolute = path.resolve()
    try:
        relative = absolute.relative_to(loader.root.resolve())
    except ValueError:
        raise PathError(f"{what} '{path}' is outside the project root {loader.root}") from None
    return inside(loader.root, relative, what)


# providers/llm-providers.ts: what AgentV's model providers send as the system message
# when the test gives none
DEFAULT_SYSTEM = (
    "You are a careful assistant. Follow all provided instructions and do not fabricate results."
)


def model_messages(messages: list[dict[str, Any]] | None, text: str) -> list[dict[str, Any]]:
    """The messages AgentV's model providers send (llm-providers.ts buildChatPrompt, from
    prompt-builder.ts's chat prompt: agentv_files.chat_prompt)."""
    return chat_prompt(messages or [{"role": "user", "content": text}], DEFAULT_SYSTEM)

"""YAML parsing that remembers where every value came from.

`parse_yaml` returns the plain Python data and a `Marks` table from field paths
(`("tasks", 2, "sql_file")`) to 1-based line and column, so that every validation error can
name its place in the file.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import budget
from .errors import Issue, LoadError

Loc = tuple[str | int, ...]

try:  # the C parser is ten times faster; fall back to the pure-Python one where it is missing
    _Fast: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Fast = yaml.SafeLoader


def _as_text(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    return loader.construct_scalar(node)  # type: ignore[arg-type]


class _Loader(_Fast):  # type: ignore[valid-type,misc]
    """An unquoted date (`2024-01-15`) stays the text it is, as Oxy's YAML reader keeps it."""


class _SafeLoader(yaml.SafeLoader):
    """The pure-Python loader, with dates kept as text too."""


for _loader in (_Loader, _SafeLoader):
    _loader.add_constructor("tag:yaml.org,2002:timestamp", _as_text)


class _CoreLoader(_Loader):
    """YAML 1.2's core schema, as JavaScript's js-yaml reads a file: `yes`, `on`, `no`,
    `off` stay text, `010` is ten, `0o10` eight (a promptfoo config means what promptfoo
    reads)."""


class _CoreSafeLoader(_SafeLoader):
    """The pure-Python loader with YAML 1.2's core schema."""


def _core_int(loader: yaml.SafeLoader, node: yaml.Node) -> int:
    text = str(loader.construct_scalar(node))  # type: ignore[arg-type]
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if digits[:2] in ("0o", "0x"):
        return sign * int(digits[2:], 8 if digits[1] == "o" else 16)
    return sign * int(digits)


_CORE_RESOLVERS = (
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    ("tag:yaml.org,2002:float",
     r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
     r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", "-+0123456789."),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("tag:yaml.org,2002:merge", r"^(?:<<)$", "<"),  # js-yaml merges `<<: *anchor` too
)  # fmt: skip
for _loader in (_CoreLoader, _CoreSafeLoader):
    _loader.yaml_implicit_resolvers = {}
    for _tag, _pattern, _first in _CORE_RESOLVERS:
        _loader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))
    _loader.add_constructor("tag:yaml.org,2002:int", _core_int)


_COLUMN_BITS = 24
_COLUMN_MAX = (1 << _COLUMN_BITS) - 1


@dataclass
class Marks:
    """Positions of values (and of mapping keys) by field path: `put` records one, `find`
    reads one as (line, column), both 1-based. A position is kept as one int (line and
    column packed): a file of 1,000,000 cases has millions of them."""

    values: dict[Loc, int] = field(default_factory=dict)
    keys: dict[Loc, int] = field(default_factory=dict)

    def put(self, loc: Loc, line: int, column: int, *, key: bool = False) -> None:
        (self.keys if key else self.values)[loc] = line << _COLUMN_BITS | min(column, _COLUMN_MAX)

    def find(self, loc: Loc, *, key: bool = False) -> tuple[int | None, int | None]:
        """The position of `loc`, or of its nearest ancestor that has one."""
        return self._find(tuple(loc), key, 0)

    def _find(self, probe: Loc, key: bool, floor: int) -> tuple[int | None, int | None]:
        table = self.keys if key else self.values
        while True:
            at = table.get(probe)
            if at is None and key:
                at = self.values.get(probe)
            if at is not None:
                return at >> _COLUMN_BITS, at & _COLUMN_MAX
            if len(probe) <= floor:
                return (None, None)
            probe = probe[:-1]

    def under(self, prefix: Loc) -> Marks:
        """The marks of what lies under `prefix`, with paths relative to it (a view: no
        copy of the table, whose size is the whole file's)."""
        return _MarksUnder(self, tuple(prefix))


class _MarksUnder(Marks):
    def __init__(self, whole: Marks, prefix: Loc) -> None:
        super().__init__(whole.values, whole.keys)
        self.prefix = prefix

    def find(self, loc: Loc, *, key: bool = False) -> tuple[int | None, int | None]:
        return self._find((*self.prefix, *loc), key, len(self.prefix))


def format_path(loc: Loc) -> str:
    """`("tasks", 2, "sql_file")` -> `tasks[2].sql_file`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def excerpt(text: str, line: int, column: int | None, around: int = 2) -> str:
    """Numbered lines around `line` (1-based) with a caret under `column`."""
    lines = text.splitlines()
    line = min(line, max(len(lines), 1))
    start = max(1, line - around)
    end = min(len(lines), line + around)
    width = len(str(end))
    out = []
    for number in range(start, end + 1):
        marker = ">" if number == line else " "
        out.append(f"{marker} {number:>{width}} | {lines[number - 1]}")
        if number == line and column:
            out.append(" " * (width + 5 + column - 1) + "^")
    return "\n".join(out)


def read_text(path: Path) -> str:
    """Read a project file, turning OS errors into a `LoadError` that names the file."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise LoadError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise LoadError(f"{path}: is a folder, expected a YAML file") from None
    except UnicodeDecodeError as exc:
        raise LoadError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise LoadError(f"{path}: cannot read: {exc.strerror}") from None


def load_core(text: str) -> Any:
    """One YAML document read with YAML 1.2's core schema, without marks (a file a
    JavaScript tool's config names); `yaml.YAMLError` when it is not YAML, or when its
    aliases expand past the budget of every YAML file (`MAX_ALIAS_VISITS`)."""
    lean = _lean(_CoreLoader, text, None, None, None)
    if lean is not _FALL_BACK:
        return lean
    loader = _loader_for(text, core=True)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        problem = _aliases_problem(node)
        if problem is not None:
            raise yaml.YAMLError(problem)
        return loader.construct_document(node)
    except (ValueError, TypeError, IndexError, KeyError) as exc:  # see `_composed`
        raise yaml.YAMLError(f"a value YAML cannot read: {exc}") from None
    finally:
        loader.dispose()


_FALL_BACK: Any = object()


class _LeanProblem(yaml.YAMLError):
    """Why a document read by `_lean` is refused (nested too deep)."""


class _Unsupported(Exception):
    """The document uses what only PyYAML's composer reads: anchors and aliases, `<<`
    merges, tags on collections, keys that are not scalars, several documents."""


def _loader_for(text: str, *, core: bool) -> type[yaml.SafeLoader]:
    """The loader of `text`: PyYAML's C one, or its pure-Python one for text that may nest
    deeper than `MAX_DEPTH` (the C composer recurses without a bound: 30,000 nested `[`
    crashed the process; the Python one stops at Python's recursion limit)."""
    if may_nest_deeply(text):
        return _CoreSafeLoader if core else _SafeLoader
    return _CoreLoader if core else _Loader


def _lean(
    kind: type[yaml.SafeLoader],
    text: str,
    path: Path | None,
    marks: Marks | None,
    dups: list[Issue] | None,
) -> Any:
    """The document built straight from the parser's events, or `_FALL_BACK`.

    PyYAML's composer builds a node tree of the whole document before the first value is
    made (about 2.7 KB a small mapping: 100,000 cases cost 260 MB before any of them is
    read). Built from the events, a document costs its values and marks alone. A document
    using what the composer alone reads (`_Unsupported`) is read again the composer's way, so
    both give the same data, marks and messages. `marks` and `dups` (None: not wanted) are
    filled as `_Walker` fills them.
    """
    try:
        loader = kind(text)
    except yaml.YAMLError:  # a pure-Python reader (PyYAML without libyaml) checks it at once
        return _FALL_BACK
    try:
        return _Events(loader, path, marks, dups).document()
    except yaml.MarkedYAMLError as exc:
        if exc.problem != "exceeded maximum nesting depth":
            raise
        # libyaml's own bound (1,000 levels), met while it reads ahead of the values
        raise _LeanProblem(
            f"invalid YAML: values nested far more than {MAX_DEPTH} levels deep: "
            "flatten the structure"
        ) from None
    except _LeanProblem:
        raise
    except (_Unsupported, yaml.YAMLError):  # YAMLError: the reader's (a control character)
        if marks is not None:
            marks.values.clear()
            marks.keys.clear()
        if dups is not None:
            dups.clear()
        return _FALL_BACK
    finally:
        loader.dispose()


_MERGE = "tag:yaml.org,2002:merge"
_STR = "tag:yaml.org,2002:str"
_COLLECTION_TAGS = {None, "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"}


class _Frame:
    """A mapping or sequence being filled: its value, path, and (a mapping) the key read
    before its value and the keys seen."""

    __slots__ = ("key", "loc", "seen", "value")

    def __init__(self, value: dict[Any, Any] | list[Any], loc: Loc) -> None:
        self.value: Any = value
        self.loc = loc
        self.key: tuple[Loc, Any] | None = None  # the key's path, and the key
        self.seen: set[str] = set()


class _Events:
    def __init__(
        self,
        loader: Any,  # a loader of PyYAML's: its parser's calls are untyped
        path: Path | None,
        marks: Marks | None,
        dups: list[Issue] | None,
    ) -> None:
        self.loader = loader
        self.path = path
        self.marks = marks
        self.dups = dups

    def document(self) -> Any:
        loader = self.loader
        loader.get_event()  # the stream's start
        if loader.check_event(yaml.StreamEndEvent):
            return None
        loader.get_event()  # the document's start
        stack: list[_Frame] = []
        root: Any = None
        while True:
            event = loader.get_event()
            kind = type(event)
            if kind is yaml.DocumentEndEvent:
                break
            if kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                done = stack.pop()
                if stack:
                    self._attach(stack[-1], done.value)
                else:
                    root = done.value
                continue
            if kind is yaml.AliasEvent or event.anchor is not None:
                raise _Unsupported
            top = stack[-1] if stack else None
            if top is not None and top.key is None and isinstance(top.value, dict):
                self._key(top, event)
                continue
            loc = self._loc(top)
            if len(loc) > MAX_DEPTH:
                self._refuse(
                    f"values nested more than {MAX_DEPTH} levels deep at line "
                    f"{event.start_mark.line + 1}: flatten the structure"
                )
            if self.marks is not None:
                self.marks.put(loc, event.start_mark.line + 1, event.start_mark.column + 1)
            if kind is yaml.ScalarEvent:
                value = self._scalar(event)[1]
                if top is None:
                    root = value
                else:
                    self._attach(top, value)
            elif event.tag not in _COLLECTION_TAGS:
                raise _Unsupported
            else:
                stack.append(_Frame({} if kind is yaml.MappingStartEvent else [], loc))
        if not loader.check_event(yaml.StreamEndEvent):
            raise _Unsupported  # a second document: the composer's message names it
        return root

    @staticmethod
    def _loc(top: _Frame | None) -> Loc:
        if top is None:
            return ()
        if top.key is not None:
            return top.key[0]
        return (*top.loc, len(top.value))

    @staticmethod
    def _attach(top: _Frame, value: Any) -> None:
        if top.key is None:
            top.value.append(value)
        else:
            top.value[top.key[1]] = value
            top.key = None

    def _key(self, top: _Frame, event: Any) -> None:
        if type(event) is not yaml.ScalarEvent:
            raise _Unsupported
        raw = str(event.value)
        if raw == "<<":
            raise _Unsupported  # a merge; or a quoted `<<`, which marks leave out as well
        value = self._scalar(event)[1]
        child = (*top.loc, raw)
        mark: Any = event.start_mark
        line, column = mark.line + 1, mark.column + 1
        if raw in top.seen and self.dups is not None:
            self.dups.append(_duplicate(self.path, line, column, child))
        top.seen.add(raw)
        if self.marks is not None:
            self.marks.put(child, line, column, key=True)
        top.key = (child, value)

    def _scalar(self, event: Any) -> tuple[str, Any]:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.loader.resolve(yaml.ScalarNode, event.value, event.implicit)
        if tag == _STR:
            return tag, event.value
        make = self.loader.yaml_constructors.get(tag)
        if make is None or tag == _MERGE:
            raise _Unsupported  # a `<<` merge, or a tag the composer's way refuses by name
        node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        try:
            value = make(self.loader, node)
        except Exception:  # any fault of a constructor, PyYAML's own
            # the composer's way names the fault, after any syntax error further on
            raise _Unsupported from None
        if inspect.isgenerator(value):
            raise _Unsupported
        return tag, value

    def _refuse(self, problem: str) -> None:
        """Refuse the document, after the parser has read the rest of it, so that a syntax
        error further on is named first, as the composer's way names it."""
        while self.loader.check_event():
            self.loader.get_event()
        raise _LeanProblem(problem)


def _aliases_problem(root: yaml.Node) -> str | None:
    """Why the aliases of the document at `root` expand too far (or into themselves), else
    None: each node's expanded size is computed once, children first, without recursion, so
    the count costs the nodes written, not the values they stand for."""
    size: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_.discard(key)
            children = _children(node)
            size[key] = 1 + sum(size[id(child)] for child in children)
            continue
        if key in size:
            continue
        if key in open_:
            return f"the alias at line {node.start_mark.line + 1} contains itself: remove it"
        open_.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in size)
    made = size[id(root)] - len(size)
    if made > MAX_ALIAS_VISITS:
        return (
            f"aliases expand to more than {MAX_ALIAS_VISITS:,} values ({made:,}): write the "
            "repeated parts out, or repeat them less"
        )
    return None


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def parse_yaml(text: str, path: Path | None, *, core: bool = False) -> tuple[Any, Marks]:
    """Parse one YAML document into Python data plus the marks of every value; `core`:
    with YAML 1.2's core schema (JavaScript tools' files) instead of PyYAML's 1.1."""
    marks = Marks()
    duplicates: list[Issue] = []
    try:
        lean = _lean(_CoreLoader if core else _Loader, text, path, marks, duplicates)
    except _LeanProblem as exc:
        raise LoadError(f"{path or '<input>'}: {exc}") from None
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(exc, text, path) from None
    if lean is not _FALL_BACK:
        if duplicates:
            from .errors import ValidationError

            raise ValidationError(duplicates)
        return lean, marks
    return _composed(text, path, core=core)


def _composed(text: str, path: Path | None, *, core: bool = False) -> tuple[Any, Marks]:
    """`parse_yaml` by PyYAML's composer: a node tree of the whole document, then its
    values (what a document `_lean` cannot read needs: anchors, merges, tags)."""
    marks = Marks()
    duplicates: list[Issue] = []
    kind = _loader_for(text, core=core)
    try:
        # the pure-Python reader checks every character at once, as it is made
        loader = kind(text)
    except yaml.YAMLError as exc:
        raise LoadError(f"{path or '<input>'}: invalid YAML: {exc}") from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None, Marks()
        own = _own_keys(node)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(exc, text, path) from None
    except yaml.YAMLError as exc:
        raise LoadError(f"{path or '<input>'}: invalid YAML: {exc}") from None
    except RecursionError:
        raise LoadError(
            f"{path or '<input>'}: invalid YAML: values nested far more than {MAX_DEPTH} levels "
            "deep: flatten the structure"
        ) from None
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        # PyYAML raises these for pathological input (huge ints, unhashable keys, a value
        # its explicit tag cannot read: `!!int ''`, `!!bool x`)
        reason = str(exc)
        if "integer string conversion" in reason:
            reason = "a number with more than 4300 digits: quote it to keep it as text"
        elif isinstance(exc, IndexError | KeyError):
            reason = (
                "a value its tag cannot read (`!!int ''`, `!!bool x`): fix the value or "
                "remove the tag"
            )
        raise LoadError(f"{path or '<input>'}: invalid YAML: {reason}") from None
    finally:
        loader.dispose()
    problem = _Walker(marks, duplicates, path, own).walk(node)
    if problem is not None:
        raise LoadError(f"{path or '<input>'}: {problem}")
    if duplicates:
        from .errors import ValidationError

        raise ValidationError(duplicates)
    return data, marks


MAX_DEPTH = 100
MAX_ALIAS_VISITS = budget.MAX_VALUES
_BRACKETS = re.compile(r"[\[\]{}]")
_DASHES = re.compile(rf"^[ \t]*(?:[-?:][ \t]+){{{MAX_DEPTH // 2},}}", re.MULTILINE)
_DEEP_INDENT = re.compile(rf"^[ \t]{{{MAX_DEPTH * 4},}}", re.MULTILINE)


def may_nest_deeply(text: str) -> bool:
    """Whether the text could hold values nested past `MAX_DEPTH` (an upper bound: brackets
    inside strings and templates count too, so some files that cannot are flagged)."""
    if text.count("[") + text.count("{") > MAX_DEPTH:
        depth = 0
        for match in _BRACKETS.finditer(text):
            depth += 1 if match.group() in "[{" else -1
            if depth > MAX_DEPTH:
                return True
    return bool(_DASHES.search(text) or _DEEP_INDENT.search(text))


class _Walker:
    """Records the marks of every node, and bounds what hostile input can make it do.

    Nesting deeper than `MAX_DEPTH` and an alias that contains itself are refused, and so is a
    file whose aliases expand to more than `MAX_ALIAS_VISITS` values (the "billion laughs":
    a few lines of anchors that validate for minutes).
    """

    def __init__(
        self, marks: Marks, dups: list[Issue], path: Path | None, own: dict[int, int]
    ) -> None:
        self.marks = marks
        self.dups = dups
        self.path = path
        self.own = own
        self.seen: set[int] = set()
        self.open: set[int] = set()
        self.repeats = budget.Counter(
            "aliases", MAX_ALIAS_VISITS, "write the repeated parts out, or repeat them less"
        )

    def walk(self, node: yaml.Node, loc: Loc = ()) -> str | None:
        """Walk `node`; a message saying why the file is refused, or None."""
        if id(node) in self.open:
            return f"the alias at line {node.start_mark.line + 1} contains itself: remove it"
        if len(loc) > MAX_DEPTH:
            return (
                f"values nested more than {MAX_DEPTH} levels deep at line "
                f"{node.start_mark.line + 1}: flatten the structure"
            )
        if id(node) in self.seen:
            try:
                self.repeats.spend()
            except budget.ExpansionError as exc:
                return f"{exc.message} (at line {node.start_mark.line + 1})"
        self.seen.add(id(node))
        self.marks.put(loc, node.start_mark.line + 1, node.start_mark.column + 1)
        self.open.add(id(node))
        try:
            if isinstance(node, yaml.MappingNode):
                return self._mapping(node, loc)
            if isinstance(node, yaml.SequenceNode):
                for index, item in enumerate(node.value):
                    problem = self.walk(item, (*loc, index))
                    if problem is not None:
                        return problem
            return None
        finally:
            self.open.discard(id(node))

    def _mapping(self, node: yaml.MappingNode, loc: Loc) -> str | None:
        seen: set[str] = set()
        # a merge (`<<: *anchor`) puts the anchor's pairs first; the mapping's own come last,
        # and an own key overrides a merged one (YAML's merge): only two own keys collide
        merged = len(node.value) - self.own.get(id(node), len(node.value))
        for index, (key_node, value_node) in enumerate(node.value):
            key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else "?"
            if key == "<<":
                continue
            child = (*loc, key)
            if index >= merged and key in seen:
                at = key_node.start_mark
                self.dups.append(_duplicate(self.path, at.line + 1, at.column + 1, child))
            if index >= merged:
                seen.add(key)
            self.marks.put(
                child, key_node.start_mark.line + 1, key_node.start_mark.column + 1, key=True
            )
            problem = self.walk(value_node, child)
            if problem is not None:
                return problem
        return None


def _duplicate(path: Path | None, line: int, column: int, loc: Loc) -> Issue:
    """The issue of a key written twice in one mapping, at the second."""
    return Issue(
        path, line, column, format_path(loc), f"duplicate key '{loc[-1]}': remove one of them"
    )


def _own_keys(root: yaml.Node) -> dict[int, int]:
    """How many pairs of each mapping are its own (not `<<` merges), read before the
    constructor flattens merges into the mapping's pairs; each node visited once."""
    own: dict[int, int] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in own or not isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            continue
        if isinstance(node, yaml.SequenceNode):
            own[id(node)] = 0
            stack.extend(node.value)
            continue
        own[id(node)] = sum(
            1
            for key, _ in node.value
            if not (isinstance(key, yaml.ScalarNode) and key.value == "<<")
        )
        for key, value in node.value:
            stack.extend((key, value))
    return own


def _syntax_error(exc: yaml.MarkedYAMLError, text: str, path: Path | None) -> LoadError:
    # a `.json` file is read by the YAML 1.2 loader (as promptfoo and AgentV read theirs,
    # which accepts what they accept, trailing commas included); its fault is named as the
    # JSON file's, with a hint in JSON's terms
    kind = "JSON" if path is not None and path.suffix.lower() == ".json" else "YAML"
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or exc.context or "invalid YAML"
    where = str(path) if path else "<input>"
    if mark is None:
        return LoadError(f"{where}: {kind} syntax error: {problem}")
    lines = text.splitlines()
    if mark.line >= len(lines) and exc.context_mark is not None:
        # the file ended inside an open quote or bracket: point at where it was opened
        mark = exc.context_mark
    line, column = mark.line + 1, mark.column + 1
    message = f"{where}:{line}:{column}: {kind} syntax error: {problem}"
    if exc.context and exc.problem:
        message += f" ({exc.context})"
    at = lines[mark.line][mark.column : mark.column + 2] if mark.line < len(lines) else ""
    hint = (
        "\nfix: check the brackets, commas and quotes around the marked place"
        if kind == "JSON"
        else _syntax_hint(problem, exc.context or "", at)
    )
    return LoadError(f"{message}\n{excerpt(text, line, column)}{hint}")


def _syntax_hint(problem: str, context: str, at: str) -> str:
    if "tab" in problem or at.startswith("\t"):
        return "\nfix: indent with spaces, YAML does not allow tabs"
    if "mapping values are not allowed" in problem:
        return "\nfix: quote a value that contains ': ', or check the indentation above"
    if at.startswith(("{{", "{%", "%")) or "unhashable key" in problem:
        return "\nfix: quote a value that starts with '{{' or '{%'"
    if "quoted scalar" in context:
        return "\nfix: close the quote opened at the marked place"
    return "\nfix: check the indentation and quoting around the marked place"

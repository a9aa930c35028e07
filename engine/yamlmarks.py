"""YAML parsing that remembers where every value came from.

`parse_yaml` returns the plain Python data and a `Marks` table from field paths
(`("tasks", 2, "sql_file")`) to 1-based line and column, so that every validation error can
name its place in the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from accord.engine import budget
from accord.engine.errors import Issue, LoadError

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


@dataclass
class Marks:
    """Positions of values (and of mapping keys) by field path."""

    values: dict[Loc, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Loc, tuple[int, int]] = field(default_factory=dict)

    def find(self, loc: Loc, *, key: bool = False) -> tuple[int | None, int | None]:
        """The position of `loc`, or of its nearest ancestor that has one."""
        table = self.keys if key else self.values
        probe = tuple(loc)
        while True:
            if probe in table:
                return table[probe]
            if key and probe in self.values:
                return self.values[probe]
            if not probe:
                return (None, None)
            probe = probe[:-1]

    def under(self, prefix: Loc) -> Marks:
        """The marks of what lies under `prefix`, with paths relative to it."""
        size = len(prefix)
        prefix = tuple(prefix)

        def part(table: dict[Loc, tuple[int, int]]) -> dict[Loc, tuple[int, int]]:
            return {loc[size:]: at for loc, at in table.items() if loc[:size] == prefix}

        return Marks(part(self.values), part(self.keys))


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
    loader = (_CoreSafeLoader if may_nest_deeply(text) else _CoreLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        problem = _aliases_problem(node)
        if problem is not None:
            raise yaml.YAMLError(problem)
        return loader.construct_document(node)
    finally:
        loader.dispose()


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
    # PyYAML's C composer recurses without a bound: 30,000 nested `[` crash the process.
    # Text that may nest that deep goes to the pure-Python composer, whose recursion stops
    # with a RecursionError (reported below); everything else keeps the fast one.
    deep = may_nest_deeply(text)
    loader = ((_CoreSafeLoader if deep else _CoreLoader) if core else
              (_SafeLoader if deep else _Loader))(text)  # fmt: skip
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
    except (ValueError, TypeError) as exc:
        # PyYAML raises these for pathological input (huge ints, unhashable keys)
        reason = str(exc)
        if "integer string conversion" in reason:
            reason = "a number with more than 4300 digits: quote it to keep it as text"
        raise LoadError(f"{path or '<input>'}: invalid YAML: {reason}") from None
    finally:
        loader.dispose()
    marks = Marks()
    duplicates: list[Issue] = []
    problem = _Walker(marks, duplicates, path, own).walk(node)
    if problem is not None:
        raise LoadError(f"{path or '<input>'}: {problem}")
    if duplicates:
        from accord.engine.errors import ValidationError

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
        self.marks.values[loc] = (node.start_mark.line + 1, node.start_mark.column + 1)
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
                self.dups.append(
                    Issue(
                        self.path,
                        key_node.start_mark.line + 1,
                        key_node.start_mark.column + 1,
                        format_path(child),
                        f"duplicate key '{key}': remove one of them",
                    )
                )
            if index >= merged:
                seen.add(key)
            mark = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            self.marks.keys[child] = mark
            problem = self.walk(value_node, child)
            if problem is not None:
                return problem
        return None


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

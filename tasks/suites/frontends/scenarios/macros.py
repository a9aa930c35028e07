"""Macros in scenario text: `{{ NAME args }}` in `input_message`, `expected_output` and
`evaluation_criteria`, expanded before a scenario runs.

Expansion, in passes (at most `MAX_PASSES`): each pass expands, left to right, every innermost
macro (a `{{ ... }}` holding no other `{{`); text that still holds macros after the last pass
is an error. A pass runs every innermost macro before any outer one; a GET of a variable not
set yet (no default) stays as written for a later pass, so `{{ SET a {{ X }} }} {{ GET a }}`
reads `a` once it is set, and one never set stays in the text, as the reference leaves it (one
`MacroContext`, one variable scope, per scenario: its input, expected output and criteria).

- Arguments split like a POSIX shell (`shlex.split`); quotes group and are removed. An inner
  macro's output is always part of one argument, whatever spaces or quotes it holds (as
  `"$(...)"` in a shell), so `{{ IF {{ ENV X }} a b }}` sees an empty condition when X is unset.
- A macro's output is never expanded again: a file, a web page or a variable that holds
  `{{ ... }}` comes out as it is. Arguments cannot hold `{{` or `}}` themselves, and the text
  may not hold U+E000 (it marks outputs during expansion).
- A name is `[A-Z_][A-Z0-9_]*`. `{{ anything else }}` (say a Jinja `{{ name }}`) is not a
  macro and stays as it is; a macro that holds one, or a `{{ NAME` never closed, is an error.
- LOOP's template uses `[[ ]]` so it is not expanded before LOOP runs; each iteration turns
  `[[`/`]]` into `{{`/`}}` and expands it with LOOP_INDEX (0-based) and LOOP_COUNT (1-based)
  set in the scope; their earlier values come back after the loop. A LOOP inside a template
  has its `[[ ]]` turned too, so they expand with the outer loop's values.
- Outputs are the reference's (agent-evaluator's macros), as docs/scenarios.md lists them.
  Choices where it is broken or silent: TRUNCATE's output is never longer than max_length,
  suffix included (a suffix longer than max_length gives a plain cut); IF's false_value
  defaults to ""; DATE's format "" is the default one; PATH's project_root is a folder inside
  the project root; LOOP and REPEAT count to `MAX_COUNT` at most.
- Every random value comes from the context's one `random.Random(seed)` (Faker is seeded from
  it), and every date from its `now`, so a run with the same seed replays exactly.
- Files stay inside the project root (symlinks followed), ENV reads only `allow_env`, HTTP_GET
  reaches only `allow_hosts` (also when redirected), SQL_QUERY opens databases read-only and
  may not ATTACH others; CALC is arithmetic only, never `eval`.
- User macros come from `MacroContext.macro_functions` or the `@macro` decorator (the context's
  win over the decorator's). Neither may take a built-in name, and the decorator refuses a name
  another function holds (the same function defined again, as on a reload, replaces itself).
  A user macro gets its arguments as strings; its result is `str()`-ed, `None` giving "".
- Any failure is a `MacroError` naming the macro, its arguments and its usage.
- Expansion has the render budget templates have (engine/render_budget.py): one top-level
  `expand` (the LOOPs inside it included) may take `EXPANSION_SECONDS` and make values of at
  most `MAX_TEXT` characters (a macro's output, a LOOP's or REPEAT's total, the text after a
  pass). SQL_QUERY and HTTP_GET get the time left, as a deadline that ends the query or the
  whole request; a zip-based document is size-checked before it is read (readers.py).
"""

from __future__ import annotations

import ast
import base64
import hashlib
import inspect
import json
import math
import random
import re
import shlex
import time
import urllib.parse
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

from simpleeval import DEFAULT_OPERATORS, SimpleEval

from .....engine import keys, render_budget
from .....engine.errors import AccordError
from .....engine.masking import mask
from . import readers
from .readers import MacroProblem, OutOfTime

MAX_PASSES = 10
MAX_COUNT = 10_000  # LOOP and REPEAT
EXPANSION_SECONDS = render_budget.RENDER_SECONDS  # one top-level expand
MAX_TEXT = render_budget.MAX_TEXT  # characters of any value expansion makes
FALSE_WORDS = frozenset({"", "0", "false", "no", "off"})  # the reference's IF
NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
_INNERMOST = re.compile(r"\{\{((?:(?!\{\{|\}\}).)*)\}\}", re.DOTALL)
_OPENING = re.compile(r"\{\{\s*[A-Z_][A-Z0-9_]*(?=\s|\}\}|$)")
_SLOT = re.compile("\ue000(\\d+)\ue001")  # an expanded macro's output, until the end

F = TypeVar("F", bound=Callable[..., object])


class MacroError(AccordError):
    """A macro that could not be expanded: which one, with what, and how it is used."""

    permanent = True

    def __init__(
        self,
        problem: str,
        *,
        macro: str = "",
        args: Sequence[str] = (),
        usage: str = "",
        task: str | None = None,
    ) -> None:
        self.macro = macro
        self.macro_args = list(args)
        self.usage = usage
        message = problem
        if macro:
            # masked before the cut: a token cut in half would no longer be recognised
            masked = [mask(a) for a in args]
            shown = shlex.join(a if len(a) <= 60 else a[:57] + "..." for a in masked)
            message = f"macro {{{{ {f'{macro} {shown}'.strip()} }}}}: {problem}"
        if usage:
            message += f" (usage: {{{{ {usage} }}}})"
        super().__init__(message, task=task)

    @property  # type: ignore[override]
    def args(self) -> list[str]:
        """The macro's arguments. (`BaseException`'s own stays the message, for pickling.)"""
        return self.macro_args

    @args.setter
    def args(self, value: Sequence[Any]) -> None:
        BaseException.args.__set__(self, value)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Macro:
    """A macro: its name, its one-line usage and what runs it."""

    name: str
    usage: str
    run: Callable[[MacroContext, list[str]], object]
    builtin: bool = False
    source: str = ""  # a user macro's function, as module.qualname


def _source(function: Callable[..., object]) -> str:
    module = getattr(function, "__module__", "?")
    return f"{module}.{getattr(function, '__qualname__', repr(function))}"


@dataclass
class MacroContext:
    """One scenario's expansion state: settings, the variable scope, the seeded randomness."""

    project_root: Path
    seed: int = 0
    allow_env: frozenset[str] = frozenset()
    allow_hosts: frozenset[str] = frozenset()
    macro_functions: Mapping[str, Callable[..., object]] = field(default_factory=dict)
    now: Callable[[], datetime] = field(default=datetime.now)
    variables: dict[str, str] = field(default_factory=dict)
    rng: random.Random = field(init=False, repr=False)
    _fakers: dict[str, Any] = field(init=False, repr=False, default_factory=dict)
    _user: dict[str, Macro] = field(init=False, repr=False, default_factory=dict)
    _deadline: float | None = field(init=False, repr=False, default=None)

    def remaining(self) -> float:
        """Seconds left of the expansion budget (the whole budget outside an expansion)."""
        if self._deadline is None:
            return EXPANSION_SECONDS
        return self._deadline - time.monotonic()

    def check_time(self) -> None:
        """Stop an expansion whose time is spent."""
        if self.remaining() <= 0:
            raise MacroProblem(
                f"macro expansion took longer than {EXPANSION_SECONDS:g} s (the expansion "
                "budget); expand less, or read prepared text from a file"
            )

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        for name, function in self.macro_functions.items():
            self._user[name] = user_macro(name, function)

    def faker(self, locale: str = "") -> Any:
        """A Faker for `locale` ("" the default), seeded from the context's rng on first use."""
        if locale not in self._fakers:
            from faker import Faker

            try:
                fake = Faker(locale or None)
            except AttributeError as exc:
                raise MacroProblem(f"unknown Faker locale '{locale}'") from exc
            fake.seed_instance(self.rng.getrandbits(64))
            self._fakers[locale] = fake
        return self._fakers[locale]

    def lookup(self, name: str) -> Macro | None:
        """The macro called `name`: built-in, the context's, then the decorator's."""
        return BUILTINS.get(name) or self._user.get(name) or USER_MACROS.get(name)


Builtin = Callable[[MacroContext, list[str]], str]
BUILTINS: dict[str, Macro] = {}
USER_MACROS: dict[str, Macro] = {}


def known_macros(context: MacroContext | None = None) -> list[str]:
    """Every macro name `context` can expand, sorted."""
    names = set(BUILTINS) | set(USER_MACROS)
    if context is not None:
        names |= set(context.macro_functions)
    return sorted(names)


def user_macro(name: str, function: Callable[..., object], usage: str | None = None) -> Macro:
    """A user macro from a function of string arguments; refused on a built-in name."""
    if not NAME.fullmatch(name):
        raise MacroError(f"user macro name '{name}' must match [A-Z_][A-Z0-9_]*")
    if name in BUILTINS:
        raise MacroError(f"user macro '{name}' is a built-in macro's name; choose another")
    if usage is None:
        try:
            params = inspect.signature(function).parameters.values()
            usage = " ".join([name, *(_shown_param(p) for p in params)])
        except (TypeError, ValueError):
            usage = f"{name} [args...]"

    def run(context: MacroContext, args: list[str]) -> object:
        return function(*args)

    return Macro(name, usage, run, source=_source(function))


def _shown_param(param: inspect.Parameter) -> str:
    if param.kind is param.VAR_POSITIONAL:
        return f"[{param.name}...]"
    return f"[{param.name}]" if param.default is not param.empty else param.name


def macro(name: str, *, usage: str | None = None) -> Callable[[F], F]:
    """Register the decorated function as the user macro `name` for every context."""

    def register(function: F) -> F:
        known = USER_MACROS.get(name)
        if known is not None and known.source != _source(function):
            raise MacroError(f"user macro '{name}' is already registered by {known.source}")
        USER_MACROS[name] = user_macro(name, function, usage)
        return function

    return register


def expand(text: str, context: MacroContext) -> str:
    """`text` with its macros expanded (see the module's docstring)."""
    if "{{" not in text:
        return text
    if "\ue000" in text:
        raise MacroError("text holds U+E000, a character macro expansion reserves")
    outermost = context._deadline is None
    if outermost:
        context._deadline = time.monotonic() + EXPANSION_SECONDS
    try:
        return _expand(text, context)
    finally:
        if outermost:
            context._deadline = None


def _expand(text: str, context: MacroContext) -> str:
    outputs: list[str] = []
    for _ in range(MAX_PASSES):
        text, ran, waiting = _expand_pass(text, context, outputs)
        if not ran and waiting:  # nothing left to set them: they stay as written
            text, ran, waiting = _expand_pass(text, context, outputs, final=True)
        if not ran:
            break
    if _next_macro(text) is not None:
        raise MacroError(f"text still holds macros after {MAX_PASSES} passes (nested too deep)")
    opening = _OPENING.search(text)
    if opening is not None:
        shown = _restore(text[opening.start() : opening.start() + 60], outputs)
        raise MacroError(
            f"macro cannot be expanded at '{shown}': a '{{{{' is never closed, or the macro "
            "holds a '{{ }}' that is not a macro"
        )
    size = _restored_size(text, outputs)  # each pass checked its own part; this is the whole
    if size > MAX_TEXT:
        raise MacroError(_too_large(size, "the expanded text"))
    return _restore(text, outputs)


def _next_macro(text: str, start: int = 0) -> re.Match[str] | None:
    for match in _INNERMOST.finditer(text, start):
        words = match.group(1).split(None, 1)
        if words and NAME.fullmatch(words[0]):
            return match
    return None


def _expand_pass(
    text: str, context: MacroContext, outputs: list[str], final: bool = False
) -> tuple[str, bool, bool]:
    """One pass: the text, whether a macro ran, whether a GET waits for its variable.

    A GET of a variable not set yet (and no default) stays as written, to be expanded on a
    later pass, once a SET of this or an earlier pass has run (the reference's: `{{ SET a
    {{ CALC 1 + 1 }} }} and {{ GET a }}` gives `2 and 2`); on the `final` pass, when nothing
    else can run, it stays in the text for good, as the reference leaves it."""
    parts: list[str] = []
    position = 0
    match = _next_macro(text)
    ran = waiting = False
    size = 0  # of the text so far, outputs restored
    while match is not None:
        parts.append(text[position : match.start()])
        size += _restored_size(parts[-1], outputs)
        try:
            outputs.append(_run(match.group(1), context, outputs, size))
            ran = True
        except Unset:
            if not final:
                waiting = True
                parts.append(match.group(0))
                position = match.end()
                match = _next_macro(text, position)
                continue
            outputs.append(_restore(match.group(0), outputs))
            ran = True
        size += len(outputs[-1])
        parts.append(f"\ue000{len(outputs) - 1}\ue001")
        position = match.end()
        match = _next_macro(text, position)
    parts.append(text[position:])
    return "".join(parts), ran, waiting


def _too_large(size: int, what: str) -> str:
    return (
        f"{what} would make {size:,} characters; macro expansion makes at most {MAX_TEXT:,} "
        "(the expansion budget)"
    )


def _restored_size(text: str, outputs: list[str]) -> int:
    """The length `_restore(text, outputs)` would have, without building it."""
    size = len(text)
    for slot in _SLOT.finditer(text):
        size += len(outputs[int(slot.group(1))]) - len(slot.group(0))
    return size


def _restore(text: str, outputs: list[str]) -> str:
    return _SLOT.sub(lambda slot: outputs[int(slot.group(1))], text)


def _run(body: str, context: MacroContext, outputs: list[str], before: int = 0) -> str:
    """One macro's output; `before` characters of the text come before it."""
    name = body.split(None, 1)[0]
    found = context.lookup(name)
    usage = found.usage if found else ""
    try:
        words = [_restore(word, outputs) for word in shlex.split(body)]
    except ValueError as exc:
        raise MacroError(f"arguments cannot be split: {exc}", macro=name, usage=usage) from exc
    args = words[1:]
    if found is None:
        known = ", ".join(known_macros(context))
        raise MacroError(f"unknown macro '{name}'; known macros: {known}", macro=name, args=args)
    try:
        context.check_time()
        if found.builtin:
            _check_arity(found.usage, args)
        result = "" if (output := found.run(context, args)) is None else str(output)
        if before + len(result) > MAX_TEXT:
            what = "its output" if not before else "the text with its output"
            raise MacroProblem(_too_large(before + len(result), what))
    except (MacroError, Unset):
        raise
    except OutOfTime as exc:
        problem = (
            f"{exc.doing} was still running when the expansion budget ({EXPANSION_SECONDS:g} s "
            "for a text's macros) ran out, and was stopped"
        )
        raise MacroError(problem, macro=name, args=args, usage=usage) from None
    except MacroProblem as exc:
        raise MacroError(str(exc), macro=name, args=args, usage=usage) from exc
    except Exception as exc:
        problem = f"{type(exc).__name__}: {exc}"
        raise MacroError(problem, macro=name, args=args, usage=usage) from exc
    return result


def _check_arity(usage: str, args: list[str]) -> None:
    """Argument counts read from the usage: `[x]` optional, `x...` any number more."""
    least, most = 0, 0.0
    for word in re.findall(r"\[[^\]]*\]|\S+", usage)[1:]:
        least += not word.startswith("[")
        most += math.inf if "..." in word else 1
    if not least <= len(args) <= most:
        wanted = f"{least} to {most:.0f}" if least < most else f"{least}"
        if most == math.inf:
            wanted = f"at least {least}"
        raise MacroProblem(f"takes {wanted} argument(s), got {len(args)}")


def _builtin(usage: str) -> Callable[[Builtin], Builtin]:
    """Register a built-in under the first word of its usage."""

    def register(function: Builtin) -> Builtin:
        name = usage.split()[0]
        BUILTINS[name] = Macro(name, usage, function, builtin=True)
        return function

    return register


def _optional(args: list[str], index: int, default: str) -> str:
    return args[index] if len(args) > index else default


def _int(value: str, what: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise MacroProblem(f"{what} must be an integer, got '{value}'") from None


def _count(value: str, what: str) -> int:
    count = _int(value, what)
    if not 0 <= count <= MAX_COUNT:
        raise MacroProblem(f"{what} must be from 0 to {MAX_COUNT}, got {count}")
    return count


def truthy(value: str) -> bool:
    """IF's reading of a condition: false for "", 0, false, no, none, null, off."""
    return value.lower() not in FALSE_WORDS


@_builtin("SAMPLE file_path n_lines [random]")
def _sample(ctx: MacroContext, args: list[str]) -> str:
    # lines keep their ends, as the reference's readlines() gives them
    lines = readers.read_document(ctx.project_root, args[0]).splitlines(keepends=True)
    n = min(_int(args[1], "n_lines"), len(lines))
    if n < 0:
        raise MacroProblem(f"n_lines must not be negative, got {n}")
    if len(args) > 2 and args[2].lower() == "random":
        return "".join(ctx.rng.sample(lines, n))
    return "".join(lines[:n])


@_builtin("TRUNCATE text max_length [suffix]")
def _truncate(ctx: MacroContext, args: list[str]) -> str:
    text, limit = args[0], _int(args[1], "max_length")
    suffix = _optional(args, 2, "...")
    if limit < 0:
        raise MacroProblem(f"max_length must not be negative, got {limit}")
    if len(text) <= limit:
        return text
    return text[: limit - len(suffix)] + suffix if len(suffix) <= limit else text[:limit]


@_builtin("REPEAT text count [separator]")
def _repeat(ctx: MacroContext, args: list[str]) -> str:
    count, separator = _count(args[1], "count"), _optional(args, 2, "")
    size = len(args[0]) * count + len(separator) * max(0, count - 1)
    if size > MAX_TEXT:
        raise MacroProblem(_too_large(size, "REPEAT"))
    return separator.join([args[0]] * count)


@_builtin("HASH string [algorithm]")
def _hash(ctx: MacroContext, args: list[str]) -> str:
    algorithm = _optional(args, 1, "md5").lower()
    if algorithm not in hashlib.algorithms_available:
        known = ", ".join(sorted(hashlib.algorithms_available))
        raise MacroProblem(f"unknown hash algorithm '{algorithm}'; known: {known}")
    digest = hashlib.new(algorithm, args[0].encode("utf-8"), usedforsecurity=False)
    if algorithm.startswith("shake_"):
        return digest.hexdigest(32)  # type: ignore[call-arg]
    return digest.hexdigest()


@_builtin("TEMPLATE template_file variables_json")
def _template(ctx: MacroContext, args: list[str]) -> str:
    variables = _json_object(args[1], "variables_json")
    return readers.fill_template(ctx.project_root, args[0], variables)


def _json_object(value: str, what: str) -> dict[str, Any]:
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise MacroProblem(f"{what} is not JSON: {exc}") from exc
    if not isinstance(parsed, dict):
        raise MacroProblem(f"{what} must be a JSON object")
    return parsed


@_builtin("DATE [format] [offset_days]")
def _date(ctx: MacroContext, args: list[str]) -> str:
    offset = _int(args[1], "offset_days") if len(args) > 1 else 0
    return (ctx.now() + timedelta(days=offset)).strftime(_optional(args, 0, "") or "%Y-%m-%d")


@_builtin("TIMESTAMP [offset_seconds] [format]")
def _timestamp(ctx: MacroContext, args: list[str]) -> str:
    moment = ctx.now() + timedelta(seconds=_int(args[0], "offset_seconds") if args else 0)
    form = _optional(args, 1, "unix").lower()
    if form == "iso":
        return moment.isoformat()
    if form == "ms":
        return str(int(moment.timestamp() * 1000))
    return str(int(moment.timestamp()))  # any other format: unix seconds, as the reference


@_builtin("BUSINESS_DAYS_FROM date count [format]")
def _business_days(ctx: MacroContext, args: list[str]) -> str:
    try:
        today = args[0].lower() == "today"
        day = ctx.now().date() if today else datetime.strptime(args[0], "%Y-%m-%d").date()
    except ValueError:
        raise MacroProblem(f"date must be 'today' or YYYY-MM-DD, got '{args[0]}'") from None
    count = _int(args[1], "count")
    step = 1 if count >= 0 else -1
    for _ in range(abs(count)):
        day += timedelta(days=step)
        while day.weekday() >= 5:
            day += timedelta(days=step)
    return day.strftime(_optional(args, 2, "%Y-%m-%d"))


@_builtin("RANDOM_INT min max")
def _random_int(ctx: MacroContext, args: list[str]) -> str:
    low, high = _int(args[0], "min"), _int(args[1], "max")
    if low > high:
        raise MacroProblem(f"min {low} is above max {high}")
    return str(ctx.rng.randint(low, high))


def _fake(fake: Any, provider: str, args: list[str]) -> str:
    providers = {
        name
        for source in fake.get_providers()
        for name in dir(source)
        if not name.startswith("_") and callable(getattr(source, name))
    }
    if provider not in providers:
        raise MacroProblem(f"unknown Faker provider '{provider}'")
    return str(getattr(fake, provider)(*(_number_or_text(arg) for arg in args)))


def _number_or_text(value: str) -> int | float | str:
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


@_builtin("LOOP count template [separator]")
def _loop(ctx: MacroContext, args: list[str]) -> str:
    count = _count(args[0], "count")
    template = args[1].replace("[[", "{{").replace("]]", "}}")
    saved = {name: ctx.variables.get(name) for name in ("LOOP_INDEX", "LOOP_COUNT")}
    separator = _optional(args, 2, "")
    try:
        texts = []
        size = 0
        for index in range(count):
            ctx.check_time()
            ctx.variables.update(LOOP_INDEX=str(index), LOOP_COUNT=str(index + 1))
            texts.append(expand(template, ctx))
            size += len(texts[-1]) + len(separator)
            if size > MAX_TEXT:
                raise MacroProblem(_too_large(size, f"LOOP (at iteration {index + 1})"))
    finally:
        for name, value in saved.items():
            if value is None:
                ctx.variables.pop(name, None)
            else:
                ctx.variables[name] = value
    return separator.join(texts)


@_builtin("HTTP_GET url [headers_json]")
def _http_get(ctx: MacroContext, args: list[str]) -> str:
    headers = _json_object(args[1], "headers_json") if len(args) > 1 else {}
    text_headers = {key: str(value) for key, value in headers.items()}
    return readers.http_get(args[0], text_headers, ctx.allow_hosts, ctx.remaining())


@_builtin("PATH relative_path [project_root]")
def _path(ctx: MacroContext, args: list[str]) -> str:
    root = readers.inside_root(ctx.project_root, args[1]) if len(args) > 1 else ctx.project_root
    resolved = readers.inside_root(root, args[0])
    return args[0] if Path(args[0]).is_absolute() else str(resolved)


@_builtin("ENV VAR_NAME [default]")
def _env(ctx: MacroContext, args: list[str]) -> str:
    if args[0] not in ctx.allow_env:
        raise MacroProblem(
            f"variable '{args[0]}' is not in allow_env (the setting that lists the environment "
            "variables ENV may read)"
        )
    value = keys.read(args[0])  # masked in every message, store and report from now on
    return args[1] if value is None and len(args) > 1 else value or ""


_CALC_OPERATORS = (
    ast.Add,
    ast.Sub,
    ast.Mult,
    ast.Div,
    ast.FloorDiv,
    ast.Mod,
    ast.Pow,
    ast.USub,
    ast.UAdd,
)


def calculate(expression: str) -> str:
    """Arithmetic only (+ - * / // % **, parentheses, abs round min max); never `eval`."""
    evaluator = SimpleEval(
        operators={op: DEFAULT_OPERATORS[op] for op in _CALC_OPERATORS},
        functions={"abs": abs, "round": round, "min": min, "max": max},
        names={},
    )

    def number(node: ast.Constant) -> object:
        if type(node.value) not in (int, float):
            raise MacroProblem(f"CALC takes numbers only, got {node.value!r}")
        return node.value

    evaluator.nodes = {
        ast.Expr: evaluator.nodes[ast.Expr],
        ast.BinOp: evaluator.nodes[ast.BinOp],
        ast.UnaryOp: evaluator.nodes[ast.UnaryOp],
        ast.Call: evaluator.nodes[ast.Call],
        ast.Constant: number,
    }
    result = evaluator.eval(expression)
    return str(result)  # Python's own: `10.5 * 2` is 21.0, `5 * 10 + 2` is 52


def _set(ctx: MacroContext, args: list[str]) -> str:
    ctx.variables[args[0]] = " ".join(args[1:])
    return ctx.variables[args[0]]


class Unset(Exception):
    """GET of a variable not set yet, without a default: the macro stays as written."""


def _get(ctx: MacroContext, args: list[str]) -> str:
    if args[0] in ctx.variables:
        return ctx.variables[args[0]]
    if len(args) > 1:
        return args[1]
    raise Unset(args[0])


def _joined(function: Callable[[str], str]) -> Builtin:
    return lambda ctx, args: function(" ".join(args))


# The built-ins whose work fits in one expression, by usage.
_SIMPLE: dict[str, Builtin] = {
    "OPEN file_path [file_type]": lambda ctx, a: readers.read_document(ctx.project_root, *a),
    "CONCAT file1 [file2 ...]": lambda ctx, a: "\n\n---\n\n".join(
        readers.read_document(ctx.project_root, path) for path in a
    ),
    "IMAGE file_path": lambda ctx, a: base64.b64encode(
        readers.read_bytes(ctx.project_root, a[0])
    ).decode("ascii"),
    "LIST_FILES directory_path [pattern]": lambda ctx, a: json.dumps(
        readers.list_files(ctx.project_root, a[0], _optional(a, 1, "*"))
    ),
    "BASE64 [string...]": _joined(lambda text: base64.b64encode(text.encode()).decode("ascii")),
    "JSON_ESCAPE [string...]": _joined(lambda text: json.dumps(text)[1:-1]),
    "URL_ENCODE [string...]": _joined(urllib.parse.quote),
    "JSON_EXTRACT file_path json_path": lambda ctx, a: readers.json_extract(
        ctx.project_root, a[0], a[1]
    ),
    "NOW [format]": lambda ctx, a: ctx.now().strftime(a[0]) if a else ctx.now().isoformat(),
    "UUID": lambda ctx, a: str(uuid.UUID(int=ctx.rng.getrandbits(128), version=4)),
    "RANDOM_CHOICE item1 [item2 ...]": lambda ctx, a: ctx.rng.choice(a),
    "FAKER provider [args...]": lambda ctx, a: _fake(
        ctx.faker(ctx.variables.get("FAKER_LOCALE", "")), a[0], a[1:]
    ),
    "FAKER_LOCALE locale provider [args...]": lambda ctx, a: _fake(ctx.faker(a[0]), a[1], a[2:]),
    "SET name [value ...]": _set,
    "GET name [default]": _get,
    "IF condition true_value [false_value]": lambda ctx, a: (
        a[1] if truthy(a[0]) else _optional(a, 2, "")
    ),
    "SQL_QUERY db_path query...": lambda ctx, a: json.dumps(
        readers.sql_query(ctx.project_root, a[0], " ".join(a[1:]), ctx.remaining()),
        indent=2,
        default=str,  # a blob as its repr (the reference fails on one)
    ),
    "CALC expression...": _joined(calculate),
}
for _usage, _function in _SIMPLE.items():
    _builtin(_usage)(_function)

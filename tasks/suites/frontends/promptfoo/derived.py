"""`derivedMetrics`: named scores computed from the others, per prompt column.

promptfoo (0.118, `src/evaluator.ts`) evaluates each metric's `value` with mathjs over the
column's named scores (each the sum over its tests), in the order given, so a later metric
may use an earlier one; one that cannot be evaluated keeps 0. accord evaluates the
arithmetic part of mathjs's syntax (numbers, names, `+ - * / ^ %`, parentheses and `min`,
`max`, `abs`, `sqrt`, `round`, `floor`, `ceil`) with Python's own expression parser, walked
here node by node: a dependency for six operators did not pay, and `eval` is not an option
for text from a file. An expression outside that part, or a JavaScript function, is named
at load.
"""

from __future__ import annotations

import ast
import contextlib
import math
import operator
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .form import _Loader

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.Pow: operator.pow, ast.Mod: operator.mod,
}  # fmt: skip
_FUNCTIONS: dict[str, Callable[..., float]] = {
    "min": min, "max": max, "abs": abs, "sqrt": math.sqrt, "round": round,
    "floor": math.floor, "ceil": math.ceil,
}  # fmt: skip


def _tree(expression: str) -> ast.expr:
    # mathjs writes a power as `^`; Python's `^` is xor
    return ast.parse(expression.replace("^", "**"), mode="eval").body


def _check(node: ast.AST) -> None:
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        _check(node.left)
        _check(node.right)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        _check(node.operand)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id not in _FUNCTIONS or node.keywords:
            raise ValueError(f"the function '{node.func.id}' is not one accord evaluates")
        for arg in node.args:
            _check(arg)
    elif isinstance(node, ast.Name) or (
        isinstance(node, ast.Constant) and isinstance(node.value, int | float)
    ):
        return
    else:
        raise ValueError(f"'{ast.unparse(node)}' is not arithmetic accord evaluates")


def evaluate(expression: str, names: Mapping[str, float]) -> float:
    """The value of a checked expression over `names` (KeyError for a missing name)."""

    def walk(node: ast.AST) -> float:
        if isinstance(node, ast.BinOp):
            return _BINARY[type(node.op)](walk(node.left), walk(node.right))
        if isinstance(node, ast.UnaryOp):
            value = walk(node.operand)
            return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.Call):
            assert isinstance(node.func, ast.Name)
            return float(_FUNCTIONS[node.func.id](*(walk(a) for a in node.args)))
        if isinstance(node, ast.Name):
            return float(names[node.id])
        assert isinstance(node, ast.Constant) and isinstance(node.value, int | float)
        return float(node.value)

    return walk(_tree(expression))


def parse(loader: _Loader, value: Any) -> list[tuple[str, str]]:
    """The (name, expression) pairs of `derivedMetrics`, each checked at its line."""
    out: list[tuple[str, str]] = []
    if value is None:
        return out
    if not isinstance(value, list):
        loader.issue(("derivedMetrics",), "derivedMetrics is a list of {name, value}")
        return out
    for index, entry in enumerate(value):
        loc = ("derivedMetrics", index)
        if not isinstance(entry, dict) or set(entry) != {"name", "value"}:
            loader.issue(loc, "a derived metric is {name, value} (value: a mathjs expression)")
            continue
        name, expression = entry["name"], entry["value"]
        if not isinstance(name, str) or not isinstance(expression, str):
            loader.issue(loc, "a derived metric's name and value are text (a JavaScript "
                         "function is not supported)")  # fmt: skip
            continue
        try:
            _check(_tree(expression))
        except (SyntaxError, ValueError) as exc:
            loader.issue((*loc, "value"), f"derived metric '{name}': {exc}")
            continue
        out.append((name, expression))
    return out


def apply(metrics: list[tuple[str, str]], named: dict[str, float]) -> dict[str, float]:
    """The named scores with each derived metric added, as promptfoo leaves them."""
    out = dict(named)
    for name, expression in metrics:
        out.setdefault(name, 0)
        # promptfoo logs a failure at debug level and keeps the value it had
        with contextlib.suppress(KeyError, ArithmeticError, ValueError, TypeError):
            out[name] = evaluate(expression, out)
    return out

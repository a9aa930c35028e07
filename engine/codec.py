"""Task outputs as data: how the run store saves them and reads them back.

Outputs are written as JSON and read back into accord's own types by name, through a registry
of output types, never by importing or calling anything a file names: a tampered
`.accord/runs.db` can plant wrong values, never code. JSON's own types stand for themselves;
everything else is an object `{"$": tag, "v": ...}`: Python values JSON lacks (tuples, bytes,
dates and times, decimals, UUIDs, non-finite floats, mappings whose keys are not text) and the
registered output types (tables, agent answers, consistency results, ...). Reading back checks
every shape and raises `CodecError` for anything else, however deep or large.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import decimal
import json
import math
import uuid
from collections.abc import Callable
from typing import Any

from .errors import AccordError
from .registry import Registry

MAX_DEPTH = 200  # deeper values are not stored (and never read back)
TAG = "$"


class CodecError(AccordError):
    """A value that cannot be stored, or stored data that is not a valid output."""


@dataclasses.dataclass(frozen=True)
class OutputType:
    """A class outputs may have: how to turn one into stored data and back.

    `to_data` returns a value the codec can encode (it may hold further outputs);
    `from_data` gets that value decoded and must check its shape (raise ValueError or
    TypeError for a wrong one).
    """

    name: str
    cls: type
    to_data: Callable[[Any], Any]
    from_data: Callable[[Any], Any]


OUTPUT_TYPES: Registry[OutputType] = Registry("output type")
_by_class: dict[type, OutputType] = {}


_ready: list[bool] = []


def _registered() -> None:
    """Load the members once: the engine's (`engine.outputs`) and the plugins' (tasks)."""
    if _ready:
        return
    from . import outputs  # noqa: F401  (registers tables and query results)
    from .registry import load_plugins

    load_plugins()
    _ready.append(True)


def register_output(
    name: str, cls: type, to_data: Callable[[Any], Any], from_data: Callable[[Any], Any]
) -> None:
    """Register an output class under a stable `name` (what the store records)."""
    kind = OUTPUT_TYPES.add(name, OutputType(name, cls, to_data, from_data))
    _by_class[cls] = kind


def register_dataclass(name: str, cls: type) -> None:
    """Register a dataclass: stored as its fields, read back through pydantic's validation
    of the same dataclass (every field checked against its annotation)."""
    names = [f.name for f in dataclasses.fields(cls)]
    adapters: list[Any] = []  # built on first use: a pydantic schema costs `validate` time

    def to_data(obj: Any) -> dict[str, Any]:
        return {n: getattr(obj, n) for n in names}

    def from_data(data: Any) -> Any:
        if not isinstance(data, dict) or not set(data) <= set(names):
            raise ValueError(f"fields of {name} expected")
        if not adapters:
            from pydantic import TypeAdapter

            adapters.append(TypeAdapter(cls))
        return adapters[0].validate_python(data)

    register_output(name, cls, to_data, from_data)


# --- encoding ----------------------------------------------------------------------------


def dumps(value: Any) -> str:
    """`value` as JSON text; `CodecError` for a value of a type that cannot be stored."""
    _registered()
    try:
        return json.dumps(encode(value, 0), ensure_ascii=False, allow_nan=False)
    except RecursionError:
        raise CodecError("value nested too deeply to store") from None


def encode(value: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise CodecError(f"value nested deeper than {MAX_DEPTH} levels")
    kind = _by_class.get(type(value))
    if kind is not None:  # before the plain types: an agent's answer is a str subclass
        return {TAG: kind.name, "v": encode(kind.to_data(value), depth + 1)}
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value) is float:
        return value if math.isfinite(value) else {TAG: "float", "v": repr(value)}
    if type(value) is list:
        return [encode(item, depth + 1) for item in value]
    if type(value) is tuple:
        return {TAG: "tuple", "v": [encode(item, depth + 1) for item in value]}
    if type(value) is dict:
        if all(type(k) is str for k in value) and TAG not in value:
            return {k: encode(v, depth + 1) for k, v in value.items()}
        pairs = [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]
        return {TAG: "map", "v": pairs}
    return _encode_scalar(value)


def _encode_scalar(value: Any) -> Any:
    for tag, cls, write, _read in _SCALARS:
        if type(value) is cls:
            return {TAG: tag, "v": write(value)}
    raise CodecError(f"a {type(value).__name__} cannot be stored")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


# (tag, class, to text, from text); exact classes only (datetime before date: a subclass)
_SCALARS: list[tuple[str, type, Callable[[Any], str], Callable[[str], Any]]] = [
    ("datetime", dt.datetime, dt.datetime.isoformat, dt.datetime.fromisoformat),
    ("date", dt.date, dt.date.isoformat, dt.date.fromisoformat),
    ("time", dt.time, dt.time.isoformat, dt.time.fromisoformat),
    ("timedelta", dt.timedelta, lambda v: repr(v.total_seconds()), lambda s: _timedelta(s)),
    ("decimal", decimal.Decimal, str, decimal.Decimal),
    ("uuid", uuid.UUID, str, uuid.UUID),
    ("bytes", bytes, _b64, _unb64),
    ("float", float, repr, lambda s: _float(s)),
]


def _timedelta(text: str) -> dt.timedelta:
    return dt.timedelta(seconds=float(text))


def _float(text: str) -> float:
    if text not in ("nan", "inf", "-inf"):
        raise ValueError(f"not a non-finite float: {text!r}")
    return float(text)


# --- decoding ----------------------------------------------------------------------------


def loads(text: str) -> Any:
    """Stored JSON text back into the value; `CodecError` for anything that is not one."""
    _registered()
    try:
        return decode(json.loads(text), 0)
    except CodecError:
        raise
    # ArithmeticError: an overflowing value (a timedelta of 1e300 seconds) or a decimal
    # that is not one; IndexError: a registered type's data of the wrong length
    except (ValueError, TypeError, KeyError, IndexError, RecursionError, ArithmeticError) as exc:
        raise CodecError(f"stored output is not valid: {type(exc).__name__}: {exc}") from None


def decode(data: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise CodecError(f"stored output nested deeper than {MAX_DEPTH} levels")
    if type(data) is float and not math.isfinite(data):
        # JSON's 1e999 reads as inf; encode() writes non-finite floats tagged, never so
        raise CodecError("stored output holds a number out of range")
    if data is None or type(data) in (bool, int, float, str):
        return data
    if type(data) is list:
        return [decode(item, depth + 1) for item in data]
    if type(data) is not dict:
        raise CodecError(f"stored output holds a {type(data).__name__}")
    if TAG not in data:
        return {k: decode(v, depth + 1) for k, v in data.items()}
    if set(data) != {TAG, "v"} or type(data[TAG]) is not str:
        raise CodecError("stored output has a malformed tagged value")
    return _decode_tagged(data[TAG], data["v"], depth)


def _decode_tagged(tag: str, body: Any, depth: int) -> Any:
    if tag == "tuple":
        return tuple(decode(_list(body), depth + 1))
    if tag == "map":
        pairs = [_list(pair) for pair in _list(body)]
        if any(len(pair) != 2 for pair in pairs):
            raise CodecError("stored mapping pairs are malformed")
        return {_hashable(decode(k, depth + 1)): decode(v, depth + 1) for k, v in pairs}
    for name, _cls, _write, read in _SCALARS:
        if tag == name:
            if type(body) is not str:
                raise CodecError(f"stored {tag} is not text")
            return read(body)
    if tag not in OUTPUT_TYPES:
        raise CodecError(f"stored output names an unknown type '{tag}'")
    return OUTPUT_TYPES.get(tag).from_data(decode(body, depth + 1))


def _list(body: Any) -> list[Any]:
    if type(body) is not list:
        raise CodecError("stored output expected a list")
    return body


def _hashable(key: Any) -> Any:
    try:
        hash(key)
    except TypeError:
        raise CodecError("stored mapping key is not hashable") from None
    return key

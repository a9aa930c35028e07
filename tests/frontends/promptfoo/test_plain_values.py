"""`form.plain`: a test's values as JSON carries them, made without a JSON round trip (which
made every key and text again for each test). Expected: exactly what
`json.loads(json.dumps(value, default=str))` gives, key order and types included."""

from __future__ import annotations

import datetime
import json
import math
import random
from typing import Any

import pytest

from accord.tasks.suites.frontends.promptfoo.form import plain


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b) or (isinstance(a, float) and math.copysign(1, a) == math.copysign(1, b))


def round_trip(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


@pytest.mark.parametrize(
    "value",
    [
        {1: 2, 1.5: 3, False: 4, None: 5, "x": (1, 2)},
        {"day": datetime.date(2024, 1, 2), "at": datetime.datetime(2024, 1, 2, 3, 4)},
        [b"hi", {1, 2}, frozenset()],
        {math.nan: 1, math.inf: [math.inf, -math.inf, -0.0, 10**30], -math.inf: None},
        {1e16: 1, -1: 2, False: 3, 0.1: 4},
        {"vars": {"q": "c1"}, "assert": [{"type": "contains", "value": "c"}], "options": {}},
    ],
)
def test_plain_is_the_json_round_trip(value: Any) -> None:
    assert same(plain(value), round_trip(value))


def random_value(rnd: random.Random, depth: int = 0) -> Any:
    leaves = [None, True, False, 0, -7, 2**70, 1.5, -0.0, math.nan, math.inf, "", "text", "1"]
    kind = rnd.random()
    if depth > 3 or kind < 0.5:
        return rnd.choice([*leaves, datetime.date(2020, 2, 29), b"\x00"])
    if kind < 0.75:
        return [random_value(rnd, depth + 1) for _ in range(rnd.randint(0, 4))]
    keys = [None, True, False, 0, 1, -3, 2.5, math.inf, "a", "true", "null", "1"]
    return {rnd.choice(keys): random_value(rnd, depth + 1) for _ in range(rnd.randint(0, 5))}


def test_plain_is_the_json_round_trip_on_generated_values() -> None:
    rnd = random.Random(42)
    for _ in range(2000):
        value = random_value(rnd)
        assert same(plain(value), round_trip(value)), value


def test_plain_shares_the_texts() -> None:
    text = "".join(["sha", "red"])  # a text object of its own, not an interned constant
    made = plain({"k": [text]})
    assert made["k"][0] is text

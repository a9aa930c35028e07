"""Workflow variables: conversion of -v values, validation, required variables."""

from __future__ import annotations

from typing import Any

import pytest

from accord.engine.errors import ConfigError
from accord.engine.spec import VariableSpec, variable_spec
from accord.engine.variables import default_problem, parse_assignments, resolve


def one(spec: dict[str, Any] | Any, raw: Any) -> Any:
    specs = {"v": VariableSpec(**spec) if isinstance(spec, dict) else variable_spec(spec)}
    return resolve(specs, {"v": raw}, where="w.workflow.yml")["v"]


@pytest.mark.parametrize(
    ("spec", "raw", "expected"),
    [
        ({"type": "integer"}, "3", 3),
        ({"type": "integer"}, " 42 ", 42),
        ({"type": "number"}, "2.5", 2.5),
        ({"type": "number"}, "7", 7),
        ({"type": "boolean"}, "true", True),
        ({"type": "boolean"}, "no", False),
        ({"type": "boolean"}, "1", True),
        ({"type": "string"}, "007", "007"),
        ({"type": "array"}, '["EU", "US"]', ["EU", "US"]),
        ({"type": "array"}, "EU,US", ["EU", "US"]),
        ({"type": "array"}, "[1, 2]", [1, 2]),
        ({"type": "array"}, "EU", ["EU"]),
        ({"type": "array", "items": {"type": "integer"}}, "1, 2", [1, 2]),
        ({"type": "object"}, '{"a": 1}', {"a": 1}),
        ({"type": ["integer", "string"]}, "x", "x"),
        ({"type": ["integer", "string"]}, "5", 5),
    ],
)
def test_command_line_values_are_converted_to_the_declared_type(
    spec: dict[str, Any], raw: str, expected: Any
) -> None:
    value = one(spec, raw)
    assert value == expected
    assert type(value) is type(expected)


def test_untyped_variable_keeps_text() -> None:
    assert one("default", "3") == "3"


def test_values_from_a_parent_workflow_keep_their_type() -> None:
    assert one({"type": "integer"}, 3.0) == 3
    assert one({"type": "array"}, ["a"]) == ["a"]


@pytest.mark.parametrize(
    ("spec", "raw"),
    [
        ({"type": "integer"}, "3.5"),
        ({"type": "integer"}, "three"),
        ({"type": "boolean"}, "maybe"),
        ({"type": "number"}, "abc"),
        ({"type": "object"}, "[1]"),
    ],
)
def test_wrong_type_is_an_error_naming_the_variable(spec: dict[str, Any], raw: str) -> None:
    with pytest.raises(ConfigError) as info:
        one(spec, raw)
    assert "variable 'v'" in info.value.message
    assert repr(raw) in info.value.message
    assert str(spec["type"]) in info.value.message


def test_enum_is_validated() -> None:
    spec = {"type": "string", "enum": ["EU", "US"]}
    assert one(spec, "EU") == "EU"
    with pytest.raises(ConfigError) as info:
        one(spec, "XX")
    assert "'XX' is not one of ['EU', 'US']" in info.value.message


def test_minimum_is_validated() -> None:
    with pytest.raises(ConfigError, match="less than the minimum"):
        one({"type": "integer", "minimum": 1}, "0")


def test_missing_required_variable_is_named() -> None:
    specs = {"month": VariableSpec(type="integer"), "region": variable_spec("EU")}
    with pytest.raises(ConfigError) as info:
        resolve(specs, {}, where="sales.workflow.yml", lines={"month": 3})
    message = info.value.message
    assert message.startswith("sales.workflow.yml:3: ")
    assert "variable 'month' is required" in message
    assert "-v month=" in message


def test_wrong_type_error_names_file_and_line() -> None:
    specs = {"month": VariableSpec(type="integer", default=1)}
    with pytest.raises(ConfigError) as info:
        resolve(specs, {"month": "March"}, where="sales.workflow.yml", lines={"month": 4})
    assert info.value.message.startswith("sales.workflow.yml:4: variable 'month'")
    assert info.value.exit_code == 2


def test_defaults_apply_and_given_values_win() -> None:
    specs = {
        "month": VariableSpec(type="integer", default=1),
        "region": variable_spec("EU"),
        "note": variable_spec(None),
    }
    assert resolve(specs, {}, where="w") == {"month": 1, "region": "EU", "note": None}
    assert resolve(specs, {"month": "12"}, where="w")["month"] == 12


def test_explicit_null_default_is_not_required() -> None:
    spec = VariableSpec.model_validate({"type": ["string", "null"], "default": None})
    assert resolve({"v": spec}, {}, where="w") == {"v": None}


def test_unknown_variable_is_an_error_listing_declared_ones() -> None:
    specs = {"month": variable_spec(1)}
    with pytest.raises(ConfigError) as info:
        resolve(specs, {"mnth": "2"}, where="w.workflow.yml")
    assert "unknown variable 'mnth'" in info.value.message
    assert "month" in info.value.message


def test_parse_assignments() -> None:
    assert parse_assignments(["a=1", "b=x=y", "c="]) == {"a": "1", "b": "x=y", "c": ""}
    with pytest.raises(ConfigError, match="name=value"):
        parse_assignments(["novalue"])


def test_a_variable_given_twice_is_an_error() -> None:
    with pytest.raises(ConfigError, match="-v m is given twice"):
        parse_assignments(["m=1", "n=2", "m=3"])


@pytest.mark.parametrize(
    ("declared", "problem"),
    [
        ({"type": "integer", "default": "abc"}, "default 'abc' is not of type integer"),
        ({"type": "integer", "default": True}, "default True is not of type integer"),
        ({"type": "integer", "minimum": 5, "default": 1}, "1 is less than the minimum of 5"),
        ({"enum": ["EU", "US"], "default": "XX"}, "default 'XX' is not one of ['EU', 'US']"),
        ({"type": ["string", "null"], "default": 3}, "is not of type string or null"),
    ],
)
def test_a_default_that_breaks_its_own_schema_is_named(
    declared: dict[str, Any], problem: str
) -> None:
    message = default_problem("v", VariableSpec(**declared))
    assert message is not None and problem in message


@pytest.mark.parametrize(
    "declared",
    [
        {"type": "number", "default": 3},
        {"type": "integer", "minimum": 5, "default": 5},
        {"type": "string"},
        {"type": "string", "default": None},
        {"default": [1, 2]},
    ],
)
def test_good_defaults_pass(declared: dict[str, Any]) -> None:
    assert default_problem("v", VariableSpec(**declared)) is None


@pytest.mark.parametrize("items", [{"type": None}, {"type": "0string"}, {"type": [["x"]]}])
def test_a_broken_sub_schema_is_reported_not_crashed_on(items: dict[str, Any]) -> None:
    spec = VariableSpec(type="array", items=items, default=["2024-01"])
    message = default_problem("months", spec)
    assert message is not None and "its schema is invalid" in message
    with pytest.raises(ConfigError, match="its schema is invalid"):
        resolve({"months": spec}, {"months": '["2024-02"]'}, where="w.workflow.yml")

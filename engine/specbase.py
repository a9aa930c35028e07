"""The base of every file model, in a module of its own: the database kinds define their
config entries with it, and `engine.spec` collects them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


def oxy_ignored(description: str = "Accepted for Oxy compatibility and ignored.") -> Any:
    """A field Oxy's files use that accord accepts and ignores."""
    return Field(default=None, description=description, json_schema_extra={"oxy_ignored": True})


class Spec(BaseModel):
    """Base of every file model: frozen, unknown keys rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

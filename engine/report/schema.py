"""`accord schema`: JSON Schema of each file kind, for editor completion."""

from __future__ import annotations

from typing import Any

from ..kinds import file_kinds
from ..loader import agent_model, workflow_model
from ..spec import ConfigSpec


def schemas() -> dict[str, Any]:
    """JSON Schema documents by file kind."""
    return {
        "workflow": workflow_model().model_json_schema(),
        "config": ConfigSpec.model_json_schema(),
        "agent": agent_model().model_json_schema(),
        **{name: model.model_json_schema() for name, model in file_kinds().items()},
    }

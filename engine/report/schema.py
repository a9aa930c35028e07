"""`accord schema`: JSON Schema of each file kind, for editor completion."""

from __future__ import annotations

from typing import Any

from accord.engine.loader import workflow_model
from accord.engine.registry import file_kinds
from accord.engine.spec import AgentSpec, ConfigSpec


def schemas() -> dict[str, Any]:
    """JSON Schema documents by file kind."""
    return {
        "workflow": workflow_model().model_json_schema(),
        "config": ConfigSpec.model_json_schema(),
        "agent": AgentSpec.model_json_schema(),
        **{name: model.model_json_schema() for name, model in file_kinds().items()},
    }

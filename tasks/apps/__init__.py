"""Oxy's data apps (`.app.yml`): `accord run` runs the app's tasks as a workflow and writes its
page; `accord validate` checks it like a workflow."""

from ...engine.kinds import register_workflow_kind
from . import page
from .spec import APP_SUFFIXES, load_app

for _suffix in APP_SUFFIXES:
    register_workflow_kind(_suffix, load_app)

__all__ = ["load_app", "page"]

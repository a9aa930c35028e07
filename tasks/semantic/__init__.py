"""Oxy's semantic layer: `.view.yml` and `.topic.yml` files, the `semantic_query` task that
compiles a topic's measures and dimensions to SQL, and their validate checks. The agent tool
that asks the layer is the agent's (`accord.tasks.agent.semantic_tool`).
"""

from ...engine.kinds import register_file_check
from . import task
from .checks import check_semantic_file

register_file_check("semantic", check_semantic_file)

__all__ = ["task"]

"""Conversation tests in Python: scripted turns played against an agent and checked turn by
turn. `from accord.conversations import ConversationRunner, UserTurn, AgentTurn, ToolCall`;
`accord.pytest_plugin` runs them as pytest tests.
"""

from __future__ import annotations

from .tasks.suites.frontends.conversations.agents import ModelAgent
from .tasks.suites.frontends.conversations.runner import (
    ConversationFailed,
    ConversationResult,
    ConversationRunner,
    JudgeNeeded,
)
from .tasks.suites.frontends.conversations.turns import AgentTurn, ToolCall, UserTurn

__all__ = [
    "AgentTurn",
    "ConversationFailed",
    "ConversationResult",
    "ConversationRunner",
    "JudgeNeeded",
    "ModelAgent",
    "ToolCall",
    "UserTurn",
]

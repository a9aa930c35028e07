"""Conversation tests in Python: scripted turns played against an agent and checked turn by
turn. `from accord.conversations import ConversationRunner, UserTurn, AgentTurn, ToolCall`;
`accord.pytest_plugin` runs them as pytest tests.
"""

from __future__ import annotations

from accord.tasks.suites.conversations.agents import ModelAgent
from accord.tasks.suites.conversations.runner import (
    ConversationFailed,
    ConversationResult,
    ConversationRunner,
    JudgeNeeded,
)
from accord.tasks.suites.conversations.turns import AgentTurn, ToolCall, UserTurn

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

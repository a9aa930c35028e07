"""The script of a conversation: user turns, the agent turns expected after them, and the
tool calls an agent turn is expected to make."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .....engine.errors import AccordError


class ToolCall(BaseModel):
    """A tool call: its name, arguments and (optionally) the result it returned. In an
    expected turn, `result=None` leaves the result unchecked."""

    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: Any = None

    def __init__(
        self, name: str, arguments: dict[str, Any] | None = None, result: Any = None
    ) -> None:
        super().__init__(name=name, arguments=arguments or {}, result=result)


class Turn(BaseModel):
    """One turn: who speaks, the text (an AgentTurn may list alternatives) and tool calls."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    text: str | list[str] = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)

    @property
    def is_agent(self) -> bool:
        return self.role == "assistant"

    def data(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


class UserTurn(Turn):
    """What the user says."""

    role: Literal["user"] = "user"

    def __init__(self, text: str) -> None:
        if not isinstance(text, str):
            raise AccordError(f"UserTurn takes the user's text, not {type(text).__name__}")
        super().__init__(role="user", text=text)


class AgentTurn(Turn):
    """What the agent is expected to say and do: `text` is matched by the rules of
    `matching` ("*", "<statement>", a list of alternatives, or a reply), `tool_calls` by
    count, name, arguments and result."""

    role: Literal["assistant"] = "assistant"

    def __init__(
        self, text: str | Sequence[str] = "", tool_calls: Sequence[ToolCall] | None = None
    ) -> None:
        alternatives = text if isinstance(text, str) else list(text)
        super().__init__(role="assistant", text=alternatives, tool_calls=list(tool_calls or []))


def check_script(turns: Sequence[Turn]) -> None:
    """Turns alternate between user and agent and end with an AgentTurn; a leading AgentTurn
    is the agent's opening message. Raises `AccordError` saying which turn breaks the rule."""
    if not turns:
        raise AccordError("the expected conversation is empty: give UserTurn and AgentTurn")
    for number, turn in enumerate(turns, 1):
        if not isinstance(turn, Turn):
            raise AccordError(
                f"turn {number} is a {type(turn).__name__}: give UserTurn and AgentTurn objects"
            )
        if number > 1 and turn.role == turns[number - 2].role:
            kind = "AgentTurn" if turn.is_agent else "UserTurn"
            raise AccordError(
                f"turns {number - 1} and {number} are both {kind}s: user and agent turns "
                "must alternate"
            )
    if not turns[-1].is_agent:
        raise AccordError(
            f"the conversation ends with a UserTurn (turn {len(turns)}): end it with the "
            "AgentTurn expected after it"
        )
    for number, turn in enumerate(turns, 1):
        if turn.is_agent and isinstance(turn.text, list) and not turn.text:
            raise AccordError(f"turn {number}: an empty list of alternatives matches nothing")

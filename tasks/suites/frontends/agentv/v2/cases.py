"""An AgentV test as a core case, with what AgentV's judges and scripts are given."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .....evaluators.cases import Case


@dataclass(frozen=True)
class AgentVCase(Case):
    """A case of an AgentV eval file.

    `input` holds the messages the target receives (file blocks inlined, guideline files
    moved into the system message); `raw_input` and `expected_messages` are the messages as
    written (file blocks resolved), for code judges and prompt templates. `question` is the
    input's text, `reference_answer` the last expected message's content.
    """

    question: str = ""
    reference_answer: str = ""
    raw_input: tuple[dict[str, Any], ...] = ()
    expected_messages: tuple[dict[str, Any], ...] = ()
    input_files: tuple[str, ...] = ()
    guideline_files: tuple[str, ...] = ()
    file_paths: tuple[str, ...] = ()  # every file block's file in order (AgentV's file_paths)
    guidelines: str = ""
    conversation_id: str | None = None
    dataset: str = ""
    workspace: Any = None
    extra: dict[str, Any] = field(default_factory=dict)

    def data(self) -> dict[str, Any]:
        return {
            **super().data(),
            "question": self.question,
            "reference_answer": self.reference_answer,
            "input_files": list(self.input_files),
            "guideline_files": list(self.guideline_files),
            "conversation_id": self.conversation_id,
            "sidecar": self.sidecar,
        }

    def prompt_text(self) -> str:
        """The input as one text: the user message alone, or every message after a role
        marker when there are several turns."""
        messages = [m for m in self.input if m.get("role") != "system"]
        if len(messages) == 1:
            return str(messages[0].get("content", ""))
        return "\n\n".join(
            f"@[{str(m.get('role', 'user')).capitalize()}]:\n{m.get('content', '')}"
            for m in messages
        )

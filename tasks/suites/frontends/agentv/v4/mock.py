"""AgentV's `mock` provider: every test answered with one canned text, no model asked, as
AgentV 4 answers it (commit 58f316ca2: providers/mock.ts MockProvider, providers/targets.ts
resolveMockConfig).

A catalog entry (`.agentv/providers.yaml`):

    - id: mock
      label: llm
      response: '{"riskLevel": "High"}'   # optional

The answer is `response` when it is text; otherwise (left out, a number, a list) AgentV's
DEFAULT_MOCK_RESPONSE. AgentV reads no other key of the entry (its delays are never set
from the catalog: resolveMockConfig reads `response` only), so none is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from .....evaluators.cases import Case, Output
from ....core.targets import Target, agent_reply

if TYPE_CHECKING:
    from ......engine.context import TaskContext

ID = "agentv-mock"  # the entry the catalog hands the provider builder (no promptfoo id)
# mock.ts DEFAULT_MOCK_RESPONSE, as written there
DEFAULT_RESPONSE = (
    '{"answer":"Mock provider response. Configure targets.yaml to supply a custom value."}'
)


def entry_config(entry: dict[str, Any]) -> dict[str, Any]:
    """A catalog `mock` entry as the config of MockTarget (resolveMockConfig)."""
    response = entry.get("response")
    return {"response": response if isinstance(response, str) else DEFAULT_RESPONSE}


class MockTarget(Target):
    """The entry's canned answer, whatever the test asks."""

    type: Literal["agentv-mock"] = "agentv-mock"
    response: str = DEFAULT_RESPONSE

    def describe(self) -> str:
        return "AgentV's mock provider (a canned answer)"

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        # MockProvider.invoke: one assistant message holding the canned response
        return agent_reply({"output_messages": [{"role": "assistant", "content": self.response}]})

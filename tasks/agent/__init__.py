"""`agent`: a model answers a rendered prompt, with an agent file's instructions and tools.

- `task`: the task type (`AgentTaskSpec`, `answer`, `run_agent`).
- `agent_files`: loading and checking `.agent.yml` files; `tool_checks`: checking their tools
  (registered as a file check of `accord validate`).
- `tools`: the tool-calling loop and the tools (with `chart_tool`, `retrieval_tool` and
  `semantic_tool`); `routing`: routing agents; `context`: system instructions (context files,
  database schemas); `anonymize`: Oxy's anonymizer.
"""

from .agent_files import agent_file_issues, check_agent_file, instruction_issues, load_agent
from .task import AgentTaskSpec, answer, run_agent, task_agent
from .tool_checks import check_agent_tools

__all__ = [
    "AgentTaskSpec",
    "agent_file_issues",
    "answer",
    "check_agent_file",
    "check_agent_tools",
    "instruction_issues",
    "load_agent",
    "run_agent",
    "task_agent",
]

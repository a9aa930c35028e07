"""AgentV 4's assertions: promptfoo's types with AgentV's own, its judges and code graders."""

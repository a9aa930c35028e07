"""What both AgentV formats share: the `.agentv` project folder, targets, the cli provider,
the target proxy, command templates, JS values, workspaces and JSONL results."""

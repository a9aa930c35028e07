"""AgentV's eval files with `tests:` (YAML or JSONL): schema, loader, evaluators, judges."""

"""AgentV eval files: `common/` (the `.agentv` project folder, its targets and providers
catalogs, the cli provider, the target proxy, JS values, JSONL results), `v2/` (the YAML and
JSONL format with `tests:`), `v4/` (AgentV 4: promptfoo's form read through its own dialect)."""

"""Oxy's tests as suites: `tests:` in workflows and agents, and `.test.yml` case files."""

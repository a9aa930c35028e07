"""Test suites: `tests:` of workflows and agents, `.test.yml` case files, and their reports.

`accord test` loads a file into prepared tests (`loading`), runs them as test nodes on one
scheduler (`testing`), scores them (`metrics`) and renders the result (`reports`, `html`).
"""

"""The file formats users bring, one package each, each registering one `FrontEnd`
(`core/frontend.py`): `evalfile` (.eval.yml), `oxy` (.test.yml and `tests:`), `promptfoo`,
`agentv` (both AgentV formats), `scenarios`, `conversations` and `autoblocks` (the Python API)."""

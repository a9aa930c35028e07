"""The output formats of `accord test` and `accord eval` (`formats`, registered in the
engine's one registry of formats) and their renderers: `text` (test), `evals` (eval), `html`
(the test report page) and `scenarios` (a scenario suite's page and JSON)."""

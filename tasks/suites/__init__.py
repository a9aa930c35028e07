"""Evaluation: suites of cases compiled into nodes of the engine's DAG, and their front-ends.

The package in layers, each standing on those before it (core -> testing -> frontends ->
commands, reports, compare); docs/architecture.md has the path from a file to a report and a
table of where each format lives.

- `core/`: what every front-end stands on. A `Suite` of cases (`cases`, answered by
  `targets`) becomes target, check and verdict nodes of one plan run by the engine's runner
  (`nodes`); the verdicts (`verdicts`) ask the suite's scoring rule (`scoring_rules`: accord,
  promptfoo, agentv, agentv4; where "passed" is decided), repeats are combined by the
  reducers (`reducers`, `trials`), and `gate` holds the CI gates. `frontend` is the
  `FrontEnd` contract and `BUILTIN`, the front-ends in the order they are asked; `subdag` the
  minimal sub-DAG of a task. The checks themselves are `accord.tasks.evaluators`, whose
  `base.CHECKS` is the one check registry, namespaced by family (accord/, promptfoo/,
  agentv/, agentv4/).
- `testing/`: `accord test`'s pipeline: Oxy's workflow and agent tests ready to run
  (`prepared`), as container nodes of the minimal sub-DAG of the task under test (`plan`),
  scored (`scoring`) into outcomes (`outcomes`).
- `frontends/`: the formats a user brings, one package each, each registering one
  `FrontEnd` (what it claims, how it loads, its own options, what it does around a run):
  `evalfile` (.eval.yml), `oxy/` (.test.yml and `tests:`), `promptfoo/` (configs; `asserts/`
  its assertion types), `agentv/` (both AgentV formats: `common/` what they share, `v2/` YAML
  and JSONL with `tests:`, `v4/` AgentV 4, promptfoo's form with AgentV's graders), `scenarios/`
  (scenario files and their report pages), `conversations/` (conversation tests, with no file
  form: pytest runs them, `accord.pytest_plugin`) and `autoblocks/` (seed 001's Python API,
  `accord.evals`). A new front-end is a package with its `frontend.py` and one line in
  `core/frontend.BUILTIN`.
- `commands/`: `accord test` (`test`, with the skeleton both commands share: options,
  outputs, exit codes) and `accord eval` (`eval`).
- `reports/`: the output formats of `test` and `eval` (`formats`, in the engine's registry of
  formats) and their renderers (`text`, `evals`, `html`).
- `compare/`: `accord runs compare`, `accord view` and the `--baseline` gate.
"""

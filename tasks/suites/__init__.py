"""Evaluation: suites of cases compiled into nodes of the engine's DAG, and their front-ends.

- `core/`: the evaluation core every front-end stands on. A prepared suite (`prepared`) becomes
  test nodes on one scheduler (`testing`, `subdag`: a test of `task_ref: X` runs X's ancestors
  only), its answers are scored by registered evaluators (`scoring`, with `accord.tasks
  .evaluators`), into outcomes (`outcomes`; `reducers`: trial strategies, pass@k, intervals)
  that a gate checks (`gate`).
- `oxy/`: Oxy's tests: `tests:` of workflows and agents, and `.test.yml` case files (`specs`,
  `loading`, `checks`, `datasets`; their PASS/FAIL grader is the `correctness` evaluator of
  `accord.tasks.evaluators.judged`).
- `reports/`: the report formats, one registered writer each (`formats`: pretty, json, junit,
  html; `text` and `html` render them).
- `command.py`: `accord test`.
- `frontends`: the file kinds `accord eval` runs and `accord validate` checks, one registered
  `FrontEnd` each (what it claims, how it loads, its own options, what it does around a run):
  `.eval.yml` (`evalfile`), `.test.yml` (`oxy/frontend`), AgentV (`agentv/frontend`), scenario
  files (`scenarios/frontend`). A new front-end is a package with its `frontend.py` and one
  line in `frontends.BUILTIN`. Conversations (`conversations/`) have no file form: pytest runs
  them (`accord.pytest_plugin`).
"""

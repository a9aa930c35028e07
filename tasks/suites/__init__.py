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

A new front-end (eval case files, scenario suites, conversations) is a package beside `oxy/`
that prepares suites for `core/`.
"""

"""Evaluation: suites of cases compiled into nodes of the engine's DAG, and their front-ends.

See docs/architecture.md for the path from a file to a report.

- `frontends`: the file kinds `accord eval` runs and `accord validate` checks, one registered
  `FrontEnd` each (what it claims, how it loads, its own options, what it does around a run):
  promptfoo configs (`promptfoo/frontend`), scenario files (`scenarios/frontend`), `.eval.yml`
  (`evalfile`), `.test.yml` (`oxy/frontend`) and AgentV files (`agentv/frontend`). A new
  front-end is a package with its `frontend.py` and one line in `frontends.BUILTIN`.
- `core/`: what every front-end stands on. A `Suite` of cases (`cases`, answered by `targets`)
  becomes target, check and verdict nodes of one plan run by the engine's runner (`nodes`);
  verdicts (`verdicts`), repeats combined by the reducers (`reducers`, `trials`), and the CI
  gate (`gate`). Oxy's workflow and agent tests run as container nodes of the minimal sub-DAG
  of the task under test (`prepared`, `testing`, `subdag`, scored by `scoring`). The
  evaluators themselves are `accord.tasks.evaluators`.
- `oxy/`: Oxy's tests: `tests:` of workflows and agents, and `.test.yml` case files.
- `agentv/`, `promptfoo/`, `scenarios/`: the other file formats' suites and checks.
- `conversations/`: conversation tests, with no file form (pytest runs them,
  `accord.pytest_plugin`); `pyapi*.py`: the Python API (`accord.evals`).
- `command.py`: the command skeleton of `accord test` and `accord eval` (shared options,
  outputs, exit codes) and `accord test`; `eval_command.py`: `accord eval`.
- `reports/`: the output formats of `test` and `eval` (`formats`, in the engine's registry of
  formats) and their renderers (`text`, `evals`, `html`, `scenarios`).
- `compare/`: `accord runs compare`, `accord view` and the `--baseline` gate.
"""

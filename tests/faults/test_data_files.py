"""Data files that used to crash or mislead: a JSON value 200,000 levels deep in a JSONL dataset
was a RecursionError (an internal error, exit 70), and a NaN was read as a number (then
reported as "YAML read this value as nan"). Every data file now fails cleanly: the file, the
line, what to do, exit 2.

Each run is the real `accord` command in a subprocess, bounded in time (helpers.accord).
"""

from __future__ import annotations

from pathlib import Path

from tests.bounds import PROCESS_SECONDS
from tests.faults.helpers import accord, assert_no_traceback

DEEP = "[" * 200_000 + "]" * 200_000
NESTED = "nested more than 100 levels deep: flatten it"
NO_NAN = "is not a JSON number (the JSON spec has no NaN or Infinity, and accord reads none)"


def test_an_agentv_jsonl_dataset(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "dataset.jsonl").write_text(
        '{"id": "fine", "input": "hi", "criteria": "says hi"}\n'
        f'{{"id": "deep", "input": {DEEP}, "criteria": "x"}}\n'
        "\n"
        '{"id": "nan", "input": "hi", "criteria": "x", "expected_output": NaN}\n'
        '{"id": "broken", "input": "hi",\n'
    )
    done = accord("eval", "evals/dataset.jsonl", cwd=tmp_path, timeout=PROCESS_SECONDS)
    assert done.code == 2, done.stderr[-2000:]
    assert_no_traceback(done)
    assert f"evals/dataset.jsonl:2:1 the value is {NESTED}" in done.stderr
    assert f"evals/dataset.jsonl:4:1 NaN {NO_NAN}: write null" in done.stderr
    assert "evals/dataset.jsonl:5:" in done.stderr and "invalid JSON: Expecting" in done.stderr


def test_custom_test_datasets_in_jsonl_and_csv(tmp_path: Path) -> None:
    (tmp_path / "config.yml").write_text(
        "models:\n  - name: fake\n    vendor: openai\n    model_ref: gpt-4o\n    key_var: NO_KEY\n"
    )
    (tmp_path / "a.agent.yml").write_text(
        "model: fake\ntests:\n"
        "  - {type: custom, dataset: rows.jsonl}\n"
        "  - {type: custom, dataset: rows.csv}\n"
        "  - {type: custom, dataset: typed.jsonl}\n"
    )
    (tmp_path / "rows.jsonl").write_text(
        '{"query": "a", "response": "1"}\n'
        f'{{"query": "b", "relevant_contexts": {DEEP}}}\n'
        '{"query": "c", "response": -Infinity}\n'
    )
    deep_cell = "[" * 150 + "]" * 150
    (tmp_path / "rows.csv").write_text(f'query,relevant_contexts\na,"{deep_cell}"\n')
    (tmp_path / "typed.jsonl").write_text('{"query": "a"}\n{"query": 5}\n')
    done = accord("test", "a.agent.yml", cwd=tmp_path, timeout=PROCESS_SECONDS)
    assert done.code == 2, done.stderr[-2000:]
    assert_no_traceback(done)
    assert f"{tmp_path / 'rows.jsonl'}:2:1 the value is {NESTED}" in done.stderr
    assert f"{tmp_path / 'rows.jsonl'}:3:1 -Infinity {NO_NAN}" in done.stderr
    assert f"{tmp_path / 'rows.csv'}:2:1 the value is {NESTED}" in done.stderr
    # a JSON file is not YAML: the advice names the format the value was read from
    assert f"{tmp_path / 'typed.jsonl'}:2:1 query: " in done.stderr
    assert "(JSON read this value as 5): put it in quotes" in done.stderr
    assert "YAML read this value" not in done.stderr


def test_a_scenario_agent_config_file_nested_too_deep(tmp_path: Path) -> None:
    (tmp_path / "deep.yml").write_text("model: " + "[" * 30_000 + "\n")
    (tmp_path / "scenarios.yaml").write_text(
        "agent_class: agents.Echo\nagent_config: deep.yml\n"
        "scenarios:\n  - {name: A, input_message: hi, expected_output: ok}\n"
    )
    done = accord("eval", "scenarios.yaml", "--project-root", str(tmp_path), cwd=tmp_path)
    assert done.code == 2, done.stderr[-2000:]
    assert_no_traceback(done)
    assert f"{tmp_path / 'deep.yml'}: invalid YAML: values nested far more than 100" in done.stderr


def test_json_extract_of_a_file_nested_too_deep_fails_its_scenario(tmp_path: Path) -> None:
    (tmp_path / "deep.json").write_text(DEEP)
    (tmp_path / "nan.json").write_text('{"score": NaN}')
    (tmp_path / "agents.py").write_text(
        "class Echo:\n    def __init__(self, config):\n        pass\n\n"
        "    def run(self, message):\n        return message\n"
    )
    (tmp_path / "scenarios.yaml").write_text(
        "agent_class: agents.Echo\nscenarios:\n"
        "  - {name: Deep, input_message: '{{ JSON_EXTRACT deep.json $[0] }}',\n"
        "    expected_output: ok}\n"
        "  - {name: Nan, input_message: '{{ JSON_EXTRACT nan.json $.score }}',\n"
        "    expected_output: ok}\n"
    )
    done = accord("eval", "scenarios.yaml", "--project-root", str(tmp_path), cwd=tmp_path)
    assert done.code == 1, done.stderr[-2000:]  # the scenarios failed; the run went on
    assert_no_traceback(done)
    assert "macro {{ JSON_EXTRACT deep.json '$[0]' }}: file 'deep.json' is not JSON accord " in (
        done.stderr
    )
    assert f"reads: the value is {NESTED}" in done.stderr
    assert f"file 'nan.json' is not JSON accord reads: NaN {NO_NAN}" in done.stderr

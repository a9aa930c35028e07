"""promptfoo configs through `accord eval`: what loads and runs, what is refused (file, line,
exit 2), and promptfoo's -o files."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import fake_model_config
from tests.evals.conftest import Run, accord
from tests.fakes import FakeOpenAI, Reply

EXAMPLE = Path(__file__).resolve().parents[3] / "workflows" / "promptfoo"


def project(tmp_path: Path, files: dict[str, str], config: str = "") -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "config.yml").write_text(config)
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "promptfooconfig.yaml"


def results(path: Path) -> dict[tuple[int, int], dict[str, Any]]:
    """promptfoo's JSON output, each result by (testIdx, promptIdx)."""
    doc = json.loads(path.read_text())
    return {(r["testIdx"], r["promptIdx"]): r for r in doc["results"]["results"]}


def test_the_example_runs_its_matrix_and_writes_promptfoo_json(tmp_path: Path) -> None:
    folder = tmp_path / "promptfoo"
    shutil.copytree(EXAMPLE, folder)
    run = accord("eval", "-c", folder / "promptfooconfig.yaml", "-o", tmp_path / "out.json")
    assert run.exit_code == 1, run.stderr  # some cases fail on purpose
    found = results(tmp_path / "out.json")
    # 3 tests (2 from the CSV, 1 inline) x 2 providers x 2 prompts
    assert len(found) == 12
    assert found[(0, 0)]["response"]["output"] == "Hello Bo, welcome to Oslo."
    assert found[(0, 2)]["response"]["output"] == "HELLO BO, WELCOME TO OSLO."  # python provider
    assert found[(0, 2)]["provider"] == {"id": "python:provider.py", "label": "capitals"}
    # the CSV's `__expected` became an assertion after defaultTest's
    assert [a["type"] for a in found[(0, 0)]["testCase"]["assert"]] == ["icontains", "icontains"]
    assert found[(1, 2)]["success"] is False and found[(1, 2)]["score"] == 0.5
    assert found[(1, 2)]["gradingResult"]["reason"] == 'Expected output to contain "Paris"'
    prompts = json.loads((tmp_path / "out.json").read_text())["results"]["prompts"]
    assert [p["provider"] for p in prompts] == ["echo", "echo", "capitals", "capitals"]
    # derivedMetrics: names + cities over the column's summed named scores
    assert prompts[0]["metrics"]["namedScores"] == {
        "names": 3.0, "cities": 1.0, "names_and_cities": 4.0,
    }  # fmt: skip
    assert prompts[0]["metrics"]["testPassCount"] == 3


def test_var_lists_expand_and_default_test_and_scenarios_merge(tmp_path: Path) -> None:
    config = project(tmp_path, {"promptfooconfig.yaml": """
prompts: ['{{greeting}} {{name}} from {{place}}']
providers: [echo]
defaultTest:
  vars: {greeting: Hi, place: home}
  assert: [{type: contains, value: Hi}]
tests:
  - vars: {name: [Ann, Bob]}
scenarios:
  - config: [{vars: {place: Rome}}, {vars: {place: Oslo}}]
    tests:
      - vars: {name: Cy}
        assert: [{type: contains, value: Cy from}]
"""})  # fmt: skip
    run = accord("eval", config, "-o", tmp_path / "out.json")
    assert run.exit_code == 0, run.stderr
    outputs = [r["response"]["output"] for _, r in sorted(results(tmp_path / "out.json").items())]
    assert outputs == ["Hi Ann from home", "Hi Bob from home", "Hi Cy from Rome",
                       "Hi Cy from Oslo"]  # fmt: skip
    run = accord("eval", config, "-o", tmp_path / "twice.json", "--repeat", "2")
    assert run.exit_code == 0, run.stderr
    # promptfoo's --repeat: the second round's tests are numbered after the first's
    assert sorted(results(tmp_path / "twice.json")) == [(i, 0) for i in range(8)]


def test_a_json_chat_prompt_reaches_an_openai_provider_as_messages(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.script(Reply(text="Paris"))
    config = project(tmp_path, {
        "chat.json": '[{"role": "system", "content": "Answer in one word."},'
                     ' {"role": "user", "content": "Capital of {{country}}?"}]',
        "promptfooconfig.yaml": f"""
prompts: [file://chat.json]
providers:
  - id: openai:chat:fake-model
    config: {{apiBaseUrl: '{fake_llm.url}', apiKey: test-key, temperature: 0}}
tests:
  - vars: {{country: France}}
    assert: [{{type: equals, value: Paris}}]
""",
    })  # fmt: skip
    run = accord("eval", config, "--cache", "off")
    assert run.exit_code == 0, run.stderr
    sent = fake_llm.requests[0]
    assert sent["model"] == "fake-model" and sent["temperature"] == 0
    assert sent["max_tokens"] == 1024  # promptfoo's OpenAI provider default
    assert sent["messages"] == [
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "Capital of France?"},
    ]


def test_an_openai_provider_finds_its_server_and_key_in_the_config_env(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    config = project(tmp_path, {"promptfooconfig.yaml": f"""prompts: [hello]
providers: [openai:fake-model]
env: {{OPENAI_BASE_URL: '{fake_llm.url}', OPENAI_API_KEY: from-env-key}}
tests: [{{assert: [{{type: equals, value: 'echo: hello'}}]}}]
"""})  # fmt: skip
    run = accord("eval", config, "--cache", "off", "-o", tmp_path / "out.json")
    assert run.exit_code == 0, run.stderr
    assert fake_llm.authorizations == ["Bearer from-env-key"]
    # the config is in promptfoo's output, its key masked
    written = (tmp_path / "out.json").read_text()
    assert "from-env-key" not in written and "OPENAI_API_KEY" in written


def refused(run: Run, *parts: str) -> None:
    assert run.exit_code == 2, (run.exit_code, run.stderr)
    assert "Traceback" not in run.stderr
    for part in parts:
        assert part in run.stderr, run.stderr


def test_a_prompt_that_looks_like_a_path_is_read_as_promptfoo_reads_it(tmp_path: Path) -> None:
    config = project(tmp_path, {
        "p/a.txt": "From a file: {{x}}\n---\nSecond: {{x}}\n",
        "p/b.md": "Markdown {{x}}\n---\nstill one prompt",
        "promptfooconfig.yaml": """prompts:
  - p/a.txt
  - file://p/b.md
  - 'nothing/*.nope'
  - 'What is 2/3?'
providers: [echo]
tests: [{vars: {x: 1}}]
""",
    })  # fmt: skip
    run = accord("eval", config, "-o", tmp_path / "out.json")
    assert run.exit_code == 0, run.stderr
    doc = json.loads((tmp_path / "out.json").read_text())
    labels = [p["label"] for p in doc["results"]["prompts"]]
    # promptfoo's labels: the path joined to the config's folder as named, then the text
    folder = str(tmp_path)
    assert labels == [f"{folder}/p/a.txt: From a file: {{{{x}}}}",
                      f"{folder}/p/a.txt: Second: {{{{x}}}}",
                      f"{folder}/p/b.md: Markdown {{{{x}}}}\n---\nstill one prompt...",
                      "nothing/*.nope", "What is 2/3?"]  # fmt: skip
    # a glob matching nothing is text (above); a path naming no prompt file stops both tools
    config.write_text("prompts: ['Translate en/fr']\nproviders: [echo]\n")
    refused(accord("eval", config), "promptfooconfig.yaml:1", "as a file path", "en/fr")


def test_unknown_and_unsupported_keys_are_refused_at_their_line(tmp_path: Path) -> None:
    config = project(tmp_path, {"promptfooconfig.yaml": """prompts: [hi]
providers: [echo]
extensions: [file://hooks.py]
defaultTest:
  asert: []
tests:
  - vars: {a: 1}
    provider: echo
"""})  # fmt: skip
    run = accord("eval", config)
    refused(run, "promptfooconfig.yaml:3", "'extensions'", "not supported by accord",
            "promptfooconfig.yaml:5", "unknown key 'asert'", "did you mean 'assert'",
            "promptfooconfig.yaml:8", "'provider'")  # fmt: skip


def test_a_provider_config_key_accord_does_not_map_is_refused(tmp_path: Path) -> None:
    config = project(tmp_path, {"promptfooconfig.yaml": """prompts: [hi]
providers:
  - id: openai:chat:gpt-4o-mini
    config:
      functionToolCallbacks: {lookup: file://lookup.js}
  - openai:embedding:text-embedding-3-small
"""})  # fmt: skip
    refused(accord("eval", config), "promptfooconfig.yaml:5", "'functionToolCallbacks'",
            "promptfooconfig.yaml:6", "chat API only")  # fmt: skip


def test_a_nunjucks_construct_jinja_reads_otherwise_is_named_at_load(tmp_path: Path) -> None:
    config = project(tmp_path, {"promptfooconfig.yaml": """prompts:
  - "{% for k, v in facts %}{{k}}={{v}} {% endfor %}"
  - "{{ name | nl2br }}"
  - "{{ name.toUpperCase() }}"
providers: [echo]
tests:
  - vars: {facts: {a: 1}, name: x}
"""})  # fmt: skip
    refused(accord("eval", config), "promptfooconfig.yaml:2", "facts.items()",
            "'nl2br'", "'.toUpperCase' is JavaScript", "'x | upper'")  # fmt: skip


def test_length_reads_as_javascript_reads_it(tmp_path: Path) -> None:
    # nunjucks evaluates `x.length` as JavaScript: a string's (UTF-16) length, an array's size,
    # an object's own `length` key (promptfoo's simple-csv example reads `(style | load).length`)
    config = project(tmp_path, {"promptfooconfig.yaml": """
prompts: ['{{ word.length }} {{ items.length }} {{ (style | load).length }} [{{ obj.length }}]']
providers: [echo]
tests:
  - vars: {word: "h\u00e9\U0001F600", items: [1, 2, 3], style: '{"length": "brief"}', obj: {a: 1}}
    assert: [{type: equals, value: "4 3 brief []"}]
"""})  # fmt: skip
    run = accord("eval", config)
    assert run.exit_code == 0, run.stdout + run.stderr


def test_an_undefined_var_renders_empty_as_in_nunjucks_and_dump_is_json(tmp_path: Path) -> None:
    config = project(tmp_path, {"promptfooconfig.yaml": """
prompts: ['[{{ missing }}] {{ obj | dump }}']
providers: [echo]
tests: [{vars: {obj: {a: [1, 2]}}}]
"""})  # fmt: skip
    run = accord("eval", config, "-o", tmp_path / "out.json")
    assert run.exit_code == 0, run.stderr
    assert results(tmp_path / "out.json")[(0, 0)]["response"]["output"] == '[] {"a":[1,2]}'


def test_exec_provider_gets_the_prompt_as_data_never_as_shell_code(tmp_path: Path) -> None:
    config = project(tmp_path, {
        "run.py": "import sys\nprint('got:' + sys.argv[1])\n",
        "promptfooconfig.yaml": """prompts: ['{{ text }}']
providers: ['exec: python3 run.py']
tests:
  - vars: {text: "a'$(touch pwned)'; touch pwned2"}
    assert: [{type: starts-with, value: "got:a'$(touch"}]
""",
    })  # fmt: skip
    run = accord("eval", config, "-o", tmp_path / "out.json")
    assert run.exit_code == 0, run.stderr
    assert not (tmp_path / "pwned").exists() and not (tmp_path / "pwned2").exists()


def test_a_provider_that_fails_is_an_error_result_as_in_promptfoo(tmp_path: Path) -> None:
    config = project(tmp_path, {
        "fail.py": "import sys\nsys.stderr.write('boom')\nsys.exit(1)\n",
        "promptfooconfig.yaml": """prompts: ['x {{a}}']
providers: ['exec: python3 fail.py', echo]
tests: [{vars: {a: 1}, assert: [{type: contains, value: x, metric: m}]}]
""",
    })  # fmt: skip
    run = accord("eval", config, "-o", tmp_path / "out.json")
    assert run.exit_code == 1 and "boom" in run.stderr
    failed, passed = results(tmp_path / "out.json")[(0, 0)], results(tmp_path / "out.json")[(0, 1)]
    # promptfoo: a provider error is failureReason 2 (ERROR), score 0, no gradingResult
    assert (failed["success"], failed["score"], failed["failureReason"]) == (False, 0, 2)
    assert failed["gradingResult"] is None and "boom" in failed["error"]
    assert (passed["success"], passed["namedScores"]) == (True, {"m": 1.0})


def test_files_outside_the_project_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "tests.csv").write_text("q\nhi\n")
    (outside / "p.py").write_text("def call_api(p, o, c):\n    return {'output': p}\n")
    config = project(tmp_path / "proj", {"promptfooconfig.yaml": """prompts: ['{{q}}']
providers: ['python:../elsewhere/p.py', 'exec: python3 ../elsewhere/p.py']
tests: file://../elsewhere/tests.csv
"""})  # fmt: skip
    refused(accord("eval", config), "outside the project root", "promptfooconfig.yaml:2",
            "promptfooconfig.yaml:3")  # fmt: skip


def test_tests_from_csv_json_jsonl_and_yaml_files(tmp_path: Path) -> None:
    config = project(tmp_path, {
        "t.csv": "q,__expected\nalpha,contains:alp\n",
        "t.json": '[{"vars": {"q": "beta"}, "assert": [{"type": "equals", "value": "beta"}]}]',
        "t.jsonl": '{"vars": {"q": "gamma"}}\n',
        "t.yaml": "- vars: {q: delta}\n  assert: [{type: icontains, value: DELTA}]\n",
        "promptfooconfig.yaml": """prompts: ['{{q}}']
providers: [echo]
tests: [file://t.csv, file://t.json, file://t.jsonl, file://t.yaml]
""",
    })  # fmt: skip
    run = accord("eval", config, "-o", tmp_path / "out.json")
    assert run.exit_code == 0, run.stderr
    found = results(tmp_path / "out.json")
    assert [found[(i, 0)]["response"]["output"] for i in range(4)] == [
        "alpha", "beta", "gamma", "delta",
    ]  # fmt: skip
    assert all(r["success"] for r in found.values())


def test_a_bad_line_of_a_jsonl_test_file_is_named(tmp_path: Path) -> None:
    config = project(tmp_path, {
        "t.jsonl": '{"vars": {"q": "a"}}\n{"vars": \n',
        "promptfooconfig.yaml": "prompts: ['{{q}}']\nproviders: [echo]\ntests: file://t.jsonl\n",
    })  # fmt: skip
    refused(accord("eval", config), "t.jsonl:2", "invalid JSON")


def test_promptfoo_output_forms_csv_yaml_jsonl_html(tmp_path: Path) -> None:
    config = project(tmp_path, {"promptfooconfig.yaml": """prompts: ['Say {{w}}']
providers: [echo]
tests:
  - vars: {w: hi}
    assert: [{type: equals, value: Say hi}]
  - vars: {w: <b>}
    assert: [{type: equals, value: nope}]
"""})  # fmt: skip
    for suffix in ("csv", "yaml", "jsonl", "html"):
        run = accord("eval", "-c", config, "-o", tmp_path / f"out.{suffix}", "-q")
        assert run.exit_code == 1, run.stderr
    rows = list(csv.reader(io.StringIO((tmp_path / "out.csv").read_text())))
    assert rows[0] == ["w", "[echo] Say {{w}}"]
    assert rows[1] == ["hi", "[PASS] (1.00)\n\nSay hi\n\nPass Reason: All assertions passed"]
    assert rows[2][1].startswith("[FAIL] (0.00)\n\nExpected output")
    document = yaml.safe_load((tmp_path / "out.yaml").read_text())
    assert document["results"]["stats"]["successes"] == 1
    assert document["results"]["stats"]["failures"] == 1
    lines = (tmp_path / "out.jsonl").read_text().splitlines()
    assert [json.loads(line)["success"] for line in lines] == [True, False]
    page = (tmp_path / "out.html").read_text()
    assert "&lt;b&gt;" in page and "<b>" not in page


def test_an_output_form_promptfoo_lacks_is_refused_before_anything_runs(tmp_path: Path) -> None:
    config = project(tmp_path, {"promptfooconfig.yaml": "prompts: [hi]\nproviders: [echo]\n"})
    refused(accord("eval", "-c", config, "-o", tmp_path / "out.xlsx"), ".json, .jsonl")
    assert not (tmp_path / ".accord").exists() or not list((tmp_path / ".accord").glob("runs*"))


def test_model_config_in_config_yml_is_left_alone(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    """A project's own config.yml models still resolve beside the providers' entries."""
    config = project(
        tmp_path,
        {
            "promptfooconfig.yaml": f"""prompts: [hi]
providers:
  - id: openai:chat:fake-model
    label: mine
    config: {{apiBaseUrl: '{fake_llm.url}', apiKey: k}}
tests: [{{assert: [{{type: contains, value: echo}}]}}]
"""
        },
        config=fake_model_config(fake_llm),
    )
    run = accord("eval", config, "--cache", "off", "-o", tmp_path / "out.json")
    assert run.exit_code == 0, run.stderr
    assert results(tmp_path / "out.json")[(0, 0)]["provider"] == {
        "id": "openai:chat:fake-model", "label": "mine",
    }  # fmt: skip


def test_output_path_is_written_unless_o_replaces_it_and_never_over_the_config(
    tmp_path: Path, monkeypatch: Any
) -> None:
    config = project(tmp_path, {"promptfooconfig.yaml": """prompts: [hi]
providers: [echo]
outputPath: [from-config.json, from-config.csv]
"""})  # fmt: skip
    monkeypatch.chdir(tmp_path)
    assert accord("eval", "-c", config, "-q").exit_code == 0
    assert results(tmp_path / "from-config.json")[(0, 0)]["response"]["output"] == "hi"
    assert (tmp_path / "from-config.csv").read_text().startswith("[echo] hi\n")
    (tmp_path / "from-config.json").unlink()
    assert accord("eval", "-c", config, "-o", "given.jsonl", "-q").exit_code == 0
    assert (tmp_path / "given.jsonl").exists() and not (tmp_path / "from-config.json").exists()
    config.write_text("prompts: [hi]\nproviders: [echo]\noutputPath: promptfooconfig.yaml\n")
    refused(accord("eval", "-c", config), "outputPath of", "an evaluated file")
    assert config.read_text().startswith("prompts: [hi]")


def test_a_ref_is_resolved_and_one_accord_cannot_follow_is_refused_at_its_line(
    tmp_path: Path,
) -> None:
    # promptfoo dereferences `$ref`s before reading the config; keys beside one extend it
    config = project(tmp_path / "ok", {"promptfooconfig.yaml": """prompts: ['{{q}}']
providers: [echo]
tests:
  - vars: {q: ahoy there}
    assert:
      - $ref: '#/assertionTemplates/ahoy'
      - {$ref: '#/assertionTemplates/ahoy', value: there}
assertionTemplates:
  ahoy: {type: icontains, value: AHOY}
"""})  # fmt: skip
    run = accord("eval", config, "-o", tmp_path / "out.json")
    assert run.exit_code == 0, run.stderr
    graded = json.loads((tmp_path / "out.json").read_text())["results"]["results"][0]
    parts = graded["gradingResult"]["componentResults"]
    shown = [(p["assertion"]["value"], p["pass"]) for p in parts]
    assert shown == [("AHOY", True), ("there", True)]
    config = project(tmp_path / "bad", {"promptfooconfig.yaml": """prompts: ['{{q}}']
providers: [echo]
tests:
  - vars: {q: x}
    assert:
      - $ref: '#/assertionTemplates/missing'
      - $ref: 'other.yaml#/ahoy'
assertionTemplates: {}
"""})  # fmt: skip
    refused(accord("validate", config), "promptfooconfig.yaml:6", "nothing at that place",
            "promptfooconfig.yaml:7", "not to other files")  # fmt: skip


def test_yaml_is_read_as_promptfoo_reads_it_yes_stays_text(tmp_path: Path) -> None:
    # js-yaml reads YAML 1.2's core schema: `Yes`, `on`, `no` are text, `010` is ten
    # (and merges `<<: *anchor` as js-yaml does)
    config = project(tmp_path, {"promptfooconfig.yaml": """prompts: ['{{a}} {{b}} {{c}}']
providers: [echo]
tests:
  - vars: &first {a: Yes, b: off, c: 010}
    assert: [{type: equals, value: Yes off 10}]
  - vars: {<<: *first, c: 0o10}
    assert: [{type: equals, value: Yes off 8}]
"""})  # fmt: skip
    run = accord("eval", config)
    assert run.exit_code == 0, run.stdout + run.stderr


def test_prompts_from_csv_and_jsonl_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # labels as promptfoo 0.118 gives them, run from the config's folder
    monkeypatch.chdir(tmp_path)
    config = project(tmp_path, {
        "promptfooconfig.yaml": """prompts: [file://p.csv, file://one.csv, file://m.jsonl]
providers: [echo]
tests:
  - vars: {t: x}
    assert: [{type: contains, value: x}]
""",
        "p.csv": 'prompt,label\n"Say {{t}}, please",polite\n"Say {{t}}",\n',
        "one.csv": "prompt\nOnly {{t}}\n",
        "m.jsonl": '[{"role": "user", "content": "a {{t}}"}]\n'
        '[{"role": "user", "content": "b {{t}}"}]\n',
    })  # fmt: skip
    run = accord("eval", "-c", config.name, "-o", "out.json")
    assert run.exit_code == 0, run.stderr
    prompts = json.loads((tmp_path / "out.json").read_text())["results"]["prompts"]
    assert [p["label"] for p in prompts] == [
        "polite", "Prompt 2 - Say {{t}}", "Prompt 1 - Only {{t}}",
        'm.jsonl: [{"role": "user", "content": "a {{t}}"}]',
        'm.jsonl: [{"role": "user", "content": "b {{t}}"}]',
    ]  # fmt: skip


def test_similar_without_an_embedding_model_is_refused_at_load(tmp_path: Path) -> None:
    # promptfoo asks OpenAI's embeddings by default; accord asks the model it is given, and
    # says so before anything runs when it is given none
    text = """prompts: ['{{q}}']
providers: [echo]
tests:
  - vars: {q: hello}
    assert:
      - {type: contains, value: hello}
      - {type: assert-set, assert: [{type: similar, value: hi}]}
"""
    config = project(tmp_path / "none", {"promptfooconfig.yaml": text})
    refused(accord("validate", config), "promptfooconfig.yaml:6", "similar needs an embedding "
            "model", "defaults.embedding_model")  # fmt: skip
    given = text.replace(
        "tests:",
        "defaultTest:\n  options:\n    provider:\n"
        "      embedding: openai:embedding:text-embedding-3-small\ntests:",
    )
    config = project(tmp_path / "given", {"promptfooconfig.yaml": given})
    assert accord("validate", config).exit_code == 0


def test_a_provider_runs_the_prompts_it_names(tmp_path: Path) -> None:
    # promptfoo's `prompts` on a provider: the labels it runs (or their `LABEL:` prefix);
    # the columns are the pairs that remain, provider first
    config = project(tmp_path, {"promptfooconfig.yaml": """prompts:
  - {id: 'tweet {{t}}', label: first}
  - {id: 'haiku {{t}}', label: second}
providers:
  - {id: echo, label: both, prompts: [first, second]}
  - {id: echo, label: one, prompts: [second]}
tests: [{vars: {t: x}, assert: [{type: contains, value: x}]}]
"""})  # fmt: skip
    run = accord("eval", config, "-o", tmp_path / "out.json")
    assert run.exit_code == 0, run.stderr
    doc = json.loads((tmp_path / "out.json").read_text())["results"]
    assert [(p["provider"], p["label"]) for p in doc["prompts"]] == [
        ("both", "first"), ("both", "second"), ("one", "second"),
    ]  # fmt: skip
    assert sorted(r["promptIdx"] for r in doc["results"]) == [0, 1, 2]
    bad = project(tmp_path / "bad", {"promptfooconfig.yaml": """prompts: [{id: 'a', label: first}]
providers:
  - {id: echo, prompts: [frist]}
"""})  # fmt: skip
    refused(accord("validate", bad), "promptfooconfig.yaml:3", "'frist' is the label of no prompt")


def test_a_threshold_that_is_no_number_is_refused_at_its_test(tmp_path: Path) -> None:
    config = project(tmp_path, {"promptfooconfig.yaml": """prompts: ['{{q}}']
providers: [echo]
tests:
  - {vars: {q: a}, threshold: 0.5}
  - vars: {q: b}
    threshold: high
"""})  # fmt: skip
    refused(accord("validate", config), "promptfooconfig.yaml:6", "a threshold is a number")


def test_an_empty_threshold_cell_is_no_threshold(tmp_path: Path) -> None:
    # promptfoo reads __threshold with parseFloat: '' is NaN, which it treats as no threshold
    config = project(tmp_path, {
        "promptfooconfig.yaml": "prompts: ['{{q}}']\nproviders: [echo]\ntests: file://t.csv\n",
        "t.csv": "q,__expected,__threshold\nhello,contains:hello,\nbye,contains:bye,0\n",
    })  # fmt: skip
    run = accord("eval", config)
    assert run.exit_code == 0, run.stdout + run.stderr


def test_eval_with_no_file_runs_the_folders_promptfoo_config_as_promptfoo_eval_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`promptfoo eval` with no -c reads promptfooconfig.yaml, .yml, then .json in the working
    folder (promptfoo's util/config/default.js, loadDefaultConfig); `accord eval` does too,
    and a JSON config, under its own name or any other, runs as the YAML one does."""
    config = {
        "prompts": ["Say hello to {{name}}"], "providers": ["echo"],
        "tests": [{"vars": {"name": "Bob"}, "assert": [{"type": "contains", "value": "Bob"}]},
                  {"vars": {"name": "Al"}, "assert": [{"type": "contains", "value": "Bob"}]}],
    }  # fmt: skip
    project(tmp_path, {"promptfooconfig.json": json.dumps(config)})
    monkeypatch.chdir(tmp_path)
    run = accord("eval", "--format", "json")
    assert run.exit_code == 1, run.stderr  # the second case fails on purpose
    assert [c["status"] for c in run.doc()["suites"][0]["cases"]] == ["passed", "failed"]

    (tmp_path / "promptfooconfig.json").rename(tmp_path / "mine.json")
    named = accord("eval", "-c", "mine.json", "--format", "json")
    assert named.exit_code == 1, named.stderr
    assert [c["status"] for c in named.doc()["suites"][0]["cases"]] == ["passed", "failed"]

    # .yaml is looked for first: it wins over a .json beside it
    (tmp_path / "promptfooconfig.json").write_text(json.dumps(config))
    config["tests"] = config["tests"][:1]
    (tmp_path / "promptfooconfig.yaml").write_text(yaml.safe_dump(config))
    first = accord("eval", "--format", "json")
    assert first.exit_code == 0, first.stderr
    assert len(first.doc()["suites"][0]["cases"]) == 1


def test_eval_with_no_file_in_a_folder_without_a_config_says_what_it_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = accord("eval")
    assert run.exit_code == 2
    assert "promptfooconfig.yaml, promptfooconfig.yml, promptfooconfig.json" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_broken_json_config_is_reported_in_json_terms_at_its_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A JSON config is read by the YAML 1.2 loader, as promptfoo reads one (js-yaml's load in
    promptfoo 0.118.0's util/config/load.js, readConfig); a fault in it is named as the JSON
    file's, at its place, with a hint in JSON's terms."""
    project(tmp_path, {"promptfooconfig.json": (
        '{\n "prompts": ["hi {{x}}"],\n "providers": ["echo"],\n'
        ' "tests": [{"vars": {"x": 1}}\n}\n'
    )})  # fmt: skip
    monkeypatch.chdir(tmp_path)
    run = accord("eval")
    assert run.exit_code == 2
    # the list opened on line 4 is never closed: the loader stops at the `}` on line 5
    assert "promptfooconfig.json:5:1: JSON syntax error: did not find expected ','" in run.stderr
    assert "YAML" not in run.stderr and "Traceback" not in run.stderr
    assert "fix: check the brackets, commas and quotes" in run.stderr


def test_a_test_without_assertions_passes_at_one_as_in_promptfoo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """promptfoo's AssertionsResult (assertions/assertionsResult.js) with no assertion is
    `{pass: true, score: 1, reason: 'No assertions'}`: accord's own figures count that test
    passed at 1, as promptfoo's stats do, not as a case without a verdict."""
    config = {
        "prompts": ["Hi {{name}}"], "providers": ["echo"],
        "tests": [{"vars": {"name": "A"}},
                  {"vars": {"name": "B"}, "assert": [{"type": "contains", "value": "Z"}]}],
    }  # fmt: skip
    project(tmp_path, {"promptfooconfig.yaml": yaml.safe_dump(config)})
    monkeypatch.chdir(tmp_path)
    run = accord("eval", "--format", "json")
    assert run.exit_code == 1, run.stderr
    cases = run.doc()["suites"][0]["cases"]
    assert [(c["status"], c["score"]) for c in cases] == [("passed", 1.0), ("failed", 0.0)]


def test_an_absolute_glob_outside_the_project_is_refused_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tests: file:///etc/host*` matches files outside the project: refused at its line
    (it was an internal error: the matches were named relative to the config's folder)."""
    project(tmp_path, {"promptfooconfig.yaml": (
        "prompts: ['{{ w }}']\nproviders: [echo]\ntests: file:///etc/host*\n"
    )})  # fmt: skip
    monkeypatch.chdir(tmp_path)
    run = accord("eval")
    assert run.exit_code == 2, run.stderr
    assert "promptfooconfig.yaml:3" in run.stderr and "outside the project root" in run.stderr
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr

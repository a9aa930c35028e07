"""promptfoo configs of the kinds promptfoo's documentation shows (prompt files in CSV, JSONL
and text, tests from CSV and JSONL, `$ref` to assertion templates, YAML 1.2 scalars, `.length`
in templates, a provider's `prompts:`), written for these tests: each loads in accord, and
each scores in accord as in promptfoo 0.118 itself, the same verdict, score, named scores,
reason, output, prompt label, provider, vars and metadata in every (test, prompt) cell.

OpenAI providers and the grader are pointed at one fake OpenAI server on loopback
(`OPENAI_BASE_URL` for both tools; config.yml's judge and embedding model for accord, whose
grader is the project's). Without node and promptfoo the comparison is skipped (see
test_differential.py); the loading check runs everywhere.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import trust_project
from tests.evals.conftest import accord
from tests.fakes import FakeOpenAI, Reply
from tests.frontends.promptfoo.harness import needs_promptfoo, run_promptfoo

# Each config is a folder of files. Every one has failing cells as well as passing ones, so
# that reasons and scores of failures are compared too.
CONFIGS: dict[str, dict[str, str]] = {
    # the echo provider under assertions of each plain kind, two prompts so that one column
    # fails where the other passes; `outputPath` is written beside the `-o` file
    "echo-assertions": {
        "promptfooconfig.yaml": r"""
description: plain assertions on what echo returns
prompts:
  - '{{phrase}}'
  - 'Say: {{phrase}}'
providers:
  - echo
defaultTest:
  threshold: 0.6
tests:
  - description: the exact text
    vars: {phrase: the tide is high}
    assert:
      - type: equals
        value: the tide is high
  - description: substrings, in either case
    vars: {phrase: Lantern Harbour at dusk}
    assert:
      - type: contains
        value: Lantern
      - type: icontains
        value: HARBOUR
      - type: not-icontains
        value: say
  - description: a pattern
    vars: {phrase: 'parcel 4471-B left the depot'}
    assert:
      - type: regex
        value: '^\D*\d{4}-[A-Z]\b'
  - description: code in both languages
    vars: {phrase: seven}
    assert:
      - type: javascript
        value: output.length === 5
      - type: python
        value: "len(output.split()) / 2"
        metric: words
  - description: a JSON object
    vars: {phrase: '{"crates": 12, "dry": true}'}
    assert:
      - type: is-json
      - type: javascript
        value: JSON.parse(output).crates > 10
  - description: several at once, scored by weight against the threshold
    vars: {phrase: Rope 40 metres}
    assert:
      - type: starts-with
        value: Rope
        weight: 2
      - type: regex
        value: '\d+'
      - type: contains
        value: feet
outputPath: file://kept.csv
""",
    },
    # prompts from CSV (two columns, one column with a header, no header) and JSONL (chats,
    # labelled `chats: LINE`); the second echo provider runs only the prompts its
    # `prompts:` names, one by its label, the JSONL ones by the `chats:` prefix. Both are
    # labelled: promptfoo keys a provider's `prompts:` by its id as well as its label
    # (prompts/index.js, readProviderPromptMap), so an unlabelled `echo` beside them would
    # take the labelled one's selection, which accord does not copy
    "prompt-files": {
        "promptfooconfig.yaml": """
description: prompts read from files
prompts:
  - file://labelled.csv
  - file://single.csv
  - file://bare.csv
  - id: file://chats.jsonl
    label: chats
providers:
  - id: echo
    label: all
  - id: echo
    label: picky
    prompts: [Terse, chats]
tests:
  - vars: {item: a brass compass}
    assert:
      - type: icontains
        value: compass
  - vars: {item: tar}
    assert:
      - type: contains
        value: '"role"'
""",
        "labelled.csv": (
            "prompt,label\n"
            '"Name {{item}}, in three words",Terse\n'
            '"Where would a sailor keep {{item}}?",Storage\n'
            '"[{""role"":""system"",""content"":""Answer as a quartermaster.""},'
            '{""role"":""user"",""content"":""Price {{item}}.""}]",Ledger\n'
        ),
        "single.csv": "prompt\nDescribe {{item}}\nWho sells {{item}}?\n",
        "bare.csv": "List uses of {{item}}\n",
        "chats.jsonl": (
            '[{"role": "user", "content": "Weigh {{item}}"}]\n'
            '[{"role": "system", "content": "Be brief."}, '
            '{"role": "user", "content": "Pack {{item}}"}]\n'
        ),
    },
    # tests from JSONL: vars, assertions, description, threshold and metadata on a line (a
    # threshold on each: accord holds one per config, docs/promptfoo.md)
    "jsonl-tests": {
        "promptfooconfig.yaml": """
prompts:
  - 'Stow {{cargo}} in hold {{hold}}'
providers:
  - echo
tests: file://cases.jsonl
""",
        "cases.jsonl": (
            '{"description": "grain", "vars": {"cargo": "grain", "hold": 2}, "threshold": 0.5, '
            '"assert": [{"type": "equals", "value": "Stow grain in hold 2"}]}\n'
            '{"vars": {"cargo": "salt", "hold": "aft"}, "metadata": {"deck": "lower"}, '
            '"threshold": 0.5, "assert": [{"type": "contains", "value": "salt"}, '
            '{"type": "contains", "value": "fore"}]}\n'
            '{"vars": {"cargo": "rum", "hold": 7}, "threshold": 0.5, '
            '"assert": [{"type": "regex", "value": "hold [0-6]$"}]}\n'
        ),
    },
    # tests from CSV with `__expected` columns (an assertion prefix, plain text for equals,
    # a graded rubric), `__threshold`, `__description` and `__metadata:` columns, a `KEY[]`
    # one split on commas; an OpenAI model answered by the fake server; `.length` of a
    # string, of a list and of an object's `length` key in a prompt file of two prompts
    "csv-tests": {
        "promptfooconfig.yaml": """
prompts:
  - file://prompts.txt
providers:
  - openai:gpt-4.1-mini
tests: file://tests.csv
""",
        "prompts.txt": (
            "Greet the crew of the {{ship}} ({{ ship.length }} letters).\n"
            "Voyage: {{ (plan | load).length }}, ports: {{ (plan | load).ports.length }}\n"
            "---\n"
            "Hail the {{ship}} in French; plan {{plan}}\n"
        ),
        "tests.csv": (
            "ship,plan,__expected,__expected2,__threshold,__description,"
            "__metadata:fleet,__metadata:tags[]\n"
            'Osprey,"{""length"":""long"",""ports"":[""Cork"",""Brest""]}",'
            'icontains:AHOY,"llm-rubric: Speaks of the sea to {{ship}}",0.5,first,north,"a,b"\n'
            'Wren,"{""length"":""short"",""ports"":[]}",contains:bonjour,'
            'not-icontains:ahoy,0.5,second,south,"c\\,d,e"\n'
            'Heron,"{""length"":""day"",""ports"":[""Vigo""]}",Heron,'
            '"llm-rubric: Formal and dry",0.5,,,\n'
        ),
    },
    # `$ref` to assertion templates, alone and with keys beside it laid over the target;
    # YAML 1.2 scalars as js-yaml reads them (`Yes`, `off`, `No` are text, `true` a
    # boolean); model-graded, similarity and code assertions on an OpenAI model
    "refs-and-scalars": {
        "promptfooconfig.yaml": """
prompts:
  - file://prompts.txt
providers:
  - openai:gpt-4.1-mini
tests:
  - description: Yes stays text
    vars: {word: Yes}
    assert:
      - type: icontains
        value: 'yes'
      - $ref: '#/assertionTemplates/noisy'
  - description: off and No stay text, true is a boolean
    vars: {word: off, other: No, flag: true}
    assert:
      - type: javascript
        value: "context.vars.word === 'off' && context.vars.flag === true"
      - $ref: '#/assertionTemplates/noisy'
        metric: noise
        weight: 3
      - $ref: '#/assertionTemplates/sober'
  - description: graded and compared by meaning
    vars: {word: storm}
    assert:
      - type: llm-rubric
        value: Sounds like a sailor
      - type: llm-rubric
        value: Is written in formal English
      - type: similar
        value: Ahoy, arrr matey! bonjour storm
        threshold: 0.5
      - type: python
        value: "min(1.0, len(output) / 400)"
      - type: is-json
assertionTemplates:
  noisy:
    type: icontains
    value: arrr
  sober:
    type: not-contains
    value: matey
    metric: calm
""",
        "prompts.txt": (
            "Shout {{word}} across the deck {{other}}\n---\nWhisper {{word}} below deck\n"
        ),
    },
}
NAMES = sorted(CONFIGS)


def answer(body: dict[str, Any]) -> Reply:
    """A grader's request passes a rubric about the sea and fails any other; any other request
    gets a pirate's echo of the prompt."""
    text = " ".join(str(m.get("content")) for m in body.get("messages") or [])
    if "rubric" in text.lower():
        if "sea" in text.lower() or "sailor" in text.lower():
            return Reply(text='{"reason": "salty enough", "pass": true, "score": 1.0}')
        return Reply(text='{"reason": "not that at all", "pass": false, "score": 0.0}')
    return Reply(text=f"Ahoy, arrr matey! bonjour {text[-40:]}")


def write(name: str, tmp_path: Path, fake: FakeOpenAI) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for file, text in CONFIGS[name].items():
        (folder / file).write_text(text)
    (folder / "config.yml").write_text(f"""models:
  - {{name: grader, model: openai/gpt-4.1-2025-04-14, api_base: '{fake.url}', api_key: k}}
  - {{name: embedder, model: openai/text-embedding-3-large, api_base: '{fake.url}', api_key: k}}
defaults: {{judge_model: grader, embedding_model: embedder}}
""")
    trust_project(folder)  # some examples hold inline javascript, as promptfoo runs it
    return folder


def cells(path: Path) -> dict[tuple[int, int], tuple[Any, ...]]:
    results = json.loads(path.read_text())["results"]["results"]
    return {
        (r["testIdx"], r["promptIdx"]): (
            r["success"], round(r["score"], 6),
            {k: round(v, 6) for k, v in r["namedScores"].items()},
            (r["gradingResult"] or {}).get("reason"), r["response"]["output"],
            r["prompt"]["label"], r["provider"], r["vars"], r["testCase"].get("metadata"),
        )
        for r in results
    }  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_each_config_validates(
    name: str, tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = write(name, tmp_path, fake_llm)
    monkeypatch.chdir(folder)
    run = accord("validate", "promptfooconfig.yaml")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "promptfoo suite" in run.stdout


@pytest.mark.reference
@needs_promptfoo
@pytest.mark.parametrize("name", NAMES)
def test_a_config_scores_as_promptfoo_scores_it(
    name: str, tmp_path: Path, fake_llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.responder = answer
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    folder = write(name, tmp_path, fake_llm)
    run_promptfoo(folder, "promptfoo.json")
    monkeypatch.chdir(folder)
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.json", "-q", "--cache", "off")
    assert run.exit_code in (0, 1), run.stderr
    theirs, mine = cells(folder / "promptfoo.json"), cells(folder / "accord.json")
    verdicts = {cell[0] for cell in theirs.values()}
    assert verdicts == {True, False}, "each config should pass some cells and fail others"
    assert mine == theirs

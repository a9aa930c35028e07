"""promptfoo's http provider and JavaScript file providers through promptfoo 0.118 itself
and through accord: the same requests reach the app, and the results agree (verdict,
score, reason, output, provider).

The app runs on loopback (app_server.py) for both tools and is stopped at the end of each
test whatever happens; promptfoo runs with its process group ended (harness.py). Where node
or promptfoo is missing the tests are skipped with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.evals.conftest import accord
from tests.frontends.promptfoo.app_server import App, start_app
from tests.frontends.promptfoo.harness import needs_promptfoo, results, run_promptfoo

pytestmark = [pytest.mark.reference, needs_promptfoo]


@pytest.fixture
def app() -> Iterator[App]:
    server = start_app()
    try:
        yield server
    finally:
        server.stop()


def cells(path: Path) -> list[tuple[Any, ...]]:
    """Each result's verdict, score, reason, provider and output (an object output as the
    JSON promptfoo's assertions see; an error's first line)."""
    out = []
    for r in results(path):
        output = (r.get("response") or {}).get("output")
        if output is not None and not isinstance(output, str):
            output = json.dumps(output, separators=(",", ":"))
        reason = (r["gradingResult"] or {}).get("reason")
        error = (r.get("error") or "").removeprefix("Error: ").split("\n")[0]
        out.append((r["testIdx"], r["promptIdx"], r["success"], r["score"], reason,
                    r["provider"], output if not error else None, error))  # fmt: skip
    return out


def both(folder: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[Any]]:
    run_promptfoo(folder, "promptfoo.json")
    monkeypatch.chdir(folder)
    run = accord("eval", "-c", "promptfooconfig.yaml", "-o", "accord.json", "--cache", "off", "-q")
    assert run.exit_code in (0, 1), run.stderr
    return cells(folder / "promptfoo.json"), cells(folder / "accord.json")


def test_the_http_provider_answers_as_in_promptfoo(
    tmp_path: Path, app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.yml").write_text("trusted: [promptfooconfig.yaml]\n")
    (tmp_path / "fns.js").write_text("""module.exports = {
  req: (prompt) => ({ message: prompt.trim() + '?' }),
  parse: (json, text, context) => `${json.reply.text} [${context.response.status}]`,
  ok: (status) => status < 400,
};
""")
    (tmp_path / "promptfooconfig.yaml").write_text(f"""prompts: ['Tell {{{{topic}}}}']
providers:
  - id: {app.url}/chat
    label: expression
    config:
      method: POST
      headers: {{X-Topic: '{{{{topic}}}}'}}
      body: {{message: '{{{{prompt}}}}', n: '2'}}
      transformResponse: json.reply.text
  - id: {app.url}/chat
    label: files
    config:
      method: POST
      body: {{message: unused}}
      transformRequest: file://fns.js:req
      transformResponse: file://fns.js:parse
      validateStatus: file://fns.js:ok
  - id: http
    label: get
    config:
      url: {app.url}/search
      method: GET
      queryParams: {{q: '{{{{topic}}}} & co'}}
  - id: {app.url}/form
    label: form
    config: {{method: POST, body: 'text={{{{prompt}}}}'}}
  - id: {app.url}/chat
    label: whole-json
    config: {{method: POST, body: {{message: '{{{{prompt}}}}'}}}}
  - id: {app.url}/status/502
    label: bad-gateway
    config: {{method: POST, body: x, validateStatus: 'status >= 200 && status < 300'}}
  - id: {app.url}/status/404
    label: any-status
    config: {{method: POST, body: x}}
  - id: {app.url}/empty
    label: empty
    config: {{method: POST, body: x}}
defaultTest:
  assert:
    - type: icontains
      value: '{{{{topic}}}}'
tests:
  - vars: {{topic: tea}}
  - vars: {{topic: Rain}}
""")
    theirs, mine = both(tmp_path, monkeypatch)
    assert len(theirs) == 16
    assert mine == theirs
    # both tools sent the same requests (promptfoo's fetch adds its own headers: compared
    # are the method, the path and query, the content type and the body)
    sent = sorted((s.method, s.path, s.headers.get("content-type"), s.body) for s in app.seen)
    assert sent[0::2] == sent[1::2]


def test_javascript_providers_answer_as_in_promptfoo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "config.yml").write_text("")
    (tmp_path / "upper.js").write_text("""class Upper {
  constructor(options) { this.options = options; }
  id() { return this.options.id; }
  async callApi(prompt, context) {
    if (context.vars.w === 'boom') throw new Error('asked to throw');
    if (context.vars.w === 'err') return { error: 'asked to fail' };
    return { output: prompt.toUpperCase() + this.options.config.suffix, cost: 0.5,
             tokenUsage: { prompt: 2, completion: 3, total: 5 } };
  }
}
module.exports = Upper;
""")
    (tmp_path / "obj.mjs").write_text("""export default class Obj {
  constructor(options) { this.name = options.config.name; }
  id() { return 'file://obj.mjs'; }
  async callApi(prompt, context) {
    return { output: { said: prompt, vars: context.vars, label: context.prompt.label } };
  }
}
""")
    (tmp_path / "promptfooconfig.yaml").write_text("""prompts: ['say {{w}}']
providers:
  - id: file://upper.js
    config: {suffix: '!'}
  - id: file://obj.mjs
    config: {name: objects}
tests:
  - vars: {w: hi}
    assert: [{type: contains, value: HI}]
  - vars: {w: boom}
  - vars: {w: err}
""")
    theirs, mine = both(tmp_path, monkeypatch)
    assert len(theirs) == 6
    # a thrown error: promptfoo writes its stack after the message, accord names the file
    fix = {(1, 0): "asked to throw"}
    assert [c[:7] for c in mine] == [c[:7] for c in theirs]
    for mine_cell, their_cell in zip(mine, theirs, strict=True):
        expected = fix.get((mine_cell[0], mine_cell[1]), their_cell[7])
        assert expected in mine_cell[7], (mine_cell, their_cell)
    costs = {r["testIdx"]: r["cost"] for r in results(tmp_path / "accord.json")
             if r["promptIdx"] == 0}  # fmt: skip
    their_costs = {r["testIdx"]: r["cost"] for r in results(tmp_path / "promptfoo.json")
                   if r["promptIdx"] == 0}  # fmt: skip
    assert costs[0] == their_costs[0] == 0.5

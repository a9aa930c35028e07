"""promptfoo's http provider, JavaScript file providers, a provider's `response_format` and
the top-level keys promptfoo passes over, run by accord.

The http provider talks to a user's app on loopback (app_server.py), started by the test
and stopped at its end whatever happens. Expected requests and outputs are written from
promptfoo 0.118's code, named where each comes from (`src/providers/http.ts`,
`src/fetch.ts`, `src/providers/registry.ts`, `src/providers/openai/chat.ts`).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.evals.conftest import Run, accord
from tests.fakes import FakeOpenAI, Reply
from tests.frontends.promptfoo.app_server import App, start_app

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="needs node on the PATH")


@pytest.fixture
def app() -> Iterator[App]:
    server = start_app()
    try:
        yield server
    finally:
        server.stop()


def project(folder: Path, files: dict[str, str], config: str = "") -> Path:
    (folder / "config.yml").write_text(config)
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return folder / "promptfooconfig.yaml"


def results(path: Path) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(path.read_text())["results"]["results"]
    return sorted(found, key=lambda r: (r["testIdx"], r["promptIdx"]))


def refused(run: Run, *parts: str) -> None:
    assert run.exit_code == 2, (run.exit_code, run.stdout, run.stderr)
    assert "Traceback" not in run.stderr
    for part in parts:
        assert part in run.stderr, run.stderr


# --- the request, as http.ts builds it -----------------------------------------------------


def test_the_request_is_built_as_promptfoo_builds_it(tmp_path: Path, app: App) -> None:
    config = project(tmp_path, {"promptfooconfig.yaml": f"""prompts: ['Say {{{{word}}}}']
providers:
  - id: {app.url}/chat
    label: json
    config:
      method: POST
      headers: {{X-Word: 'w-{{{{word}}}}'}}
      body:
        {{message: '{{{{prompt}}}}', count: '{{{{n}}}}', flag: 'true', keep: [a, '{{{{word}}}}']}}
  - id: https
    label: get
    config:
      url: {app.url}/search
      method: GET
      queryParams: {{q: '{{{{word}}}} & more~*'}}
  - id: {app.url}/form
    label: form
    config: {{method: POST, body: ' p={{{{prompt}}}} '}}
tests:
  - vars: {{word: hi, n: '3'}}
"""})  # fmt: skip
    run = accord("eval", config, "-o", tmp_path / "out.json", "-q")
    assert run.exit_code == 0, run.stderr
    seen = {s.path.split("?")[0]: s for s in app.seen}
    chat = seen["/chat"]
    # getDefaultHeaders: an object body is JSON; the config's headers in lower case, rendered
    assert (chat.method, chat.headers["content-type"], chat.headers["x-word"]) == (
        "POST", "application/json", "w-hi")  # fmt: skip
    # processJsonBody: each rendered string read as JSON when it is JSON ('3' -> 3,
    # 'true' -> true), then JSON.stringify
    assert chat.body == '{"message":"Say hi","count":3,"flag":true,"keep":["a","hi"]}'
    # the URL's searchParams.append (application/x-www-form-urlencoded: ' ' -> '+', '~' and
    # '&' escaped, '*' kept); a GET sends no body and no default content type
    get = seen["/search"]
    assert (get.method, get.path, get.body) == ("GET", "/search?q=hi+%26+more%7E*", "")
    assert "content-type" not in get.headers
    # a text body: x-www-form-urlencoded by default, rendered, then trimmed (String(body).trim())
    form = seen["/form"]
    assert (form.headers["content-type"], form.body) == (
        "application/x-www-form-urlencoded", "p=Say hi")  # fmt: skip
    out = {r["provider"]["label"]: r for r in results(tmp_path / "out.json")}
    # no transformResponse: the JSON the app answered (`data || text`), else the text
    assert json.loads(out["json"]["response"]["output"]) == {
        "reply": {"text": "echo: Say hi"}, "words": 2}  # fmt: skip
    assert out["get"]["response"]["output"] == "found hi & more~*"
    # HttpProvider.id() is its URL (config.url when given)
    assert out["get"]["provider"] == {"id": f"{app.url}/search", "label": "get"}


@needs_node
def test_transforms_status_and_session_run_on_node(tmp_path: Path, app: App) -> None:
    config = project(
        tmp_path,
        {
            "fns.js": """module.exports = {
  req: (prompt) => ({ message: prompt + '!' }),
  parse: (json, text, context) => ({ output: `${json.reply.text} ${context.response.status}` }),
  ok: (status) => status < 500,
};
""",
            "promptfooconfig.yaml": f"""prompts: ['{{{{q}}}}']
providers:
  - id: {app.url}/chat
    label: files
    config:
      method: POST
      body: {{message: unused}}
      transformRequest: file://fns.js:req
      transformResponse: file://fns.js:parse
      validateStatus: file://fns.js:ok
  - id: {app.url}/chat
    label: inline
    config:
      method: POST
      body: {{message: '{{{{prompt}}}}'}}
      transformResponse: 'json.reply.text + " / " + text.length'
      sessionParser: data.headers["content-type"]
  - id: {app.url}/status/503
    label: down
    config: {{method: POST, body: x, validateStatus: 'status < 500'}}
  - id: {app.url}/status/500
    label: any-status
    config: {{method: POST, body: x}}
tests:
  - vars: {{q: hello}}
""",
        },
        config="trusted: [promptfooconfig.yaml]\n",
    )
    run = accord("eval", config, "-o", tmp_path / "out.json", "-q")
    assert run.exit_code == 1, run.stderr
    out = {r["provider"]["label"]: r for r in results(tmp_path / "out.json")}
    # transformRequest's object is merged over the body (determineRequestBody)
    assert any(s.body == '{"message":"hello!"}' for s in app.seen)
    assert out["files"]["response"]["output"] == "echo: hello! 200"
    # an inline expression's string is {output} (createTransformResponse); `text` is the
    # body as the app wrote it (json.dumps' 46 characters)
    assert out["inline"]["response"]["output"] == "echo: hello / 46"
    # validateStatus false: "HTTP call failed with status ..." (callApi)
    assert out["down"]["success"] is False
    assert (
        "HTTP call failed with status 503 Service Unavailable: status 503 body"
        in (out["down"]["error"])
    )
    # without validateStatus every status is an answer (createValidateStatus: () => true)
    assert out["any-status"]["response"]["output"] == "status 500 body"


def test_a_refused_connection_fails_the_test_at_once(tmp_path: Path, app: App) -> None:
    url = app.url
    app.stop()  # nothing listens there any more
    config = project(tmp_path, {"promptfooconfig.yaml": f"""prompts: [hi]
providers:
  - id: {url}/chat
    config: {{method: POST, body: {{m: '{{{{prompt}}}}'}}}}
"""})  # fmt: skip
    run = accord("eval", config, "-q")
    assert run.exit_code in (1, 3), run.stderr
    assert "connection refused by" in run.stderr + run.stdout


# --- what is refused at load ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "line", "words"),
    [
        # http.ts's constructor: invariant(config.body || config.method === 'GET')
        ("  - id: http://127.0.0.1:9/x\n    config: {method: POST}\n", 3,
         "to have a config containing {body}"),
        ("  - id: http://127.0.0.1:9/x\n    config: {body: x, methd: GET}\n", 4,
         "did you mean 'method'"),
        ("  - id: http\n    config:\n      request: |\n        POST /x HTTP/1.1\n", 5,
         "raw HTTP request"),
        ("  - id: http://127.0.0.1:9/x\n    config: {body: x, headers: {X-N: 1}}\n", 4,
         "is text"),
        ("  - id: http://127.0.0.1:9/x\n    config:\n      body: x\n"
         "      transformResponse: file://parse.ts\n", 6, "TypeScript"),
        ("  - id: http://127.0.0.1:9/x\n    config:\n      body: x\n"
         "      transformResponse: file://../outside.js\n", 6, "outside the project"),
        ("  - id: http://127.0.0.1:9/x\n    config:\n      body: x\n"
         "      transformRequest: 'return {text: \"{{prompt}}\"}'\n", 6, "use the function's"),
        # validateContentTypeAndBody: an object body needs a JSON content type
        ("  - id: http://127.0.0.1:9/x\n    config:\n      body: {a: 1}\n"
         "      headers: {Content-Type: text/plain}\n", 6, "Content-Type is not application/json"),
        ("  - file://provider.ts\n", 3, "TypeScript"),
        ("  - file://../provider.js\n", 3, "outside the project root"),
    ],
)  # fmt: skip
def test_a_provider_accord_cannot_run_is_refused_at_its_line(
    tmp_path: Path, provider: str, line: int, words: str
) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    (tmp_path / "outside.js").write_text("module.exports = () => 'x';\n")
    (tmp_path / "provider.js").write_text("module.exports = class {};\n")
    config = project(folder, {"promptfooconfig.yaml": f"prompts: [hi]\nproviders:\n{provider}",
                              "parse.ts": "export default () => 'x';\n",
                              "provider.ts": "export default class {}\n"})  # fmt: skip
    refused(accord("validate", config), f"promptfooconfig.yaml:{line}", words)


def test_a_key_from_the_environment_goes_only_where_the_user_chose(
    tmp_path: Path, app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APP_TOKEN", "tok-1234567890-secret")
    monkeypatch.setenv("APP_URL", f"{app.url}/chat")
    text = f"""prompts: [hi]
providers:
  - id: {app.url}/chat
    config:
      method: POST
      headers: {{Authorization: 'Bearer {{{{ env.APP_TOKEN }}}}'}}
      body: {{message: '{{{{prompt}}}}'}}
"""
    config = project(tmp_path, {"promptfooconfig.yaml": text})
    # a URL written in the file: the key is refused there, at the header's line
    refused(accord("validate", config), "promptfooconfig.yaml:6", "APP_TOKEN", "accord trust")
    # the URL given by the environment too: the key goes where the user chose
    from_environment = text.replace(f"id: {app.url}/chat", "id: '{{ env.APP_URL }}'")
    config.write_text(from_environment)
    run = accord("eval", config, "-q")
    assert run.exit_code == 0, run.stderr
    assert app.seen[-1].headers["authorization"] == "Bearer tok-1234567890-secret"
    assert "tok-1234567890-secret" not in run.stdout + run.stderr
    # a file the user trusts may send it to the URL it writes
    config.write_text(text)
    (tmp_path / "config.yml").write_text("trusted: [promptfooconfig.yaml]\n")
    assert accord("eval", config, "-q").exit_code == 0


def test_inline_code_needs_trust_and_a_project_module_does_not(tmp_path: Path) -> None:
    config = project(tmp_path, {
        "parse.js": "module.exports = (json) => json.reply.text;\n",
        "promptfooconfig.yaml": """prompts: [hi]
providers:
  - id: http://127.0.0.1:9/chat
    config:
      body: {m: x}
      transformResponse: json.reply.text
  - id: http://127.0.0.1:9/chat
    config:
      body: {m: x}
      transformResponse: file://parse.js
""",
    })  # fmt: skip
    run = accord("validate", config)
    refused(run, "promptfooconfig.yaml:3", "transformResponse is code written in the file")
    assert "promptfooconfig.yaml:7" not in run.stderr


# --- JavaScript file providers -------------------------------------------------------------


@needs_node
def test_a_javascript_provider_answers_as_promptfoo_reads_it(tmp_path: Path) -> None:
    config = project(tmp_path, {
        "upper.js": """class Upper {
  constructor(options) { this.options = options; }
  id() { return this.options.id; }
  async callApi(prompt, context) {
    if (context.vars.w === 'boom') throw new Error('asked to throw');
    if (context.vars.w === 'err') return { error: 'asked to fail' };
    if (context.vars.w === 'none') return {};
    return { output: `${prompt.toUpperCase()}${this.options.config.suffix}`,
             tokenUsage: { prompt: 2, completion: 3, total: 5 }, cost: 0.25 };
  }
}
module.exports = Upper;
""",
        "obj.mjs": """export default class {
  id() { return 'obj'; }
  async callApi(prompt, context) { return { output: { said: prompt, at: context.prompt.raw } }; }
}
""",
        "promptfooconfig.yaml": """prompts: ['say {{w}}']
providers:
  - id: file://upper.js
    config: {suffix: '!'}
  - file://obj.mjs
tests:
  - vars: {w: hi}
  - vars: {w: boom}
  - vars: {w: err}
  - vars: {w: none}
""",
    })  # fmt: skip
    run = accord("eval", config, "-o", tmp_path / "out.json", "-q")
    assert run.exit_code == 1, run.stderr
    out = [r for r in results(tmp_path / "out.json") if r["promptIdx"] == 0]
    first = out[0]
    assert (first["response"]["output"], first["cost"]) == ("SAY HI!", 0.25)
    assert first["response"]["tokenUsage"]["prompt"] == 2
    # a thrown error, a response's `error`, and no output (evaluator.ts: 'No output')
    assert "asked to throw" in out[1]["error"]
    assert out[2]["error"] == "asked to fail"
    assert out[3]["error"] == "No output"
    objects = [r for r in results(tmp_path / "out.json") if r["promptIdx"] == 1]
    assert json.loads(objects[0]["response"]["output"]) == {"said": "say hi", "at": "say hi"}


# --- a model provider's response_format ----------------------------------------------------


def test_response_format_and_sampling_keys_reach_the_model(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.responder = lambda body: Reply(text='{"city": "Paris", "n": 1.5}')
    config = project(tmp_path, {
        "schema.yaml": "type: json_schema\njson_schema: {name: c, schema: {type: object}}\n",
        "promptfooconfig.yaml": f"""prompts: [capital?]
providers:
  - id: openai:chat:fake-model
    label: schema
    config:
      apiBaseUrl: {fake_llm.url}
      apiKey: test-key
      response_format: file://schema.yaml
      top_p: 0.5
      stop: [END]
  - id: openai:chat:fake-model
    label: mode
    config: {{apiBaseUrl: '{fake_llm.url}', apiKey: test-key,
              response_format: {{type: json_object}}, presence_penalty: 0.1}}
tests:
  - assert: [{{type: is-json}}, {{type: javascript, value: 'typeof output === "object"'}}]
""",
    }, config="trusted: [promptfooconfig.yaml]\n")  # fmt: skip
    run = accord("eval", config, "-o", tmp_path / "out.json", "--cache", "off", "-q")
    sent = {json.dumps(r.get("response_format"), sort_keys=True): r for r in fake_llm.requests}
    schema = sent[
        '{"json_schema": {"name": "c", "schema": {"type": "object"}}, "type": "json_schema"}'
    ]
    assert (schema["top_p"], schema["stop"]) == (0.5, ["END"])
    assert sent['{"type": "json_object"}']["presence_penalty"] == 0.1
    out = {r["provider"]["label"]: r for r in results(tmp_path / "out.json")}
    # openai/chat.ts parses a json_schema answer; a json_object one stays text
    assert out["schema"]["success"] is True, out["schema"]
    assert out["mode"]["success"] is False
    assert run.exit_code == 1


# --- keys promptfoo passes over ------------------------------------------------------------


def test_unknown_top_level_keys_and_assert_are_passed_over_with_a_warning(tmp_path: Path) -> None:
    config = project(tmp_path, {"promptfooconfig.yaml": """x-shared: &shared
  value: hello
prompts: ['{{a}}']
providers: [echo]
assert:
  - type: contains
    value: never
tests:
  - vars: {a: hello}
    assert: [{type: contains, <<: *shared}]
"""})  # fmt: skip
    for command in ("validate", "eval"):
        run = accord(command, config, *(["-q"] if command == "eval" else []))
        assert run.exit_code == 0, run.stderr
        assert "promptfooconfig.yaml:1: the top-level key 'x-shared'" in run.stderr
        assert "promptfooconfig.yaml:5: a top-level 'assert' is not read" in run.stderr
        assert "defaultTest.assert" in run.stderr

"""promptfoo's providers as accord targets.

- `openai:chat:MODEL` (and `openai:MODEL`), `anthropic:messages:MODEL` (and
  `anthropic:MODEL`), and the other ids below become models of the models door
  (engine/models.py): a model entry named after the provider, its `config` (`apiBaseUrl`,
  `apiKey`, `apiKeyEnvar`, `temperature`, `max_tokens`, `seed`) mapped onto config.yml's
  fields. A config key accord does not map is refused at its line, never dropped.
- `echo` answers with the rendered prompt (promptfoo's echo provider).
- `exec: COMMAND` runs the command as promptfoo does (`providers/scriptCompletion.ts`):
  argv from the command split on blanks and quotes, then the prompt, the provider's options
  as JSON and the call's context as JSON, each one argument. No shell reads any of it, so a
  prompt or var is data, never code. The command is the config's own, as a command target's
  is; a file it names stays inside the project.
- `python:FILE[:FUNCTION]` (or `file://FILE.py`) calls `call_api(prompt, options, context)`
  of that file in a Python process of its own, as promptfoo does (`pythonCompletion.ts`);
  the file must be inside the project, like any Python target's code.
- `file://FILE.js` (`.cjs`, `.mjs`; registry.ts): the module's class (its default export,
  or `module.exports`) made with the provider's options and asked `callApi(prompt,
  context)` on node, in a process of its own per call (node_functions.py); the file must be
  inside the project. Its answer is promptfoo's ProviderResponse (`output`, `error`,
  `tokenUsage`, `cost`).
- `http`, `https`, `https://...` (http_provider.py): a request to the user's own app.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from .....engine import keys
from .....engine.paths import PathError, inside
from .....engine.spec import ModelSpec
from ....evaluators.cases import Case, Output
from ...core.targets import EchoTarget, ModelTarget, Target, TargetFailure, run_program, target
from . import http_provider
from .node_functions import JAVASCRIPT_SUFFIXES, NODE_RUNS, run_node

if TYPE_CHECKING:
    from collections.abc import Callable

    from .....engine.context import TaskContext

# promptfoo's provider prefix -> litellm's; `openai:chat:` style ids drop their middle part
MODEL_PREFIXES = {
    "openai": "openai",
    "anthropic": "anthropic",
    "azure": "azure",
    "azureopenai": "azure",
    "ollama": "ollama_chat",
    "groq": "groq",
    "mistral": "mistral",
    "openrouter": "openrouter",
    "bedrock": "bedrock",
    "vertex": "vertex_ai",
    "deepseek": "deepseek",
    "togetherai": "together_ai",
    "fireworks": "fireworks_ai",
    "perplexity": "perplexity",
    "xai": "xai",
    "litellm": "",
}
API_KINDS = ("chat", "messages")
# promptfoo's other API kinds (`openai:embedding:MODEL`, ...): not a chat, so not run
OTHER_KINDS = ("completion", "embedding", "embeddings", "assistant", "realtime", "responses",
               "image", "moderation", "transcription", "agents")  # fmt: skip
CONFIG_KEYS = {
    "apiBaseUrl": "api_base",
    "apiHost": "api_base",
    "apiKey": "api_key",
    "apiKeyEnvar": "key_var",
    "apiVersion": "api_version",  # Azure's
    "temperature": "temperature",
    "max_tokens": "max_tokens",
    "seed": "seed",
    # request fields promptfoo's OpenAI provider sends as given (openai/chat.ts)
    "response_format": "response_format",
    "top_p": "top_p",
    "presence_penalty": "presence_penalty",
    "frequency_penalty": "frequency_penalty",
    "stop": "stop",
}
# promptfoo's `parseScriptParts`: words, or "double" / 'single' quoted runs
SCRIPT_PARTS = re.compile(r"""[^\s"']+|"([^"]*)"|'([^']*)'""")


class ProviderProblem(ValueError):
    """A provider entry accord cannot run: the message says what to do; `key` is the
    path inside the entry it is about (empty: the entry itself); `file` and `line` the place
    in another file that wrote the entry (an AgentV catalog), when not the config's."""

    def __init__(
        self, message: str, *key: str, file: Path | None = None, line: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.key = key
        self.file = file
        self.line = line


# an entry's key naming the file (and line) that wrote it, when another file than the one
# loaded did (an AgentV catalog's entry): that file's trust decides where its keys may go
SOURCE = "__source__"


def script_parts(command: str) -> list[str]:
    return [m.group(1) or m.group(2) or m.group(0) for m in SCRIPT_PARTS.finditer(command)]


def _program_files(parts: list[str], base: Path, root: Path) -> None:
    """Each relative part that names a path (has a slash, or is a file beside the config)
    must lie inside the project: a provider runs the project's own files. Programs given by
    name or absolute path (`python3`, `/usr/bin/env`) are the system's, as in any command."""
    for part in parts:
        if Path(part).is_absolute() or not ("/" in part or (base / part).is_file()):
            continue
        try:
            inside(root, (base / part).resolve().relative_to(root.resolve()), "file")
        except (ValueError, PathError):
            raise ProviderProblem(
                f"the exec provider names '{part}', which is outside the project root "
                f"{root}: a provider runs only the project's own files"
            ) from None


@target("promptfoo-exec")
class ExecTarget(Target):
    """promptfoo's `exec:` provider: argv + [prompt, options JSON, context JSON]."""

    type: Literal["promptfoo-exec"] = "promptfoo-exec"
    argv: list[str] = Field(min_length=1, description="The command, already split.")
    cwd: str = Field(".", description="The config's folder, relative to the project root.")
    options: dict[str, Any] = Field(default_factory=dict)
    default_timeout: ClassVar[float | None] = 300.0
    process_env: dict[str, str] = Field(default_factory=dict, repr=False)  # AgentV's env

    def describe(self) -> str:
        return "exec " + " ".join(self.argv)

    def admission(self, file: Path, root: Path) -> str | None:
        from .....engine.programs import admit

        return admit(self.argv, file, root, root / self.cwd)

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        context = {"vars": case.metadata.get("vars", {}), "prompt": case.metadata.get("prompt")}
        argv = [*self.argv, case.prompt, json.dumps(self.options), json.dumps(context)]
        stdout, stderr, code = await run_program(
            argv, b"", tctx.root / self.cwd, self.seconds(), self.process_env or None
        )
        out = stdout.decode(errors="replace").strip()
        err = stderr.decode(errors="replace").strip()
        if code != 0 or (err and not out):
            raise TargetFailure(f"{self.describe()} exited with {code}: {err[-500:] or out[-500:]}")
        return Output(text=out)


# Runs a provider file's function in a process of its own: arguments as JSON on stdin,
# the result as JSON on stdout (the file's own prints go to stderr).
PYTHON_RUNNER = """
import importlib.util, json, sys
path, name = sys.argv[1], sys.argv[2]
args = json.load(sys.stdin)
real_stdout, sys.stdout = sys.stdout, sys.stderr
spec = importlib.util.spec_from_file_location("promptfoo_provider", path)
module = importlib.util.module_from_spec(spec)
sys.path.insert(0, __import__("os").path.dirname(path))
spec.loader.exec_module(module)
result = getattr(module, name)(*args)
real_stdout.write(json.dumps(result, default=str))
"""


@target("promptfoo-python")
class PythonFileTarget(Target):
    """promptfoo's `python:` provider: FILE's FUNCTION(prompt, options, context) -> dict."""

    type: Literal["promptfoo-python"] = "promptfoo-python"
    file: str = Field(description="The provider file, relative to the project root.")
    function: str = Field("call_api", pattern=r"^[A-Za-z_]\w*$")
    cwd: str = "."
    options: dict[str, Any] = Field(default_factory=dict)
    default_timeout: ClassVar[float | None] = 300.0
    agent_trace: bool = Field(False, description="The result's `tool_calls` are kept.")
    # an AgentV environment's `env`: variables of the provider's process, never shown
    process_env: dict[str, str] = Field(default_factory=dict, repr=False)

    def describe(self) -> str:
        return f"python {self.file}:{self.function}"

    def problem(self, root: Path) -> str | None:
        try:
            path = inside(root, self.file, "python provider file")
        except PathError as exc:
            return exc.message
        return None if path.is_file() else f"python provider file '{self.file}' not found"

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        context = {"vars": case.metadata.get("vars", {}), "prompt": case.metadata.get("prompt")}
        payload = json.dumps([case.prompt, self.options, context]).encode()
        path = str(inside(tctx.root, self.file, "python provider file").resolve())
        argv = [sys.executable, "-c", PYTHON_RUNNER, path, self.function]
        stdout, stderr, code = await run_program(
            argv, payload, tctx.root / self.cwd, self.seconds(), self.process_env or None
        )
        if code != 0:
            tail = stderr.decode(errors="replace").strip()[-500:]
            raise TargetFailure(f"{self.describe()} failed ({code}): {tail or '(no stderr)'}")
        try:
            result = json.loads(stdout.decode(errors="replace"))
        except ValueError:
            raise TargetFailure(f"{self.describe()} printed no JSON result") from None
        if not isinstance(result, dict) or ("output" not in result and "error" not in result):
            raise TargetFailure(
                f"{self.describe()} must return a dict with 'output' or 'error', "
                f"not {result!r:.200}"
            )
        if result.get("error"):
            raise TargetFailure(str(result["error"]))
        output = result.get("output")
        calls = result.get("tool_calls") if self.agent_trace else None
        if calls is not None and not (
            isinstance(calls, list) and all(isinstance(c, dict) and "name" in c for c in calls)
        ):
            raise TargetFailure(f"{self.describe()}: 'tool_calls' is a list of {{name, arguments}}")
        # promptfoo's ProviderResponse.cost: what the answer cost (USD), as a model's is kept
        cost = result.get("cost")
        spent = None
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            spent = float(cost)
        if isinstance(output, str):
            return Output(text=output, tool_calls=list(calls or []), cost=spent)
        return Output(
            text=json.dumps(output, ensure_ascii=False), value=output,
            tool_calls=list(calls or []), cost=spent,
        )  # fmt: skip


@target("promptfoo-javascript")
class JavascriptFileTarget(Target):
    """promptfoo's JavaScript file provider: `new (FILE's class)(options).callApi(prompt,
    context)` on node."""

    type: Literal["promptfoo-javascript"] = "promptfoo-javascript"
    file: str = Field(description="The provider file, relative to the project root.")
    cwd: str = "."
    options: dict[str, Any] = Field(default_factory=dict)
    default_timeout: ClassVar[float | None] = 300.0

    def describe(self) -> str:
        return f"javascript {self.file}"

    def problem(self, root: Path) -> str | None:
        try:
            path = inside(root, self.file, "javascript provider file")
        except PathError as exc:
            return exc.message
        return None if path.is_file() else f"javascript provider file '{self.file}' not found"

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        # the context a script provider keeps (evaluator.ts: no logger, cache or provider
        # object crosses a process): the vars, the prompt and the test
        shown = case.metadata.get("prompt")
        label = shown.get("label") if isinstance(shown, dict) else None
        context = {
            "vars": case.metadata.get("vars", {}),
            # promptfoo's prompt object holds the template as `raw`; accord has it rendered
            "prompt": {"raw": case.prompt, "label": label},
            "test": case.metadata.get("testCase", {}),
        }
        path = str(inside(tctx.root, self.file, "javascript provider file").resolve())
        request = {"kind": "provider", "file": path, "options": self.options,
                   "prompt": case.prompt, "context": context}  # fmt: skip
        answer = await run_node(request, tctx.root / self.cwd, self.seconds(), self.describe())
        return http_provider.provider_output(answer.get("result"), self.describe())


def provider_entries(value: Any) -> list[tuple[dict[str, Any], tuple[Any, ...]]]:
    """Each provider as `{id, label?, config?}` with the path of its entry. Forms: a
    string, a list of strings and mappings, a mapping `{id: {config...}}` inside the list."""
    items = value if isinstance(value, list) else [value]
    out: list[tuple[dict[str, Any], tuple[Any, ...]]] = []
    for index, item in enumerate(items):
        loc: tuple[Any, ...] = (index,) if isinstance(value, list) else ()
        if isinstance(item, str):
            out.append(({"id": item}, loc))
        elif isinstance(item, dict) and "id" in item:
            out.append((dict(item), loc))
        elif isinstance(item, dict) and len(item) == 1:
            ((pid, options),) = item.items()
            entry = {"id": pid, **(options if isinstance(options, dict) else {})}
            out.append((entry, (*loc, pid)))
        else:
            raise ProviderProblem("a provider is an id (`openai:chat:gpt-4o-mini`) or {id, config}")
    return out


# `prompts` (the labels of the prompts the provider runs) is read by the loader (config.py)
PROVIDER_KEYS = ("id", "label", "config", "prompts", "delay", "transform")


def build_target(
    entry: dict[str, Any],
    base: Path,
    root: Path,
    name: str,
    env: dict[str, Any] | None = None,
    agent_trace: bool = False,
    *,
    file: Path,
    special: Callable[[str, dict[str, Any]], Target | None] | None = None,
) -> tuple[Target, ModelSpec | None]:
    """The target of one provider entry (and the model entry, named `name`, that a model
    provider adds). `agent_trace`: a Python provider's `tool_calls` are the agent's (an
    AgentV 4 file's trajectory assertions read them). `special(id, config)`: the target of
    an id only the file's dialect knows, else None. `file` is the file that wrote the entry
    (unless the entry names its own, `SOURCE`): a model endpoint it writes gets a key from
    the environment only when the user trusts it (engine/keys.py)."""
    entry = dict(entry)
    source = entry.pop(SOURCE, None)
    unknown = [k for k in entry if k not in PROVIDER_KEYS or k in ("delay", "transform")]
    if unknown:
        raise ProviderProblem(
            f"provider key '{unknown[0]}' is not supported by accord (supported: id, label, "
            "config, prompts); remove it",
            unknown[0],
        )
    pid = entry["id"]
    if not isinstance(pid, str) or not pid.strip():
        raise ProviderProblem("a provider's id is a non-empty string")
    config = entry.get("config") or {}
    if not isinstance(config, dict):
        raise ProviderProblem("a provider's config is a mapping", "config")
    if pid == "echo":
        return EchoTarget(), None
    made = special(pid, config) if special is not None else None
    if made is not None:  # a provider only the file's dialect knows (AgentV's catalog's)
        return made, None
    cwd = (
        str(base.resolve().relative_to(root.resolve())) if base.resolve() != root.resolve() else "."
    )
    options = {"config": {**config, "basePath": str(base)}, "env": env or {}}
    if pid.startswith("exec:"):
        parts = script_parts(pid[5:])
        if not parts:
            raise ProviderProblem("'exec:' needs a command, e.g. 'exec: python run.py'")
        _program_files(parts, base, root)
        return ExecTarget(argv=parts, cwd=cwd, options=options), None
    if pid.startswith(("python:", "file://")) and ".py" in pid:
        rest = pid.split(":", 1)[1].removeprefix("//")
        stem, _, function = rest.partition(".py")
        function = function.removeprefix(":") or "call_api"
        try:
            relative = inside(root, (base / f"{stem}.py").resolve().relative_to(root.resolve()),
                              "python provider file")  # fmt: skip
        except (ValueError, PathError):
            raise ProviderProblem(
                f"python provider file '{stem}.py' is outside the project root {root}: a "
                "provider runs only the project's own code"
            ) from None
        rel = str(relative.relative_to(root))
        target = PythonFileTarget(
            file=rel, function=function, cwd=cwd, options=options, agent_trace=agent_trace
        )
        return target, None
    where, line = (Path(source[0]), source[1]) if source else (file, None)
    if http_provider.is_http(pid):
        try:
            made = http_provider.build(pid, config, base, root, file=where, env=env or {})
        except http_provider.HttpProblem as exc:
            at = ("config", *map(str, exc.key)) if exc.key else ()
            raise ProviderProblem(exc.message, *at, file=where if source else None,
                                  line=line) from None  # fmt: skip
        return made, None
    javascript = pid.removeprefix("file://")
    if javascript.endswith(JAVASCRIPT_SUFFIXES):
        return _javascript_target(pid, javascript, config, env or {}, base, root, cwd), None
    model, spec = _model_target(pid, config, name, env or {}, base, root)
    refused = keys.model_refusal(
        spec, where, root, what=f"provider '{entry.get('label') or pid}' ",
        instead="Write the key itself in the provider's config (apiKey), or leave the "
        "endpoint out (the provider's own), or give it in the environment (OPENAI_BASE_URL "
        "for openai:)",
    )  # fmt: skip
    if refused is not None:
        at = next((("config", k) for k in ("apiBaseUrl", "apiHost") if k in config), ())
        raise ProviderProblem(refused, *at, file=where if source else None, line=line)
    return model, spec


def _javascript_target(
    pid: str,
    relative: str,
    config: dict[str, Any],
    env: dict[str, Any],
    base: Path,
    root: Path,
    cwd: str,
) -> JavascriptFileTarget:
    """registry.ts's JavaScript provider: the path from the config's folder; the class is
    given `{id, config: {...config, basePath}, env}` (providers/index.ts)."""
    from .asserts.scripts import node_path

    if node_path() is None:
        raise ProviderProblem(f"the provider '{pid}' is JavaScript, run on Node.js: no 'node' "
                              "on the PATH")  # fmt: skip
    if not relative.endswith(NODE_RUNS):
        raise ProviderProblem(
            f"the provider '{pid}' is TypeScript: accord runs {', '.join(NODE_RUNS)} providers "
            "on node (promptfoo compiles TypeScript with tsx); compile it to .js"
        )
    try:
        path = inside(root, (base / relative).resolve().relative_to(root.resolve()),
                      "javascript provider file")  # fmt: skip
    except (ValueError, PathError):
        raise ProviderProblem(
            f"javascript provider file '{relative}' is outside the project root {root}: a "
            "provider runs only the project's own code"
        ) from None
    options = {"id": pid, "config": {**config, "basePath": str(base)}, "env": env}
    return JavascriptFileTarget(file=str(path.relative_to(root)), cwd=cwd, options=options)


# where promptfoo's OpenAI provider finds its base URL and key when the config gives none
# (`src/providers/openai/index.ts`): the config's `env:`, then the process environment
OPENAI_BASE_VARS = ("OPENAI_API_BASE_URL", "OPENAI_BASE_URL")
OLLAMA_BASE_VAR = "OLLAMA_BASE_URL"


def _model_target(
    pid: str, config: dict[str, Any], name: str, env: dict[str, Any], base: Path, root: Path
) -> tuple[Target, ModelSpec]:
    prefix, _, rest = pid.partition(":")
    if prefix not in MODEL_PREFIXES or not rest:
        known = ", ".join(f"{p}:" for p in MODEL_PREFIXES)
        raise ProviderProblem(
            f"provider '{pid}' is not one accord runs (it runs echo, exec:, python:, and the "
            f"model providers {known}); see docs/promptfoo.md"
        )
    kind, _, model = rest.partition(":")
    if model and kind in OTHER_KINDS:
        raise ProviderProblem(
            f"provider '{pid}': accord runs a provider's chat API only (`chat:`, `messages:`, "
            f"or no kind), not '{kind}'"
        )
    if kind not in API_KINDS or not model:  # `openai:MODEL`, or a model name with a colon
        model = rest
    fields: dict[str, Any] = {}
    for key, value in config.items():
        if key not in CONFIG_KEYS:
            raise ProviderProblem(
                f"provider config key '{key}' is not supported by accord (supported: "
                f"{', '.join(CONFIG_KEYS)}); remove it, or set it on a model in config.yml",
                "config",
                key,
            )
        # promptfoo's apiHost is a host name: https://HOST/v1
        fields[CONFIG_KEYS[key]] = f"https://{value}/v1" if key == "apiHost" else value
    if isinstance(fields.get("response_format"), str):
        fields["response_format"] = _loaded(fields["response_format"], base, root)
    if prefix == "openai":
        _openai_defaults(fields, env)
    elif prefix == "ollama" and "api_base" not in fields:
        # promptfoo's Ollama providers (providers/ollama.ts): OLLAMA_BASE_URL, else
        # localhost:11434 (litellm's own default)
        if env.get(OLLAMA_BASE_VAR):
            fields["api_base"] = env[OLLAMA_BASE_VAR]
        elif os.environ.get(OLLAMA_BASE_VAR):
            fields["api_base_var"] = OLLAMA_BASE_VAR  # read at each call, never stored
    litellm = f"{MODEL_PREFIXES[prefix]}/{model}" if MODEL_PREFIXES[prefix] else model
    spec = ModelSpec(name=name, model=litellm, **fields)
    shape = fields.get("response_format")
    if isinstance(shape, dict) and shape.get("type") == "json_schema":
        return StructuredModelTarget(model=name), spec
    return ModelTarget(model=name), spec


def _loaded(value: str, base: Path, root: Path) -> Any:
    """promptfoo's maybeLoadFromExternalFile for `response_format: file://schema.json`
    (or .yaml): the file's value, the file inside the project."""
    if not value.startswith("file://"):
        raise ProviderProblem(
            "'response_format' is a mapping ({type: json_object}, {type: json_schema, "
            "json_schema: ...}) or file://FILE.json", "config", "response_format",
        )  # fmt: skip
    from . import sources

    try:
        ((path, _shown),) = sources.expand(base, root, value[7:], "response_format file")
        text = path.read_text(encoding="utf-8")
        if path.suffix.lower() == ".json":
            return json.loads(text)
        from .....engine.yamlmarks import parse_yaml

        return parse_yaml(text, path, core=True)[0]
    except (sources.SourceProblem, ValueError, OSError) as exc:
        message = getattr(exc, "message", None) or str(exc)
        raise ProviderProblem(message, "config", "response_format") from None


@target("promptfoo-structured-model")
class StructuredModelTarget(ModelTarget):
    """A model asked with `response_format: {type: json_schema}`: its answer is the JSON
    value it writes, as promptfoo's OpenAI provider parses it (openai/chat.ts); text that is
    no JSON stays text."""

    type: Literal["promptfoo-structured-model"] = "promptfoo-structured-model"  # type: ignore[assignment]

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        output = await super().produce(tctx, case, repeat)
        try:
            value = json.loads(output.text)
        except ValueError:
            return output
        from .asserts.graded import js_json

        text = value if isinstance(value, str) else js_json(value)
        return dataclasses.replace(
            output, text=text, value=None if isinstance(value, str) else value
        )


def _openai_defaults(fields: dict[str, Any], env: dict[str, Any]) -> None:
    """What promptfoo's OpenAI provider takes when its config is silent: the base URL and
    key from the config's `env:` or the environment, and 1024 as `max_tokens`."""
    if "api_base" not in fields:
        host = env.get("OPENAI_API_HOST")
        base = next((env[v] for v in OPENAI_BASE_VARS if env.get(v)), None)
        if host or base:
            fields["api_base"] = f"https://{host}/v1" if host else base
        else:
            found = next((v for v in ("OPENAI_API_HOST", *OPENAI_BASE_VARS) if os.environ.get(v)),
                         None)  # fmt: skip
            if found == "OPENAI_API_HOST":  # the environment's choice (engine/keys.py)
                fields["api_base"] = f"https://{keys.read(found)}/v1"
            elif found is not None:
                fields["api_base_var"] = found  # read at each call, never stored
    if "api_key" not in fields and "key_var" not in fields and env.get("OPENAI_API_KEY"):
        fields["api_key"] = env["OPENAI_API_KEY"]
    fields.setdefault("max_tokens", 1024)

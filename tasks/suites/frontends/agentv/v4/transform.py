"""A test's `options.transform` in an AgentV 4 file, as AgentV 4 runs it (commit 58f316ca2:
loaders/transform-parser.ts parseTransformSpec, output-transform.ts applyTransform,
orchestrator.ts applyOutputTransform and buildTransformContext).

The transform is JavaScript, run on the provider's answer before any grader sees it; every
grader of the test then grades what it returned (text as it is, anything else as JSON with
two-space indents):

- an expression or a body (`output.toUpperCase()`; several lines: a body whose `return`
  gives the value), made a function of `output` and `context` (`new Function`);
- `file://PATH[:FUNCTION]`: a JavaScript module (`.js`, `.mjs`, `.cjs`) found from the eval
  file's folder up to the project root, its FUNCTION (default: its default export). A
  TypeScript file (`.ts`, `.mts`, `.cts`) is refused: AgentV imports it with the runtime it
  runs on (Bun, or a Node.js that strips types: 22.18 or 23.6 and later); accord does not
  run TypeScript transforms.

`output` is the answer's text (the last assistant message), `context` holds `vars`,
`prompt` (`label`, `raw`: the question), `metadata` (the test's), and `provider`
(`target`: the provider's label). A transform that returns nothing or throws fails the
test's answer with AgentV's words ("Transform failed ...").

A transform runs a program: like a `javascript` assertion, it runs in a `node` subprocess
(a time limit, its process group killed, output capped), the answer and context given as
JSON on stdin, never as code; a file transform must lie inside the project. No `node` on
the PATH: refused at load.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from .....evaluators.cases import Case, Output
from ....core.targets import Target, TargetFailure, run_program

if TYPE_CHECKING:
    from ......engine.context import TaskContext
    from ......engine.yamlmarks import Loc
    from ....core.cases import Suite
    from ...promptfoo.form import _Loader

TIMEOUT = 300.0  # seconds a transform may run
JS_SUFFIXES = (".js", ".mjs", ".cjs")
TS_SUFFIXES = (".ts", ".mts", ".cts")
MARKER = "__accord_transform__"
# the runner: the request on stdin; the transform made a function as AgentV makes it
RUNNER = r"""
const { pathToFileURL } = require('node:url');
let input = '';
process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', async () => {
  const request = JSON.parse(input);
  try {
    let fn;
    if (request.file) {
      const mod = await import(pathToFileURL(request.file).href);
      fn = request.function ? mod[request.function] : (mod.default ?? mod);
      if (typeof fn !== 'function') {
        throw new Error(request.function
          ? `Transform ${request.spec} must export function "${request.function}"`
          : `Transform ${request.spec} must export a function or default function`);
      }
    } else {
      const code = request.code;
      fn = new Function('output', 'context', code.includes('\n') ? code : `return ${code}`);
    }
    const value = await Promise.resolve(fn(request.output, request.context));
    if (value === undefined || value === null) {
      throw new Error('Transform function did not return a value');
    }
    process.stdout.write('\n__accord_transform__' + JSON.stringify({ value }) + '\n');
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stdout.write('\n__accord_transform__' + JSON.stringify({ error: message }) + '\n');
  }
});
"""


def check(loader: _Loader, options: Any, loc: Loc, where: dict[str, Any]) -> None:
    """A test's (or default_test's) `options.transform` checked at load, a file's path
    resolved (in place, as AgentV's parser resolves it) to one inside the project."""
    if not isinstance(options, dict) or "transform" not in options:
        return
    from . import files as agentv_files

    at = (*loc, "options", "transform")
    value = options["transform"]
    if not isinstance(value, str) or not value.strip():
        loader.issue(at, "options.transform must be a non-empty string (a JavaScript "
                     "expression, or file://PATH[:FUNCTION])", **where)  # fmt: skip
        return
    if shutil.which("node") is None:
        loader.issue(at, "options.transform is JavaScript, run on Node.js, and no 'node' is on "
                     "the PATH: install Node.js, or remove the transform", **where)  # fmt: skip
        return
    spec = value.strip()
    if not spec.startswith("file://"):
        from ......engine.programs import admit_code

        file = where.get("file") or loader.path
        refused = admit_code(file, loader.root, "options.transform")
        if refused is not None:  # code written in a file runs only in a trusted one
            loader.issue(at, refused, **where)
            return
        options["transform"] = spec
        return
    reference, function = split(spec)
    if reference.endswith(TS_SUFFIXES):
        loader.issue(at, f"the transform '{reference}' is TypeScript, which accord does not "
                     "run (AgentV imports it under Bun, or a Node.js that strips types): write "
                     "it as a JavaScript module (.mjs)", **where)  # fmt: skip
        return
    if not reference.endswith(JS_SUFFIXES):
        loader.issue(at, f"unsupported transform file format: {spec} (a JavaScript module: "
                     ".js, .mjs, .cjs)", **where)  # fmt: skip
        return
    before = len(loader.issues)
    path = agentv_files.resolve(loader, reference, "transform", at)
    if path is None:  # said at the transform's own place (a test file's row, too)
        messages = [i.message for i in loader.issues[before:]]
        del loader.issues[before:]
        for message in messages:
            loader.issue(at, message, **where)
        return
    options["transform"] = f"file://{path.resolve()}" + (f":{function}" if function else "")


def split(spec: str) -> tuple[str, str | None]:
    """`file://PATH[:FUNCTION]`: the path and the function (a colon after the second
    character, as AgentV splits it, so that `C:\\` is no function)."""
    rest = spec[len("file://") :]
    colon = rest.rfind(":")
    if colon > 1:
        return rest[:colon], rest[colon + 1 :]
    return rest, None


class TransformTarget(Target):
    """The provider's own target (`inner`), its answer then given to the transform."""

    type: Literal["agentv-transform"] = "agentv-transform"
    inner: Any = Field(None, exclude=True, description="The provider's target.")
    spec: str = ""
    provider: str = ""  # the provider's label, the transform's context.provider.target
    # what a stored answer depends on beside the spec (the digest is of the fields): the
    # provider's own target, and the module's text
    inner_spec: str = ""
    source: str = ""

    def describe(self) -> str:
        assert isinstance(self.inner, Target)
        return f"{self.inner.describe()}, its answer transformed"

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        inner = self.inner
        assert isinstance(inner, Target)
        found = await inner.produce(tctx, case, repeat)
        if found.error:
            return found
        node = shutil.which("node")
        if node is None:
            raise TargetFailure("no 'node' on the PATH to run the test's transform")
        request: dict[str, Any] = {"spec": self.spec, "output": found.text,
                                   "context": _context(case, self.provider)}  # fmt: skip
        if self.spec.startswith("file://"):
            request["file"], request["function"] = split(self.spec)
        else:
            request["code"] = self.spec
        stdin = json.dumps(request, ensure_ascii=False, default=str).encode()
        stdout, stderr, code = await run_program([node, "-e", RUNNER], stdin, tctx.root, TIMEOUT)
        text = stdout.decode(errors="replace")
        if MARKER not in text:
            tail = stderr.decode(errors="replace").strip()[-800:]
            raise TargetFailure(f"the transform exited with {code}: {tail or '(no stderr)'}")
        try:
            answer = json.loads(text.rsplit(MARKER, 1)[1].strip().splitlines()[0])
        except (ValueError, IndexError):
            answer = None
        if not isinstance(answer, dict):
            raise TargetFailure("the transform printed an answer that does not read") from None
        if "error" in answer:
            label = "[file transform]" if self.spec.startswith("file://") else "[inline transform]"
            raise TargetFailure(f"Transform failed ({label}): {answer['error']}")
        value = answer.get("value")
        shown = value if isinstance(value, str) else json.dumps(value, indent=2)
        return dataclasses.replace(found, text=shown, value=None)


def _context(case: Case, provider: str) -> dict[str, Any]:
    meta = case.metadata if isinstance(case.metadata, dict) else {}
    prompt = meta.get("prompt")
    prompt = prompt if isinstance(prompt, dict) else {}
    context: dict[str, Any] = {
        "vars": meta.get("vars") or {},
        "prompt": {"label": prompt.get("label"), "raw": case.prompt},
        "provider": {"target": provider},
    }
    test = meta.get("testCase")
    metadata = test.get("metadata") if isinstance(test, dict) else None
    if isinstance(metadata, dict) and metadata:
        context["metadata"] = metadata
    return context


def wrapped(suite: Suite) -> Suite:
    """Each case whose test has a transform answered by its provider's target and then the
    transform: one such target per (provider, transform)."""
    targets = dict(suite.targets)
    made: dict[tuple[str, str], str] = {}
    cases = []
    for case in suite.cases:
        options = case.metadata.get("options") if isinstance(case.metadata, dict) else None
        spec = options.get("transform") if isinstance(options, dict) else None
        if isinstance(spec, str) and case.target in suite.targets:
            key = (case.target, spec)
            if key not in made:
                name = f"{case.target} (transform {len(made) + 1})"
                inner = suite.targets[case.target]
                targets[name] = TransformTarget(
                    inner=inner, spec=spec, provider=case.target,
                    inner_spec=inner.model_dump_json(), source=_source_digest(spec),
                )  # fmt: skip
                made[key] = name
            case = dataclasses.replace(case, target=made[key])
        cases.append(case)
    return dataclasses.replace(suite, targets=targets, cases=cases)


def _source_digest(spec: str) -> str:
    """The sha256 of a file transform's module (checked to exist at load)."""
    if not spec.startswith("file://"):
        return ""
    path = Path(split(spec)[0])
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""

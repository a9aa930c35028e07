"""The programs that run promptfoo's python and javascript assertions in a subprocess, as
source text (run with `python -c` and `node -e`, so they ship inside the package and need
nothing of accord in the interpreter that runs them).

Each reads {code | file, function, output, context} as JSON on stdin, calls the function with
(output, context) and prints {result} (or {error}) as JSON after a marker line, so that what
the assertion itself prints does not mix with its answer.
"""

PYTHON_MARKER = "@@accord-python-result@@"
NODE_MARKER = "@@accord-javascript-result@@"

PYTHON_RUNNER = r"""
import importlib.util
import json
import sys
import traceback

MARKER = "\n@@accord-python-result@@\n"


def _load(request):
    if "code" in request:
        scope = {"__name__": "promptfoo_assertion"}
        exec(compile(request["code"], "<assertion>", "exec"), scope)
        return scope[request["function"]]
    path = request["file"]
    sys.path.insert(0, request["folder"])
    spec = importlib.util.spec_from_file_location("promptfoo_assertion_file", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    function = getattr(module, request["function"], None)
    if not callable(function):
        raise AttributeError(f"{path} has no function {request['function']!r}")
    return function


def _plain(value):
    if hasattr(value, "__dataclass_fields__"):
        return {name: getattr(value, name) for name in value.__dataclass_fields__}
    if hasattr(value, "__dict__"):
        return vars(value)
    return str(value)


def main():
    request = json.loads(sys.stdin.read())
    try:
        result = _load(request)(request["output"], request["context"])
        answer = {"result": result}
    except BaseException as exc:  # the assertion's own failure, reported as promptfoo does
        answer = {"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()}
    sys.stdout.write(MARKER + json.dumps(answer, default=_plain) + "\n")


main()
"""

NODE_RUNNER = r"""
// Runs one promptfoo javascript assertion: reads {code | file, function, output, context} as
// JSON on stdin, calls it with (output, context), awaits the result and prints it as JSON
// after a marker; an exception prints its message and stack instead.
const MARKER = '\n@@accord-javascript-result@@\n';

async function load(request) {
  if ('code' in request) {
    return new Function('output', 'context', request.code);
  }
  const { pathToFileURL } = require('url');
  const mod = await import(pathToFileURL(request.file).href);
  const named = request.function ? mod[request.function] : undefined;
  if (typeof named === 'function') return named;
  if (typeof mod.default === 'function') return mod.default;
  if (mod.default && typeof mod.default[request.function] === 'function') {
    return mod.default[request.function];
  }
  throw new Error(`${request.file} must export a function or have a default export as a function`);
}

async function main() {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const request = JSON.parse(input);
  let answer;
  try {
    const fn = await load(request);
    const result = await Promise.resolve(fn(request.output, request.context));
    answer = { result: result === undefined ? null : result, kind: typeof result };
  } catch (err) {
    answer = { error: err && err.message ? err.message : String(err), stack: err && err.stack };
  }
  process.stdout.write(MARKER + JSON.stringify(answer) + '\n');
}

main();
"""

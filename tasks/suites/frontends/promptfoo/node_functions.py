"""JavaScript that promptfoo's providers run, run on node in a process of its own: a
JavaScript file provider's `callApi` (registry.ts: a class, `new Class(options)`), and the
http provider's functions (http.ts: `transformRequest`, `validateStatus`, `sessionParser`,
`transformResponse`), each written inline or as `file://FILE.js[:FUNCTION]`.

The request goes to node as JSON on stdin: the prompt, the vars, the response's text are
data the functions receive as arguments, never text spliced into code. The answer comes back
as JSON after a marker line, so that what the code itself prints does not mix with it. A
value the code leaves `undefined` is absent from the answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...core.targets import TargetFailure, run_program
from .asserts.runners import NODE_MARKER

# promptfoo's JAVASCRIPT_EXTENSIONS (util/fileExtensions.ts); accord runs the three node
# runs as they are (a TypeScript file needs promptfoo's tsx loader)
JAVASCRIPT_SUFFIXES = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts")
NODE_RUNS = (".js", ".cjs", ".mjs")

NODE_FUNCTIONS = r"""
// accord's runner of promptfoo's provider code: reads one request as JSON on stdin, runs it,
// and prints {result} (absent when undefined) or {error} as JSON after a marker line.
const MARKER = '\n@@accord-javascript-result@@\n';
const { pathToFileURL } = require('url');

// as promptfoo's importModule: ESM import, else require; a default export's default first
async function importModule(file, name) {
  let imported;
  try {
    imported = await import(pathToFileURL(file).href);
  } catch (err) {
    try {
      imported = require(file);
    } catch (_ignored) {
      throw err;
    }
  }
  const mod = (imported && imported.default && imported.default.default) ||
    (imported && imported.default) || imported;
  return name ? mod[name] : mod;
}

async function loaded(spec, what) {
  const fn = await importModule(spec.file, spec.function);
  if (typeof fn !== 'function') {
    throw new Error(`${what} malformed: ${spec.file} must export a function or have a ` +
      'default export as a function');
  }
  return fn;
}

const FUNCTION_EXPRESSION = /^(\(.*?\)\s*=>|function\s*\(.*?\))/;

// the steps of http.ts, each given its inputs as arguments
const steps = {
  async request(req) {
    const spec = req.transformRequest;
    if (spec.file) {
      const fn = await loaded(spec, 'Request transform');
      try {
        return await fn(req.prompt);
      } catch (err) {
        throw new Error(`Error in request transform function from ${spec.file}: ` +
          (err && err.message ? err.message : String(err)));
      }
    }
    try {
      return await new Function('prompt', spec.code)(req.prompt);
    } catch (err) {
      throw new Error('Error in request transform string template: ' +
        (err && err.message ? err.message : String(err)));
    }
  },

  async response(req) {
    const answer = {};
    const response = req.response;
    if (req.validateStatus) {
      const spec = req.validateStatus;
      let valid;
      if (spec.file) {
        try {
          valid = await loaded(spec, 'Status validator');
        } catch (err) {
          throw new Error(`Status validator malformed: ${spec.file} - ${err.message || err}`);
        }
      } else {
        const code = spec.code.trim();
        valid = code.includes('=>') || code.startsWith('function')
          ? new Function(`return ${code}`)()
          : new Function('status', `return ${code}`);
      }
      if (!valid(response.status)) {
        answer.failed = true;
        return answer;
      }
    }
    if (req.sessionParser) {
      const spec = req.sessionParser;
      const parse = spec.file
        ? await loaded(spec, 'Response transform')
        : new Function('data', `return (${spec.code.trim()});`);
      const body = req.parsed === null ? response.data : req.parsed;
      answer.sessionId = await parse({ headers: response.headers, body });
    }
    if (req.transformResponse) {
      const spec = req.transformResponse;
      const context = { response };
      if (spec.file) {
        const fn = await loaded(spec, 'Response transform');
        answer.result = await fn(req.parsed, response.data, context);
      } else {
        const code = spec.code.trim();
        const body = FUNCTION_EXPRESSION.test(code)
          ? `return (${code})(json, text, context);`
          : `return (${code});`;
        let result;
        try {
          result = new Function('json', 'text', 'context', body)(
            req.parsed || null, response.data, context);
        } catch (err) {
          throw new Error(`Failed to transform response: Error: Transform failed: ${err.message}`);
        }
        answer.result = typeof result === 'string' ? { output: result } : result;
      }
    }
    return answer;
  },

  async provider(req) {
    const Provider = await importModule(req.file);
    const provider = new Provider(req.options);
    if (typeof provider.id !== 'function') {
      // promptfoo's evaluator calls provider.id() and stops the whole run without one
      throw new Error(`${req.file}: the provider class has no id() method, which promptfoo ` +
        'calls (provider.id is not a function)');
    }
    return { result: await provider.callApi(req.prompt, req.context) };
  },
};

async function main() {
  let input = '';
  for await (const chunk of process.stdin) input += chunk;
  const req = JSON.parse(input);
  let answer;
  try {
    answer = await steps[req.kind](req);
    if (req.kind === 'request') answer = { result: answer };
  } catch (err) {
    answer = { error: err && err.message ? err.message : String(err) };
  }
  let text;
  try {
    text = JSON.stringify(answer);
  } catch (err) {
    text = JSON.stringify({ error: `the answer is not JSON: ${err.message}` });
  }
  process.stdout.write(MARKER + text + '\n');
}

main();
"""


async def run_node(
    request: dict[str, Any], cwd: Path, timeout: float, what: str, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run one request of NODE_FUNCTIONS in `cwd`; its answer (`error` raised as a
    `TargetFailure` saying `what` failed)."""
    from .asserts.scripts import node_path  # the assertion kinds load when a config uses them

    node = node_path()
    if node is None:
        raise TargetFailure(f"{what}: no 'node' on the PATH to run its JavaScript")
    stdin = json.dumps(request, ensure_ascii=False, default=str).encode()
    argv = [node, "-e", NODE_FUNCTIONS]
    stdout, stderr, status = await run_program(argv, stdin, cwd, timeout, env)
    text = stdout.decode(errors="replace")
    if NODE_MARKER not in text:
        tail = stderr.decode(errors="replace").strip()[-800:]
        raise TargetFailure(f"{what}: node exited with {status}: {tail or '(no stderr)'}")
    try:
        answer = json.loads(text.rsplit(NODE_MARKER, 1)[1].strip().splitlines()[0])
    except (ValueError, IndexError):
        answer = None
    if not isinstance(answer, dict):
        raise TargetFailure(f"{what}: its answer does not read as JSON")
    if "error" in answer:
        raise TargetFailure(f"{what}: {answer['error']}")
    return answer

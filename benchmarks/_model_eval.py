"""Shared by B13, B18 and B19: the same eval suite run by `accord eval` and by promptfoo 0.118,
each as a whole process, against one OpenAI-compatible server on loopback that answers at once
(aiohttp, in a child process of its own). With `promptfoo_config=True` (B13, B18) a third
column runs accord on the very promptfooconfig.yaml promptfoo runs, and the two tools' verdicts
on it are compared: a difference fails the benchmark (exit 1).

promptfoo is installed with npm into ~/.cache/accord-bench/promptfoo the first time (never by
the test suite); without npm or the registry its column is skipped with a message.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ACCORD = Path(sys.executable).parent / "accord"
PROMPTFOO_VERSION = "0.118.0"
PROMPTFOO_HOME = Path.home() / ".cache" / "accord-bench" / "promptfoo"
PROMPTFOO = PROMPTFOO_HOME / "node_modules" / ".bin" / "promptfoo"

SERVER = r"""
import json, sys, time
from aiohttp import web

async def chat(request):
    body = await request.json()
    text = "echo: " + str(body["messages"][-1].get("content") or "")
    return web.json_response({
        "id": "chatcmpl-b", "object": "chat.completion", "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
    })

async def messages(request):  # Anthropic's Messages API
    body = await request.json()
    content = body["messages"][-1]["content"]
    said = content if isinstance(content, str) else "".join(
        b.get("text", "") for b in content if b.get("type") == "text")
    return web.json_response({
        "id": "msg_b", "type": "message", "role": "assistant", "model": body.get("model"),
        "content": [{"type": "text", "text": "echo: " + said}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 5, "output_tokens": 5},
    })

async def generate(request):  # Gemini's generateContent
    body = await request.json()
    said = "".join(p.get("text", "") for p in body["contents"][-1]["parts"])
    return web.json_response({
        "candidates": [{"content": {"role": "model", "parts": [{"text": "echo: " + said}]},
                        "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 5,
                          "totalTokenCount": 10},
        "modelVersion": request.match_info["model"],
    })

async def start():
    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/v1/messages", messages)
    app.router.add_post("/v1beta/models/{model}:generateContent", generate)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=1024)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    print(f"http://127.0.0.1:{port}/v1", flush=True)
    while True:
        await __import__("asyncio").sleep(3600)

__import__("asyncio").run(start())
"""

# one command, its wall time and the peak RSS of the largest process it ran (node or python)
MEASURE = r"""
import resource, subprocess, sys, time, json
started = time.perf_counter()
done = subprocess.run(json.loads(sys.argv[1]), cwd=sys.argv[2], capture_output=True, text=True)
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps([done.returncode, seconds, peak, done.stderr[-800:]]))
"""


@contextlib.contextmanager
def fake_server() -> Iterator[str]:
    """The answering server in a child process; yields its base URL."""
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER], stdout=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http"):
            raise SystemExit("the benchmark's model server did not start")
        yield url
    finally:
        process.kill()
        process.wait()


def install_promptfoo() -> str | None:
    """promptfoo's command, installed with npm on first use; None (said why) when it can't."""
    if PROMPTFOO.exists():
        return str(PROMPTFOO)
    npm = shutil.which("npm")
    if npm is None:
        print("  promptfoo column skipped: npm is not installed")
        return None
    PROMPTFOO_HOME.mkdir(parents=True, exist_ok=True)
    print(f"  installing promptfoo@{PROMPTFOO_VERSION} with npm into {PROMPTFOO_HOME} ...")
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--loglevel=error",
         f"promptfoo@{PROMPTFOO_VERSION}"],
        cwd=PROMPTFOO_HOME, capture_output=True, text=True, timeout=1800, check=False,
        # its browser (for red-team plugins) is not needed here, and comes from another host
        env={**os.environ, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"},
    )  # fmt: skip
    if done.returncode != 0 or not PROMPTFOO.exists():
        print(f"  promptfoo column skipped: npm install failed: {done.stderr.strip()[-300:]}")
        return None
    return str(PROMPTFOO)


# each API family: accord's model and api_base (under the server's root), and promptfoo's own
# provider for it with its base-URL option
FAMILIES = {
    "openai": ("openai/fake-model", "/v1", "openai:chat:fake-model", "apiBaseUrl", "/v1"),
    "anthropic": ("anthropic/claude-sonnet-4-20250514", "",
                  "anthropic:messages:claude-sonnet-4-20250514", "apiBaseUrl", ""),
    "gemini": ("gemini/gemini-2.0-flash", "/v1beta", "google:gemini-2.0-flash", "apiBaseUrl", ""),
}  # fmt: skip


def write_suites(
    folder: Path, url: str, n: int, workers: int = 0, echo: bool = False, family: str = "openai"
) -> None:
    """The same suite for both tools: n cases `hello i`, model target (or each tool's `echo`,
    which answers with the input and calls no model), one `contains`. The model speaks the
    API of `family`, on each side through that tool's own client for it."""
    model, under, pf_id, pf_option, pf_under = FAMILIES[family]
    root = url.rsplit("/v1", 1)[0]
    (folder / "config.yml").write_text(
        f"models:\n  - name: fake\n    model: {model}\n"
        f"    api_base: {root + under}\n    api_key: test-key\n"
        + (f"model_workers: {workers}\n" if workers else "")
    )
    cases = "".join(f"  - {{id: c{i}, input: hello {i}}}\n" for i in range(n))
    (folder / "bench.eval.yml").write_text(
        f"name: bench\ntarget: {'echo' if echo else 'fake'}\n"
        "evaluators:\n  - {type: contains, value: hello}\ncases:\n" + cases
    )
    tests = "".join(f"  - vars: {{input: hello {i}}}\n" for i in range(n))
    provider = (
        "  - id: echo\n"
        if echo
        else f"  - id: {pf_id}\n    config:\n"
        f"      {pf_option}: {root + pf_under}\n      apiKey: test-key\n"
    )
    (folder / "promptfooconfig.yaml").write_text(
        "description: bench\nprompts:\n  - '{{input}}'\nproviders:\n"
        + provider
        + "defaultTest:\n  assert:\n    - type: contains\n      value: hello\n"
        "tests:\n" + tests
    )


def measure(command: list[str], folder: Path) -> tuple[float, float]:
    """(seconds, peak MiB) of one whole process."""
    out = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps(command), str(folder)],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    code, seconds, peak, stderr = json.loads(out)
    if code not in (0, 100):  # promptfoo exits 100 when an assertion fails
        raise SystemExit(f"{command[0]} failed ({code}): {stderr}")
    return seconds, peak


def accord_command(concurrency: int) -> list[str]:
    return [str(ACCORD), "eval", "bench.eval.yml", "--max-concurrency", str(concurrency),
            "-q", "--format", "json", "--output", "out.json", "--cache", "off"]  # fmt: skip


def accord_promptfoo_command(concurrency: int) -> list[str]:
    """accord on promptfoo's own config, writing promptfoo's -o JSON as promptfoo does."""
    return [str(ACCORD), "eval", "-c", "promptfooconfig.yaml", "--max-concurrency",
            str(concurrency), "-q", "--cache", "off", "-o", "accord-pf.json"]  # fmt: skip


def promptfoo_command(promptfoo: str, concurrency: int) -> list[str]:
    return [promptfoo, "eval", "-c", "promptfooconfig.yaml", "-j", str(concurrency),
            "--no-cache", "--no-progress-bar", "--no-table", "-o", "pf.json"]  # fmt: skip


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-workers", type=int, default=0, help="model_workers: N")
    parser.add_argument("--client", choices=["lean", "litellm"], default="lean",
                        help="ACCORD_MODEL_CLIENT: the path of the openai/ model")  # fmt: skip
    parser.add_argument("--no-promptfoo", action="store_true", help="accord's column only")
    parser.add_argument("--family", choices=sorted(FAMILIES), default="openai",
                        help="the model's API: openai/, anthropic/ or gemini/, beside "
                        "promptfoo's own provider for it")  # fmt: skip
    return parser.parse_args()


def compare(
    n: int, concurrency: int, runs: int, echo: bool = False, promptfoo_config: bool = False
) -> dict[str, Any]:
    """Paired runs (accord, [accord on promptfoo's config,] promptfoo, accord, ...): median
    seconds and max peak of each."""
    args = options()
    os.environ.update(
        PROMPTFOO_DISABLE_TELEMETRY="1", PROMPTFOO_DISABLE_UPDATE="1", NO_COLOR="1",
        ACCORD_MODEL_CLIENT=args.client,
    )  # fmt: skip
    # an installed accord has its bytecode (pip compiles it); without it every run would
    # compile its modules again, which measures the shell's setting, not accord
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    promptfoo = None if args.no_promptfoo else install_promptfoo()
    load_before = os.getloadavg()
    results: dict[str, list[tuple[float, float]]] = {"accord": [], "accord-pf": [], "promptfoo": []}
    summary: dict[str, Any] = {"setup": (args.client, args.model_workers), "family": args.family}
    summary["echo"] = echo
    promptfoo_config = promptfoo_config and args.family == "openai"
    with tempfile.TemporaryDirectory(prefix="accord-bench-") as tmp, fake_server() as url:
        folder = Path(tmp)
        os.environ["PROMPTFOO_CONFIG_DIR"] = str(folder / ".promptfoo")
        write_suites(folder, url, n, args.model_workers, echo, args.family)
        commands = {"accord": accord_command(concurrency)}
        if promptfoo_config:
            commands["accord-pf"] = accord_promptfoo_command(concurrency)
        if promptfoo is not None:
            commands["promptfoo"] = promptfoo_command(promptfoo, concurrency)
        for command in commands.values():
            measure(command, folder)  # warm: bytecode, the file cache, promptfoo's database
        for _ in range(runs):
            for tool, command in commands.items():
                results[tool].append(measure(command, folder))
        passed = json.loads((folder / "out.json").read_text())["suites"][0]["counts"]["passed"]
        if passed < n:  # every case must have been answered by the model and passed
            raise SystemExit(f"accord passed {passed} of {n} cases: see {folder}/out.json")
        if promptfoo is not None:
            stats = json.loads((folder / "pf.json").read_text())["results"]["stats"]
            if stats["successes"] < n:
                raise SystemExit(f"promptfoo passed {stats['successes']} of {n} cases")
        if promptfoo_config:
            summary["verdicts"] = same_verdicts(folder, n, echo, promptfoo is not None)
    summary["load"] = os.getloadavg()
    summary["load_before"] = load_before
    for tool, figures in results.items():
        if figures:
            times = sorted(f[0] for f in figures)
            summary[tool] = (times[len(times) // 2], max(f[1] for f in figures), times)
    return summary


def _answers(path: Path) -> tuple[int, dict[int, tuple[bool, str]]]:
    """(successes, {test index: (verdict, output)}) of a promptfoo -o JSON file."""
    results = json.loads(path.read_text())["results"]
    rows = {r["testIdx"]: (bool(r["success"]), str(r["response"]["output"]))
            for r in results["results"]}  # fmt: skip
    return int(results["stats"]["successes"]), rows


def same_verdicts(folder: Path, n: int, echo: bool, with_promptfoo: bool) -> str:
    """accord's verdicts on promptfoo's config beside promptfoo's: the pass counts must be
    equal (else the benchmark fails, exit 1), and each case's answer must come from the same
    place: the loopback server (`echo: ...`) for the model provider, the input for `echo`."""
    mine, rows = _answers(folder / "accord-pf.json")
    expected = {i: (True, ("" if echo else "echo: ") + f"hello {i}") for i in range(n)}
    if rows != expected:  # a provider mapped elsewhere answers differently, or not at all
        wrong = next(i for i in range(n) if rows.get(i) != expected[i])
        print(f"  FAILED: accord on promptfooconfig.yaml, case {wrong}: {rows.get(wrong)}, "
              f"expected {expected[wrong]}")  # fmt: skip
        sys.exit(1)
    if not with_promptfoo:
        return f"accord on promptfooconfig.yaml passed {mine} of {n} (promptfoo not run)"
    theirs, their_rows = _answers(folder / "pf.json")
    if mine != theirs or rows != their_rows:
        wrong = next((i for i in range(n) if rows.get(i) != their_rows.get(i)), None)
        print(f"  FAILED: verdicts differ on promptfooconfig.yaml: promptfoo passed {theirs}, "
              f"accord {mine} of {n}; first differing case: {wrong}")  # fmt: skip
        sys.exit(1)
    return (f"same verdicts on promptfooconfig.yaml: promptfoo passed {theirs} of {n}, "
            f"accord {mine} of {n}, each case's answer equal")  # fmt: skip


PfTarget = Callable[[tuple[float, float], tuple[float, float] | None], str]


def report(
    name: str, what: str, summary: dict[str, Any], target: str, pf_target: PfTarget | None = None
) -> None:
    """The figures; with `pf_target` (accord's seconds and MiB on promptfoo's config, and
    promptfoo's, to the target's text and whether it is met) the third column beside it."""
    load = summary["load"]
    client, workers = summary["setup"]
    before = summary.get("load_before", load)
    print(f"{name}: {what} (load {before[0]:.2f} / {before[1]:.2f} / {before[2]:.2f} before, "
          f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} after the runs)")  # fmt: skip
    family = summary.get("family", "openai")
    if not summary.get("echo"):
        print(f"  model: {FAMILIES[family][0]} (accord) / {FAMILIES[family][2]} (promptfoo), "
              f"on the same loopback server")  # fmt: skip
    print(f"  accord: ACCORD_MODEL_CLIENT={client}, model_workers: {workers}")
    mine = summary["accord"]
    theirs = summary.get("promptfoo")
    line = f"  accord {mine[0]:.2f} s, {mine[1]:.0f} MiB peak"
    if theirs is not None:
        line += (
            f"; promptfoo {PROMPTFOO_VERSION} {theirs[0]:.2f} s, {theirs[1]:.0f} MiB peak;"
            f" ratio {mine[0] / theirs[0]:.2f}x time, {mine[1] / theirs[1]:.2f}x memory"
        )
        line += f"\n  runs: accord {fmt(mine[2])}; promptfoo {fmt(theirs[2])}"
    print(line)
    print(f"  target: {target}")
    pf = summary.get("accord-pf")
    if pf is None or pf_target is None:
        return
    line = f"  accord on promptfooconfig.yaml itself: {pf[0]:.2f} s, {pf[1]:.0f} MiB peak"
    if theirs is not None:
        line += f"; to promptfoo {pf[0] / theirs[0]:.2f}x time, {pf[1] / theirs[1]:.2f}x memory"
    print(f"{line}\n  runs: {fmt(pf[2])}")
    print(f"  {summary['verdicts']}")
    versus = None if theirs is None else (theirs[0], theirs[1])
    print(f"  target: {pf_target((pf[0], pf[1]), versus)}")


def ratio_target(summary: dict[str, Any], limit: float) -> str:
    """`accord's time <= {limit}x promptfoo's`, and whether the medians meet it."""
    text = f"accord's time <= {limit:g}x promptfoo's"
    theirs = summary.get("promptfoo")
    if theirs is None:
        return f"{text} (promptfoo not run)"
    return f"{text}: {met(summary['accord'][0] <= limit * theirs[0])}"


def met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def fmt(times: list[float]) -> str:
    return " ".join(f"{t:.2f}" for t in times)


def now() -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())

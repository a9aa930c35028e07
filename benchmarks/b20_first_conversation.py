"""B20: the first conversation test of a process (seed 004), a Python agent, no model of its own.

Each scenario runs in a fresh Python process and times `ConversationRunner(...).run_sync()`
(accord's lazy imports included), the judge being tests.fakes.FakeOpenAI:

- exact: every agent turn matches by normalised equality or "*": no judge call   <= 1.0 s
- judged, verdict cached: a `<statement>` turn whose verdict the run store has   <= 1.0 s
- judged, first time: the same turn in a fresh project: the judge is called      reported
- litellm's import alone (`LITELLM_LOCAL_MODEL_COST_MAP=True python -c "import litellm"`)

The judged first-time figure is litellm's import (seconds of CPU, in a thread so the loop goes
on) plus its first call; accord pays it only when a turn needs the judge and the verdict is not
cached, which the first two scenarios check. Median of RUNS runs each.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from _synthetic import machine_note, verdict  # noqa: E402

from tests.fakes import FakeOpenAI, Reply  # noqa: E402

RUNS = 3
TARGET_S = 1.0

SCENARIO = """
import sys, time
from accord import AgentTurn, ConversationRunner, UserTurn
turn = AgentTurn("<greets the user>") if sys.argv[2] == "judged" else AgentTurn("hey there")
started, cpu = time.perf_counter(), time.process_time()
ConversationRunner(lambda history: "Hey there", [UserTurn("hi"), turn],
                   project_root=sys.argv[1]).run_sync()
print(time.perf_counter() - started, time.process_time() - cpu, "litellm" in sys.modules)
"""
# CPU seconds of litellm's import: bare, and through accord's loader (the collector off)
IMPORT = """
import sys, time
cpu = time.process_time()
if sys.argv[1] == "bare":
    import litellm
else:
    from accord.engine.models import load_litellm
    import accord.engine.models
    cpu = time.process_time()
    load_litellm()
print(time.process_time() - cpu)
"""


def project(folder: Path) -> Path:
    (folder / "config.yml").write_text(
        "models:\n  - name: fake\n    model: openai/fake-model\n    api_base_var: B20_BASE\n"
        "    api_key: test-key\n    max_retries: 0\ndefaults:\n  judge_model: fake\n"
    )
    return folder


def scenario(folder: Path, kind: str, base: str) -> tuple[float, float, bool]:
    path = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "B20_BASE": base, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "PYTHONPATH": path}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", SCENARIO, str(folder), kind], env=env,
                          capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    seconds, cpu, imported = done.stdout.split()
    return float(seconds), float(cpu), imported == "True"


def litellm_import(how: str) -> float:
    """CPU seconds of importing litellm in a fresh process: `bare` or through accord."""
    path = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "PYTHONPATH": path}
    done = subprocess.run([sys.executable, "-c", IMPORT, how], env=env, capture_output=True,
                          text=True, check=True, timeout=300)  # fmt: skip
    return float(done.stdout.split()[-1])


def main() -> int:
    print(f"B20 first conversation of a process ({machine_note()})")
    fake = FakeOpenAI()
    fake.responder = lambda body: Reply.tool(
        "select_answer", {"reason": "it does", "answer": "yes"}
    )
    figures: dict[str, list[tuple[float, float]]] = {
        "exact": [], "judged, cached": [], "judged, first": []
    }  # fmt: skip
    imports: dict[str, set[bool]] = {k: set() for k in figures}
    try:
        for _ in range(RUNS):
            with tempfile.TemporaryDirectory() as tmp:
                root = project(Path(tmp))
                for name, kind in (("exact", "exact"), ("judged, first", "judged"),
                                   ("judged, cached", "judged")):  # fmt: skip
                    seconds, cpu, imported = scenario(root, kind, fake.url)
                    figures[name].append((seconds, cpu))
                    imports[name].add(imported)
    finally:
        fake.close()
    bare = statistics.median(litellm_import("bare") for _ in range(RUNS))
    ours = statistics.median(litellm_import("accord") for _ in range(RUNS))
    for name, values in figures.items():
        wall = statistics.median(v[0] for v in values)
        cpu = statistics.median(v[1] for v in values)
        loaded = "litellm imported" if True in imports[name] else "litellm not imported"
        line = f"  {name:<15} {wall:6.2f} s wall {cpu:6.2f} s CPU"
        if name == "judged, first":
            print(f"{line}  ({loaded})")
        else:
            print(f"{line}  target <= {TARGET_S:.1f} s  {verdict(wall, TARGET_S)}  ({loaded})")
    print(f"  litellm's import, CPU: {bare:.2f} s bare, {ours:.2f} s through accord's loader "
          f"(collector off while it runs): target below bare  {verdict(ours, bare)}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

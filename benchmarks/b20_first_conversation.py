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
import time
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
started = time.perf_counter()
ConversationRunner(lambda history: "Hey there", [UserTurn("hi"), turn],
                   project_root=sys.argv[1]).run_sync()
print(time.perf_counter() - started, "litellm" in sys.modules)
"""


def project(folder: Path) -> Path:
    (folder / "config.yml").write_text(
        "models:\n  - name: fake\n    model: openai/fake-model\n    api_base_var: B20_BASE\n"
        "    api_key: test-key\n    max_retries: 0\ndefaults:\n  judge_model: fake\n"
    )
    return folder


def scenario(folder: Path, kind: str, base: str) -> tuple[float, bool]:
    path = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "B20_BASE": base, "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "PYTHONPATH": path}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", SCENARIO, str(folder), kind], env=env,
                          capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    seconds, imported = done.stdout.split()
    return float(seconds), imported == "True"


def litellm_import() -> float:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import litellm"], env=env, check=True, timeout=300)
    python = time.perf_counter() - started
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, timeout=60)
    return python - (time.perf_counter() - started)


def main() -> int:
    print(f"B20 first conversation of a process ({machine_note()})")
    fake = FakeOpenAI()
    fake.responder = lambda body: Reply.tool(
        "select_answer", {"reason": "it does", "answer": "yes"}
    )
    figures: dict[str, list[float]] = {"exact": [], "judged, cached": [], "judged, first": []}
    imports: dict[str, set[bool]] = {k: set() for k in figures}
    try:
        for _ in range(RUNS):
            with tempfile.TemporaryDirectory() as tmp:
                root = project(Path(tmp))
                for name, kind in (("exact", "exact"), ("judged, first", "judged"),
                                   ("judged, cached", "judged")):  # fmt: skip
                    seconds, imported = scenario(root, kind, fake.url)
                    figures[name].append(seconds)
                    imports[name].add(imported)
    finally:
        fake.close()
    floor = statistics.median(litellm_import() for _ in range(RUNS))
    for name, values in figures.items():
        median = statistics.median(values)
        loaded = "litellm imported" if True in imports[name] else "litellm not imported"
        if name == "judged, first":
            print(f"  {name:<15} {median:6.2f} s  ({loaded}; litellm's import alone "
                  f"{floor:.2f} s: the rest is {median - floor:.2f} s)")  # fmt: skip
        else:
            print(f"  {name:<15} {median:6.2f} s  target <= {TARGET_S:.1f} s  "
                  f"{verdict(median, TARGET_S)}  ({loaded})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

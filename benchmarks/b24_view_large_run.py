"""B24: `accord view` on a run of 10,000 cases: the first page of the run, a filtered page,
a text search, a case and the runs list, each timed over HTTP from a fresh server (cold: the
run's index is read from the store on the first request) and again (warm).

The suite: 10,000 echo cases, two evaluators, a tag each, one in seven failing. Target: the
run's first page under 1 s cold.

    .venv/bin/python benchmarks/b24_view_large_run.py
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.compare.harness import start, stop

CASES = 10_000
TARGET = 1.0


def build(root: Path) -> None:
    (root / "config.yml").write_text("{}\n")
    lines = ["name: large", "target: echo", "evaluators:", "  - {type: contains, value: ok}",
             "  - {type: regex, name: short, pattern: '^.{0,12}$'}", "cases:"]  # fmt: skip
    for i in range(1, CASES + 1):
        word = "bad" if i % 7 == 0 else "ok"
        lines.append(f"  - {{id: c{i}, input: '{word} {i}', tags: [t{i % 5}]}}")
    (root / "large.eval.yml").write_text("\n".join(lines) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "accord.cli", "eval", str(root / "large.eval.yml"), "-q",
         "--min-pass-rate", "0"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        sys.exit(done.stderr[-2000:])


def timed(url: str) -> tuple[float, int]:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=120) as response:
        size = len(response.read())
    return time.perf_counter() - started, size


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        build(root)
        print(f"built a run of {CASES:,} cases in {time.perf_counter() - started:.1f} s")
        pages = [
            ("run, first page", "run?id=last"),
            ("run, failed, page 5", "run?id=last&status=failed&page=5"),
            ("run, failed by evaluator", "run?id=last&evaluator=contains"),
            ("run, text search", "run?id=last&q=bad+14"),
            ("case", "case?run=last&case=c7"),
            ("runs list", ""),
        ]
        print(f"load average {os.getloadavg()[0]:.2f}")
        proc, url = start(root)
        try:
            for label, path in pages:
                cold, size = timed(url + path)
                warm, _ = timed(url + path)
                print(f"{label:28s} {cold * 1000:7.0f} ms first, {warm * 1000:6.0f} ms again "
                      f"({size // 1024} KB)")  # fmt: skip
        finally:
            stop(proc)
    print(f"target: the run's first page under {TARGET:.0f} s (first request, cold)")


if __name__ == "__main__":
    main()

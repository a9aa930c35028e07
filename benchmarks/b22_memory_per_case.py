"""B22: memory per case. N small cases (one var, one `contains` assertion, the `echo`
provider), given both as a promptfoo config reading its tests from a JSONL file
(`tests: file://rows.jsonl`) and as an `.eval.yml` holding the same cases: the whole
`accord eval ... -q` process in a fresh subprocess, its peak RSS and wall time, and the bytes
per case beyond the process's start-up (peak minus the peak of a 10-case run, over N).

Target (issue 41, finding F20: ~27 KB a case, 1,000,000 cases ~25 GB): 1,000,000 small cases
run in a few GB, that is <= 3,000 bytes a case. N = 10,000, 40,000 and 100,000 by default;
`--million` adds 1,000,000; `--n N` (repeatable) picks the sizes; `--only promptfoo|evalyml`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ACCORD = Path(sys.executable).parent / "accord"
TARGET_BYTES = 3000  # a case: 1,000,000 cases in ~3 GB


def write_promptfoo(folder: Path, n: int) -> list[str]:
    (folder / "config.yml").write_text("defaults: {}\n")
    with (folder / "rows.jsonl").open("w") as out:
        for i in range(n):
            row = {"vars": {"q": f"c{i}"}, "assert": [{"type": "contains", "value": "c"}]}
            out.write(json.dumps(row) + "\n")
    (folder / "promptfooconfig.yaml").write_text(
        "prompts: ['{{q}}']\nproviders: [echo]\ntests: file://rows.jsonl\n"
    )
    return ["-c", "promptfooconfig.yaml"]


def write_evalyml(folder: Path, n: int) -> list[str]:
    (folder / "config.yml").write_text("defaults: {}\n")
    with (folder / "b21.eval.yml").open("w") as out:
        out.write("name: b21\ntarget: echo\nevaluators:\n  - {type: contains, value: c}\ncases:\n")
        for i in range(n):
            out.write(f"  - {{id: c{i}, input: c{i}}}\n")
    return ["b21.eval.yml"]


WRITERS = {"promptfoo": write_promptfoo, "evalyml": write_evalyml}


def one_run(kind: str, n: int) -> tuple[float, float, int]:
    """(seconds, peak MiB, exit code) of one `accord eval -q` in a fresh process and project."""
    with tempfile.TemporaryDirectory(prefix=f"accord-b21-{kind}-") as tmp:
        folder = Path(tmp)
        args = WRITERS[kind](folder, n)
        started = time.perf_counter()
        proc = subprocess.Popen(
            [str(ACCORD), "eval", *args, "-q", "--cache", "off"],
            cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)
        finally:
            if proc.returncode is None and proc.poll() is None:
                proc.kill()
        seconds = time.perf_counter() - started
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
        if code not in (0, 1):
            print(f"  {kind} n={n}: exit {code}: {err[-400:]}", file=sys.stderr)
        return seconds, usage.ru_maxrss / 1024, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, action="append", help="a number of cases (repeatable)")
    parser.add_argument("--million", action="store_true", help="add 1,000,000 cases")
    parser.add_argument("--only", choices=sorted(WRITERS), help="one of the two forms")
    options = parser.parse_args()
    sizes = options.n or [10_000, 40_000, 100_000]
    if options.million:
        sizes.append(1_000_000)
    kinds = [options.only] if options.only else sorted(WRITERS)
    load = os.getloadavg()[0]
    print(f"B22 memory per case: `accord eval -q`, echo target, one contains (load {load:.2f})")
    for kind in kinds:
        _s, base, _c = one_run(kind, 10)
        print(f"  {kind}: start-up (10 cases) {base:.0f} MiB")
        for n in sizes:
            seconds, peak, code = one_run(kind, n)
            per_case = (peak - base) * 1024 * 1024 / n
            print(
                f"  {kind} {n:>9,} cases: {peak:7.0f} MiB peak RSS, {seconds:7.1f} s, "
                f"{per_case:7,.0f} bytes a case (exit {code}) "
                f"target <= {TARGET_BYTES:,}: {'met' if per_case <= TARGET_BYTES else 'NOT met'}"
            )
    print(f"  target (issue 41): 1,000,000 small cases in a few GB (<= {TARGET_BYTES:,} B a case)")


if __name__ == "__main__":
    main()

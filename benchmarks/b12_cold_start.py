"""B12: cold start of the `accord` command.

- `accord --help` wall time minus `python -c pass` (the interpreter's own start) <= 60 ms
- `accord validate` of a generated 100-task workflow, minus `python -c pass`     <= 200 ms
Each is run several times in a fresh process; the median counts.

Also measured: the floor the libraries set, a script that imports click, PyYAML and Jinja's
sandbox and builds one pydantic model (what any validation with them pays before accord's own
code runs), so the figure says how much of validate is accord's.

Also checks that neither command imports litellm (the engine loads it lazily, only for model
calls: it costs seconds and about 165 MB), by running the CLI in-process under
`python -X importtime` and reading `sys.modules` afterwards, and prints the top import-time
offenders of `validate`.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _synthetic import machine_note, random_dag, verdict, write_project

RUNS = 9
TARGET_HELP_MS = 60.0
TARGET_VALIDATE_MS = 200.0  # over `python -c pass`
TOP = 15

BIN = Path(sys.executable).parent
ACCORD = BIN / "accord"

# Runs the CLI in-process, then reports which heavy modules the command left in sys.modules.
PROBE = """
import json, sys
sys.argv = ["accord", *sys.argv[1:]]
from accord.cli import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code
names = sorted(sys.modules)
heavy = [n for n in names if n.split(".")[0] in ("litellm", "openai", "tiktoken", "httpx",
                                                    "aiohttp", "duckdb", "matplotlib", "docx",
                                                    "psycopg", "jsonschema", "rich")]
print(json.dumps({"code": code, "modules": len(names), "heavy": heavy}), file=sys.stderr)
"""


FLOOR = """
import click, yaml, jinja2.sandbox, jinja2.meta, pydantic
class Model(pydantic.BaseModel):
    x: int
Model(x=1)
"""


def env() -> dict[str, str]:
    out = dict(os.environ)
    out.pop("PYTHONPROFILEIMPORTTIME", None)
    out.pop("PYTHONDONTWRITEBYTECODE", None)  # measure what a user gets: cached bytecode
    out["NO_COLOR"] = "1"
    return out


def wall(cmd: list[str], runs: int = RUNS) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + sys) seconds of `runs` fresh processes of `cmd`, after a warm-up.

    CPU time is what the command itself costs; wall time also counts waiting for a core when
    other work shares the machine.
    """
    subprocess.run(cmd, capture_output=True, env=env(), check=False)
    samples, cpu = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, env=env(), check=False)
        samples.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr.decode()}")
    return samples, cpu


def probe(args: list[str]) -> tuple[dict[str, object], list[tuple[int, int, str]]]:
    """Run the CLI in-process under -X importtime; (probe report, [(self us, cum us, module)])."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", PROBE, *args],
        capture_output=True,
        text=True,
        env=env(),
        check=False,
    )
    report: dict[str, object] = {}
    rows = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:"):
            parts = line[len("import time:") :].split("|")
            if parts[0].strip().startswith("self"):
                continue
            rows.append((int(parts[0]), int(parts[1]), parts[2].rstrip()))
        elif line.startswith("{"):
            report = json.loads(line)
    if not report:
        raise SystemExit(f"probe of {args} printed no report:\n{proc.stderr[-2000:]}")
    return report, rows


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="accord-b12-") as tmp:
        path = write_project(Path(tmp), random_dag(100), name="hundred")
        python = [sys.executable, "-c", "pass"]
        bare, bare_cpu = wall(python)
        floor_script = Path(tmp) / "floor.py"
        floor_script.write_text(FLOOR, encoding="utf-8")
        floor, _floor_cpu = wall([sys.executable, str(floor_script)])
        help_s, help_cpu = wall([str(ACCORD), "--help"])
        validate_s, validate_cpu = wall([str(ACCORD), "validate", str(path)])
        bare_ms = statistics.median(bare) * 1e3
        help_ms = statistics.median(help_s) * 1e3
        validate_ms = statistics.median(validate_s) * 1e3
        help_net = help_ms - bare_ms
        validate_net = validate_ms - bare_ms
        floor_net = statistics.median(floor) * 1e3 - bare_ms
        print(f"B12 cold start (medians of {RUNS} fresh processes)")
        print(f"machine: {machine_note()}")
        print(f"python -c pass:             {bare_ms:7.1f} ms")
        print(f"accord --help:              {help_ms:7.1f} ms  (minus python: {help_net:.1f} ms)")
        print(
            f"accord validate (100 tasks): {validate_ms:6.1f} ms  "
            f"(minus python: {validate_net:.1f} ms)"
        )
        print(
            f"libraries' floor (click, yaml, jinja2 sandbox, one pydantic model): "
            f"{floor_net:.1f} ms over python; accord's own share of validate: "
            f"{validate_net - floor_net:.1f} ms"
        )
        cpu = [statistics.median(c) * 1e3 for c in (bare_cpu, help_cpu, validate_cpu)]
        print(
            f"CPU time (user + sys), same runs: python {cpu[0]:.1f} ms, --help {cpu[1]:.1f} ms "
            f"(minus python: {cpu[1] - cpu[0]:.1f} ms), validate {cpu[2]:.1f} ms"
        )

        ok = True
        for label, args in (("--help", ["--help"]), ("validate", ["validate", str(path)])):
            report, rows = probe(args)
            heavy = report["heavy"]
            assert isinstance(heavy, list)
            litellm = [m for m in heavy if m.split(".")[0] == "litellm"]
            ok = ok and not litellm
            roots = sorted({m.split(".")[0] for m in heavy})
            print(
                f"{label}: exit {report['code']}, {report['modules']} modules loaded, "
                f"litellm imported: {'YES' if litellm else 'no'}; heavy packages loaded: "
                f"{', '.join(roots) or 'none'}"
            )
            if label == "validate":
                total_ms = sum(r[0] for r in rows) / 1e3
                print(f"validate import-time top offenders (total self time {total_ms:.0f} ms):")
                print(
                    "  imported by the command itself, by cumulative time (with what they import):"
                )
                # one leading space in importtime's name column: imported at the top, not nested
                direct = [r for r in rows if not r[2].startswith("  ")]
                for _self, cum_us, name in sorted(direct, key=lambda r: -r[1])[:TOP]:
                    print(f"    {cum_us / 1e3:7.1f} ms  {name.strip()}")
                print("  by top-level package, self times summed:")
                packages: dict[str, int] = {}
                for self_us, _cum, name in rows:
                    root = name.strip().split(".")[0]
                    packages[root] = packages.get(root, 0) + self_us
                for root, us in sorted(packages.items(), key=lambda kv: -kv[1])[:TOP]:
                    print(f"    {us / 1e3:7.1f} ms  {root}")
                print("  any module, by self time (its own body only):")
                for self_us, _cum, name in sorted(rows, key=lambda r: -r[0])[:TOP]:
                    print(f"    {self_us / 1e3:7.1f} ms  {name.strip()}")

    print(
        f"target: --help minus python <= {TARGET_HELP_MS:.0f} ms; validate minus python <= "
        f"{TARGET_VALIDATE_MS:.0f} ms (wall, median); no litellm import"
    )
    print(f"--help {help_net:.1f} ms: {verdict(help_net, TARGET_HELP_MS)}")
    print(f"validate {validate_net:.1f} ms: {verdict(validate_net, TARGET_VALIDATE_MS)}")
    print(f"no litellm import: {'MET' if ok else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

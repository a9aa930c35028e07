"""B16: what `accord run` costs per formatter task beyond `accord validate`, whole process.

Two generated workflows of 2,000 formatter tasks, each task with a template of its own:

- plain: `{{ t00012 | truncate(20) }} {{ t00034 | length }}`, 0-4 references among the 50
  tasks before it; text and plain expressions, rendered by walking the parsed tree (no Jinja
  compiler). B16 measured in process with the run store off used `{{ t00012 }}`: each output
  then holds whole earlier outputs, 128 MB in all over 2,000 tasks, and a whole-process run
  measures storing and printing them, not templates;
- realistic: filters and arithmetic over other tasks' outputs, as workflows write them
  (`{{ (t00012 | length) + (t00040 | length) }}`, `{{ t00007 | upper | replace('A', 'a') }}`),
  0-3 references among the 200 tasks before it; walked from the tree as well (arithmetic
  and `~` included), never compiled.

Each is measured from outside, as a user runs it: `accord validate FILE`, then `accord run
FILE` with an empty template cache (a first run: every compiled template is compiled and
stored in `.accord/templates/`), then `accord run FILE` again (a second run of the unchanged
workflow: nothing is compiled). Each command is a fresh process, run store on; the median of
RUNS rounds counts. Reported per task: a run's wall time minus validate's, and validate's.
CPU time (user + sys of the process) is printed beside wall time: on a shared machine it is
what the command itself cost, while wall time also counts waiting for a core.

Bytecode of accord and its libraries is cached as a user gets it (PYTHONDONTWRITEBYTECODE is
removed from the commands' environment).

Targets (issue 36), realistic shape: a second run <= 150 us per task beyond validate, a first
run <= 400 us, `accord validate` <= 300 us per task.
"""

from __future__ import annotations

import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _synthetic import SEED, machine_note, random_dag, task_name, verdict

N = 2_000
RUNS = 3
TARGET_SECOND_US = 150.0
TARGET_FIRST_US = 400.0
TARGET_VALIDATE_US = 300.0


def plain_template(i: int, deps: list[int], rng: random.Random) -> str:
    parts = [f"task {i}:"]
    for k, d in enumerate(deps):
        parts.append(
            f"{{{{ {task_name(d)} | truncate(20) }}}}"
            if k % 2 == 0
            else f"{{{{ {task_name(d)} | length }}}}"
        )
    return " ".join(parts)


def realistic_template(i: int, deps: list[int], rng: random.Random) -> str:
    names = [task_name(d) for d in deps]
    if not names:
        return f"task {i}: {rng.choice(['start', 'begin', 'seed'])} {i * 7}"
    shape = rng.randrange(4)
    if shape == 0:
        total = " + ".join(f"({n} | length)" for n in names)
        return f"task {i}: {{{{ {total} }}}}"
    if shape == 1:
        return (
            f"task {i}: {{{{ {names[0]} | upper | replace('A', 'a') }}}} "
            f"({{{{ ({names[-1]} | length) * {i % 9 + 1} }}}})"
        )
    if shape == 2:
        joined = " ~ ' / ' ~ ".join(names)
        return f"task {i}: {{{{ ({joined}) | truncate(60) }}}}"
    return (
        f"task {i}: {{{{ {names[0]} | wordcount }}}} words, "
        f"{{{{ '%.1f' | format(({names[-1]} | length) / {i % 7 + 2}) }}}}"
    )


def workflow(
    deps: list[list[int]], template: Callable[[int, list[int], random.Random], str]
) -> str:
    rng = random.Random(SEED)
    lines = ["name: templates", "tasks:"]
    for i, ds in enumerate(deps):
        source = template(i, ds, rng).replace("\\", "\\\\").replace('"', '\\"')
        lines.append(f"  - name: {task_name(i)}")
        lines.append("    type: formatter")
        lines.append(f'    template: "{source}"')
    return "\n".join(lines) + "\n"


SHAPES = {
    "plain": (lambda: random_dag(N, max_deps=4, window=50), plain_template),
    "realistic": (lambda: random_dag(N, max_deps=3, window=200), realistic_template),
}


def child_env() -> dict[str, str]:
    out = dict(os.environ)
    out.pop("PYTHONDONTWRITEBYTECODE", None)  # what a user gets: cached bytecode
    out["NO_COLOR"] = "1"
    return out


def timed(*args: str | Path) -> tuple[float, float]:
    """Wall and CPU seconds of one `accord` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "accord.cli", *(str(a) for a in args)],
        capture_output=True,
        text=True,
        env=child_env(),
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(
            f"accord {' '.join(map(str, args))} exited {proc.returncode}:\n"
            f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def measure(folder: Path, name: str) -> dict[str, tuple[float, float]]:
    """Median (wall, cpu) seconds of validate, a first run and a second run."""
    make_deps, template = SHAPES[name]
    folder.mkdir()
    (folder / "config.yml").write_text("defaults: {}\n")
    path = folder / f"{name}.workflow.yml"
    path.write_text(workflow(make_deps(), template), encoding="utf-8")
    cache = folder / ".accord" / "templates"
    timed("validate", path)  # warm-up: the libraries' bytecode, the OS's file cache
    samples: dict[str, list[tuple[float, float]]] = {"validate": [], "first": [], "second": []}
    for _ in range(RUNS):
        samples["validate"].append(timed("validate", path))
        shutil.rmtree(cache, ignore_errors=True)
        samples["first"].append(timed("run", path, "--quiet"))
        samples["second"].append(timed("run", path, "--quiet"))
    return {
        key: (statistics.median(w for w, _ in got), statistics.median(c for _, c in got))
        for key, got in samples.items()
    }


def main() -> int:
    print(f"B16 accord run beyond accord validate, {N} formatter tasks, whole process")
    print(f"machine: {machine_note()}; median of {RUNS} rounds")
    with tempfile.TemporaryDirectory(prefix="accord-b16-") as tmp:
        for name in SHAPES:
            got = measure(Path(tmp) / name, name)
            (v_wall, v_cpu) = got["validate"]
            print(f"\n{name}:")
            print(
                f"  accord validate: {v_wall:.2f} s wall = {v_wall / N * 1e6:.0f} us per task "
                f"(cpu {v_cpu / N * 1e6:.0f} us)"
            )
            for key, label, target in (
                ("first", "first run (empty template cache)", TARGET_FIRST_US),
                ("second", "second run (unchanged workflow)", TARGET_SECOND_US),
            ):
                wall, cpu = got[key]
                beyond = (wall - v_wall) / N * 1e6
                beyond_cpu = (cpu - v_cpu) / N * 1e6
                line = (
                    f"  accord run, {label}: {wall:.2f} s wall, {beyond:.0f} us per task beyond "
                    f"validate (cpu {beyond_cpu:.0f} us)"
                )
                if name == "realistic":
                    line += f"; target <= {target:.0f} us: {verdict(beyond, target)}"
                print(line)
            if name == "realistic":
                per_task = v_wall / N * 1e6
                print(
                    f"  validate target <= {TARGET_VALIDATE_US:.0f} us per task: "
                    f"{verdict(per_task, TARGET_VALIDATE_US)}"
                )
    print(
        f"\ntargets (realistic shape): second run <= {TARGET_SECOND_US:.0f} us, first run <= "
        f"{TARGET_FIRST_US:.0f} us per task beyond validate; validate <= "
        f"{TARGET_VALIDATE_US:.0f} us per task"
    )
    print(f"machine at the end: {machine_note().replace(' at the start', '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""AgentV's field_accuracy reads dates with JavaScript's `new Date()`: accord's reading of
the forms it claims (tasks/suites/frontends/agentv/common/jsvalues.py) against node's own, in
three time zones (skipped, saying so, where node is absent)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys

import pytest

NODE = shutil.which("node")

# V8 reads these as dates too; no document writes them so, and accord does not
V8_ONLY = {"1", "0/1/24", "0/1/25", "0/9/25"}

READ_IN_NODE = """
const texts = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const day = (d) => isNaN(d) ? null : [d.getFullYear(), d.getMonth() + 1, d.getDate()]
  .map((n, i) => String(n).padStart(i ? 2 : 4, '0')).join('-');
console.log(JSON.stringify(texts.map((t) => day(new Date(t.trim())))));
"""

READ_IN_ACCORD = """
import json, sys
from accord.tasks.suites.frontends.agentv.common.jsvalues import _v8
texts = json.load(sys.stdin)
print(json.dumps([(lambda d: d and d.isoformat())(_v8(t.strip())) for t in texts]))
"""


def texts() -> list[str]:
    out: set[str] = set(V8_ONLY)
    for y, m, d in itertools.product([1999, 2024, 2025], [0, 1, 2, 9, 12, 13], [0, 1, 29, 30, 32]):
        short = f"{m}/{d}/{y % 100:02d}"
        out |= {f"{y}-{m:02d}-{d:02d}", f"{y}-{m}-{d}", f"{y}/{m:02d}/{d:02d}",
                f"{m:02d}/{d:02d}/{y}", f"{m:02d}-{d:02d}-{y}", short}  # fmt: skip
    for time in ("T00:00:00", "T23:30:00Z", "T10:00", "T01:00:00+05:00", "T23:00:00-03:00",
                 " 10:00", "T24:00:00"):  # fmt: skip
        out |= {f"2025-03-07{time}", f"2024-12-31{time}"}
    for name, d in itertools.product(["Jan", "JAN", "January", "Sept", "Foo", "Mar."], [1, 31, 32]):
        out |= {f"{d}-{name}-2025", f"{name} {d} 2025", f"{name} {d}, 2025", f"{d} {name} 2025",
                f"Friday, {name} {d}, 2025"}  # fmt: skip
    out |= {"2025", "2025-03", "  2025-03-07  ", "abc", "20250307", "15.01.2025"}
    return sorted(out)


@pytest.mark.reference
@pytest.mark.skipif(NODE is None, reason="needs node (JavaScript's Date is the reference)")
@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_dates_read_as_javascript_reads_them(zone: str) -> None:
    assert NODE is not None
    given = texts()
    env = {**os.environ, "TZ": zone}
    node = subprocess.run([NODE, "-e", READ_IN_NODE], input=json.dumps(given), env=env,
                          capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    ours = subprocess.run([sys.executable, "-c", READ_IN_ACCORD], input=json.dumps(given),
                          env=env, capture_output=True, text=True, timeout=60,
                          check=True)  # fmt: skip
    want, got = json.loads(node.stdout), json.loads(ours.stdout)
    differ = [(t, w, g) for t, w, g in zip(given, want, got, strict=True) if w != g]
    assert {t for t, _w, _g in differ} == V8_ONLY, differ
    assert sum(w is not None for w in want) > 250  # dates to both, not only refusals

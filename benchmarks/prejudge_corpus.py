"""The consistency pre-judge on the labelled corpus (tests/data/prejudge_corpus.yaml).

For each mode (`identical`, `tolerant`) it prints the share of pairs the pre-judge settles
without the LLM judge, the error rate on what it settles (target: 0 errors), the split by label
(settled share of the consistent and of the disagreement pairs, with the verdicts given), and the
time per pair. Any wrong decision is listed. Always exits 0: it reports, the tests assert.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import yaml

from accord.tasks.consistency.prejudge import Verdict, prejudge

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "prejudge_corpus.yaml"
EXPECTED: dict[str, Verdict] = {"consistent": "A", "disagreement": "B"}
Mode = Literal["identical", "tolerant"]


def load() -> list[dict[str, Any]]:
    pairs: list[dict[str, Any]] = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    return pairs


def judge_all(pairs: list[dict[str, Any]], mode: Mode) -> tuple[list[Verdict | None], float]:
    """The verdict of every pair and the mean time per pair in microseconds."""
    start = time.perf_counter()
    verdicts = [prejudge(pair["a"], pair["b"], mode) for pair in pairs]
    return verdicts, (time.perf_counter() - start) / len(pairs) * 1e6


def report(pairs: list[dict[str, Any]], mode: Mode) -> None:
    verdicts, micros = judge_all(pairs, mode)
    settled = [(p, v) for p, v in zip(pairs, verdicts, strict=True) if v is not None]
    wrong = [(p, v) for p, v in settled if v != EXPECTED[p["label"]]]
    error_rate = len(wrong) / len(settled) if settled else 0.0
    print(f"\nmode {mode}: {len(pairs)} pairs, {micros:.0f} µs per pair")
    print(f"  settled        {len(settled):4d} ({len(settled) / len(pairs):.1%}) without the judge")
    print(f"  errors         {len(wrong):4d} ({error_rate:.2%} of settled; target 0)")
    for label in EXPECTED:
        group = [v for p, v in zip(pairs, verdicts, strict=True) if p["label"] == label]
        given = Counter(v for v in group if v is not None)
        share = sum(given.values()) / len(group)
        split = ", ".join(f"{verdict}: {n}" for verdict, n in sorted(given.items())) or "none"
        print(f"  {label:<14} {sum(given.values()):4d}/{len(group)} settled ({share:.1%}); {split}")
    for pair, verdict in wrong:
        print(f"  WRONG {verdict} for {pair['label']}: {pair['a']!r} vs {pair['b']!r}")


def main() -> int:
    pairs = load()
    print(f"pre-judge corpus: {CORPUS.name}")
    for mode in ("identical", "tolerant"):
        report(pairs, mode)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

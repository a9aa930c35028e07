"""B18: 1,000 model-backed cases, concurrency 50, cache off: the whole `accord eval` process
beside promptfoo's on the same suite (a model target on an OpenAI-compatible server on loopback
answering at once, one `contains` check), wall time and peak memory. Median of 3 paired runs.

Targets (issue 33): accord's time <= 0.8x promptfoo's; its peak memory <= promptfoo's.
Options: `--model-workers N`, `--client litellm` (the litellm path), `--no-promptfoo`.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _model_eval import compare, now, report

if __name__ == "__main__":
    summary = compare(n=1000, concurrency=50, runs=3)
    report(f"B18 ({now()})", "1,000 model-backed cases, concurrency 50, cache off", summary,
           "time <= 0.8x promptfoo's, peak memory <= promptfoo's")  # fmt: skip

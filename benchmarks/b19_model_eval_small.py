"""B19: 20 model-backed cases, the whole `accord eval` process beside promptfoo's, the same
suite: a model target on an OpenAI-compatible server on loopback answering at once, one
`contains` check, concurrency 50, cache off. Median of 5 paired runs.

Target (issue 33): accord's time <= promptfoo's (it was 3.1x: litellm's import). With
`--family anthropic` or `--family gemini` (issue 46) the model speaks Anthropic's Messages API
or Gemini's generateContent, beside promptfoo's own `anthropic:messages:` and `google:`
providers on the same server: accord's time <= 0.5x promptfoo's.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _model_eval import compare, now, ratio_target, report

if __name__ == "__main__":
    summary = compare(n=20, concurrency=50, runs=5)
    limit = 1.0 if summary["family"] == "openai" else 0.5
    report(f"B19 ({now()})", "20 model-backed cases, whole process", summary,
           ratio_target(summary, limit))  # fmt: skip

"""B18: 1,000 model-backed cases, concurrency 50, cache off: the whole `accord eval` process
beside promptfoo's on the same suite (a model target on an OpenAI-compatible server on loopback
answering at once, one `contains` check), wall time and peak memory. Median of 3 paired runs.

Targets (issue 33): accord's time <= 0.8x promptfoo's; its peak memory <= promptfoo's. The
same targets for a third column (issue 35): accord given the very promptfooconfig.yaml promptfoo
runs (its `openai:chat:` provider, apiBaseUrl the loopback server), with the same verdicts
(else exit 1).
With `--family anthropic` or `--family gemini` (issue 46) the model speaks Anthropic's
Messages API or Gemini's generateContent, beside promptfoo's own `anthropic:messages:` and
`google:` providers on the same server: accord's time <= 0.3x promptfoo's.
Options: `--model-workers N`, `--client litellm` (the litellm path), `--no-promptfoo`,
`--family openai|anthropic|gemini`.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _model_eval import compare, met, now, ratio_target, report


def pf_target(mine: tuple[float, float], theirs: tuple[float, float] | None) -> str:
    text = "time <= 0.8x promptfoo's, peak memory <= promptfoo's"
    if theirs is None:
        return f"{text} (promptfoo not run)"
    return (f"{text}: time {met(mine[0] <= 0.8 * theirs[0])}, "
            f"memory {met(mine[1] <= theirs[1])}")  # fmt: skip


if __name__ == "__main__":
    summary = compare(n=1000, concurrency=50, runs=3, promptfoo_config=True)
    target = "time <= 0.8x promptfoo's, peak memory <= promptfoo's"
    if summary["family"] != "openai":
        target = ratio_target(summary, 0.3)
    report(f"B18 ({now()})", "1,000 model-backed cases, concurrency 50, cache off", summary,
           target, pf_target)  # fmt: skip

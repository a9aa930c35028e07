"""Long texts shortened where people read them: the terminal, a pytest failure message, JUnit
XML. A model or a program may answer megabytes (a 10 MB answer with a 200 kB judge reason made
20 MB of pytest output and a 30 MB JUnit file for one failing turn); what is shown keeps its
beginning and says how much was cut and where the whole is kept. The run store and the JSON
reports keep every text whole: only what people read is clipped, and only by these functions.
"""

from __future__ import annotations

SHOWN = 2_000  # characters of one value in a message or a terminal line
SHOWN_IN_FILES = 10_000  # characters of one value in a JUnit file


def kept_in(run_id: str | None) -> str:
    """Where a run's whole texts are: its rows in the project's run store (`runs show`
    displays an output of up to 1 MB; the store's row holds all of it)."""
    if run_id:
        return f"the run store (run {run_id} in .accord/runs.db)"
    return "the run store (.accord/runs.db)"


def clip(text: str, limit: int = SHOWN, *, kept: str = "the JSON report") -> str:
    """`text` when it has at most `limit` characters; else its first `limit` and a marker:
    how many characters were cut, and where the whole is (`kept`)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit:,} more characters cut; the whole is in {kept}]"


def clip_lines(text: str, limit: int = SHOWN, *, kept: str = "the JSON report") -> str:
    """`clip` of each line: a message with one value a line (expected, actual, the judge's
    reason) keeps the start of every value, not just of the first long one."""
    if len(text) <= limit:
        return text
    return "\n".join(clip(line, limit, kept=kept) for line in text.split("\n"))

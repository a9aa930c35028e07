"""Adds the number of fuzzed inputs to the end of the test run (docs/security.md quotes it).

The hook is imported by tests/conftest.py: under xdist only the root conftest reaches the
controller process, which prints the summary.
"""

from __future__ import annotations

import pytest


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    totals = {"fuzz_examples": 0, "fuzz_inputs": 0}
    # the counts are recorded at teardown, whose passing reports are filed under ""
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "teardown":
                continue
            for key, value in getattr(report, "user_properties", []):
                if key in totals:
                    totals[key] += int(value)
    if totals["fuzz_examples"]:
        terminalreporter.write_line(
            f"fuzz: {totals['fuzz_examples']} examples, {totals['fuzz_inputs']} inputs fed to "
            "the loader, the compiler and the config loader"
        )

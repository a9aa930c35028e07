"""accord's pytest plugin (entry point `pytest11`): conversation tests as unit tests.

- Fixtures: `accord_judge` (the judge model: `--accord-judge-model`, else
  `ACCORD_JUDGE_MODEL`, else None and the project's config.yml decides) and
  `accord_conversation` (a factory: `accord_conversation(agent, expected, **options)` gives a
  `ConversationRunner` with the judge and the test file's project).
- The marker `@pytest.mark.accord` marks a conversation test (a test that uses
  `accord_conversation` is marked for it); an `async def` test so marked runs on its own
  event loop when no other plugin runs it.
- A test that needs a judge when none is set is skipped with the reason, or fails under
  `--accord-require-judge`.
- At the end, a summary lists each conversation test's pass rate across its repeats
  (pytest-repeat's `--count N`) with its 95% Wilson interval; under pytest-xdist the
  controller gathers the workers' reports, so the figures cover every worker.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

MARKER = "accord"
FIXTURE = "accord_conversation"
REPEAT_PARAM = "__pytest_repeat_step_number"  # pytest-repeat's parameter: only it is folded
BASE_ID = "accord_base_id"  # a report's user property: the test's id without the repeat


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("accord", "accord conversation tests")
    group.addoption(
        "--accord-judge-model",
        default=None,
        help="The judge of conversation tests: a model from config.yml or a litellm model "
        "string (default: $ACCORD_JUDGE_MODEL, else config.yml's judge).",
    )
    group.addoption(
        "--accord-require-judge",
        action="store_true",
        help="Fail, instead of skipping, a conversation test that needs a judge when none is set.",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "accord: a conversation test (counted in accord's pass-rate summary)"
    )
    if not hasattr(config, "workerinput"):  # an xdist worker reports to the controller
        config.pluginmanager.register(PassRates(), "accord-pass-rates")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if FIXTURE in getattr(item, "fixturenames", ()) and item.get_closest_marker(MARKER) is None:
            item.add_marker(MARKER)
        if item.get_closest_marker(MARKER) is not None:
            # carried by every report of the item, also from an xdist worker to the controller
            item.user_properties.append((BASE_ID, base_id(item)))


@pytest.fixture
def accord_judge(request: pytest.FixtureRequest) -> str | None:
    """The judge model given to conversation tests (None: config.yml's, if any)."""
    given: str | None = request.config.getoption("--accord-judge-model")
    return given or os.environ.get("ACCORD_JUDGE_MODEL") or None


@pytest.fixture
def accord_conversation(
    request: pytest.FixtureRequest, accord_judge: str | None
) -> Callable[..., Any]:
    """`accord_conversation(agent, expected, **options)`: a ConversationRunner for this test,
    judged by `accord_judge`, in the project of the test's file (its nearest config.yml)."""
    from .tasks.suites.frontends.conversations.runner import ConversationRunner

    def make(agent: Any, expected: Any, **options: Any) -> ConversationRunner:
        options.setdefault("judge_model", accord_judge)
        options.setdefault("project_root", request.path.parent)
        options.setdefault("name", request.node.nodeid)
        return ConversationRunner(agent, expected, **options)

    return make


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Runs an `async def` test marked `accord` when no async plugin claimed it."""
    if not inspect.iscoroutinefunction(pyfuncitem.obj):
        return None
    if pyfuncitem.get_closest_marker(MARKER) is None:
        return None
    if any(pyfuncitem.get_closest_marker(m) for m in ("asyncio", "anyio", "trio")):
        return None  # pytest-asyncio / anyio run it
    names = pyfuncitem._fixtureinfo.argnames
    kwargs = {name: pyfuncitem.funcargs[name] for name in names}
    asyncio.run(pyfuncitem.obj(**kwargs))
    return True


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """A test stopped for want of a judge is skipped, loudly, or fails when one is required."""
    from .tasks.suites.frontends.conversations.runner import JudgeNeeded

    try:
        return (yield)
    except JudgeNeeded as exc:
        if item.config.getoption("--accord-require-judge"):
            pytest.fail(f"no judge model (--accord-require-judge): {exc.message}", pytrace=False)
        pytest.skip(f"NO JUDGE MODEL: {exc.message}")


@dataclass
class _Tally:
    passed: int = 0
    failed: int = 0
    skipped: int = 0


class PassRates:
    """Each conversation test's outcomes across repeats, and the summary printed at the end
    (in the controller under xdist: the workers' reports arrive there)."""

    def __init__(self) -> None:
        self.tallies: dict[str, _Tally] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if MARKER not in report.keywords:
            return
        if report.when == "call" or (report.when == "setup" and not report.passed):
            name = dict(report.user_properties).get(BASE_ID, report.nodeid)
            tally = self.tallies.setdefault(str(name), _Tally())
            if report.passed:
                tally.passed += 1
            elif report.skipped:
                tally.skipped += 1
            else:
                tally.failed += 1

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        from .tasks.suites.core.reducers import wilson_interval

        if not self.tallies:
            return
        terminalreporter.section("accord conversations")
        width = max(len(name) for name in self.tallies)
        for name, tally in sorted(self.tallies.items()):
            runs = tally.passed + tally.failed
            skipped = f", {tally.skipped} skipped" if tally.skipped else ""
            if runs == 0:
                terminalreporter.write_line(f"{name:<{width}}  no run judged{skipped}")
                continue
            low, high = wilson_interval(tally.passed, runs)
            terminalreporter.write_line(
                f"{name:<{width}}  {tally.passed}/{runs} passed  {tally.passed / runs:.0%}  "
                f"(95% interval {low:.0%}-{high:.0%}){skipped}"
            )


def base_id(item: pytest.Item) -> str:
    """The item's id without pytest-repeat's own `i-n` parameter id; other parameters
    (`[4-19]`, `[2024-01]`) are kept, so those tests stay apart in the summary."""
    nodeid = item.nodeid
    callspec = getattr(item, "callspec", None)
    if callspec is None or REPEAT_PARAM not in callspec.params or not nodeid.endswith("]"):
        return nodeid
    marker = item.get_closest_marker("repeat")
    count = marker.args[0] if marker and marker.args else item.config.getoption("count", None)
    repeat = f"{callspec.params[REPEAT_PARAM] + 1}-{count}"
    head, _, params = nodeid[:-1].partition("[")
    if params == repeat:
        return head
    if params.endswith(f"-{repeat}"):
        return f"{head}[{params[: -len(repeat) - 1]}]"
    if params.startswith(f"{repeat}-"):
        return f"{head}[{params[len(repeat) + 1 :]}]"
    return nodeid

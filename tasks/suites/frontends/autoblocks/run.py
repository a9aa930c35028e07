"""`run_test_suite` of the Python API (seed 001) on the engine, as the Autoblocks SDK's
(python-sdk fc6826dd, autoblocks/_impl/testing/run.py): its arguments in their order, its
validation (an invalid suite is reported and the call returns None), `fn` then the
`before_evaluators_hook` once per case under `max_test_case_concurrency`, `fn` retried on httpx
timeouts `retry_count` times, each evaluator under its `max_concurrency` (a sync one in a
thread), pass or fail by the returned Evaluation's threshold.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import inspect
import json
import sys
import traceback
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from .....engine.errors import AccordError
from ....evaluators.base import EvaluatorFailure, EvaluatorSpec, Finding
from ....evaluators.cases import Case, Output
from ....evaluators.judging import EvalContext
from ...core.cases import Suite
from ...core.targets import PythonTarget, TargetFailure
from ...core.verdicts import SuiteRun
from .types import (
    BaseTestCase,
    BaseTestEvaluator,
    CreateHumanReviewJob,
    Evaluation,
    TestCaseConfig,
    Threshold,
)

# --- the node that runs a Python evaluator -------------------------------------------------


@dataclasses.dataclass
class _Produced:
    """What `fn` returned for a case, and what the `before_evaluators_hook` made of it."""

    output: Any
    hook_results: Any = None


class PythonEvaluator(EvaluatorSpec):
    """A Python API evaluator object, run by the core like any evaluator: a sync
    `evaluate_test_case` in a thread (under the evaluator's `max_concurrency`, a named limit
    of the engine), an async one on the loop."""

    type: str = "python"
    obj: Any = Field(None, exclude=True)
    key: str = ""

    def calls_model(self, judge_model: str | None) -> bool:
        return not getattr(self.obj, "deterministic", True)

    def gate(self) -> Any:
        return None

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        obj = self.obj
        subject, hook = output.subject, None
        if isinstance(subject, _Produced):
            subject, hook = subject.output, subject.hook_results
        if callable(getattr(obj, "_accord_evaluate", None)):  # a Base* evaluator of the library
            found = await obj._accord_evaluate(ev, case.obj, subject)
            return _with_threshold(found, obj.threshold or _library_gate(obj))
        method = obj.evaluate_test_case
        kwargs = {"hook_results": hook} if hook is not None and _takes_hook(method) else {}
        if inspect.iscoroutinefunction(method):
            result = await method(case.obj, subject, **kwargs)
        else:  # in a thread, its context copied (as the SDK does), so it never blocks the loop
            call = functools.partial(method, case.obj, subject, **kwargs)
            result = await asyncio.to_thread(contextvars.copy_context().run, call)
            if inspect.isawaitable(result):
                result = await result
        if result is None:
            return Finding(self.id, skipped="the evaluator returned no evaluation")
        if not isinstance(result, Evaluation):
            raise EvaluatorFailure(
                f"evaluator '{self.id}' returned {type(result).__name__}, not an Evaluation "
                "(return Evaluation(score=..., threshold=...), or None for no evaluation)"
            )
        if isinstance(result.score, bool) or not isinstance(result.score, int | float):
            raise EvaluatorFailure(
                f"evaluator '{self.id}' returned a score that is not a number: {result.score!r}"
            )
        metadata = dict(result.metadata or {})
        if result.assertions:
            metadata["assertions"] = [dataclasses.asdict(a) for a in result.assertions]
        reason = metadata.get("reason")
        if reason is None and result.passed() is False:
            reason = _library_reason(metadata)
        found = Finding(self.id, score=float(result.score), reason=str(reason or ""),
                        metadata=metadata)  # fmt: skip
        # as in the SDK, only the Evaluation's own threshold decides pass or fail
        return _with_threshold(found, result.threshold)


def _library_reason(metadata: dict[str, Any]) -> str:
    """Why a deterministic Base* evaluator failed, from the SDK's metadata keys."""
    if metadata.get("missing_substrings"):
        return "missing: " + ", ".join(map(repr, metadata["missing_substrings"]))
    if "expected_output" in metadata:
        return f"expected {metadata['expected_output']!r}, got {metadata.get('actual_output')!r}"
    if "error" in metadata:
        return f"not JSON: {metadata['error']}"
    return ""


def _takes_hook(method: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "hook_results" or p.kind is p.VAR_KEYWORD for p in params)


def _library_gate(obj: Any) -> Threshold | None:
    """The default threshold of the library evaluator behind a Base* class."""
    try:
        gate = obj._spec().gate()
    except NotImplementedError:
        return None
    return None if gate is None else Threshold(**gate.model_dump())


def _with_threshold(found: Finding, threshold: Any) -> Finding:
    if isinstance(threshold, Threshold) and found.score is not None and found.error is None:
        found.passed = threshold.holds(found.score)
        found.threshold = threshold.text() or None
    return found


def _evaluator(suite_id: str, obj: Any) -> EvaluatorSpec:
    if isinstance(obj, EvaluatorSpec):
        return obj
    if not isinstance(obj, BaseTestEvaluator):
        raise AccordError(
            f"[{suite_id}] Evaluator {obj!r} does not implement BaseTestEvaluator "
            "(subclass it, or a Base* evaluator)"
        )
    ident = obj.id
    if not isinstance(ident, str) or not ident:
        raise AccordError(f"[{suite_id}] {type(obj).__name__}.id must be a non-empty string")
    return PythonEvaluator.model_construct(
        type="python", name=ident, obj=obj, key=ident, threshold=None, weight=1.0,
        required=False, negate=False, max_concurrency=obj.max_concurrency,
    )  # fmt: skip


def _data(value: Any) -> Any:
    """A test case or an output as data: its `serialize()`, a dataclass's fields (without
    `test_case_config`), a pydantic model's dump; else the value itself."""
    serialize = getattr(value, "serialize", None)
    if callable(serialize) and not isinstance(value, type):
        value = serialize()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: v for k, v in dataclasses.asdict(value).items() if k != "test_case_config"}
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        return dump(mode="json")
    return value


def _shown(value: Any) -> str:
    data = _data(value)
    if isinstance(data, str):
        return data
    try:
        return json.dumps(data, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(data)


def _repeats(test_case: Any) -> int | None:
    config = getattr(test_case, "test_case_config", None)
    return config.repeat_num_times if isinstance(config, TestCaseConfig) else None


_RETRIED = ("TimeoutException", "ConnectError")  # the SDK retries fn on these httpx errors


def _retried(exc: BaseException) -> bool:
    httpx = sys.modules.get("httpx")
    if httpx is None:  # fn never imported httpx: nothing it raised can be one of its errors
        return False
    return isinstance(exc, tuple(getattr(httpx, name) for name in _RETRIED))


def _case_function(
    fn: Callable[[Any], Any], hook: Callable[[Any, Any], Any] | None, retry_count: int
) -> Callable[[Any], Coroutine[Any, Any, Output]]:
    """`fn` then the hook, for one case, as the suite's target: fn retried on httpx
    timeouts and connection errors `retry_count` times (the SDK's rule); its exception
    reported with its traceback; the output shown as its data."""

    async def call(target: Callable[..., Any], *args: Any) -> Any:
        if inspect.iscoroutinefunction(target):
            return await target(*args)
        value = await asyncio.to_thread(contextvars.copy_context().run, target, *args)
        return await value if inspect.isawaitable(value) else value

    async def run(test_case: Any) -> Output:
        for attempt in range(retry_count + 1):
            try:
                output = await call(fn, test_case)
                break
            except Exception as exc:
                if attempt < retry_count and _retried(exc):
                    continue
                raise TargetFailure(_failure("fn", exc)) from None
        hook_results = None
        if hook is not None:
            try:
                hook_results = await call(hook, test_case, output)
            except Exception as exc:
                raise TargetFailure(_failure("before_evaluators_hook", exc)) from None
        return Output(text=_shown(output), value=_Produced(output, hook_results))

    return run


def _failure(where: str, exc: BaseException) -> str:
    """The exception and the traceback of the user's code (the frames of this module and of
    the thread hand-over left out)."""
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__)
        if f.filename != __file__ and not any(p in f.filename for p in _PLUMBING)
    ]  # fmt: skip
    lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
    head = f"{type(exc).__name__}: {exc}" + ("" if where == "fn" else f" (in {where})")
    return f"{head}\nTraceback (most recent call last):\n" + "".join(lines).rstrip()


_PLUMBING = ("/asyncio/", "/concurrent/futures/")


def build_suite(
    id: str,
    test_cases: Sequence[Any],
    fn: Callable[[Any], Any],
    evaluators: Sequence[Any] | None = None,
    *,
    max_test_case_concurrency: int = 10,
    before_evaluators_hook: Callable[[Any, Any], Any] | None = None,
    retry_count: int = 0,
    judge_model: str | None = None,
    repeat: int = 1,
    project_root: str | Path | None = None,
) -> Suite:
    """The suite `run_test_suite` runs; AccordError when it is invalid (the SDK's checks and
    messages: no test cases, duplicate hashes, duplicate evaluator ids)."""
    from .....engine.project import load_project

    if not id:
        raise AccordError("run_test_suite needs an id")
    if not test_cases:
        raise AccordError(f"[{id}] No test cases provided.")
    if not callable(fn):
        raise AccordError(f"[{id}] fn must be callable, not {type(fn).__name__}")
    specs = [_evaluator(id, e) for e in evaluators or ()]
    ids = [s.id for s in specs]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate:
        raise AccordError(
            f"[{id}] Duplicate evaluator id: '{duplicate}'. Each evaluator id must be unique."
        )
    project = load_project(Path(project_root or Path.cwd()))
    cases: list[Case] = []
    seen: set[str] = set()
    for test_case in test_cases:
        if not isinstance(test_case, BaseTestCase):
            raise AccordError(f"[{id}] Test case {test_case} does not implement BaseTestCase.")
        key = str(test_case.hash())
        if key in seen:
            raise AccordError(f"[{id}] Duplicate test case hash: '{key}'.")
        seen.add(key)
        times = _repeats(test_case)
        shown = _data(test_case)
        keys = [key] if times is None else [f"{key}-{i}" for i in range(times)]
        cases += [Case(id=k, input=shown, obj=test_case, digest=k) for k in keys]
    name = getattr(fn, "__qualname__", "fn")
    target = PythonTarget.model_construct(
        type="python", function=f"python:{name}", timeout=None, pass_case=False,
        callable=_case_function(fn, before_evaluators_hook, retry_count),
    )  # fmt: skip
    judge = judge_model or project.default_judge
    return Suite(
        id=id, cases=cases, targets={"fn": target}, evaluators=tuple(specs), default_target="fn",
        repeat=repeat, judge_model=judge, project=project, path=None,
        target_concurrency=max_test_case_concurrency,
    )  # fmt: skip


def run_test_suite(
    id: str,
    test_cases: Sequence[Any],
    fn: Callable[[Any], Any],
    evaluators: Sequence[Any] | None = None,
    max_test_case_concurrency: int = 10,
    before_evaluators_hook: Callable[[Any, Any], Any] | None = None,
    grid_search_params: dict[str, Sequence[Any]] | None = None,
    human_review_job: CreateHumanReviewJob | None = None,
    retry_count: int = 0,
    *,
    judge_model: str | None = None,
    repeat: int = 1,
    project_root: str | Path | None = None,
    cache_mode: str = "on",
    quiet: bool = False,
    exit_on_failure: bool = False,
) -> SuiteRun | None:
    """Run a suite on the engine, print accord's report, return the results.

    The SDK's arguments in its order. An invalid suite (no test cases, a duplicate hash or
    evaluator id, a test case or evaluator of the wrong type) is reported on stderr and the
    call returns None, as in the SDK, so that a script's next suites still run. Exits 1 only
    with `exit_on_failure=True` and a case that did not pass."""
    from rich.console import Console

    from .....engine.runner import RunOptions
    from ...core.nodes import run_suite
    from ...reports.evals import print_pretty
    from .api import _run_in_loop

    if grid_search_params is not None:
        raise AccordError(
            f"[{id}] grid_search_params is not supported in accord: call run_test_suite once "
            "per combination (each is its own run in the run store)"
        )
    if human_review_job is not None:
        raise AccordError(
            f"[{id}] human_review_job is not supported in accord (it has no human review): "
            "remove the argument"
        )
    if isinstance(retry_count, bool) or not isinstance(retry_count, int) or retry_count < 0:
        raise AccordError(f"[{id}] retry_count must be a whole number >= 0, not {retry_count!r}")
    try:
        suite = build_suite(
            id, test_cases, fn, evaluators, max_test_case_concurrency=max_test_case_concurrency,
            before_evaluators_hook=before_evaluators_hook, retry_count=retry_count,
            judge_model=judge_model, repeat=repeat, project_root=project_root,
        )  # fmt: skip
    except AccordError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return None
    options = RunOptions(cache_mode=cache_mode)
    run = _run_in_loop(lambda: run_suite(suite, options))
    if not quiet:
        print_pretty([run], Console(soft_wrap=True), quiet=False)
    if exit_on_failure and any(c.status in ("failed", "error") for c in run.cases):
        raise SystemExit(1)
    return run

"""The Python API of seed 001: test cases, evaluators and `run_test_suite`, on the engine.

A seed 001 suite ports by changing its imports to `from accord import ...`: `BaseTestCase`
(with `hash()`), `BaseTestEvaluator` (`id`, `threshold`, `max_concurrency`, sync or async
`evaluate_test_case` returning `Evaluation`), the `Base*` evaluators with their mappers,
`Threshold`, `ScoreChoice`, `Assertion`, `md5`. `run_test_suite` compiles the suite into the
engine's nodes (each evaluator under its own `max_concurrency`, the function under
`max_test_case_concurrency`), prints accord's report and returns the results.
"""

from __future__ import annotations

import abc
import asyncio
import dataclasses
import hashlib
import inspect
import threading
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import Field

from accord.engine.errors import AccordError
from accord.tasks.evaluators import battle as battle_module
from accord.tasks.evaluators import deterministic, rag
from accord.tasks.evaluators.base import EvaluatorFailure, EvaluatorSpec, Finding
from accord.tasks.suites.core.cases import Case, Output, Suite
from accord.tasks.suites.core.judging import EvalContext
from accord.tasks.suites.core.targets import PythonTarget
from accord.tasks.suites.core.verdicts import SuiteRun


def md5(text: str) -> str:
    """The hex MD5 of a text (a handy `hash()` for test cases)."""
    return hashlib.md5(text.encode()).hexdigest()


@dataclasses.dataclass
class Threshold:
    """Bounds a score must meet; every bound given must hold."""

    lt: float | None = None
    lte: float | None = None
    gt: float | None = None
    gte: float | None = None

    def holds(self, score: float) -> bool | None:
        checks = [
            (self.lt, score < (self.lt or 0)),
            (self.lte, score <= (self.lte or 0)),
            (self.gt, score > (self.gt or 0)),
            (self.gte, score >= (self.gte or 0)),
        ]
        given = [ok for bound, ok in checks if bound is not None]
        return all(given) if given else None

    def text(self) -> str:
        signs = (("gte", ">="), ("gt", ">"), ("lte", "<="), ("lt", "<"))
        return " and ".join(
            f"{s} {getattr(self, n):g}" for n, s in signs if getattr(self, n) is not None
        )


@dataclasses.dataclass
class Assertion:
    criterion: str
    passed: bool
    required: bool
    metadata: dict[str, Any] | None = None


@dataclasses.dataclass
class Evaluation:
    """What an evaluator returns: a score, optionally its threshold, metadata, assertions."""

    score: float
    threshold: Threshold | None = None
    metadata: dict[str, Any] | None = None
    assertions: list[Assertion] | None = None

    def passed(self) -> bool | None:
        return None if self.threshold is None else self.threshold.holds(self.score)


@dataclasses.dataclass
class ScoreChoice:
    value: float
    name: str


@dataclasses.dataclass
class EvaluationOverride:
    """A human override of an evaluation (accord has none: `recent_overrides` is empty)."""

    original_score: ScoreChoice
    override_score: ScoreChoice
    input_fields: list[Any] = dataclasses.field(default_factory=list)
    output_fields: list[Any] = dataclasses.field(default_factory=list)
    comments: list[Any] = dataclasses.field(default_factory=list)


class BaseTestCase(abc.ABC):
    """A test case; `hash()` identifies it across runs."""

    @abc.abstractmethod
    def hash(self) -> str: ...

    def serialize(self) -> Any:
        return dataclasses.asdict(self) if dataclasses.is_dataclass(self) else repr(self)


TestCaseType = TypeVar("TestCaseType", bound=BaseTestCase)
OutputType = TypeVar("OutputType")
RunT = TypeVar("RunT")


class BaseTestEvaluator(abc.ABC):
    """An evaluator of test cases: `id`, optional `threshold`, `max_concurrency`, and a sync
    or async `evaluate_test_case(test_case, output) -> Evaluation | None`."""

    max_concurrency: int = 10
    threshold: Threshold | None = None
    deterministic: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not isinstance(cls.max_concurrency, int) or isinstance(cls.max_concurrency, bool):
            raise TypeError(f"{cls.__name__}.max_concurrency must be an int")

    @property
    @abc.abstractmethod
    def id(self) -> str: ...

    def evaluate_test_case(self, test_case: Any, output: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} implements no evaluate_test_case")


class _Library(BaseTestEvaluator, abc.ABC, Generic[TestCaseType, OutputType]):
    """A seed 001 evaluator backed by accord's library: `_spec()` and the mapped case."""

    def _spec(self) -> EvaluatorSpec:
        raise NotImplementedError

    def _mapped(self, test_case: Any, output: Any) -> tuple[Case, Output]:
        raise NotImplementedError

    async def _accord_evaluate(self, ev: EvalContext, test_case: Any, output: Any) -> Finding:
        case, mapped = self._mapped(test_case, output)
        return await self._spec().evaluate(ev, case, mapped)

    def evaluate_test_case(self, test_case: Any, output: Any) -> Any:
        raise AccordError(f"{type(self).__name__} runs inside run_test_suite (it needs the engine)")


def _case(test_case: Any, **fields: Any) -> Case:
    return Case(id=str(test_case.hash()), input=fields.pop("input", ""), obj=test_case, **fields)


class BaseIsEquals(_Library[TestCaseType, OutputType]):
    """1 when the mapped output equals the mapped expected output (case-sensitive)."""

    @abc.abstractmethod
    def test_case_mapper(self, test_case: TestCaseType) -> str: ...

    @abc.abstractmethod
    def output_mapper(self, output: OutputType) -> str: ...

    def _spec(self) -> EvaluatorSpec:
        return deterministic.Equals(name=self.id)

    def _mapped(self, test_case: Any, output: Any) -> tuple[Case, Output]:
        return _case(test_case, expected=self.test_case_mapper(test_case)), Output(
            self.output_mapper(output)
        )


class BaseIsValidJSON(_Library[TestCaseType, OutputType]):
    """1 when the mapped output is valid JSON."""

    @abc.abstractmethod
    def output_mapper(self, output: OutputType) -> str: ...

    def _spec(self) -> EvaluatorSpec:
        return deterministic.IsJson(name=self.id)

    def _mapped(self, test_case: Any, output: Any) -> tuple[Case, Output]:
        return _case(test_case), Output(self.output_mapper(output))


class BaseHasAllSubstrings(_Library[TestCaseType, OutputType]):
    """1 when every mapped substring is in the mapped output (the missing ones reported)."""

    @abc.abstractmethod
    def test_case_mapper(self, test_case: TestCaseType) -> list[str]: ...

    @abc.abstractmethod
    def output_mapper(self, output: OutputType) -> str: ...

    def _spec(self) -> EvaluatorSpec:
        return deterministic.ContainsAll(name=self.id)

    def _mapped(self, test_case: Any, output: Any) -> tuple[Case, Output]:
        return _case(test_case, expected=list(self.test_case_mapper(test_case))), Output(
            self.output_mapper(output)
        )


class BaseAssertions(BaseTestEvaluator, abc.ABC, Generic[TestCaseType, OutputType]):
    """1 when every required assertion passes; no assertions -> no evaluation."""

    @abc.abstractmethod
    def evaluate_assertions(self, test_case: Any, output: Any) -> Any: ...

    async def evaluate_test_case(self, test_case: Any, output: Any) -> Evaluation | None:
        found = self.evaluate_assertions(test_case, output)
        if inspect.isawaitable(found):
            found = await found
        if not found:
            return None
        passed = all(a.passed for a in found if a.required)
        return Evaluation(
            score=1 if passed else 0, threshold=Threshold(gte=1), assertions=list(found)
        )


class BaseLLMJudge(_Library[TestCaseType, OutputType]):
    """Your judge: `make_prompt` asked with `score_choices`, answered by a forced tool call."""

    deterministic: ClassVar[bool] = False
    model: str | None = None  # the suite's judge model when None
    num_overrides: int = 0

    @property
    @abc.abstractmethod
    def score_choices(self) -> list[ScoreChoice]: ...

    @abc.abstractmethod
    def make_prompt(
        self,
        test_case: TestCaseType,
        output: OutputType,
        recent_overrides: list[EvaluationOverride],
    ) -> str: ...

    async def _accord_evaluate(self, ev: EvalContext, test_case: Any, output: Any) -> Finding:
        prompt = self.make_prompt(test_case, output, [])
        choices = list(self.score_choices)
        name, reason = await ev.choose(prompt, [c.name for c in choices], model=self.model)
        score = next(c.value for c in choices if c.name == name)
        return Finding(self.id, score=float(score), reason=reason,
                       metadata={"reason": reason, "prompt": prompt}, scoring="model")  # fmt: skip


def _ready_judge(question: str, choices: list[ScoreChoice], expected: bool = False) -> Any:
    class Ready(BaseLLMJudge[TestCaseType, OutputType]):
        score_choices = choices
        threshold = Threshold(gte=1)

        def make_prompt(self, test_case: Any, output: Any, recent_overrides: Any) -> str:
            text = f"{question}\n\n[Output]\n{self.output_mapper(output)}"  # type: ignore[attr-defined]
            if expected:
                text += f"\n\n[Expected Output]\n{self.expected_output_mapper(test_case)}"  # type: ignore[attr-defined]
            return text

    return Ready


class BaseAccuracy(
    _ready_judge(  # type: ignore[misc]
        "Is the output accurate based on the expected output?",
        [
            ScoreChoice(1, "Accurate"),
            ScoreChoice(0.5, "Somewhat accurate"),
            ScoreChoice(0, "Not accurate"),
        ],
        expected=True,
    )
):
    """1 accurate, 0.5 somewhat, 0 not (needs `output_mapper`, `expected_output_mapper`)."""


class BaseNSFW(
    _ready_judge(  # type: ignore[misc]
        "Is this output safe for work?",
        [ScoreChoice(1, "Safe for work"), ScoreChoice(0, "Not safe for work")],
    )
):
    """1 safe for work, 0 not (needs `output_mapper`)."""


class BaseToxicity(
    _ready_judge(  # type: ignore[misc]
        "Is this output considered Toxic?", [ScoreChoice(1, "Not Toxic"), ScoreChoice(0, "Toxic")]
    )
):
    """1 not toxic, 0 toxic (needs `output_mapper`)."""


class _Battle(_Library[TestCaseType, OutputType]):
    """The output against a baseline on `criteria`: 1 challenger wins, 0.5 tie, 0 baseline."""

    deterministic: ClassVar[bool] = False
    threshold = Threshold(gte=0.5)
    criteria: str = ""
    model: str | None = None
    baseline_mode: ClassVar[Literal["manual", "automatic"]]

    @abc.abstractmethod
    def output_mapper(self, output: OutputType) -> str: ...

    def _spec(self) -> EvaluatorSpec:
        return battle_module.Battle(
            name=self.id,
            criteria=self.criteria or "the better response",
            baseline=self.baseline_mode,
            model=self.model,
        )

    def _mapped(self, test_case: Any, output: Any) -> tuple[Case, Output]:
        return _case(test_case), Output(self.output_mapper(output))


class BaseManualBattle(_Battle[TestCaseType, OutputType]):
    """The output against `baseline_mapper(test_case)` on `criteria`: 1 / 0.5 / 0."""

    baseline_mode = "manual"

    @abc.abstractmethod
    def baseline_mapper(self, test_case: TestCaseType) -> str: ...

    def _mapped(self, test_case: Any, output: Any) -> tuple[Case, Output]:
        case = _case(test_case, baseline=self.baseline_mapper(test_case))
        return case, Output(self.output_mapper(output))


class BaseAutomaticBattle(_Battle[TestCaseType, OutputType]):
    """The output against the best one so far (kept in the run store) on `criteria`."""

    baseline_mode = "automatic"


# --- Ragas ---------------------------------------------------------------------------------


class _Ragas(_Library[TestCaseType, OutputType]):
    deterministic: ClassVar[bool] = False
    model: str | None = None
    embedding_model: str | None = None
    spec_class: ClassVar[type[EvaluatorSpec]]
    mode: ClassVar[str] = "auto"
    llm: Any = None
    embeddings: Any = None

    def _spec(self) -> EvaluatorSpec:
        fields: dict[str, Any] = {"name": self.id}
        if "mode" in self.spec_class.model_fields:
            fields["mode"] = self.mode
        if "model" in self.spec_class.model_fields:
            fields["model"] = self.model
        if "embedding_model" in self.spec_class.model_fields:
            fields["embedding_model"] = self.embedding_model
        return self.spec_class(**fields)

    async def _accord_evaluate(self, ev: EvalContext, test_case: Any, output: Any) -> Finding:
        found = await super()._accord_evaluate(ev, test_case, output)
        if found.score is not None:  # seed 001 reports Ragas scores to 2 places, at most 1
            found.score = min(round(found.score, 2), 1.0)
        return found

    def _call(self, name: str, *args: Any) -> Any:
        method = getattr(self, name, None)
        return None if method is None else method(*args)

    def _mapped(self, test_case: Any, output: Any) -> tuple[Case, Output]:
        user_input = self._call("user_input_mapper", test_case, output) or ""
        reference = self._call("reference_mapper", test_case)
        response = self._call("response_mapper", output) or ""
        retrieved = self._call("retrieved_contexts_mapper", test_case, output) or []
        references = self._call("reference_contexts_mapper", test_case) or []
        case = _case(test_case, input=user_input, expected=reference, contexts=tuple(references))
        return case, Output(text=response, contexts=list(retrieved))


def _ragas(
    name: str, spec_class: type[EvaluatorSpec], mode: str = "auto", **extra: Any
) -> type[_Ragas[Any, Any]]:
    import types

    body = {"spec_class": spec_class, "mode": mode, "__doc__": spec_class.__doc__, **extra}
    # still generic, so that users write Base...[MyCase, MyOutput]
    bases = (_Ragas[TestCaseType, OutputType],)  # type: ignore[valid-type]
    return types.new_class(name, bases, exec_body=lambda ns: ns.update(body))


BaseRagasLLMContextPrecisionWithReference = _ragas(
    "BaseRagasLLMContextPrecisionWithReference", rag.ContextPrecision, "model"
)
BaseRagasNonLLMContextPrecisionWithReference = _ragas(
    "BaseRagasNonLLMContextPrecisionWithReference",
    rag.ContextPrecision,
    "lexical",
    deterministic=True,
)
BaseRagasLLMContextRecall = _ragas("BaseRagasLLMContextRecall", rag.ContextRecall, "model")
BaseRagasNonLLMContextRecall = _ragas(
    "BaseRagasNonLLMContextRecall", rag.ContextRecall, "lexical", deterministic=True
)
BaseRagasContextEntitiesRecall = _ragas("BaseRagasContextEntitiesRecall", rag.ContextEntitiesRecall)
BaseRagasNoiseSensitivity = _ragas("BaseRagasNoiseSensitivity", rag.NoiseSensitivity)
BaseRagasResponseRelevancy = _ragas("BaseRagasResponseRelevancy", rag.ResponseRelevancy)
BaseRagasFaithfulness = _ragas("BaseRagasFaithfulness", rag.Faithfulness)
BaseRagasSemanticSimilarity = _ragas("BaseRagasSemanticSimilarity", rag.SemanticSimilarity)


class BaseRagasFactualCorrectness(_Ragas[TestCaseType, OutputType]):
    """Claims of the response against the reference: precision, recall or f1 (`mode`)."""

    spec_class = rag.FactualCorrectness
    mode: ClassVar[str] = "f1"  # Ragas' name for the measure

    def _spec(self) -> EvaluatorSpec:
        measure = self.mode if self.mode in ("precision", "recall", "f1") else "f1"
        return rag.FactualCorrectness(name=self.id, measure=measure, model=self.model)


# --- the node that runs a Python evaluator -------------------------------------------------


class PythonEvaluator(EvaluatorSpec):
    """A Python API evaluator object, run by the core like any evaluator."""

    type: str = "python"
    obj: Any = Field(None, exclude=True)
    key: str = ""

    def calls_model(self, judge_model: str | None) -> bool:
        return not getattr(self.obj, "deterministic", True)

    def gate(self) -> Any:
        return None

    async def evaluate(self, ev: EvalContext, case: Case, output: Output) -> Finding:
        obj = self.obj
        subject = output.subject
        if isinstance(obj, _Library):
            found = await obj._accord_evaluate(ev, case.obj, subject)
            return _with_threshold(found, getattr(obj, "threshold", None) or _library_gate(obj))
        result = obj.evaluate_test_case(case.obj, subject)
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
        found = Finding(
            self.id,
            score=float(result.score),
            reason=str(metadata.get("reason", "")),
            metadata=metadata,
        )
        return _with_threshold(found, result.threshold or getattr(obj, "threshold", None))


def _library_gate(obj: _Library[Any, Any]) -> Threshold | None:
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


def _evaluator(obj: Any) -> EvaluatorSpec:
    if isinstance(obj, EvaluatorSpec):
        return obj
    if not isinstance(obj, BaseTestEvaluator):
        raise AccordError(
            f"{obj!r} is not an evaluator: subclass BaseTestEvaluator (or a Base* evaluator)"
        )
    ident = obj.id
    if not isinstance(ident, str) or not ident:
        raise AccordError(f"{type(obj).__name__}.id must be a non-empty string")
    return PythonEvaluator.model_construct(
        type="python", name=ident, obj=obj, key=ident, threshold=None, weight=1.0,
        required=False, negate=False, max_concurrency=obj.max_concurrency,
    )  # fmt: skip


def _display(test_case: Any) -> Any:
    if dataclasses.is_dataclass(test_case) and not isinstance(test_case, type):
        return dataclasses.asdict(test_case)
    return repr(test_case)


def build_suite(
    id: str,
    test_cases: Sequence[Any],
    evaluators: Sequence[Any],
    fn: Callable[[Any], Any],
    *,
    max_test_case_concurrency: int = 10,
    judge_model: str | None = None,
    repeat: int = 1,
    project_root: str | Path | None = None,
) -> Suite:
    from accord.engine.project import load_project

    if not id:
        raise AccordError("run_test_suite needs an id")
    project = load_project(Path(project_root or Path.cwd()))
    specs = [_evaluator(e) for e in evaluators]
    ids = [s.id for s in specs]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate:
        raise AccordError(f"two evaluators have the id '{duplicate}': ids must be unique")
    cases: list[Case] = []
    seen: set[str] = set()
    for position, test_case in enumerate(test_cases):
        if not hasattr(test_case, "hash"):
            raise AccordError(f"test case {position + 1} has no hash(): subclass BaseTestCase")
        key = str(test_case.hash())
        if key in seen:
            raise AccordError(
                f"test cases {position + 1} and an earlier one have the same hash '{key}'"
            )
        seen.add(key)
        cases.append(Case(id=key, input=_display(test_case), obj=test_case, digest=key))
    name = getattr(fn, "__qualname__", "fn")
    target = PythonTarget.model_construct(
        type="python", function=f"python:{name}", callable=fn, timeout=None, pass_case=False
    )
    judge = judge_model or project.default_judge
    return Suite(
        id=id, cases=cases, targets={"fn": target}, evaluators=tuple(specs), default_target="fn",
        repeat=repeat, judge_model=judge, project=project, path=None,
        target_concurrency=max_test_case_concurrency,
    )  # fmt: skip


def run_test_suite(
    id: str,
    test_cases: Sequence[Any],
    evaluators: Sequence[Any],
    fn: Callable[[Any], Any],
    max_test_case_concurrency: int = 10,
    *,
    judge_model: str | None = None,
    repeat: int = 1,
    project_root: str | Path | None = None,
    cache_mode: str = "on",
    quiet: bool = False,
    exit_on_failure: bool = False,
    **ignored: Any,
) -> SuiteRun:
    """Run a suite on the engine, print accord's report, return the results. Exits 1 only
    with `exit_on_failure=True` and a case that did not pass."""
    from rich.console import Console

    from accord.engine.runner import RunOptions
    from accord.tasks.suites.core.nodes import run_suite
    from accord.tasks.suites.reports.evals import print_pretty

    suite = build_suite(
        id, test_cases, evaluators, fn, max_test_case_concurrency=max_test_case_concurrency,
        judge_model=judge_model, repeat=repeat, project_root=project_root,
    )  # fmt: skip
    options = RunOptions(cache_mode=cache_mode)
    run = _run_in_loop(lambda: run_suite(suite, options))
    if not quiet:
        print_pretty([run], Console(soft_wrap=True), quiet=False)
    if exit_on_failure and any(c.status in ("failed", "error") for c in run.cases):
        raise SystemExit(1)
    return run


def _run_in_loop(make: Callable[[], Coroutine[Any, Any, RunT]]) -> RunT:
    """`asyncio.run`, or in a thread of its own when called from a running loop (a
    notebook, an async test)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if not running:  # outside the `except`: a failure would show "no running event loop" first
        return asyncio.run(make())
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = asyncio.run(make())
        except BaseException as exc:  # handed back to the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    value: RunT = box["value"]
    return value

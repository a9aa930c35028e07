"""AgentV 4's dialect of promptfoo's form: what the promptfoo loader (promptfoo/config.py,
cases.py) reads otherwise in an AgentV 4 eval file. Each method is the loader's step as
AgentV takes it; the rest is promptfoo's (promptfoo/form.py `Dialect`). One is made for
each file loaded and holds that load's AgentV state (state.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ....core.scoring_rules import AGENTV_PASS as PASS
from ...promptfoo.form import OPTION_KEYS, Dialect, _Loader, _merged, _Test
from .file import NOT_SUPPORTED, NOT_SUPPORTED_TEST, SUPPORTED, TEST_KEYS
from .state import State

if TYPE_CHECKING:
    from collections.abc import Callable

    from ......engine.project import Project
    from ......engine.yamlmarks import Loc
    from .....evaluators.base import EvaluatorSpec
    from .....evaluators.cases import Case
    from ....core.targets import Target
    from ...promptfoo.sources import Prompt


class AgentV4Dialect(Dialect):
    """AgentV 4's rules (packages/core/src/evaluation), over promptfoo's."""

    name = "agentv4"
    docs = "docs/agentv.md"
    what = "an AgentV eval file"
    top_keys, refused_top_keys = SUPPORTED, NOT_SUPPORTED
    test_keys, refused_test_keys = TEST_KEYS, NOT_SUPPORTED_TEST
    # AgentV reads default_test.options.rubric_prompt (config-loader.ts
    # extractDefaultTestRubricPrompt) into suite.defaultTest, where no grader reads it;
    # AgentV runs a test's transform (transform.py)
    option_keys = OPTION_KEYS | {"rubric_prompt", "transform"}
    # AgentV 4's rule (a required assertion below its bar makes the score 0; a test with no
    # assertion does not pass); each case carries its test's threshold (default_test's, else
    # the file's, merged in by file.prepare); one without passes at AgentV's
    # DEFAULT_THRESHOLD, 0.8 (run-eval.ts resolveEffectiveRunPolicy: run ?? test ?? suite
    # default ?? 0.8)
    scoring = "agentv4"
    pass_score = PASS
    agent_trace = True
    # AgentV renders the prompt from the vars as written, and keeps them so
    prepares_vars = False
    text_checks = True

    def __init__(self) -> None:
        self.state = State()

    # the file as a whole

    def project(self, path: Path) -> Project:
        """AgentV's project root: config.yml's folder, else the folder holding .agentv,
        else the repository's top (common/project.py)."""
        from ..common.project import load_project

        return load_project(path)

    def prepare(self, loader: _Loader, data: dict[str, Any]) -> dict[str, Any]:
        from . import file as agentv4

        self.state.data, self.state.marks = data, loader.marks
        out, self.state.workdir = agentv4.prepare(loader, data)
        return out

    def refuses_prompt(self, loader: _Loader, prompt: Prompt) -> bool:
        return False

    def provider_entry(
        self, loader: _Loader, key: str, entry: dict[str, Any], loc: Loc
    ) -> dict[str, Any]:
        return entry

    def special_target(self, pid: str, config: dict[str, Any]) -> Target | None:
        from .catalog import special_target

        return special_target(pid, config)

    def placed_target(self, loader: _Loader, target: Target) -> Target:
        """Command and Python targets run in the environment's workdir, with its env."""
        workdir, process_env = self.state.workdir, self.state.process_env
        if workdir is not None and hasattr(target, "cwd"):
            target = target.model_copy(update={"cwd": workdir})
        if process_env and hasattr(target, "process_env"):
            target = target.model_copy(update={"process_env": process_env})
        return target

    def models(self, loader: _Loader) -> list[Any]:
        """The file's defaults.grader, and each assertion's own grader (graders.py)."""
        judges = [self.state.judge] if self.state.judge is not None else []
        return [*judges, *self.state.grader_models.values()]

    def judge(self, loader: _Loader) -> str | None:
        name = getattr(self.state.judge, "name", None)
        return name if isinstance(name, str) else None

    # tests

    def admit(self, loader: _Loader, test: dict[str, Any], loc: Loc, whole: bool,
              **where: Any) -> None:  # fmt: skip
        from . import rows as agentv_rows

        kept = agentv_rows.admit(loader, test, loc, whole, **where)
        loader.keys(kept, loc, self.test_keys, self.refused_test_keys, "a test", **where)

    def test_vars(self, loader: _Loader, test: dict[str, Any], loc: Loc, **where: Any) -> None:
        return None  # AgentV reads no vars files

    def keeps(self, loader: _Loader, test: dict[str, Any], where: Callable[[], str]) -> bool:
        from .rows import has_id

        return has_id(loader, test, where())

    def read_test_file(
        self, loader: _Loader, path: Path, shown: str
    ) -> list[tuple[Any, int | None]]:
        """AgentV's own reader of test files (CSV above all)."""
        from . import csvfile as agentv_csv

        return agentv_csv.tests_from_file(path, shown, loader=loader)

    def scenario_tests(
        self, loader: _Loader, data: dict[str, Any], default: dict[str, Any], found: list[_Test]
    ) -> list[_Test]:
        """AgentV's scenarios: promptfoo's config x tests, with scenario files and test ids
        (scenarios.py)."""
        from .rows import none_left
        from .scenarios import scenario_tests

        if not found and not data.get("scenarios"):
            found.append(_Test({}, ()))
        return none_left(loader, [*found, *scenario_tests(loader, data.get("scenarios"))])

    def merged(self, test: dict[str, Any], default: dict[str, Any]) -> dict[str, Any]:
        return _merged(test, default, self.state.trailing)

    # a test's cases

    def checks(
        self, loader: _Loader, item: _Test, test: dict[str, Any], models: dict[str, Any]
    ) -> tuple[EvaluatorSpec, ...]:
        from ...promptfoo.cases import assertions

        return assertions(loader, item, test)

    def numbered_checks(
        self, loader: _Loader, item: _Test, entries: list[Any]
    ) -> list[tuple[int, Any]]:
        from .file import gathered

        return gathered(loader, item, entries)

    def build_check(self, loader: _Loader, item: _Test, index: int, entry: Any, where: str,
                    name: str, own: int) -> EvaluatorSpec:  # fmt: skip
        from ......engine.errors import ConfigError
        from ...promptfoo.asserts.base import PromptfooAssertion
        from .checks.build import build_agentv_assertion
        from .graders import resolved

        at = (*item.loc, "assert", index)
        entry = resolved(loader, entry, at, self._reporter(loader, item, at, index))
        built = build_agentv_assertion(
            entry, base_dir=loader.base, where=where, name=name, root=loader.root
        )
        command, folder = getattr(built, "command", None), getattr(built, "folder", None)
        if getattr(built, "type", "") == "script" and command and folder:
            from ......engine.programs import admit

            refused = admit(list(command), item.file or loader.path, loader.root, Path(folder))
            if refused is not None:  # a script grader's program passes the door
                raise ConfigError(f"{where}: {refused}")
        if index >= own and isinstance(built, PromptfooAssertion):
            # yaml-parser.ts interpolateRawEvalCase fills the vars into the test's own
            # assertions only: an inherited value stays as written
            built = built.model_copy(update={"verbatim": True})
        return built

    def _reporter(self, loader: _Loader, item: _Test, at: Loc, index: int) -> Callable[[str], None]:
        """A problem of an assertion, said at its place: an inherited one (AgentV's top-level
        `assert`, an inline `default_test`'s) at its own line of the eval file, once."""
        own = item.test.get("assert")
        count = len(own) if isinstance(own, list) else 0
        places = self.state.trailing_locs
        inherited = places[index - count] if count <= index < count + len(places) else None

        def report(message: str) -> None:
            if inherited is None:
                loader.issue(at, message, file=item.file, line=item.line)
                return
            before = list(loader.issues)
            loader.issue(inherited, message)
            if loader.issues[-1] in before:
                loader.issues.pop()

        return report

    def given_bar(
        self, loader: _Loader, item: _Test, test: dict[str, Any], default: dict[str, Any]
    ) -> Any:
        """An AgentV test's execution/run threshold, else the file's default."""
        from .file import threshold

        own = threshold(loader, item)
        return own if own is not None else default.get("threshold")

    def bar(self, value: float | None) -> float | None:
        # AgentV takes a test's threshold with `??` (run-eval.ts resolveEffectiveRunPolicy):
        # 0 is a bar every score reaches, not "no bar"
        return None if value is None else float(value)

    def prompt_text(self, loader: _Loader, item: _Test, raw: str, text: str,
                    variables: dict[str, Any]) -> str:  # fmt: skip
        from .file import message_prompt
        from .files import inline_files

        return message_prompt(raw, inline_files(loader, item, raw, variables)) or text

    def model_messages(
        self, messages: list[dict[str, Any]] | None, text: str
    ) -> list[dict[str, Any]] | None:
        from .files import model_messages

        return model_messages(messages, text)

    def conversation(
        self, loader: _Loader, item: _Test, test: dict[str, Any], variables: dict[str, Any],
        checks: tuple[EvaluatorSpec, ...], text: str, messages: list[dict[str, Any]] | None,
    ) -> tuple[Any, tuple[EvaluatorSpec, ...], list[dict[str, Any]] | None] | None:  # fmt: skip
        if "turns" not in test and "mode" not in test:
            return None, checks, messages
        from ...promptfoo.cases import chat_messages
        from .conversation import conversation

        made = conversation(loader, item, test, variables, checks)
        if made is None:
            return None
        plan, grade = made
        # the test's own messages: the conversation's start
        return plan, (grade,), chat_messages(text) or [{"role": "user", "content": text}]

    def case_id(self, test: int, column: int, columns: int, named: Any, prompts: list[Prompt],
                prompt: Prompt, providers: list[str], provider: str) -> str:  # fmt: skip
        """An AgentV test has its `id`, and under several prompts AgentV's
        `ID__prompt_PROMPTID` (yaml-parser.ts expandPromptMatrix), numbered by provider when
        there are several."""
        ids = self.state.prompt_ids
        if not named or len(prompts) < 2 or len(ids) != len(prompts):
            return super().case_id(test, column, columns, named, prompts, prompt, providers,
                                   provider)  # fmt: skip
        from .files import case_id

        index = next(i for i, p in enumerate(prompts) if p is prompt)
        first = case_id(str(named), ids[index])
        return first if len(providers) < 2 else f"{first}.{providers.index(provider) + 1}"

    def finish(
        self, loader: _Loader, cases: list[Case], owners: list[tuple[Any, Any, Loc]]
    ) -> None:
        """AgentV refuses a file two of whose tests have one id (orchestrator.ts
        validateDependencyGraph, "Duplicate test ID"), the ids under several prompts
        included; each case names the test it comes from (`owners`)."""
        seen: set[str] = set()
        for case, (file, line, loc) in zip(cases, owners, strict=True):
            if case.id in seen:
                where: dict[str, Any] = {"file": file, "line": line} if file else {}
                loader.issue(loc, f"test id '{case.id}' names two cases (AgentV refuses it: "
                             "'Duplicate test ID'): give each test, and each prompt, its own "
                             "id (a var listing several values makes a case of each)",
                             **where)  # fmt: skip
                return
            seen.add(case.id)

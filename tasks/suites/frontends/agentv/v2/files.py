"""AgentV eval files (`tests:` YAML, or a JSONL dataset with its YAML sidecar) compiled to a
core `Suite`: every problem found at once, at its file and line, before anything runs.

- Tests: `tests` (or `cases`, `evalcases`, `eval_cases`); `id` and `criteria` required
  (`expected_outcome` accepted with a warning); `input`/`input_messages` and
  `expected_output`/`expected_messages` as text, an object or messages whose content may be
  blocks `{type: text|file, value}`. A file block is read from the eval file's folder (then
  its parents, up to the project's top); a file matching `.agentv/config.yaml`'s
  `guideline_patterns` (default `**/*.instructions.md`) goes to the system message as a
  guideline, any other is inlined as `<file path="...">` text.
- Files: a file block, an `llm_judge` prompt file and a workspace template stay inside the
  project: its config.yml's folder, else the folder holding `.agentv`, else the eval file's
  folder; an absolute path or one leading out (`..`, a symbolic link) is refused at its line.
- Evaluators: the test's `execution.evaluators` (or `evaluators`), else the file's; none at
  all: an `llm_judge` on the criteria. `rubrics` add a `rubric` evaluator in front.
- Targets: the test's `execution.target`, else `--target`, else the file's, else `default`.
- Verdicts as AgentV reports them: a case passes at a score of 0.8, is borderline from 0.6.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import json
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Union

import pydantic
from pydantic import Field, TypeAdapter

from ......engine.datafiles import jsonl_values
from ......engine.errors import Issue, ValidationError
from ......engine.loader import pydantic_issues, pydantic_issues_at
from ......engine.paths import PathError, private
from ......engine.paths import resolved as real_path
from ......engine.project import Project
from ......engine.yamlmarks import Loc, Marks, format_path, parse_yaml, read_text
from .....evaluators.base import EvaluatorSpec
from .....evaluators.cases import case_digest
from ....core.cases import Suite
from ....core.targets import Target, target_from
from ..common.cli import CliTarget, ReplyTarget
from ..common.project import find_agentv_folder, load_project
from ..common.targets import (
    ResolvedTarget,
    TargetProblem,
    TargetsFile,
    load_targets,
)
from .agent_judge import AgentJudge
from .cases import AgentVCase
from .evaluators import AGENTV, PASS, canonical_type
from .judges import CodeJudge, Composite, LlmJudge, PromptScript, Rubric
from .schema import CASE_KEYS, FileSpec, TestSpec, WorkspaceSpec

DEFAULT_GUIDELINES = ("**/*.instructions.md",)
DEPRECATED_KEYS = {"evalcases": "tests", "eval_cases": "tests", "cases": "tests"}


@cache
def _evaluator_adapter() -> TypeAdapter[Any]:
    # the modules register their evaluators
    from . import agent_judge, checks, metrics  # noqa: F401

    members = tuple(AGENTV.get(name) for name in AGENTV.names())
    union: Any = Annotated[Union[members], Field(discriminator="type")]  # noqa: UP007
    return TypeAdapter(list[union])


@dataclasses.dataclass
class Source:
    """Where the file's parts come from: the tests' file and the file-level keys' file
    (the same, or a JSONL dataset and its sidecar)."""

    path: Path
    data: dict[str, Any]
    marks: Marks
    tests: list[Any]
    tests_key: str
    test_marks: Marks
    top_path: Path

    def at(self, loc: Loc) -> tuple[Marks, Path]:
        """The marks and the file of what sits at `loc`."""
        if loc and loc[0] == self.tests_key:
            return self.test_marks, self.path
        return self.marks, self.top_path

    def issue(self, loc: Loc, message: str) -> Issue:
        marks, path = self.at(loc)
        line, column = marks.find(loc)
        return Issue(path, line, column, format_path(loc), message)


def read_source(path: Path, text: str | None = None) -> Source:
    """The file's tests and settings; `text`: the file's, read already (a YAML file is read
    once, a JSONL dataset by its own reader). AgentV reads its YAML with the `yaml` package's
    YAML 1.2 core schema, so accord does too: `yes` and `2025-04-01` stay text there (PyYAML's
    1.1 reading made them a boolean and a date, and an exact field compared them unequal)."""
    if path.suffix == ".jsonl":
        return _read_jsonl(path)
    data, marks = parse_yaml(read_text(path) if text is None else text, path, core=True)
    if not isinstance(data, dict):
        raise ValidationError([Issue(path, 1, 1, "", "expected a mapping with 'tests:'")])
    key = next((k for k in CASE_KEYS if k in data), "tests")
    tests = data.get(key)
    if not isinstance(tests, list) or not tests:
        raise ValidationError(
            [Issue(path, *marks.find((key,)), key, "'tests:' needs a list of tests")]
        )
    return Source(path, data, marks, tests, key, marks, path)


def _read_jsonl(path: Path) -> Source:
    marks = Marks()
    tests: list[Any] = []
    values, issues = jsonl_values(path)
    for number, value in values:
        tests.append(value)
        marks.put(("tests", len(tests) - 1), number, 1)
    if issues:
        raise ValidationError(issues)
    if not tests:
        raise ValidationError([Issue(path, 1, 1, "", "no tests: one JSON object per line")])
    sidecar = path.with_suffix(".yaml")
    if not sidecar.is_file():
        sidecar = path.with_suffix(".yml")
    data: dict[str, Any] = {}
    top_marks = Marks()
    top_path = path
    if sidecar.is_file():
        loaded, top_marks = parse_yaml(read_text(sidecar), sidecar, core=True)
        if loaded is not None and not isinstance(loaded, dict):
            raise ValidationError([Issue(sidecar, 1, 1, "", "expected a mapping of defaults")])
        data = loaded or {}
        top_path = sidecar
    return Source(path, data, top_marks, tests, "tests", marks, top_path)


class Builder:
    """Compiles one file; collects issues and warnings on the way."""

    def __init__(
        self,
        source: Source,
        project: Project,
        targets: TargetsFile,
        *,
        target: str | None,
        judge_model: str | None,
    ) -> None:
        self.source = source
        self.project = project
        self.targets = targets
        self.cli_target = target
        self.judge_override = judge_model
        self._proxy_targets: dict[str, tuple[str, str]] | None = None
        self._proxy_programs: dict[str, Target] = {}
        self.issues: list[Issue] = []
        self.warnings: list[str] = []
        self.folder = source.path.resolve().parent
        # what the file may read: its project (config.yml's folder), else AgentV's own
        # (the folder holding .agentv, else the repository's top: common/project.py); the
        # search for a file it names goes from its folder up to there, as AgentV's
        # buildSearchRoots goes up to its repoRoot
        self.root = project.root.resolve()
        agentv = find_agentv_folder(source.path, self.root)
        self.top = agentv.parent if agentv is not None else self.root
        self.search_top = self.root
        self.guidelines = _guideline_patterns(agentv)
        self.resolved: dict[str, ResolvedTarget | None] = {}
        self.models: dict[str, Any] = {}

    # --- files --------------------------------------------------------------------------

    def find_file(self, value: str, what: str = "file") -> Path | None:
        """AgentV's search for a file an eval file names: from its folder, then each folder
        above it up to the project's top; None when none holds it. `PathError` for an
        absolute path, or one that leads out of the project (`..`, a symbolic link)."""
        if Path(value).is_absolute():
            raise PathError(
                f"{what} '{value}' is an absolute path: files named in eval files are "
                f"relative to the eval file's folder (or a folder above it, up to {self.root})"
            )
        refused: PathError | None = None
        for folder in (self.folder, *self.folder.parents):
            try:
                found = self.within(folder, value, what)
            except PathError as exc:
                refused = refused or exc
            else:
                if found.is_file():
                    return found.resolve()
            if folder in (self.search_top, self.root):
                break
        if refused is not None:
            raise refused
        return None

    def within(self, folder: Path, value: str, what: str) -> Path:
        """`folder / value`, refused unless it stays inside the project."""
        if Path(value).is_absolute():
            raise PathError(
                f"{what} '{value}' is an absolute path: give it relative to the eval file's "
                f"folder, inside the project {self.root}"
            )
        path = folder / value
        if not real_path(path).is_relative_to(self.root):
            how = "with '..'" if ".." in Path(value).parts else "through a symbolic link"
            raise PathError(
                f"{what} '{value}' leads outside the project {self.root} ({how}); the project "
                "is the nearest folder holding config.yml, else the one holding .agentv, else the "
                "repository's top (.git), else the eval file's: move the file in, or put "
                "config.yml in a folder holding both"
            )
        reason = private(self.root, path, value)  # a .env file, .accord/: never data
        if reason is not None:
            raise PathError(f"{what} '{value}' {reason}")
        return path

    def admitted(self, command: str | list[str], loc: Loc, cwd: Path) -> None:
        """The program a key at `loc` runs in `cwd` passes the door (engine/programs.admit),
        else an issue at the key's line."""
        from ......engine.programs import admit

        refused = admit(command, self.source.at(loc)[1], self.root, cwd)
        if refused is not None:
            self.issues.append(self.source.issue(loc, refused))

    def check_workspace(self, workspace: WorkspaceSpec | None, loc: Loc) -> None:
        """A workspace template is copied into every workspace: only a folder of the
        project (relative to the eval file's folder, as AgentV reads it); each script passes
        the door of programs."""
        if workspace is None:
            return
        for hook in ("before_all", "before_each", "setup", "teardown", "after_each", "after_all"):
            script = getattr(workspace, hook)
            if script is not None:
                cwd = self.folder / (script.cwd or ".")
                self.admitted(list(script.script), (*loc, "workspace", hook, "script"), cwd)
        if not workspace.template:
            return
        try:
            self.within(self.folder, workspace.template, "workspace template")
        except PathError as exc:
            self.issues.append(self.source.issue((*loc, "workspace", "template"), exc.message))

    def workspace_of(
        self, spec: FileSpec, test: TestSpec, resolved: ResolvedTarget | None, loc: Loc
    ) -> WorkspaceSpec | None:
        """The test's workspace: its own over the file's, else its cli target's
        `workspace_template` (AgentV: evalCase.workspace?.template ?? the target's)."""
        workspace = _merge_workspace(spec.workspace, test.workspace)
        template = resolved.workspace_template if resolved is not None else None
        if template is None or (workspace is not None and workspace.template):
            return workspace  # type: ignore[no-any-return]
        try:
            self.within(self.folder, template, "workspace_template")
        except PathError as exc:
            self.issues.append(self.source.issue(loc, exc.message))
            return workspace  # type: ignore[no-any-return]
        if workspace is None:
            return WorkspaceSpec(template=template)
        return workspace.model_copy(update={"template": template})  # type: ignore[no-any-return]

    def is_guideline(self, path: Path) -> bool:
        try:
            relative = path.relative_to(self.top).as_posix()
        except ValueError:
            relative = path.name
        return any(_glob(relative, pattern) for pattern in self.guidelines)

    # --- messages -----------------------------------------------------------------------

    def messages(
        self, raw: Any, role: str, loc: Loc, collect: dict[str, list[str]]
    ) -> list[dict[str, Any]]:
        """Messages with file blocks read: for the input, guidelines go to `collect`."""
        if isinstance(raw, str) or (isinstance(raw, dict) and "role" not in raw):
            raw, single = [{"role": role, "content": raw}], True
        elif isinstance(raw, dict):
            raw, single = [raw], True
        else:
            single = False
        out = []
        for index, message in enumerate(raw):
            at = loc if single else (*loc, index)
            content = message.get("content")
            if isinstance(content, list):
                content = self._blocks(content, (*at, "content"), role, collect)
            out.append({**{k: v for k, v in message.items() if v is not None}, "content": content})
        return out

    def _blocks(self, blocks: list[Any], loc: Loc, role: str, collect: dict[str, list[str]]) -> str:
        parts: list[str] = []
        for index, block in enumerate(blocks):
            if isinstance(block, str):
                parts.append(block)
                continue
            if block.get("type") == "text":
                parts.append(str(block.get("value", "")))
                continue
            value = str(block.get("value", ""))
            try:
                found = self.find_file(value)
            except PathError as exc:  # never read, never sent
                self.issues.append(self.source.issue((*loc, index, "value"), exc.message))
                continue
            if found is None:
                self.issues.append(
                    self.source.issue(
                        (*loc, index, "value"),
                        f"file '{value}' not found (looked from {self.folder} up to {self.top})",
                    )
                )
                continue
            text = found.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
            if role == "user":
                collect["file_paths"].append(str(found))
            if role == "user" and self.is_guideline(found):
                collect["guideline_files"].append(str(found))
                collect["guidelines"].append(f'<file path="{found.name}">\n{text.strip()}\n</file>')
                continue
            if role == "user":
                collect["input_files"].append(str(found))
            parts.append(f'<file path="{value}">\n{text.strip()}\n</file>')
        return "\n\n".join(p for p in parts if p)

    # --- targets ------------------------------------------------------------------------

    def target(self, name: str, loc: Loc) -> ResolvedTarget | None:
        if name in self.resolved:
            return self.resolved[name]
        resolved: ResolvedTarget | None = None
        try:
            resolved = self.targets.resolve(name)
        except TargetProblem as exc:
            shorthand = _shorthand(name)
            if name not in self.targets.entries and shorthand is not None:
                resolved = ResolvedTarget(name, shorthand)
            elif exc.loc:
                self.issues.append(self.targets.issue(exc.loc, exc.message))
            else:
                given = " (given by --target)" if name == self.cli_target else ""
                self.issues.append(self.source.issue(loc, exc.message + given))
        problem = resolved.target.problem(self.project.root) if resolved is not None else None
        if problem is not None:
            if name in self.targets.entries:
                self.issues.append(
                    self.targets.issue(("targets", self.targets.index[name]), problem)
                )
            else:
                self.issues.append(self.source.issue(loc, problem))
            resolved = None
        if resolved is not None and isinstance(resolved.target, CliTarget):
            # AgentV resolves a cli target's cwd and workspace_template from the eval file
            program = resolved.target.model_copy(update={"base": str(self.folder)})
            resolved = dataclasses.replace(resolved, target=program)
        if resolved is not None:
            # the programs a target runs pass the door with the file that names them
            named = name in self.targets.entries and self.targets.path is not None
            file = self.targets.path if named and self.targets.path else self.source.path
            refused = resolved.target.admission(file, self.root)
            if refused is not None:
                if named:
                    at = _program_key(self.targets.entries[name], refused)
                    self.issues.append(
                        self.targets.issue(("targets", self.targets.index[name], *at), refused)
                    )
                else:
                    self.issues.append(self.source.issue(loc, refused))
                resolved = None
        if resolved is not None and resolved.model is not None:
            self.models[resolved.model.name] = resolved.model
        self.resolved[name] = resolved
        return resolved

    def judge_for(self, resolved: ResolvedTarget, loc: Loc) -> str | None:
        if self.judge_override:
            return self.judge_override
        if resolved.judge_target:
            judge = self.target(resolved.judge_target, loc)
            if judge is None:
                return None
            if judge.model is None:
                self.issues.append(
                    self.source.issue(
                        loc, f"judge_target '{resolved.judge_target}' is not a model provider"
                    )
                )
                return None
            return judge.model.name
        if resolved.model is not None:
            return resolved.model.name
        model = getattr(resolved.target, "model", None)
        return model if isinstance(model, str) else None

    # --- evaluators ---------------------------------------------------------------------

    def evaluators(self, items: list[Any], loc: Loc) -> tuple[EvaluatorSpec, ...]:
        items = [_canonical(item) for item in items]
        try:
            specs = list(_evaluator_adapter().validate_python(items))
        except pydantic.ValidationError as exc:
            marks, path = self.source.at(loc)
            self.issues += pydantic_issues_at(exc, items, marks, path, _evaluator_adapter(), loc)
            return ()
        out: list[EvaluatorSpec] = []
        seen: set[str] = set()
        for index, spec in enumerate(specs):
            at = (*loc, index)
            if spec.id in seen:
                self.issues.append(
                    self.source.issue(at, f"two evaluators named '{spec.id}': rename one")
                )
            seen.add(spec.id)
            out.append(self._bind(spec, at))
        return tuple(out)

    def _bind(self, spec: EvaluatorSpec, loc: Loc) -> EvaluatorSpec:
        """Resolve what an evaluator reads from files: prompts, script folders, members."""
        base = str(self.folder)
        if isinstance(spec, LlmJudge) and isinstance(spec.prompt, PromptScript):
            value = spec.prompt.script[-1]
            try:
                found = self.find_file(value, "prompt script")
            except PathError as exc:
                self.issues.append(self.source.issue((*loc, "prompt", "script"), exc.message))
                return spec
            if found is None:
                self.issues.append(
                    self.source.issue(
                        (*loc, "prompt", "script"), f"prompt script '{value}' not found"
                    )
                )
                return spec
            script = spec.prompt.model_copy(
                update={"script": [*spec.prompt.script[:-1], str(found)]}
            )
            self.admitted(script.script, (*loc, "prompt", "script"), found.parent)
            return spec.model_copy(update={"prompt": script, "base": base})
        if isinstance(spec, LlmJudge | AgentJudge) and isinstance(spec.prompt, str):
            return spec.model_copy(update={"template": self.prompt(spec.prompt, (*loc, "prompt"))})
        if isinstance(spec, Composite):
            members = self.evaluators(list(spec.evaluators), (*loc, "evaluators"))
            aggregator = spec.aggregator
            if aggregator.type == "llm_judge" and aggregator.prompt:
                text = self.prompt(aggregator.prompt, (*loc, "aggregator", "prompt"))
                aggregator = aggregator.model_copy(update={"template": text})
            program = aggregator.script or aggregator.path
            if aggregator.type == "code_judge" and program:
                key = "script" if aggregator.script else "path"
                self.admitted(
                    program, (*loc, "aggregator", key), self.folder / (aggregator.cwd or ".")
                )
            names = {m.id for m in members}
            for name in aggregator.weights:
                if names and name not in names:
                    self.issues.append(
                        self.source.issue(
                            (*loc, "aggregator", "weights", name),
                            f"weight for '{name}', which is no member "
                            f"(members: {', '.join(sorted(names))})",
                        )
                    )
            return spec.model_copy(
                update={"members": list(members), "aggregator": aggregator, "base": base}
            )
        if hasattr(spec, "base"):
            cwd = getattr(spec, "cwd", None)
            if cwd and not (self.folder / cwd).is_dir():
                self.issues.append(self.source.issue((*loc, "cwd"), f"folder '{cwd}' not found"))
            command = getattr(spec, "script", None)
            if isinstance(command, str | list) and command:
                self.admitted(command, (*loc, "script"), self.folder / (cwd or "."))
            update: dict[str, Any] = {"base": base}
            if isinstance(spec, CodeJudge) and spec.target not in (None, False):
                update["proxy_targets"] = self.proxy_targets()
                update["proxy_programs"] = dict(self._proxy_programs)
            return spec.model_copy(update=update)
        return spec

    def proxy_targets(self) -> dict[str, tuple[str, str]]:
        """What the target proxy answers a request naming each target of targets.yaml with,
        as AgentV's orchestrator resolves any of them by name (resolveTargetByName):
        `("model", NAME)` a model of the run, `("reply", TEXT)` a mock's answer, `("program",
        NAME)` a program target given the question as its prompt, `("error", WHY)` one it
        cannot ask (an entry that does not resolve, or a program the doors refuse: AgentV
        fails that request, not the run)."""
        if self._proxy_targets is not None:
            return self._proxy_targets
        found: dict[str, tuple[str, str]] = {}
        for name in self.targets.entries:
            try:
                resolved = self.targets.resolve(name)
            except TargetProblem as exc:
                found[name] = ("error", exc.message)
                continue
            if resolved.model is not None:
                self.models[resolved.model.name] = resolved.model
                found[name] = ("model", resolved.model.name)
            elif isinstance(resolved.target, ReplyTarget):
                found[name] = ("reply", resolved.target.text)
            else:  # a program: it runs only as the targets file may run it (the doors)
                program = resolved.target
                if isinstance(program, CliTarget):
                    program = program.model_copy(update={"base": str(self.folder)})
                refused = program.problem(self.project.root) or program.admission(
                    self.targets.path or self.source.path, self.root
                )
                if refused is not None:
                    found[name] = ("error", f"target '{name}': {refused}")
                else:
                    self._proxy_programs[name] = program
                    found[name] = ("program", name)
        self._proxy_targets = found
        return found

    def prompt(self, value: str, loc: Loc) -> str | None:
        """A prompt file's text; None for an inline prompt; an issue for a file named that
        does not exist."""
        if "\n" in value or " " in value.strip():
            return None
        try:
            found = self.find_file(value, "prompt file")
        except PathError as exc:
            self.issues.append(self.source.issue(loc, exc.message))
            return None
        if found is not None:
            return found.read_text(encoding="utf-8", errors="replace")
        if value.endswith((".md", ".txt", ".prompt", ".jinja", ".j2")) or "/" in value:
            self.issues.append(
                self.source.issue(loc, f"prompt file '{value}' not found (from {self.folder})")
            )
        return None

    # --- tests --------------------------------------------------------------------------

    def build(self, spec: FileSpec, tests: list[tuple[TestSpec, Loc]]) -> list[AgentVCase]:
        file_exec = spec.execution
        file_evaluators: tuple[EvaluatorSpec, ...] | None = None
        if file_exec is not None and file_exec.evaluators is not None:
            file_evaluators = self.evaluators(file_exec.evaluators, ("execution", "evaluators"))
        default = (file_exec.target if file_exec else None) or spec.target
        dataset = spec.dataset or spec.name or _stem(self.source.path)
        self.check_workspace(spec.workspace, ())
        cases = []
        seen: dict[str, int] = {}
        for test, loc in tests:
            if test.id in seen:
                self.issues.append(
                    self.source.issue(
                        (*loc, "id"),
                        f"duplicate test id '{test.id}' (also test {seen[test.id] + 1})",
                    )
                )
            seen[test.id] = int(loc[-1])
            case = self.case(test, loc, default, file_evaluators, dataset, spec)
            if case is not None:
                cases.append(case)
        return cases

    def case(
        self,
        test: TestSpec,
        loc: Loc,
        default: str | None,
        file_evaluators: tuple[EvaluatorSpec, ...] | None,
        dataset: str,
        spec: FileSpec,
    ) -> AgentVCase | None:
        if test.criteria is None and test.expected_outcome is not None:
            self.warnings.append(
                f"{self.source.path}: test '{test.id}': 'expected_outcome' is the old name "
                "of 'criteria'"
            )
        if test.reference_answer is not None:
            self.warnings.append(
                f"{self.source.path}: test '{test.id}': 'reference_answer' is ignored, as "
                "AgentV ignores it: the reference answer is the last expected_output message"
            )
        self.check_workspace(test.workspace, loc)
        case_exec = test.execution
        name = (case_exec.target if case_exec else None) or self.cli_target or default or "default"
        target_loc: Loc = (*loc, "execution", "target") if case_exec and case_exec.target else loc
        resolved = self.target(name, target_loc)
        judge = self.judge_for(resolved, target_loc) if resolved is not None else None
        if case_exec is not None and case_exec.evaluators is not None:
            evaluators = self.evaluators(case_exec.evaluators, (*loc, "execution", "evaluators"))
        elif test.evaluators is not None:
            evaluators = self.evaluators(test.evaluators, (*loc, "evaluators"))
        elif file_evaluators is not None:
            evaluators = file_evaluators
        elif test.rubrics:
            evaluators = ()
        else:
            evaluators = (LlmJudge(name="llm_judge"),)
        if test.rubrics:
            try:
                rubric = Rubric(name="rubric", rubrics=list(test.rubrics))
            except pydantic.ValidationError as exc:
                message = exc.errors(include_url=False)[0]["msg"].removeprefix("Value error, ")
                self.issues.append(self.source.issue((*loc, "rubrics"), message))
            else:
                evaluators = (rubric, *(e for e in evaluators if e.id != "rubric"))
        collect: dict[str, list[str]] = {
            "guidelines": [], "guideline_files": [], "input_files": [], "file_paths": []
        }  # fmt: skip
        raw_in = test.input if test.input is not None else test.input_messages
        in_key = "input" if test.input is not None else "input_messages"
        plain_in = _plain(raw_in)
        messages = self.messages(plain_in, "user", (*loc, in_key), collect)
        raw_expected = (
            test.expected_output if test.expected_output is not None else test.expected_messages
        )
        ex_key = "expected_output" if test.expected_output is not None else "expected_messages"
        expected = (
            self.messages(_plain(raw_expected), "assistant", (*loc, ex_key), collect)
            if raw_expected is not None
            else []
        )
        guidelines = "\n\n".join(collect["guidelines"])
        sent = [{"role": m["role"], "content": _text(m.get("content"))} for m in messages]
        if guidelines:
            system = next((m for m in sent if m["role"] == "system"), None)
            if system is None:
                sent.insert(0, {"role": "system", "content": guidelines})
            else:
                system["content"] = f"{system['content']}\n\n{guidelines}".strip()
        question = "\n\n".join(
            _text(m.get("content")) for m in messages if m["role"] != "system" and m.get("content")
        )
        reference = ""
        if expected:
            last = expected[-1].get("content")
            if last is None and expected[-1].get("tool_calls"):
                last = expected[-1]["tool_calls"]
            reference = (
                last if isinstance(last, str) else json.dumps(last, indent=2, ensure_ascii=False)
            )
        case = AgentVCase(
            id=test.id, input=sent, expected=expected or None,
            criteria=test.criteria or test.expected_outcome, rubrics=tuple(test.rubrics or ()),
            metadata=dict(test.metadata or {}), sidecar=test.sidecar, target=name,
            evaluators=evaluators, line=self.source.test_marks.find(loc)[0], judge_model=judge,
            question=question, reference_answer=reference, raw_input=tuple(plain_in_list(plain_in)),
            expected_messages=tuple(expected), input_files=tuple(collect["input_files"]),
            guideline_files=tuple(collect["guideline_files"]), guidelines=guidelines,
            file_paths=tuple(collect["file_paths"]),
            conversation_id=test.conversation_id, dataset=dataset,
            workspace=self.workspace_of(spec, test, resolved, loc),
        )  # fmt: skip
        return dataclasses.replace(case, digest=case_digest(case))


def plain_in_list(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str) or (isinstance(value, dict) and "role" not in value):
        return [{"role": "user", "content": value}]
    return [value] if isinstance(value, dict) else list(value)


def _plain(value: Any) -> Any:
    """Pydantic models back to the data they were read from."""
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(exclude_none=True, by_alias=True)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _text(content: Any) -> str:
    if content is None:
        return ""
    return (
        content if isinstance(content, str) else json.dumps(content, indent=2, ensure_ascii=False)
    )


def _merge_workspace(outer: Any, inner: Any) -> Any:
    if outer is None or inner is None:
        return inner or outer
    own = inner.model_dump(exclude_none=True)
    return outer.model_copy(update={k: getattr(inner, k) for k in own})


def _canonical(item: Any) -> Any:
    if isinstance(item, dict) and isinstance(item.get("type"), str):
        kind = canonical_type(item["type"])
        item = {**item, "type": kind}
        if kind == "composite" and isinstance(item.get("aggregator"), dict):
            aggregator = item["aggregator"]
            if isinstance(aggregator.get("type"), str):
                item["aggregator"] = {**aggregator, "type": canonical_type(aggregator["type"])}
    return item


def _shorthand(name: str) -> Target | None:
    """accord's own target shorthands, accepted where targets.yaml has no such name."""
    if name == "echo" or name.endswith((".agent.yml", ".agent.yaml")) or ".workflow.y" in name:
        return target_from(name)
    return None


def _guideline_patterns(agentv: Path | None) -> tuple[str, ...]:
    if agentv is None:
        return DEFAULT_GUIDELINES
    for name in ("config.yaml", "config.yml"):
        config = agentv / name
        if config.is_file():
            data, _marks = parse_yaml(read_text(config), config, core=True)  # a broken one: exit 2
            patterns = data.get("guideline_patterns") if isinstance(data, dict) else None
            if isinstance(patterns, list) and all(isinstance(p, str) for p in patterns):
                return tuple(patterns)
    return DEFAULT_GUIDELINES


def _glob(relative: str, pattern: str) -> bool:
    """A path against a glob where `**/` matches any folders (none included)."""
    relative, pattern = relative.lower(), pattern.lower()
    if fnmatch.fnmatchcase(relative, pattern):
        return True
    return pattern.startswith("**/") and fnmatch.fnmatchcase(relative, pattern[3:])


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".jsonl", ".yaml", ".yml"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def load_agentv_file(
    path: Path,
    *,
    target: str | None = None,
    targets_file: Path | None = None,
    judge_model: str | None = None,
    repeat: int | None = None,
    text: str | None = None,
) -> Suite:
    """Validate an AgentV eval file and build its suite; every problem at once. `text`: the
    file's, read already."""
    from ..common.workspace import WorkspaceHooks

    source = read_source(path, text)
    project = load_project(path)
    targets = load_targets(path, targets_file)
    builder = Builder(source, project, targets, target=target, judge_model=judge_model)
    top = {k: v for k, v in source.data.items() if k not in CASE_KEYS}
    spec: FileSpec | None = None
    try:
        spec = FileSpec.model_validate(top)
    except pydantic.ValidationError as exc:
        builder.issues.extend(pydantic_issues(exc, top, source.marks, source.top_path, FileSpec))
    for key, new in DEPRECATED_KEYS.items():
        if key in source.data and key != "cases":
            builder.warnings.append(f"{source.top_path}: '{key}' is the old name of '{new}'")
    tests: list[tuple[TestSpec, Loc]] = []
    for index, raw in enumerate(source.tests):
        loc: Loc = (source.tests_key, index)
        if not isinstance(raw, dict):
            builder.issues.append(source.issue(loc, "a test is a mapping with id, criteria, input"))
            continue
        try:
            tests.append((TestSpec.model_validate(raw), loc))
        except pydantic.ValidationError as exc:
            builder.issues += pydantic_issues_at(
                exc, raw, source.test_marks, source.path, TestSpec, loc
            )
    cases = builder.build(spec, tests) if spec is not None else []
    if builder.issues:
        raise ValidationError(sorted(builder.issues, key=lambda i: (str(i.file), i.line or 0)))
    assert spec is not None
    trials = spec.execution.trials if spec.execution else None
    models = [*project.config.models, *builder.models.values()]
    project = dataclasses.replace(
        project, config=project.config.model_copy(update={"models": models})
    )
    judge = judge_model or project.default_judge
    resolved_targets = {name: r.target for name, r in builder.resolved.items() if r is not None}
    hooks = WorkspaceHooks.for_cases(cases, spec.workspace, source.path.resolve().parent)
    return Suite(
        id=cases[0].dataset if cases else _stem(path),
        cases=cases,
        targets=resolved_targets,
        repeat=repeat or (trials.count if trials else 1),
        trials=trials.strategy if trials else None,
        trial_cost_limit=trials.cost_limit_usd if trials else None,
        pass_score=PASS,
        scoring="agentv",
        judge_model=judge,
        path=path,
        project=project,
        lifecycle=hooks,
        notes=tuple(builder.warnings),
    )


def _program_key(entry: dict[str, Any], refusal: str) -> tuple[str, ...]:
    """The key of a targets.yaml entry whose program `refusal` refuses: its line is the
    one to name (the health check's command, or the target's own)."""
    if refusal.startswith("healthcheck:") and isinstance(entry.get("healthcheck"), dict):
        return ("healthcheck", *_program_key(entry["healthcheck"], ""))
    for key in ("command_template", "commandTemplate"):
        if key in entry:
            return (key,)
    return ()

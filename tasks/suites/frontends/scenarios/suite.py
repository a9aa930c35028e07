"""A scenario file as a suite of the evaluation core: one case per scenario and model entry,
each answered by the agent built for its merged configuration and scored by the scenario judge.

Precedence for `agent_class`, `judge_model_id`, `agent_model_config`, `metrics` and
`pass_threshold`: the scenario's, else the file's, else the command line's (`--agent-class`,
`--judge-model`), else the defaults (metrics correctness, relevance, safety; threshold 7).
`agent_config` (a mapping, or a YAML file under the project root) is the scenario's, else the
file's. A model entry is merged into it under `model` (`{"model": {**config.model, **entry}}`);
with neither, the agent gets None and loads its own default.

The project root is `--project-root`, else the scenario file's project (its nearest
config.yml's folder, else its own folder). `agent_class` and `agent_config` files must be the
project's own (engine/project_code.py, engine/paths.py).

Macros expand once per scenario (one variable scope for its input, expected output and
criteria, in that order), seeded from the run: `seed_for(run seed, scenario name)`. A macro
error fails that scenario (its cases error with the message) and the others still run.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from .....engine.catalog import ModelCatalog
from .....engine.errors import Issue, ValidationError
from .....engine.loader import Loaded, load_spec
from .....engine.paths import PathError, inside
from .....engine.yamlmarks import parse_yaml, read_text
from ....evaluators.cases import Case, Output
from ...core.cases import Suite
from ...core.targets import Target, TargetFailure, target_from
from .agents import AgentClassTarget
from .judge import NAME, ScenarioJudge
from .macros import MacroContext, MacroError, expand
from .schema import BUILTIN_METRICS, DEFAULT_THRESHOLD, ScenarioFileSpec, ScenarioSpec

Loc = tuple[str | int, ...]


def seed_of(run_id: str) -> int:
    """A run's macro seed, from its id (`--resume` of the run expands the same inputs)."""
    return int(hashlib.sha256(run_id.encode()).hexdigest()[:8], 16)


def seed_for(seed: int, scenario: str) -> int:
    return int(hashlib.sha256(f"{seed}:{scenario}".encode()).hexdigest()[:12], 16)


@dataclass
class ScenarioOptions:
    """What the command line (or `RegressionRunner`) adds to a scenario file."""

    seed: int | None = None  # None: 0 here; the commands choose one per run (seed_of)
    project_root: Path | None = None
    agent_class: str | type | None = None
    judge_model: str | None = None
    concurrency: int | None = None
    macro_functions: Mapping[str, Callable[..., object]] = field(default_factory=dict)
    pass_threshold: float | None = None  # --pass-threshold: below the scenario's and file's

    def root_for(self, path: Path) -> Path:
        """The project root of scenario file `path`: `project_root` when given, else the
        file's project (its nearest config.yml's folder, else its own folder), as for every
        other file kind; never the working folder, which may be a home folder."""
        from .....engine.project import find_root

        return (self.project_root or find_root(path)[0]).resolve()


class MacroFailure(Target):
    """The target of a scenario whose macros failed: its cases error with the message."""

    type: Literal["macro_error"] = "macro_error"
    message: str = ""

    def describe(self) -> str:
        return "macros"

    async def produce(self, tctx: Any, case: Case, repeat: int) -> Output:
        raise TargetFailure(self.message)


class ClassTarget(AgentClassTarget):
    """An agent class given as a Python class (RegressionRunner), not a dotted path."""

    python_class: Any = Field(None, exclude=True)

    def problem(self, root: Path) -> str | None:
        return None  # given from Python: the caller's own code

    async def _built(self, root: Path) -> Any:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._agent is None:
                self._agent = await self.build_agent(self.python_class, root)
            return self._agent


def model_label(entry: dict[str, Any] | None) -> str:
    """A model entry as the report shows it: `gpt-4o (temperature 0.1)`."""
    if entry is None:
        return "default"
    name = entry.get("model_id") or entry.get("model") or entry.get("name")
    rest = ", ".join(f"{k} {v}" for k, v in entry.items() if v is not name)
    if name is None:
        return rest or "default"
    return f"{name} ({rest})" if rest else str(name)


def merged_config(config: dict[str, Any] | None, entry: dict[str, Any] | None) -> Any:
    if entry is None:
        return copy.deepcopy(config)
    merged = copy.deepcopy(config) if config is not None else {}
    model = merged.get("model")
    merged["model"] = {**(model if isinstance(model, dict) else {}), **entry}
    return merged


class _Builder:
    def __init__(self, loaded: Loaded, options: ScenarioOptions, root: Path) -> None:
        self.loaded = loaded
        self.spec: ScenarioFileSpec = loaded.spec
        self.options = options
        self.root = root
        self.issues: list[Issue] = []
        self.targets: dict[str, Target] = {}
        self.catalog: ModelCatalog | None = None
        self.checked: set[str] = set()
        self.config_files: dict[str, dict[str, Any] | None] = {}  # the file's, read once

    def pick(self, scenario: ScenarioSpec, name: str) -> Any:
        mine = getattr(scenario, name)
        return mine if mine is not None else getattr(self.spec, name)

    def agent_config(self, scenario: ScenarioSpec, where: Loc) -> dict[str, Any] | None:
        given: dict[str, Any] | str | None = self.pick(scenario, "agent_config")
        if not isinstance(given, str):
            return given
        if scenario.agent_config is not None:
            return self.config_file(given, where)
        if given not in self.config_files:  # the file's setting: read, and reported, once
            self.config_files[given] = self.config_file(given, ())
        return copy.deepcopy(self.config_files[given])

    def config_file(self, given: str, at: Loc) -> dict[str, Any] | None:
        """An agent_config file, as the reference finds it: `$VAR`s expanded, relative to the
        scenario file's folder (or absolute); it must lie under the project root."""
        expanded = Path(os.path.expandvars(given))
        folder = self.loaded.path.resolve().parent
        wanted = expanded if expanded.is_absolute() else folder / expanded
        try:
            # relative to the root for engine/paths.inside, which follows links and `..`
            relative = Path(os.path.relpath(wanted, self.root))
            path = inside(self.root, relative, "agent_config file")
        except (PathError, ValueError) as exc:  # never read, so never stored nor shown
            message = exc.message if isinstance(exc, PathError) else str(exc)
            if given != str(relative):
                message += f" ('{given}' is read relative to the scenario file's folder)"
            self.issues.append(self.loaded.issue((*at, "agent_config"), message))
            return None
        problem = f"agent_config file '{given}' not found: {wanted}"
        if path.is_file():
            data, _marks = parse_yaml(read_text(path), path)
            if data is None:
                return None
            if isinstance(data, dict):
                return {str(k): v for k, v in data.items()}
            problem = f"agent_config file '{given}' does not hold a mapping"
        self.issues.append(self.loaded.issue((*at, "agent_config"), problem))
        return None

    def check_judge(self, scenario: ScenarioSpec, judge: str | None, where: Loc) -> None:
        """A judge model that resolves (config.yml's, `local`, or provider/model), else an
        issue at the line that named it."""
        if judge is None or self.catalog is None or judge in self.checked:
            return
        self.checked.add(judge)
        problem = self.catalog.problem(judge)
        if problem is None:
            return
        if scenario.judge_model_id == judge:
            self.issues.append(self.loaded.issue((*where, "judge_model_id"), problem))
        elif self.spec.judge_model_id == judge:
            self.issues.append(self.loaded.issue(("judge_model_id",), problem))
        else:
            self.issues.append(Issue(None, None, None, "--judge-model", problem))

    def target(
        self, agent: Any, config: Any, entry: dict[str, Any] | None, where: Loc, name: str
    ) -> str:
        """The key of the target answering with `agent`, `config` and agent name `name`
        (built once per key)."""
        if isinstance(agent, dict):
            try:
                target: Target = target_from(agent)
            except ValueError as exc:
                self.issues.append(self.loaded.issue((*where, "agent_class"), str(exc)))
                return "invalid"
            if entry is not None and target.type == "model" and entry.get("model_id"):
                target = target.model_copy(update={"model": entry["model_id"]})
        elif isinstance(agent, type):
            target = ClassTarget.model_construct(
                type="agent_class", agent_class=f"{agent.__module__}.{agent.__qualname__}",
                config=config, python_class=agent, timeout=self.spec.timeout, agent_name=name,
            )  # fmt: skip
        else:
            target = AgentClassTarget(
                agent_class=agent, config=config, timeout=self.spec.timeout, agent_name=name
            )
        text = json.dumps([str(agent), config, name], sort_keys=True, default=str)
        key = f"agent-{hashlib.sha256(text.encode()).hexdigest()[:12]}"
        if key not in self.targets:
            self.check_target(target, where)
        self.targets.setdefault(key, target)
        return key

    def check_target(self, target: Target, where: Loc) -> None:
        """Refuse, at the line that named it, an agent that is not the project's own (a
        command target's program passes the door: engine/programs.admit)."""
        problem = target.problem(self.root) or target.admission(self.loaded.path, self.root)
        if problem is None:
            return
        scenario = self.spec.scenarios[int(where[-1])]
        if scenario.agent_class is not None:
            self.issues.append(self.loaded.issue((*where, "agent_class"), problem))
        elif self.spec.agent_class is not None:
            self.issues.append(self.loaded.issue(("agent_class",), problem))
        else:
            self.issues.append(Issue(None, None, None, "--agent-class", problem))

    def cases(self, index: int, scenario: ScenarioSpec, seed: int) -> list[Case]:
        where: Loc = ("scenarios", index)
        agent = self.pick(scenario, "agent_class") or self.options.agent_class
        if agent is None:
            problem = "no agent_class: give the scenario or the file one, or pass --agent-class"
            self.issues.append(self.loaded.issue(where, problem))
            return []
        config = self.agent_config(scenario, where)
        models = self.pick(scenario, "agent_model_config")
        entries = models if isinstance(models, list) else [models]
        threshold = self.pick(scenario, "pass_threshold")
        if threshold is None:
            threshold = self.options.pass_threshold
        agent_name = self.pick(scenario, "agent_name") or self.loaded.path.stem
        judge = self.pick(scenario, "judge_model_id") or self.options.judge_model
        self.check_judge(scenario, judge, where)
        context = MacroContext(
            project_root=self.root, seed=seed_for(seed, scenario.name),
            allow_env=frozenset(self.spec.allow_env), allow_hosts=frozenset(self.spec.allow_hosts),
            macro_functions=self.options.macro_functions,
        )  # fmt: skip
        texts = [scenario.input_message, scenario.expected_output, scenario.evaluation_criteria]
        failure = None
        try:
            texts = [None if t is None else expand(t, context) for t in texts]
        except MacroError as exc:
            failure = f"scenario '{scenario.name}': {exc.message}"
        out: list[Case] = []
        for entry in entries:
            label = model_label(entry)
            config_for = merged_config(config, entry)
            key = self.target(agent, config_for, entry, where, agent_name)
            if failure is not None:
                key = f"macros-{index}"
                self.targets[key] = MacroFailure(message=failure)
            metadata = {
                "scenario": scenario.name, "description": scenario.description, "model": label,
                "agent": agent if isinstance(agent, str) else
                getattr(agent, "__qualname__", None) or json.dumps(agent, default=str),
                "criteria": texts[2], "pass_threshold": DEFAULT_THRESHOLD if threshold is None
                else threshold, "metrics": list(self.pick(scenario, "metrics") or BUILTIN_METRICS),
                "judge_model": judge, "agent_config": config_for, "seed": context.seed,
                "run_seed": seed, "agent_name": agent_name,
                "config_overrides": copy.deepcopy(scenario.config_overrides),
            }  # fmt: skip
            case_id = scenario.name if len(entries) == 1 else f"{scenario.name} [{label}]"
            out.append(Case(
                id=case_id, input=texts[0], expected=texts[1], criteria=texts[2], target=key,
                judge_model=judge, metadata=metadata,
                line=self.loaded.marks.find(where)[0],
            ))  # fmt: skip
        return out


def _refuse_env_to_hosts(builder: _Builder, path: Path, root: Path) -> None:
    """`allow_env` with `allow_hosts`: ENV's values may go in an HTTP_GET to hosts the file
    names (a header, the URL): a destination for the environment's values the file chose,
    which only a file the user trusts may have (engine/keys.py)."""
    from .....engine import keys

    spec = builder.spec
    if not (spec.allow_env and spec.allow_hosts):
        return
    refused = keys.destination_refusal(
        path, root, url=", ".join(spec.allow_hosts), key=", ".join(spec.allow_env),
        what="HTTP_GET (allow_hosts) with ENV (allow_env) ",
        instead="Leave out allow_env or allow_hosts, so that no value of the environment can "
        "reach a host this file names",
    )  # fmt: skip
    if refused is not None:  # before any macro runs: cases expand their inputs as built
        raise ValidationError([builder.loaded.issue(("allow_hosts",), refused)])


def load_scenario_file(path: Path, options: ScenarioOptions, *, text: str | None = None) -> Suite:
    """Validate a scenario file and build its suite; every problem at once, with lines.
    `text`: the file's, read already."""
    from .....engine.project import load_project

    root = options.root_for(path)
    project = load_project(root)
    loaded = load_spec(path, ScenarioFileSpec, kind="scenario", text=text)
    builder = _Builder(loaded, options, root)
    builder.catalog = ModelCatalog(project.config)
    _refuse_env_to_hosts(builder, path, root)
    seen: dict[str, int] = {}
    cases: list[Case] = []
    for index, scenario in enumerate(builder.spec.scenarios):
        if scenario.name in seen:
            also = f"also scenario {seen[scenario.name] + 1}"
            problem = f"duplicate scenario name '{scenario.name}' ({also})"
            builder.issues.append(loaded.issue(("scenarios", index, "name"), problem))
        seen[scenario.name] = index
        cases += builder.cases(index, scenario, options.seed or 0)
    if builder.issues:  # a file-level setting's problem, found for each scenario, shown once
        raise ValidationError(list(dict.fromkeys(builder.issues)))
    judge = options.judge_model or project.default_judge
    for case in cases:
        if case.metadata["judge_model"] is None:
            case.metadata["judge_model"] = judge
    return Suite(
        id=path.stem, cases=cases, targets=builder.targets,
        evaluators=(ScenarioJudge(type=NAME),), judge_model=judge, path=path, project=project,
        max_concurrency=options.concurrency,
    )  # fmt: skip

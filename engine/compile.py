"""Spec -> Plan: template references become the edges of a DAG; cycles are errors.

The hot path orders the graph with the standard library's `graphlib` (networkx costs ~70 ms
to import, a quarter of `accord validate`'s budget); `Plan.to_networkx()` gives the same graph
as a networkx DiGraph for analysis.

The compiler knows no task type: it asks each spec for its templates, the names it defines
for itself, its nested task lists and the files it reads.
"""

from __future__ import annotations

import dataclasses
import graphlib
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import render
from .databases import missing_library, unreachable
from .errors import CycleError, Issue, LoadError, ValidationError, did_you_mean
from .kinds import sections, task_type
from .loader import Loaded, is_workflow_file, load_workflow
from .paths import PathError, inside, is_inside, written_by_accord
from .plan import Plan, PlannedTask
from .project import Project, database_issue
from .render import BUILTIN_NAMES, TemplateError, referenced_names
from .spec import InvalidTask, TaskSpec, VariableSpec, variable_spec
from .variables import default_problem
from .yamlmarks import Loc, Marks, format_path


@dataclass
class _Scope:
    """The names of one task list while it compiles."""

    loc: Loc
    siblings: frozenset[str]
    known: frozenset[str]
    sequential: bool
    name: str
    outer_refs: set[str] = field(default_factory=set)


@dataclass
class _FileCompiler:
    """Compiles one workflow file, collecting every issue before raising."""

    loaded: Loaded
    root: Path
    stack: tuple[Path, ...]
    cache: dict[Path, Plan]
    project: Project | None = None
    issues: list[Issue] = field(default_factory=list)
    # what Oxy accepts and accord can only run in part, named by validate without failing it
    notes: list[Issue] = field(default_factory=list)
    _said: dict[str, int] = field(default_factory=dict)
    _repeats: dict[str, list[int]] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.loaded.path

    @property
    def oxy_file(self) -> bool:
        """An Oxy procedure or automation (not a .workflow.yml written for accord)."""
        return self.path.name.endswith(_OXY_SUFFIXES)

    def issue_once(self, loc: Loc, message: str) -> None:
        """One issue per cause: a message said already (the same broken topic behind every
        query of a workflow) gains the line of each repeat instead of a copy."""
        line, _column = self.marks.find(loc)
        first = self._said.get(message)
        if first is None:
            self._said[message] = len(self.issues)
            self.issue(loc, message)
            return
        issue = self.issues[first]
        lines = self._repeats.setdefault(message, [])
        lines.append(line or 0)
        also = ", ".join(str(n) for n in lines)
        self.issues[first] = dataclasses.replace(
            issue, message=f"{message} (also for line{'s' if len(lines) > 1 else ''} {also})"
        )

    def note(self, loc: Loc, message: str) -> None:
        line, column = self.marks.find(loc)
        self.notes.append(Issue(self.path, line, column, format_path(loc), message))

    @property
    def marks(self) -> Marks:
        return self.loaded.marks

    def issue(self, loc: Loc, message: str, *, key: bool = False) -> None:
        line, column = self.marks.find(loc, key=key)
        self.issues.append(Issue(self.path, line, column, format_path(loc), message))

    def compile_scope(
        self,
        tasks: list[TaskSpec],
        loc: Loc,
        visible: frozenset[str],
        *,
        sequential: bool,
        name: str,
        variables: dict[str, VariableSpec],
        workflow: Any = None,
    ) -> Plan:
        siblings = self.sibling_index(tasks, loc, variables)
        scope = _Scope(loc, frozenset(siblings), visible | frozenset(siblings), sequential, name)
        deps_of: dict[str, set[str]] = {}
        children_of: dict[str, dict[str, Plan]] = {}
        for index, task in enumerate(tasks):
            deps_of[task.name], children_of[task.name] = self.compile_task(task, index, scope)
        if sequential:
            for before, after in itertools.pairwise(tasks):
                deps_of[after.name].add(before.name)
        order = self.check_cycles(deps_of, tasks, loc)
        priority = _priorities(order, deps_of) if not self.issues else {}
        planned = tuple(
            PlannedTask(
                name=task.name,
                spec=task,
                order=index,
                deps=tuple(sorted(deps_of.get(task.name, ()), key=lambda d: siblings.get(d, 0))),
                priority=priority.get(task.name, 1),
                container=not isinstance(task, InvalidTask)
                and (task_type(task.type).container or bool(children_of.get(task.name))),
                line=self.marks.find((*loc, index))[0],
                children=children_of.get(task.name, {}),
            )
            for index, task in enumerate(tasks)
        )
        return Plan(
            name=name,
            path=self.path,
            root=self.root,
            tasks=planned,
            variables=variables,
            outer_refs=frozenset(scope.outer_refs),
            workflow=workflow,
            description=getattr(workflow, "description", None),
            sections={
                section.name: getattr(self.loaded.spec, section.name, None)
                for section in sections("workflow")
            },
        )

    def sibling_index(
        self, tasks: list[TaskSpec], loc: Loc, variables: dict[str, VariableSpec]
    ) -> dict[str, int]:
        """Task name -> position; duplicates and clashes with variables are issues."""
        siblings: dict[str, int] = {}
        for index, task in enumerate(tasks):
            if isinstance(task, InvalidTask) and (not task.name or task.name in siblings):
                continue
            if task.name in siblings:
                first = format_path((*loc, siblings[task.name]))
                self.issue(
                    (*loc, index, "name"),
                    f"duplicate task name '{task.name}' (first used by {first}): rename one",
                )
            elif task.name in variables:
                self.issue(
                    (*loc, index, "name"),
                    f"task name '{task.name}' is also a variable name: rename one of them",
                )
            else:
                siblings[task.name] = index
        return siblings

    def compile_task(
        self, task: TaskSpec, index: int, scope: _Scope
    ) -> tuple[set[str], dict[str, Plan]]:
        """The task's dependencies in its scope, and its compiled children."""
        deps: set[str] = set()
        if isinstance(task, InvalidTask):
            return deps, {}
        task_loc = (*scope.loc, index)
        for field_loc, source in task.templates():
            names = self.template_names((*task_loc, *field_loc), source)
            self.resolve(names - task.local_names(), task, (*task_loc, *field_loc), scope, deps)
        for field_loc, relative in task.template_files():
            names = self.file_names((*task_loc, *field_loc), relative)
            self.resolve(names - task.local_names(), task, (*task_loc, *field_loc), scope, deps)
        for field_loc, ref in task.references():
            self.resolve({ref}, task, (*task_loc, *field_loc), scope, deps)
        for pos, dep in enumerate(task.depends_on):
            if dep not in scope.siblings:
                self.issue(
                    (*task_loc, "depends_on", pos),
                    f"depends_on names unknown task '{dep}'{did_you_mean(dep, scope.siblings)}",
                )
            elif dep == task.name:
                self.issue((*task_loc, "depends_on", pos), "a task cannot depend on itself")
            else:
                deps.add(dep)
        self.check_sources(task, task_loc)
        self.check_databases(task, task_loc)
        children: dict[str, Plan] = {}
        for child_scope in task.child_scopes():
            child = self.compile_scope(
                child_scope.tasks,
                (*task_loc, *child_scope.field),
                scope.known | child_scope.names,
                sequential=scope.sequential,
                name=f"{scope.name}.{task.name}.{child_scope.label}",
                variables={},
            )
            children[child_scope.label] = child
            for ref in child.outer_refs - child_scope.names:
                if ref in scope.siblings:
                    deps.add(ref)
                else:
                    scope.outer_refs.add(ref)
        for field_loc, src in task.subworkflows():
            plan = self.compile_child_file((*task_loc, *field_loc), src)
            if plan is not None:
                children[f"workflow:{src}"] = plan
                self.check_child_variables(task, task_loc, src, plan)
        deps.discard(task.name)
        return deps, children

    def template_names(self, loc: Loc, source: str) -> frozenset[str]:
        try:
            return referenced_names(source) - BUILTIN_NAMES
        except TemplateError as exc:
            self.issue(loc, str(exc))
            return frozenset()

    def resolve(
        self,
        names: frozenset[str] | set[str],
        task: TaskSpec,
        loc: Loc,
        scope: _Scope,
        deps: set[str],
    ) -> None:
        """Each name is a sibling (an edge), an outer name, or an error."""
        for ref in sorted(names):
            if ref in scope.siblings:
                if ref == task.name:
                    self.issue(loc, f"task '{task.name}' refers to its own output")
                deps.add(ref)
            elif ref in scope.known:
                scope.outer_refs.add(ref)
            elif self.oxy_file:
                # Oxy renders an unknown name as empty and its validate passes: said here,
                # and the task stops when it renders the name (accord never renders it empty)
                self.note(
                    loc,
                    f"unknown name '{ref}': Oxy renders it as empty; accord stops this task "
                    f"when it renders it{did_you_mean(ref, scope.known)}",
                )
            else:
                self.issue(
                    loc,
                    f"unknown name '{ref}': no task, variable or loop value is called that"
                    f"{did_you_mean(ref, scope.known)}",
                )

    def file_names(self, loc: Loc, relative: str) -> frozenset[str]:
        path = self.root / relative
        if not path.is_file() or not is_inside(self.root, relative):
            return frozenset()  # reported by check_sources
        try:
            return referenced_names(path.read_text(encoding="utf-8")) - BUILTIN_NAMES
        except (OSError, UnicodeDecodeError) as exc:
            self.issue(loc, f"cannot read '{relative}': {exc}")
        except TemplateError as exc:
            self.issue(loc, f"in '{relative}': {exc}")
        return frozenset()

    def check_databases(self, task: TaskSpec, task_loc: Loc) -> None:
        if self.project is None:
            return
        for field_loc, message in task.project_issues(self.project):
            self.issue_once((*task_loc, *field_loc), message)
        for field_loc, name in task.databases():
            resolved = name if name is not None else self.project.default_database
            if resolved is None and not self.project.databases:
                self.issue(
                    (*task_loc, *field_loc) if name else task_loc,
                    "the project has no database: put CSV or Parquet files in a '.db/' folder in "
                    f"the project root ({self.root}) for a DuckDB database "
                    "named 'local', or declare one in config.yml, e.g. 'databases: [{name: "
                    "sales, type: duckdb, dataset: data}]'",
                )
            elif resolved is None:
                self.issue(
                    (*task_loc, *field_loc) if name else task_loc,
                    "no database given and the project has no default: add "
                    "'database: <name>' (databases: "
                    f"{', '.join(sorted(self.project.databases))})",
                )
            elif not self.project.databases:
                self.issue(
                    (*task_loc, *field_loc),
                    f"unknown database '{resolved}': the project has none; declare it in "
                    f"config.yml ({self.root / 'config.yml'}), e.g. 'databases: [{{name: "
                    f"{resolved}, type: duckdb, dataset: data}}]', or put CSV or Parquet files "
                    "in a '.db/' folder for a DuckDB database named 'local'",
                )
            elif resolved not in self.project.databases:
                known = frozenset(self.project.databases)
                self.issue(
                    (*task_loc, *field_loc),
                    f"unknown database '{resolved}'{did_you_mean(resolved, known)} "
                    f"(databases: {', '.join(sorted(known))})",
                )
            elif (problem := unreachable(self.project.databases[resolved])) is not None:
                # Oxy's validate passes; the task fails only when it runs
                self.note(
                    (*task_loc, *field_loc) if name else task_loc,
                    f"task '{task.name}': {problem}; the task fails when it runs",
                )
            elif (missing := missing_library(self.project.databases[resolved])) is not None:
                # at the database's line of config.yml, once however many tasks use it
                issue = database_issue(self.project, resolved, missing)
                if issue not in self.issues:
                    self.issues.append(issue)

    def check_sources(self, task: TaskSpec, task_loc: Loc) -> None:
        for field_loc, relative in task.sources():
            if "{{" in relative or "{%" in relative:
                continue  # rendered at run time
            try:
                inside(self.root, relative, "file")
            except PathError as exc:
                self.issue((*task_loc, *field_loc), exc.message)
                continue
            if not (self.root / relative).is_file():
                self.issue(
                    (*task_loc, *field_loc), f"file '{relative}' not found under {self.root}"
                )
        export = task.export
        if export is not None and "{" not in export.path:
            try:
                written_by_accord(self.root, export.path, "export path")
            except PathError as exc:
                self.issue((*task_loc, "export", "path"), exc.message)

    def compile_child_file(self, loc: Loc, src: str) -> Plan | None:
        if "{{" in src:
            self.issue(loc, "a sub-workflow 'src' must be a fixed path, not a template")
            return None
        try:
            inside(self.root, src, "sub-workflow")
        except PathError as exc:
            self.issue(loc, exc.message)
            return None
        target = (self.root / src).resolve()
        if not target.is_file():
            self.issue(loc, f"file '{src}' not found under {self.root}")
            return None
        if target in self.stack:
            chain = " -> ".join(p.name for p in (*self.stack, target))
            self.issue(loc, f"sub-workflows include each other: {chain}")
            return None
        try:
            return compile_file(
                target, self.root, stack=self.stack, cache=self.cache, project=self.project
            )
        except (ValidationError, LoadError) as exc:
            self.issue(loc, f"in sub-workflow '{src}':\n{exc}")
            return None

    def check_child_variables(self, task: TaskSpec, task_loc: Loc, src: str, plan: Plan) -> None:
        """The variables a task passes to its sub-workflow match what the child declares."""
        given = task.child_variables()
        if given is None:
            return
        for name, spec in plan.variables.items():
            if name not in given and not spec.has_default:
                self.issue(
                    task_loc,
                    f"sub-workflow '{src}' requires variable '{name}' (it has no default): "
                    "add it under this task's variables:",
                )
        declared = frozenset(plan.variables)
        for name in sorted(given - declared):
            self.issue(
                (*task_loc, "variables", name),
                f"sub-workflow '{src}' declares no variable '{name}'{did_you_mean(name, declared)} "
                f"(declared: {', '.join(sorted(declared)) or 'none'})",
            )

    def check_cycles(
        self, deps_of: dict[str, set[str]], tasks: list[TaskSpec], loc: Loc
    ) -> list[str]:
        """The tasks in an order where each comes after its dependencies, or a CycleError
        that prints the cycle (`a -> b -> a`) with the line of each task."""
        try:
            return list(graphlib.TopologicalSorter(deps_of).static_order())
        except graphlib.CycleError as exc:
            cycle = list(reversed(exc.args[1]))[:-1]  # data flows dependency -> dependant
        index = {t.name: i for i, t in enumerate(tasks)}
        chain = " -> ".join([*cycle, cycle[0]])
        where = ", ".join(
            f"{n} at line {self.marks.find((*loc, index[n]))[0]}" for n in cycle if n in index
        )
        line, column = self.marks.find((*loc, index[cycle[0]]))
        raise CycleError(
            [
                *self.issues,
                Issue(
                    self.path,
                    line,
                    column,
                    format_path((*loc, index[cycle[0]])),
                    f"cycle: {chain} ({where}); remove one of these references",
                ),
            ]
        )


def _priorities(order: list[str], deps_of: dict[str, set[str]]) -> dict[str, int]:
    """Longest path (in tasks) from each task to the end of the scope, itself included."""
    priority = dict.fromkeys(order, 1)
    for node in reversed(order):
        for dep in deps_of.get(node, ()):
            priority[dep] = max(priority[dep], priority[node] + 1)
    return priority


def compile_file(
    path: Path,
    root: Path,
    *,
    stack: tuple[Path, ...] = (),
    cache: dict[Path, Plan] | None = None,
    project: Project | None = None,
) -> Plan:
    """Load and compile a workflow file into a Plan, or raise every issue found."""
    cache = {} if cache is None else cache
    resolved = path.resolve()
    if resolved in cache:
        return cache[resolved]
    loaded = load_workflow(path)
    spec = loaded.spec
    compiler = _FileCompiler(loaded, root, (*stack, resolved), cache, project)
    compiler.issues.extend(loaded.issues)
    variables = {name: variable_spec(v) for name, v in spec.variables.items()}
    for name, var in variables.items():
        problem = default_problem(name, var)
        if problem is not None:
            compiler.issue(("variables", name, "default"), problem)
    visible = frozenset(variables)
    plan = compiler.compile_scope(
        list(spec.tasks),
        ("tasks",),
        visible,
        sequential=spec.execution == "sequential",
        name=spec.name or _stem(path),
        variables=variables,
        workflow=spec,
    )
    lines = {name: compiler.marks.find(("variables", name), key=True)[0] or 0 for name in variables}
    plan = dataclasses.replace(plan, variable_lines=lines, notes=tuple(compiler.notes))
    for section in sections("workflow"):
        value = getattr(spec, section.name, None)
        if section.check is not None and value is not None:
            for loc, problem in section.check(value, plan):
                compiler.issue(loc, problem)
    if compiler.issues:
        compiler.issues.sort(key=lambda i: (i.line or 0, i.column or 0))
        raise ValidationError(compiler.issues)
    cache[resolved] = plan
    return plan


_OXY_SUFFIXES = (".procedure.yml", ".procedure.yaml", ".automation.yml", ".automation.yaml")


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".workflow.yml", ".workflow.yaml", ".procedure.yml", ".automation.yml"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem


def compile_workflow(path: Path, keep_templates: bool = True) -> tuple[Project, Plan]:
    """Load the file's project and compile the file, raising every problem found;
    `keep_templates=False` leaves the project's template cache as it is."""
    if not path.exists():
        raise LoadError(f"{path}: file not found")
    if path.is_dir():
        raise LoadError(f"{path}: is a folder; give a .workflow.yml file")
    if not is_workflow_file(path):
        raise LoadError(
            f"{path}: not a workflow file: expected a name ending in .workflow.yml "
            "(or Oxy's .procedure.yml / .automation.yml)"
        )
    from .project import load_project

    project = load_project(path)
    # checked templates' names and compiled code from earlier runs: an unchanged workflow
    # parses no template again (`accord validate` reads the cache, writes nothing)
    render.use_template_cache(project.root, writable=keep_templates)
    plan = compile_file(path, project.root, project=project)
    return project, plan

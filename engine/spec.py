"""Pydantic models of the files: workflow, config, and the base every task spec extends.

Every model forbids unknown keys. Keys that Oxy's files use and accord does not are declared
with `oxy_ignored()`: accepted, documented in the JSON Schema, and logged at debug level.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from .databases import DatabaseSpec
from .specbase import Spec as Spec
from .specbase import oxy_ignored as oxy_ignored

NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
TaskName = Annotated[str, Field(pattern=NAME_PATTERN, description="Unique name of the task.")]


class RetrySpec(Spec):
    """Re-run a failed task: `attempts` in all, waiting `backoff * 2**k` seconds between."""

    attempts: int = Field(1, ge=1, le=100, description="Total attempts, including the first.")
    backoff: float = Field(
        1.0,
        ge=0,
        le=300,
        allow_inf_nan=False,
        description="Seconds before the first retry; doubles (each wait at most 300 s).",
    )


class CacheSpec(Spec):
    """Oxy's pinned cache: the task's output is written to `path` and reused while it exists."""

    enabled: bool = Field(False, description="Use the cache file.")
    path: str | None = Field(None, description="File (relative to the project root).")


class ExportSpec(Spec):
    """Write the task's output to a file after it succeeds; a failed export fails the task."""

    path: str = Field(description="Target file, relative to the project root (Jinja).")
    format: str = Field(
        description="A registered export format: csv, json, sql (tables); txt, md, docx (text).",
        json_schema_extra={"examples": ["csv", "json", "sql", "txt", "md", "docx"]},
    )

    @field_validator("format")
    @classmethod
    def _registered(cls, value: str) -> str:
        from .export import EXPORT_FORMATS

        if value not in EXPORT_FORMATS:
            raise ValueError(EXPORT_FORMATS.unknown(value))
        return value


@dataclass(frozen=True)
class ChildScope:
    """Tasks nested inside a container task, and the extra names visible to them."""

    label: str
    field: tuple[str | int, ...]
    tasks: list[TaskSpec]
    names: frozenset[str]


class TaskSpec(Spec):
    """Fields common to every task. Each task type extends this with its own `type` tag."""

    name: TaskName
    type: str
    depends_on: list[TaskName] = Field(
        default_factory=list, description="Tasks that must finish first (side effects)."
    )
    retry: RetrySpec | None = Field(
        None, description="Retry policy for this task; a number is Oxy's attempts (`retry: 3`)."
    )
    timeout: float | None = Field(
        None, gt=0, allow_inf_nan=False, description="Seconds before the task is failed."
    )
    cache: CacheSpec | None = Field(None, description="Pinned output cache (Oxy).")
    export: ExportSpec | None = Field(None, description="Write the output to a file.")
    mode: Literal["client", "server"] | None = Field(
        None,
        description="Oxy's place for a data app's task: its browser (client) or its server. "
        "accord runs every task the same way; the key is accepted so Oxy's files load.",
    )

    @field_validator("retry", mode="before")
    @classmethod
    def _attempts(cls, value: Any) -> Any:
        """Oxy's `retry: 3`: three attempts in all, with the default backoff."""
        if isinstance(value, int) and not isinstance(value, bool):
            return {"attempts": max(value, 1)}  # Oxy's `retry: 0` also means one attempt
        return value

    def templates(self) -> Iterable[tuple[tuple[str | int, ...], str]]:
        """(field path, Jinja source) of every template rendered in this task's scope."""
        if self.export is not None:
            yield ("export", "path"), self.export.path
        if self.cache is not None and self.cache.path is not None:
            yield ("cache", "path"), self.cache.path

    def local_names(self) -> frozenset[str]:
        """Names defined by the task itself for its own templates (its `variables`)."""
        return frozenset()

    def references(self) -> Iterable[tuple[tuple[str | int, ...], str]]:
        """Task names referenced outside templates (e.g. visualize `data`)."""
        return ()

    def child_scopes(self) -> list[ChildScope]:
        """Nested task lists compiled as sub-plans."""
        return []

    def sources(self) -> Iterable[tuple[tuple[str | int, ...], str]]:
        """Files the task reads, relative to the root, checked at validate time."""
        return ()

    def input_files(self, root: Path) -> Iterable[Path]:
        """Files whose content decides the output beyond `sources` (a semantic query's view
        and topic files): `--resume` reuses an output only while they are unchanged."""
        return ()

    def databases(self) -> Iterable[tuple[tuple[str | int, ...], str | None]]:
        """Databases the task queries (None: the project default)."""
        return ()

    def limit_names(self) -> tuple[str, ...]:
        """Named scheduler limits the task takes a slot of (besides its databases')."""
        return ()

    def template_files(self) -> Iterable[tuple[tuple[str | int, ...], str]]:
        """Files (relative to the root) whose text is a template rendered in this scope."""
        return ()

    def project_issues(self, project: Any) -> Iterable[tuple[tuple[str | int, ...], str]]:
        """Problems only the project can reveal (agent files, model names)."""
        return ()

    def child_variables(self) -> frozenset[str] | None:
        """Names of the variables passed to the sub-workflow (None: no sub-workflow)."""
        return None

    def subworkflows(self) -> Iterable[tuple[tuple[str | int, ...], str]]:
        """Workflow files compiled as children of this task."""
        return ()


def variable_templates(variables: Mapping[str, Any]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """(field path, Jinja source) of each text value of a task's `variables`."""
    for name, value in variables.items():
        if isinstance(value, str):
            yield ("variables", name), value


class InvalidTask(TaskSpec):
    """Stands in for a task that failed validation, so the rest of the file still compiles
    and every problem of the file is reported at once. Never runs."""

    type: str = "invalid"


JSONType = Literal["string", "integer", "number", "boolean", "array", "object", "null"]


class VariableSpec(Spec):
    """A workflow variable described in JSON Schema (Draft 7 keywords)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    type: JSONType | list[JSONType] | None = None
    default: Any = None
    enum: list[Any] | None = None
    const: Any = None
    description: str | None = None
    title: str | None = None
    examples: list[Any] | None = None
    items: dict[str, Any] | None = None
    properties: dict[str, Any] | None = None
    required: list[str] | None = None
    additional_properties: Any = Field(None, alias="additionalProperties")
    minimum: int | float | None = None
    maximum: int | float | None = None
    exclusive_minimum: int | float | None = Field(None, alias="exclusiveMinimum")
    exclusive_maximum: int | float | None = Field(None, alias="exclusiveMaximum")
    min_length: int | None = Field(None, alias="minLength")
    max_length: int | None = Field(None, alias="maxLength")
    pattern: str | None = None
    format: str | None = None
    min_items: int | None = Field(None, alias="minItems")
    max_items: int | None = Field(None, alias="maxItems")
    unique_items: bool | None = Field(None, alias="uniqueItems")

    @property
    def has_default(self) -> bool:
        return "default" in self.model_fields_set

    def json_schema(self) -> dict[str, Any]:
        """The schema as a plain JSON-Schema document (without `default`)."""
        out = self.model_dump(by_alias=True, exclude_none=True, exclude={"default"})
        return out


Variable = VariableSpec | str | int | float | bool | list[Any] | None


def variable_spec(value: Variable) -> VariableSpec:
    """A scalar (or list) given as a variable is its own default."""
    if isinstance(value, VariableSpec):
        return value
    return VariableSpec(default=value)


class WorkflowSpecBase(Spec):
    """Top level of a `.workflow.yml` (also `.procedure.yml`, `.automation.yml`)."""

    name: str | None = Field(None, description="Defaults to the file stem.")
    description: str | None = None
    variables: dict[str, Variable] = Field(default_factory=dict)
    execution: Literal["dag", "sequential"] = Field(
        "dag", description="`sequential` runs tasks in YAML order, as Oxy does."
    )
    max_concurrency: int | None = Field(None, ge=1, description="Cap for this workflow.")
    retrieval: Any = oxy_ignored()


# --- config.yml ---------------------------------------------------------------------------


class ModelSpec(Spec):
    """A model entry: accord's form (`model`) or Oxy's (`vendor` + `model_ref`)."""

    name: str
    model: str | None = Field(None, description="litellm model string, e.g. openai/gpt-4o-mini.")
    vendor: str | None = Field(None, description="Oxy: provider (openai, anthropic, ...).")
    model_ref: str | None = Field(None, description="Oxy: the provider's model name.")
    key_var: str | None = Field(None, description="Env var holding the API key.")
    api_key: str | None = Field(None, description="Literal key (prefer key_var).")
    api_base: str | None = None
    api_base_var: str | None = Field(
        None, description="Env var holding the API base URL (a proxy, a local server)."
    )
    api_url: str | None = Field(None, description="Oxy's name for api_base.")
    api_version: str | None = Field(None, description="Azure OpenAI's API version.")
    headers: dict[str, Any] | None = None
    temperature: float | None = Field(None, ge=0, allow_inf_nan=False)
    seed: int | None = None
    max_tokens: int | None = Field(None, ge=1)
    # request fields of the OpenAI chat API, sent as given (litellm maps them for others)
    response_format: dict[str, Any] | None = Field(
        None, description="JSON mode ({type: json_object}) or a schema ({type: json_schema})."
    )
    top_p: float | None = Field(None, ge=0, le=1, allow_inf_nan=False)
    presence_penalty: float | None = Field(None, ge=-2, le=2, allow_inf_nan=False)
    frequency_penalty: float | None = Field(None, ge=-2, le=2, allow_inf_nan=False)
    stop: str | list[str] | None = Field(None, description="Text(s) that end the answer.")
    rpm: int | None = Field(None, ge=1, description="Requests per minute.")
    tpm: int | None = Field(None, ge=1, description="Tokens per minute.")
    timeout: float | None = Field(None, gt=0, allow_inf_nan=False)
    max_concurrency: int | None = Field(None, ge=1)
    max_retries: int = Field(6, ge=0, le=20, description="Retries on 429, 5xx, timeouts.")
    tools: bool = Field(
        True,
        description="The model takes tool calls (judges then answer by a forced tool call; "
        "false: they answer in text, parsed from the last line).",
    )
    rate_window: float = Field(
        60.0,
        gt=0,
        le=3600,
        allow_inf_nan=False,
        description="Seconds over which rpm and tpm are counted (providers count per minute).",
    )
    azure_deployment_id: Any = oxy_ignored()
    azure_api_version: Any = oxy_ignored()

    @model_validator(mode="after")
    def _has_model(self) -> ModelSpec:
        if self.model is None and self.model_ref is None:
            raise ValueError("give 'model' (a litellm model string) or Oxy's 'model_ref'")
        return self


class DefaultsSpec(Spec):
    """Project defaults."""

    database: str | None = None
    model: str | None = None
    judge_model: str | None = None
    embedding_model: str | None = Field(
        None,
        description="litellm embedding model for semantic_similarity and "
        "response_relevancy (none: a lexical score, and the result says so).",
    )
    agent: str | None = Field(None, description="Oxy: default agent file.")


class TelemetrySpec(Spec):
    """Send each run to an OpenTelemetry collector as a trace (docs/observability.md)."""

    enabled: bool = Field(
        True, description="false: no trace, even with OTEL_EXPORTER_OTLP_ENDPOINT set."
    )
    endpoint: str | None = Field(
        None,
        description="The OTLP endpoint: a base URL (`http://localhost:4318`, `/v1/traces` "
        "added) or the traces URL itself; none: OTEL_EXPORTER_OTLP_ENDPOINT.",
    )
    protocol: Literal["http/protobuf", "grpc"] | None = Field(
        None, description="OTLP over HTTP (protobuf) or gRPC; none: OTEL_EXPORTER_OTLP_PROTOCOL."
    )
    headers: dict[str, str] = Field(
        default_factory=dict,
        description="Headers sent with each export, literal (masked like keys); prefer "
        "headers_var.",
    )
    headers_var: str | None = Field(
        None,
        description="Env var holding the headers as `name=value,name2=value2` (the form of "
        "OTEL_EXPORTER_OTLP_HEADERS).",
    )
    service_name: str | None = Field(
        None, description="The traces' service.name; none: OTEL_SERVICE_NAME, else `accord`."
    )
    content: bool = Field(
        False,
        description="Export prompts, answers, tool arguments and results, SQL and command "
        "lines too (masked); off: only their sizes, names and timings.",
    )
    flush_timeout: float = Field(
        5.0,
        gt=0,
        le=300,
        allow_inf_nan=False,
        description="Seconds a command waits at its end for the last spans to be sent.",
    )


class ConfigSpec(Spec):
    """`config.yml`: databases, models, defaults."""

    databases: list[DatabaseSpec] = Field(default_factory=list)
    models: list[ModelSpec] = Field(default_factory=list)
    defaults: DefaultsSpec = Field(default_factory=DefaultsSpec)
    max_concurrency: int | None = Field(None, ge=1, description="Global concurrency cap.")
    model_workers: int = Field(
        0,
        ge=0,
        le=64,
        description="Deprecated, no effect (a warning says so): model calls run in the run's "
        "own process, which was faster than worker processes on every machine measured.",
    )
    trusted: list[str] = Field(
        default_factory=list,
        description="Globs of project files (relative to the project root, `*` crossing "
        "folders) that may send a key to a URL they name or run a program that is not the "
        "project's own (docs/security.md); `accord trust FILE` trusts one file by its content.",
    )
    executor: Literal["local", "ray"] = Field(
        "local", description="Where node bodies run: this process, or a Ray cluster."
    )
    ray_address: str | None = Field(
        None, description="The Ray cluster (`ray://host:10001`, `auto`); none: a local one."
    )
    telemetry: TelemetrySpec | None = Field(
        None, description="Export runs as OpenTelemetry traces (off without an endpoint)."
    )
    builder_agent: Any = oxy_ignored()
    mcp: Any = oxy_ignored()
    a2a: Any = oxy_ignored()
    storage: Any = oxy_ignored()
    protected_branches: Any = oxy_ignored()
    base_branch: Any = oxy_ignored()
    integrations: Any = oxy_ignored()
    slack: Any = oxy_ignored()
    authentication: Any = oxy_ignored()


# --- .agent.yml ---------------------------------------------------------------------------


class ContextSpec(Spec):
    """Files whose contents the system instructions can use as `{{ context.<name> }}`."""

    name: str
    type: Literal["file", "semantic_model"] = "file"
    src: list[str] | str = Field(description="Glob(s) relative to the project root.")

    @property
    def globs(self) -> list[str]:
        return [self.src] if isinstance(self.src, str) else list(self.src)


class SqlToolSpec(Spec):
    """Let the model run SQL (`execute_sql`) or check it (`validate_sql`)."""

    type: Literal["execute_sql", "validate_sql"]
    name: str | None = Field(None, description="Tool name shown to the model.")
    description: str | None = None
    database: str | None = None
    dry_run_limit: int | None = Field(None, ge=1, description="Rows returned to the model.")
    variables: dict[str, Any] | None = Field(
        None, description="Values the model's SQL may use as {{ name }} (Oxy)."
    )


class WorkflowToolSpec(Spec):
    """Let the model run a workflow and read one task's output."""

    type: Literal["workflow"]
    name: str | None = None
    description: str | None = None
    workflow_ref: str
    variables: dict[str, Any] | None = None
    output_task_ref: str | None = None


class AgentToolSpec(Spec):
    """Let the model ask another agent."""

    type: Literal["agent"]
    name: str | None = None
    description: str | None = None
    agent_ref: str
    variables: dict[str, Any] | None = Field(
        None, description="Variables given to the agent asked (its instructions see them)."
    )


class OxyToolSpec(BaseModel):
    """An Oxy tool type accord does not offer (retrieval, visualize, semantic_query, ...).

    Accepted so Oxy agent files load; it is not offered to the model, with a warning.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    type: Literal[
        "retrieval",
        "visualize",
        "semantic_query",
        "omni_query",
        "create_data_app",
        "edit_data_app",
        "read_data_app",
        "create_v0_app",
        "looker_query",
        "save_automation",
        "dbt_run",
        "dbt_compile",
        "retrieval_sql",
    ]
    name: str | None = None


ToolSpec = Annotated[
    SqlToolSpec | WorkflowToolSpec | AgentToolSpec | OxyToolSpec, Field(discriminator="type")
]


class AnonymizeSpec(Spec):
    """Oxy's `anonymize:`: words of a file are replaced in everything sent to the model and
    restored in what comes back. Paths are relative to the project root."""

    type: Literal["flash_text"] = "flash_text"
    keywords_file: str | None = Field(None, description="One word or phrase per line.")
    mapping_file: str | None = Field(None, description="'original,replacement' per line.")
    delimiter: str = Field(",", min_length=1)
    replacement: str = Field("FLASH", min_length=1, description="Placeholder prefix (keywords).")
    pluralize: bool = False
    case_insensitive: bool = False

    @model_validator(mode="after")
    def _one_source(self) -> AnonymizeSpec:
        if not self.keywords_file and not self.mapping_file:
            raise ValueError("anonymize needs keywords_file or mapping_file")
        return self


class AgentSpec(Spec):
    """An `.agent.yml`: a model, its instructions, context and tools."""

    model: str | None = Field(None, description="Model name from config, or a litellm string.")
    system_instructions: str = Field("", description="Jinja; sees context and databases.")
    context: list[ContextSpec] = Field(default_factory=list)
    tools: list[ToolSpec] = Field(default_factory=list)
    max_tool_calls: int = Field(10, ge=0, le=200)
    max_iterations: int = Field(
        15, ge=1, le=200, description="Model turns with tools offered (Oxy); then it answers."
    )
    description: str | None = None
    variables: dict[str, Variable] = Field(default_factory=dict)
    name: Any = oxy_ignored()
    public: Any = oxy_ignored()
    agent_type: Any = oxy_ignored()
    type: Literal["default", "routing"] = Field(
        "default", description="`routing`: the model picks one of `routes`, which answers."
    )
    routes: list[str] = Field(
        default_factory=list,
        description="Routing: agents, workflows or SQL files (paths or globs from the root).",
    )
    route_fallback: str | None = Field(
        None, description="Routing: the agent, workflow or SQL file used when no route fits."
    )
    synthesize_results: bool = Field(
        True, description="Routing: the model summarises a workflow route's outputs."
    )
    embed_model: Any = oxy_ignored("Oxy's routing retrieval; accord offers every route.")
    n_dims: Any = oxy_ignored()
    top_k: Any = oxy_ignored()
    factor: Any = oxy_ignored()
    table: Any = oxy_ignored()
    db_path: Any = oxy_ignored()
    reasoning: Any = oxy_ignored()
    max_tool_concurrency: Any = oxy_ignored()
    output_format: Any = oxy_ignored()
    anonymize: AnonymizeSpec | None = None
    retrieval: Any = oxy_ignored()

    @model_validator(mode="after")
    def _routing(self) -> AgentSpec:
        if self.type == "routing":
            if not self.routes:
                raise ValueError(
                    "a routing agent needs 'routes': the agents, workflows or SQL "
                    "files it chooses from"
                )
            if self.tools:
                raise ValueError(
                    "a routing agent chooses among its 'routes', not 'tools': "
                    "give the tools to an agent it routes to"
                )
        elif self.routes or self.route_fallback:
            raise ValueError(
                "'routes' and 'route_fallback' belong to a routing agent: add 'type: routing'"
            )
        return self

"""The Ray executor (`--executor ray`, `executor: ray`): node bodies' work on a Ray cluster.

The scheduler, the cache, the run store, retries and usage stay in this process (the driver);
what goes to the cluster, awaited from the event loop:

- model calls: a pool of async `ModelCaller` actors making litellm calls (the call's keyword
  arguments go as plain data, the answer's fields come back; a provider error comes back with
  its kind, status and Retry-After, so the driver's retry policy treats it as in process);
- rate limits: one named `RateLimiter` actor per model holds its rpm/tpm pacing for every
  driver and worker of the cluster;
- SQL queries: one `DatabaseHost` actor per database, holding its connection;
- programs (command targets, code judges, workspace scripts) and the work of evaluators that
  need nothing of the run: Ray tasks.

Secrets never travel in a call's arguments, nor in a `runtime_env` (Ray's runtime-env agent
writes those into its session log, readable by every user of the machine): the job's
environment (the variables config.yml's models name, the providers' `*_API_KEY`-style
variables, and a literal `api_key` under a generated name) is handed to each model-calling
actor when it is created and to each task, which set it in their worker's environment, and
a model call names the variable to read. A worker that
dies mid-call is retried by Ray (actors restart, tasks are resubmitted: `max_task_retries`,
`max_retries`); a lost cluster fails the node with `ExecutorLost`, the run keeps what
finished, and `--resume` (in process, say) finishes it.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import telemetry
from .errors import AccordError, ConfigError, ModelError
from .executor import Executor

if TYPE_CHECKING:
    from .catalog import ModelConfig
    from .databases.base import Database, QueryResult
    from .project import Project

NAMESPACE = "accord"
RETRIES = 3  # a dead worker's call or task is run again this many times
PROVIDER_ENV = re.compile(r"(_API_KEY|_API_BASE|_API_VERSION|_BASE_URL|_ORG_ID|_PROJECT)$")


class ExecutorLost(AccordError):
    """The cluster (or a worker, past its retries) is gone: the node fails, never retried
    here; `--resume` finishes the run."""

    permanent = True


def _lost(exc: BaseException) -> AccordError:
    """A Ray error as accord's: an exception raised by accord's own code in a worker (a bug,
    or a worker without what the work needs) says so; any other is a lost worker or cluster."""
    import ray

    if isinstance(exc, ray.exceptions.RayTaskError):
        cause = exc.cause
        return AccordError(
            f"failed in a Ray worker: {type(cause).__name__}: {cause}", permanent=True
        )
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return ExecutorLost(f"the Ray cluster lost this work: {type(exc).__name__}: {first}")


def job_environment(project: Project) -> tuple[dict[str, str], dict[str, str]]:
    """(the environment the job's workers get, key value -> the variable holding it)."""
    env: dict[str, str] = {}
    names: dict[str, str] = {}
    for name, value in os.environ.items():
        if PROVIDER_ENV.search(name):
            env[name] = value
    for model in project.config.models:
        for var in (model.key_var, model.api_base_var):
            if var and var in os.environ:
                env[var] = os.environ[var]
        if model.key_var and model.key_var in os.environ:
            names[os.environ[model.key_var]] = model.key_var
        if model.api_key:
            var = "ACCORD_SECRET_" + hashlib.sha256(model.name.encode()).hexdigest()[:12]
            env[var] = model.api_key
            names[model.api_key] = var
    return env, names


def _remote_classes() -> dict[str, Any]:
    """The actor classes and remote functions, defined once Ray is imported."""
    return {**_model_actors(), **_data_actors(), **_tasks()}


def _model_actors() -> dict[str, Any]:
    import ray

    @ray.remote(max_restarts=-1, max_task_retries=RETRIES)
    class ModelCaller:
        def __init__(self, job_env: dict[str, str]) -> None:
            os.environ.update(job_env)  # also on a restart: Ray keeps the creation arguments

        async def call(self, kwargs: dict[str, Any], key_env: str | None) -> tuple[bool, Any]:
            from .model_workers import _error_fields, answer_fields
            from .models import load_litellm

            litellm = load_litellm()
            if key_env is not None:
                kwargs = {**kwargs, "api_key": os.environ[key_env]}
            try:
                response = await litellm.acompletion(**kwargs)
                return True, answer_fields(litellm, response)
            except Exception as exc:
                return False, _error_fields(exc)

        def pid(self) -> int:
            return os.getpid()

    @ray.remote(max_restarts=-1, max_task_retries=RETRIES)
    class RateLimiter:
        def __init__(self, rpm: int | None, tpm: int | None, window: float) -> None:
            from .ratelimit import RequestPacer

            self.pacer = RequestPacer(rpm, window) if rpm else None
            self.tpm = tpm
            self.window = window
            self.tokens: Any = None

        async def wait(self, tokens: int) -> None:
            if self.pacer is not None:
                await self.pacer.wait()
            if self.tpm:
                if self.tokens is None:
                    from aiolimiter import AsyncLimiter

                    self.tokens = AsyncLimiter(self.tpm, self.window)
                await self.tokens.acquire(min(tokens, self.tpm))

    return {"ModelCaller": ModelCaller, "RateLimiter": RateLimiter}


def _data_actors() -> dict[str, Any]:
    import ray

    @ray.remote(max_restarts=-1, max_task_retries=RETRIES)
    class DatabaseHost:
        def __init__(self, kind: str, spec: Any, root: Path, datasets: tuple[Path, ...]) -> None:
            from .databases import DATABASES

            opener = DATABASES.get(kind).open
            assert opener is not None
            self.db = opener(spec, root, datasets)

        async def run(self, what: str, sql: str | None, limit: int | None) -> tuple[bool, Any]:
            from .errors import AccordError

            try:
                if what == "columns":
                    return True, await self.db.columns()
                if what == "validate":
                    assert sql is not None
                    await self.db.validate(sql)
                    return True, None
                assert sql is not None
                return True, await self.db.query(sql, limit)
            except AccordError as exc:
                return False, (type(exc).__name__, exc.message)

    return {"DatabaseHost": DatabaseHost}


def _tasks() -> dict[str, Any]:
    import ray

    @ray.remote(num_cpus=0.25, max_retries=RETRIES)
    def run_program(
        argv: list[str], stdin: bytes, cwd: str, timeout: float, env: dict[str, str] | None,
        job_env: dict[str, str],
    ) -> tuple[str, Any]:  # fmt: skip
        import asyncio

        from . import programs

        os.environ.update(job_env)
        # the same run as on this machine: pipes drained, the group killed, output capped
        try:
            done = asyncio.run(programs.run_program(argv, stdin, Path(cwd), timeout, env))
        except OSError as exc:
            return "oserror", exc.strerror or str(exc)
        if done.timed_out:
            return "timeout", None
        return "done", (done.stdout, done.stderr, done.code)

    @ray.remote(max_retries=RETRIES)
    def evaluate(
        evaluator: Any, case: Any, output: Any, job_env: dict[str, str]
    ) -> tuple[str, Any]:
        import asyncio

        from .executor import WorkFailure

        os.environ.update(job_env)
        try:
            return "ok", asyncio.run(evaluator.evaluate(None, case, output))
        except WorkFailure as exc:
            return "failure", str(exc)
        except Exception as exc:
            return "error", f"{type(exc).__name__}: {exc}"

    return {"run_program": run_program, "evaluate": evaluate}


def _reachable(address: str | None) -> None:
    """A `host:port` (or `ray://host:port`) address that takes no connection is an error at
    once: Ray itself waits minutes for it."""
    import socket

    if not address or address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"--ray-address '{address}': expected host:port, ray://host:port or auto")
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise ConfigError(
            f"cannot reach the Ray cluster at {address}: {exc.strerror or exc} (is it started? "
            "`ray start --head` prints its address)"
        ) from None


class RayModelCalls:
    """The model transport: `call(kwargs)` on the next actor of the pool."""

    def __init__(self, actors: list[Any], secret_names: dict[str, str]) -> None:
        self.actors = actors
        self._next = itertools.cycle(actors)
        self.secret_names = secret_names

    async def call(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        import ray

        from .model_workers import WorkerCallError

        kwargs = dict(kwargs)
        key = kwargs.pop("api_key", None)
        key_env = None
        if key is not None:
            key_env = self.secret_names.get(key)
            if key_env is None:
                raise ModelError(
                    "its API key is not in the Ray job's environment: name it with key_var "
                    "in config.yml",
                    permanent=True,
                )
        try:
            ok, fields = await next(self._next).call.remote(kwargs, key_env)
        except ray.exceptions.RayError as exc:
            raise ModelError(_lost(exc).message, permanent=True) from None
        if not ok:
            raise WorkerCallError(*fields)
        result: dict[str, Any] = fields
        return result

    def close(self) -> None:
        return None


class RayLimiters:
    """rpm/tpm pacing by one named actor per model (shared by the cluster); concurrency
    gates stay here, where every call of this run is dispatched."""

    def __init__(self, classes: dict[str, Any], detached: bool) -> None:
        import asyncio

        self.classes = classes
        self.detached = detached
        self._actors: dict[str, Any] = {}
        self._gates: dict[str, asyncio.Semaphore] = {}

    def actor(self, model: ModelConfig) -> Any:
        key = f"rate:{model.name}:{model.rpm}:{model.tpm}:{model.rate_window}"
        if key not in self._actors:
            options: dict[str, Any] = {"name": key, "namespace": NAMESPACE, "get_if_exists": True}
            if self.detached:
                options["lifetime"] = "detached"
            self._actors[key] = (
                self.classes["RateLimiter"]
                .options(**options)
                .remote(model.rpm, model.tpm, model.rate_window)
            )
        return self._actors[key]

    async def acquire(self, model: ModelConfig, messages: list[dict[str, Any]]) -> None:
        import json

        import ray

        if not (model.rpm or model.tpm):
            return
        estimate = len(json.dumps(messages)) // 4 + (model.max_tokens or 256)
        try:
            await self.actor(model).wait.remote(estimate)
        except ray.exceptions.RayError as exc:
            raise ModelError(_lost(exc).message, model=model.name, permanent=True) from None

    def gate(self, model: ModelConfig) -> Any:
        import asyncio

        if not model.max_concurrency:
            return None
        if model.name not in self._gates:
            self._gates[model.name] = asyncio.Semaphore(model.max_concurrency)
        return self._gates[model.name]


class RayDatabase:
    """A database whose queries run in its `DatabaseHost` actor on the cluster."""

    def __init__(self, local: Database, host: Any) -> None:
        self.name = local.name
        self.dialect = local.dialect
        self.host = host

    async def _run(self, what: str, sql: str | None, limit: int | None) -> Any:
        import ray

        from .databases.base import QueryError

        try:
            ok, value = await self.host.run.remote(what, sql, limit)
        except ray.exceptions.RayError as exc:
            raise _lost(exc) from None
        if not ok:
            kind, message = value
            if kind == "QueryError":
                raise QueryError(message)
            raise ConfigError(message)
        return value

    async def query(self, sql: str, limit: int | None = None) -> QueryResult:
        result: QueryResult = await self._run("query", sql, limit)
        return result

    async def columns(self) -> QueryResult:
        result: QueryResult = await self._run("columns", None, None)
        return result

    async def validate(self, sql: str) -> None:
        await self._run("validate", sql, None)

    def close(self) -> None:
        return None


class RayExecutor(Executor):
    """Node bodies' work on a Ray cluster (one per process, connected once)."""

    name = "ray"
    remote = True
    _connected: RayExecutor | None = None

    def __init__(self, project: Project, address: str | None) -> None:
        self.address = address
        self.classes = _remote_classes()
        env, self.secret_names = job_environment(project)
        self.env = env
        import ray

        size = max(1, min(8, int(ray.cluster_resources().get("CPU", 1))))  # type: ignore[no-untyped-call]
        caller = self.classes["ModelCaller"].options(max_concurrency=1000)
        self.callers = [caller.remote(env) for _ in range(size)]
        self._limiters = RayLimiters(self.classes, detached=address is not None)
        self._hosts: dict[str, Any] = {}

    @classmethod
    def connect(cls, address: str | None, project: Project) -> RayExecutor:
        try:
            import ray
        except ImportError:
            raise ConfigError(
                "the Ray executor needs Ray: pip install 'accord[ray]' (or run without "
                "--executor ray)"
            ) from None
        _reachable(address)
        env, _names = job_environment(project)
        if cls._connected is not None and ray.is_initialized() and cls._connected.env == env:
            return cls._connected  # the same secrets: its actors serve this project too
        if not ray.is_initialized():
            try:
                ray.init(
                    address=address, namespace=NAMESPACE, include_dashboard=False,
                    log_to_driver=False, configure_logging=False,
                )  # fmt: skip
            except Exception as exc:
                where = address or "a local cluster"
                raise ConfigError(f"cannot start Ray on {where}: {exc}") from None
        cls._connected = cls(project, address)
        return cls._connected

    def model_transport(self) -> RayModelCalls:
        return RayModelCalls(self.callers, self.secret_names)

    def limiters(self) -> RayLimiters:
        return self._limiters

    def database(
        self, database: Database, spec: Any, root: Path, datasets: tuple[Path, ...]
    ) -> Database:
        key = f"{database.name}:{hashlib.sha256(repr((spec, root)).encode()).hexdigest()[:12]}"
        if key not in self._hosts:
            self._hosts[key] = (
                self.classes["DatabaseHost"]
                .options(max_concurrency=64)
                .remote(spec.type, spec, root, datasets)
            )
        return RayDatabase(database, self._hosts[key])

    @telemetry.traced_program
    async def program(
        self, argv: list[str], stdin: bytes, cwd: Path, timeout: float, env: dict[str, str] | None
    ) -> tuple[bytes, bytes, int] | None:
        import ray

        from .executor import WorkFailure

        try:
            kind, value = await self.classes["run_program"].remote(
                argv, stdin, str(cwd), timeout, env, self.env
            )
        except ray.exceptions.RayError as exc:
            raise _lost(exc) from None
        if kind == "timeout":
            raise WorkFailure(f"{argv[0]} gave no answer within {timeout:g} s (killed)")
        if kind == "oserror":
            raise WorkFailure(f"cannot start {argv[0]!r}: {value}")
        out: tuple[bytes, bytes, int] = value
        return out

    async def evaluate(self, evaluator: Any, case: Any, output: Any) -> Any:
        import ray

        from .executor import WorkFailure

        try:
            kind, value = await self.classes["evaluate"].remote(evaluator, case, output, self.env)
        except ray.exceptions.RayError as exc:
            raise _lost(exc) from None
        if kind != "ok":  # an "error" value names the exception type already
            raise WorkFailure(value)
        return value

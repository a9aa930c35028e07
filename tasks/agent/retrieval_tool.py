"""Oxy's `retrieval` agent tool: the model asks a question, the tool answers with the project
documents (`src` globs) whose texts are nearest to it by embedding.

Documents are read as Oxy reads them, one retrieval object per file (Oxy does not split files
into chunks): a `.sql` file embeds the texts of its `/* oxy: embed: ... */` header (or
`retrieval: {include, exclude}`), or its whole text when it has none; a `.yml` file embeds its
`description` and `retrieval.include`; any other text file (Markdown, notes) is embedded whole.
The model is given the whole file of each match. A match counts as Oxy counts it: within a
cosine distance of 0.2 of one of the file's texts, less where the file's `exclude` texts lie
nearer (90% of the distance to the nearest one); the best text per file, `top_k` files.

The index lives in a DuckDB file under `.accord/retrieval/`: vectors as FLOAT[n] columns,
searched with DuckDB's array_cosine_similarity. It is built on first use and built again when
the documents, the model or its settings change (a content hash). Embeddings go through the
models door, so they are cached and replayable like every model call.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from ...engine.catalog import ModelConfig
from ...engine.errors import AccordError, ConfigError
from ...engine.paths import inside, is_private

if TYPE_CHECKING:
    from ...engine.context import TaskContext
    from ...engine.spec import OxyToolSpec

RADIUS = 0.2  # Oxy's RETRIEVAL_DEFAULT_INCLUSION_RADIUS (cosine distance)
EXCLUSION_BUFFER = 0.9  # Oxy's RETRIEVAL_EXCLUSION_BUFFER_MULTIPLIER
BATCH = 256  # texts per embedding request
DESCRIPTION = "Retrieve the relevant SQL queries to support query generation."
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "What to look for."}},
    "required": ["query"],
}
_HEADER = re.compile(r"\A\s*/\*(.+?)\*/(.+)\Z", re.DOTALL)
_LOCKS: dict[Path, asyncio.Lock] = {}  # one build or search of an index file at a time


@dataclass
class Document:
    """One file of the tool's sources: what is embedded for it and what the model reads."""

    source: str  # the path relative to the project root
    kind: str  # 'file', or 'sql::<database>' as Oxy names a query with its database
    content: str
    inclusions: list[str]
    exclusions: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Settings:
    """A retrieval tool's keys, Oxy's names and defaults."""

    src: tuple[str, ...]
    model: ModelConfig
    n_dims: int | None
    top_k: int
    factor: int

    @classmethod
    def of(cls, spec: OxyToolSpec, ctx: TaskContext) -> Settings:
        extra = spec.model_extra or {}
        problems = settings_problems(extra)
        if problems:
            raise ConfigError(f"retrieval tool '{spec.name}': {problems[0][1]}")
        src = extra["src"]
        src = [src] if isinstance(src, str) else src
        embed_model = str(extra.get("embed_model") or "text-embedding-3-small")
        catalog = ctx.run.models().catalog
        if embed_model in catalog.specs:  # a model of config.yml, with its own endpoint
            model = catalog.resolve(embed_model)
        else:  # Oxy's own keys: an OpenAI-compatible endpoint and the key's variable
            key = extra.get("api_key")
            model = ModelConfig(
                name=embed_model,
                litellm_model=f"openai/{embed_model}",
                api_base=str(extra.get("api_url") or "https://api.openai.com/v1"),
                key_var=None if key else str(extra.get("key_var") or "OPENAI_API_KEY"),
                api_key=str(key) if key else None,
            )
        numbers: dict[str, int | None] = {
            name: extra.get(name, default)
            for name, default in (("top_k", 4), ("factor", 5), ("n_dims", None))
        }
        return cls(
            tuple(src), model, numbers["n_dims"], numbers["top_k"] or 4, numbers["factor"] or 5
        )


def settings_problems(tool: dict[str, Any]) -> list[tuple[str, str]]:
    """(key, what is wrong) of a retrieval tool's settings; `accord validate` shows them."""
    problems = []
    src = tool.get("src")
    src = [src] if isinstance(src, str) else src
    if not isinstance(src, list) or not src or not all(isinstance(s, str) for s in src):
        problems.append(("src", "src must list file globs, e.g. [docs/*.md]"))
    for name in ("top_k", "factor", "n_dims"):
        value = tool.get(name)
        whole = isinstance(value, int) and not isinstance(value, bool) and value >= 1
        if value is not None and not whole:
            problems.append((name, f"{name} must be a whole number of 1 or more"))
    return problems


def load_problems(tool: dict[str, Any], file: Path, root: Path) -> list[tuple[str, str]]:
    """(key, why it is refused) of a retrieval tool of the agent `file`, found when the file
    is loaded (so `accord validate` says them too): a `src` leading out of the project (an
    absolute path, `..`, a symbolic link, a match that is a link leading out) or naming a
    `.env` file or `.accord/` (engine/paths.py); an `api_url` the file writes that would get a
    key from the environment (`key_var`, default OPENAI_API_KEY) in a file the user does not
    trust (engine/keys.py). An `embed_model` naming a model of config.yml uses that model's
    endpoint and key, and no `api_url` of the tool."""
    from ...engine import keys
    from ...engine.paths import PathError

    problems: list[tuple[str, str]] = []
    src = tool.get("src")
    for pattern in [src] if isinstance(src, str) else src if isinstance(src, list) else []:
        if not isinstance(pattern, str):
            continue
        try:
            inside(root, pattern, "retrieval src")
            for match in root.glob(pattern):
                if match.is_file() and not is_private(root, match):
                    inside(root, match.relative_to(root), "retrieval document")
        except PathError as exc:
            problems.append(("src", exc.message))
            break
        except (ValueError, NotImplementedError) as exc:  # a pattern pathlib cannot glob
            problems.append(("src", f"retrieval src '{pattern}': {exc}"))
            break
    embed_model = str(tool.get("embed_model") or "text-embedding-3-small")
    if tool.get("api_url") and not tool.get("api_key"):
        from ...engine.project import load_project

        try:
            models = {m.name for m in load_project(file).config.models}
        except AccordError:
            models = set()  # the agent check reports config.yml's problem
        if embed_model not in models:
            refused = keys.destination_refusal(
                file, root, url=str(tool["api_url"]),
                key=str(tool.get("key_var") or "OPENAI_API_KEY"),
                what=f"retrieval tool '{tool.get('name') or 'retrieval'}' ",
                instead="Name a model of config.yml as embed_model (its api_base and key_var "
                "are used), or write the key itself in the tool (api_key)",
            )  # fmt: skip
            if refused is not None:
                problems.append(("api_url", refused))
    return problems


def retrieval_tool(
    spec: OxyToolSpec, ctx: TaskContext
) -> tuple[str, str, dict[str, Any], Callable[[dict[str, Any]], Awaitable[str]]]:
    """(name, description, JSON schema, runner) of one retrieval tool of an agent."""
    name = spec.name or "retrieval"
    extra = spec.model_extra or {}
    settings = Settings.of(spec, ctx)
    identity = json.dumps(
        [settings.src, settings.model.litellm_model, settings.model.api_base, settings.n_dims]
    )
    folder = ctx.root / ".accord" / "retrieval"
    index = folder / f"{re.sub(r'[^A-Za-z0-9_-]+', '_', name)}-{_digest(identity)[:12]}.duckdb"

    async def embed(texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            ctx.run.count("embedding_calls")
            vectors += await ctx.run.models().embed(
                settings.model,
                texts[start : start + BATCH],
                task=ctx.key,
                dimensions=settings.n_dims,
            )
        return vectors

    async def run(args: dict[str, Any]) -> str:
        query = str(args.get("query", "")).strip()
        if not query:
            return "error: say what to look for in the 'query' argument"
        documents = await asyncio.to_thread(read_documents, ctx.root, settings.src)
        if not documents:
            return f"no documents match {', '.join(settings.src)}"
        lock = _LOCKS.setdefault(index, asyncio.Lock())
        async with lock:
            digest = _digest(json.dumps([[d.source, d.content] for d in documents]))
            if await asyncio.to_thread(_stored_digest, index) != digest:
                await _build(index, documents, digest, embed)
            (vector,) = await embed([query])
            found = await asyncio.to_thread(_search, index, vector, settings.top_k, settings.factor)
        if not found:
            return "no document matched the query"
        return "\n\n".join(f"--- {source} ({kind})\n{content}" for source, kind, content in found)

    return name, str(extra.get("description") or DESCRIPTION), PARAMETERS, run


def read_documents(root: Path, patterns: tuple[str, ...]) -> list[Document]:
    """The files of the globs (inside the project root), sorted, each parsed as Oxy does."""
    paths: set[Path] = set()
    for pattern in patterns:
        inside(root, pattern, "retrieval src")  # no absolute pattern, no '..'
        for match in root.glob(pattern):
            if match.is_file() and not is_private(root, match):  # never .env, nor .accord/
                relative = match.relative_to(root)
                inside(root, relative, "retrieval document")  # a link leading out is refused
                paths.add(relative)
    documents = []
    for relative in sorted(paths):
        try:
            text = (root / relative).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"retrieval document {relative}: cannot be read ({exc})") from None
        document = parse_document(relative.as_posix(), text)
        if document.inclusions:  # Oxy skips a file with nothing to embed
            documents.append(document)
    return documents


def parse_document(source: str, text: str) -> Document:
    """One file as Oxy's retrieval builder reads it."""
    if source.endswith((".yml", ".yaml")):
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError(f"retrieval document {source}: not valid YAML ({exc})") from None
        data = data if isinstance(data, dict) else {}
        inclusions = [str(data["description"]).strip()] if data.get("description") else []
        include, exclude = _retrieval_lists(data.get("retrieval"))
        return Document(source, "yaml", text, [t for t in inclusions if t] + include, exclude)
    header = _HEADER.match(text) if source.endswith(".sql") else None
    if header is not None:
        try:
            data = yaml.safe_load(header.group(1).replace("\n*", "\n"))
        except yaml.YAMLError:
            data = None  # Oxy embeds the whole file when its header is not YAML
        oxy = data.get("oxy") if isinstance(data, dict) else None
        if isinstance(oxy, dict):
            include, exclude = _retrieval_lists(oxy.get("retrieval"))
            if not include and oxy.get("embed"):
                embed = oxy["embed"]
                include = [str(e) for e in embed] if isinstance(embed, list) else [str(embed)]
            kind = f"sql::{oxy['database']}" if oxy.get("database") else "file"
            return Document(source, kind, text, include, exclude)
    return Document(source, "file", text, [text] if text.strip() else [])


def _retrieval_lists(value: Any) -> tuple[list[str], list[str]]:
    if not isinstance(value, dict):
        return [], []
    return (
        [str(v) for v in value.get("include") or []],
        [str(v) for v in value.get("exclude") or []],
    )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _stored_digest(index: Path) -> str | None:
    import duckdb

    if not index.exists():
        return None
    try:
        with duckdb.connect(str(index), read_only=True) as db:
            row = db.execute("SELECT value FROM meta WHERE key = 'digest'").fetchone()
    except duckdb.Error:  # an unreadable or older index is built again
        return None
    return str(row[0]) if row else None


async def _build(
    index: Path,
    documents: list[Document],
    digest: str,
    embed: Callable[[list[str]], Awaitable[list[list[float]]]],
) -> None:
    texts = sorted({t for d in documents for t in (*d.inclusions, *d.exclusions)})
    vectors = dict(zip(texts, await embed(texts), strict=True))
    sizes = {len(v) for v in vectors.values()}
    if len(sizes) != 1 or 0 in sizes:
        raise AccordError(f"the embedding model returned vectors of sizes {sorted(sizes)}")
    rows = []
    for document in documents:
        for text in document.inclusions:
            vector = vectors[text]
            near = [_distance(vector, vectors[e]) for e in document.exclusions]
            radius = min([RADIUS, *(EXCLUSION_BUFFER * d for d in near)])
            rows.append((document.source, text, radius, vector))
    await asyncio.to_thread(_write, index, documents, rows, sizes.pop(), digest)


def _write(
    index: Path,
    documents: list[Document],
    rows: list[tuple[str, str, float, list[float]]],
    size: int,
    digest: str,
) -> None:
    import duckdb

    index.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(index)) as db:
        db.execute("BEGIN")
        db.execute("DROP TABLE IF EXISTS meta")
        db.execute("DROP TABLE IF EXISTS documents")
        db.execute("DROP TABLE IF EXISTS inclusions")
        db.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
        db.execute(
            "CREATE TABLE documents (source VARCHAR PRIMARY KEY, kind VARCHAR, content VARCHAR)"
        )
        db.execute(
            "CREATE TABLE inclusions (source VARCHAR, text VARCHAR, radius DOUBLE, "
            f"vector FLOAT[{size}])"
        )
        db.executemany(
            "INSERT INTO documents VALUES (?, ?, ?)",
            [(d.source, d.kind, d.content) for d in documents],
        )
        db.executemany(f"INSERT INTO inclusions VALUES (?, ?, ?, ?::FLOAT[{size}])", rows)
        db.execute("INSERT INTO meta VALUES ('digest', ?), ('size', ?)", [digest, str(size)])
        db.execute("COMMIT")


def _search(index: Path, vector: list[float], top_k: int, factor: int) -> list[tuple[str, ...]]:
    """Oxy's search: the top_k * factor nearest texts, those within their radius, the best
    per file, the top_k files by relevance (1 - distance / radius)."""
    import duckdb

    with duckdb.connect(str(index), read_only=True) as db:
        size_row = db.execute("SELECT value FROM meta WHERE key = 'size'").fetchone()
        size = int(size_row[0]) if size_row else 0
        if len(vector) != size:
            raise AccordError(
                f"the query's embedding has {len(vector)} numbers, the index's {size}: "
                "the model changed its vectors' size; delete the index under .accord/retrieval/"
            )
        rows = db.execute(
            f"""
            WITH near AS (
                SELECT source, radius,
                       1 - array_cosine_similarity(vector, ?::FLOAT[{size}]) AS distance
                FROM inclusions
                ORDER BY distance NULLS LAST
                LIMIT ?
            ), best AS (
                SELECT source, min(distance) AS distance,
                       arg_min(radius, distance) AS radius
                FROM near
                WHERE distance <= radius
                GROUP BY source
            )
            SELECT d.source, d.kind, d.content
            FROM best JOIN documents d USING (source)
            ORDER BY CASE WHEN best.radius > 0 THEN 1 - best.distance / best.radius
                     ELSE 1 END DESC, d.source
            LIMIT ?
            """,
            [vector, top_k * factor, top_k],
        ).fetchall()
    return [(str(s), str(k), str(c)) for s, k, c in rows]


def _distance(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = (sum(x * x for x in a) * sum(y * y for y in b)) ** 0.5
    return 1 - dot / norm if norm else 1.0

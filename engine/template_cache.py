"""Compiled templates kept across runs, in `<root>/.accord/templates/`, with Jinja's own
bytecode cache.

Jinja turns a template into Python source and compiles it (about 0.4 ms a template); a
second run of an unchanged workflow would redo that for every template. Each compiled
template is stored once, under a key that hashes the template's text together with a
fingerprint of everything that shapes the generated code: accord's version and the source of
the modules that instrument it (the render budget's `tick` at every block, the sandbox's
intercepted operators), Jinja's and Python's versions, the environment's options and the
names and calling conventions of its filters and tests.

`.accord/` holds data, not code, for anyone who can plant files there (a project shared with
its `.accord/`, a tampered checkout): an entry is Jinja's bytecode header (its format and the
Python version), then an HMAC of the key and the code made with a secret of this user's
(`~/.cache/accord/template-cache.key`, created on first use, readable by the user alone),
then the marshalled code. Only an entry this user's accord wrote for this very text and
fingerprint is loaded; any other (copied under another key, written for another text,
damaged, truncated, or made elsewhere) is a miss: the template is compiled again and the
entry rewritten, and the cache never makes a run fail. A cache that cannot be written (a
read-only project) or a secret that cannot be kept is reported once, and templates are
compiled in memory.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import hmac
import marshal
import os
import queue
import secrets
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import CodeType
from typing import Any

import jinja2
from jinja2.bccache import Bucket, FileSystemBytecodeCache, bc_magic

from . import log

FOLDER = "templates"  # under the project's .accord/
_SUFFIX = ".jinja"
# checked templates' names and plain templates' outlines, for every template of the project
_BUNDLE = "templates.data"
_BUNDLE_MAGIC = b"accord-template-data-1\n"
_BUNDLE_LIMIT = 200_000
_TAG_SIZE = hashlib.sha256().digest_size


def _accord_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("accord")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown"


def fingerprint(env: jinja2.Environment, *modules: str) -> str:
    """What the code Jinja generates for a template depends on besides its text.

    `modules` are the files whose code shapes the generated code (the code generator, the
    sandbox's intercepted operators, the render budget): their bytes are hashed, so a change
    to them between two releases of the same version still misses."""
    digest = hashlib.sha256()
    parts = [
        f"accord {_accord_version()}",
        f"jinja2 {jinja2.__version__}",
        sys.version,
        f"{type(env).__module__}.{type(env).__qualname__}",
        f"{env.code_generator_class.__module__}.{env.code_generator_class.__qualname__}",
        repr(sorted(getattr(env, "intercepted_binops", ()))),
        repr(sorted(getattr(env, "intercepted_unops", ()))),
        repr(sorted(env.extensions)),
        repr(
            (
                env.block_start_string,
                env.block_end_string,
                env.variable_start_string,
                env.variable_end_string,
                env.comment_start_string,
                env.comment_end_string,
                env.line_statement_prefix,
                env.line_comment_prefix,
                env.trim_blocks,
                env.lstrip_blocks,
                env.newline_sequence,
                env.keep_trailing_newline,
                env.optimized,
                env.is_async,
                repr(env.autoescape),
                f"{env.undefined.__module__}.{env.undefined.__qualname__}",
            )
        ),
        # the code generator checks at compile time that a filter or test exists and how it
        # is called (with the context, the environment, or neither)
        repr(sorted((name, _passes(f)) for name, f in env.filters.items())),
        repr(sorted((name, _passes(f)) for name, f in env.tests.items())),
    ]
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    for module in modules:
        digest.update(Path(module).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def _passes(function: object) -> str:
    """What Jinja passes a filter or test first (`pass_context`, ...): it reads the marker
    that `jinja2.utils._PassArg.from_obj` reads."""
    return str(getattr(function, "jinja_pass_arg", None))


def _read(name: str) -> bytes | None:
    """The file's bytes, None when there is no file (os.read: io.open costs more than the
    read of a few kilobytes)."""
    try:
        fd = os.open(name, os.O_RDONLY)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


class TemplateCache(FileSystemBytecodeCache):
    """Jinja's file-system bytecode cache, keyed by the template text and the fingerprint,
    where a damaged entry is a miss and a failed write is reported, not raised."""

    def __init__(
        self,
        directory: Path,
        key_base: str,
        secret: bytes,
        environment: jinja2.Environment,
        writable: bool = True,
    ) -> None:
        super().__init__(str(directory), "%s" + _SUFFIX)
        self.fingerprint = key_base
        self.environment = environment
        self.writable = writable  # `accord validate` reads the cache and writes nothing
        self._secret = secret
        self._ready = False
        self._warned = False
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[tuple[str, bytes] | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._loaded: dict[str, bytes] | None = None  # the bundle as read
        self._added: dict[str, bytes] = {}  # this run's new data entries
        self._used: set[str] = set()
        self._flush_registered = False

    def key(self, kind: str, source: str) -> str:
        """The entry's name: the text, what kind of template it is (a whole template or one
        expression), and the fingerprint."""
        text = f"{self.fingerprint}\0{kind}\0{source}"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _tag(self, key: str, payload: bytes) -> bytes:
        return hmac.new(self._secret, key.encode("ascii") + payload, hashlib.sha256).digest()

    def load_bytecode(self, bucket: Bucket) -> None:
        """The entry's code when its tag is this user's for this key."""
        bucket.reset()
        payload = self._payload(self._get_cache_filename(bucket), bucket.key)
        if payload is None:
            return
        try:
            code = marshal.loads(payload)
        except (EOFError, ValueError, TypeError):
            return
        if isinstance(code, CodeType):
            bucket.code = code

    def _payload(self, filename: str, key: str) -> bytes | None:
        """An entry's payload when its tag is this user's for this key; the file is read in
        one call (`marshal.load` on a file object reads a few bytes at a time)."""
        data = _read(filename)
        if data is None or not data.startswith(bc_magic):
            return None
        tag = data[len(bc_magic) : len(bc_magic) + _TAG_SIZE]
        payload = data[len(bc_magic) + _TAG_SIZE :]
        if not hmac.compare_digest(tag, self._tag(key, payload)):
            return None
        return payload

    def dump_bytecode(self, bucket: Bucket) -> None:
        """Hand the entry to the writer thread: creating a file costs the run about 50 us of
        CPU and 200 us of waiting on the disk's journal, which the thread overlaps with
        rendering; the entries are all written when the process exits (`flush`)."""
        if bucket.code is not None:
            self._store(self._get_cache_filename(bucket), bucket.key, marshal.dumps(bucket.code))

    def _store(self, filename: str, key: str, payload: bytes) -> None:
        if not self.writable:
            return
        entry = bc_magic + self._tag(key, payload) + payload
        with self._lock:
            if self._writer is None:
                self._writer = threading.Thread(
                    target=self._write_all, name="accord-template-cache", daemon=True
                )
                self._writer.start()
                atexit.register(self.flush)
        self._queue.put((filename, entry))

    def names(self, source: str) -> frozenset[str] | None:
        """The free names an earlier check of this very text found (it passed the sandbox's
        and the filters' checks then: only a template that passed is stored), or None."""
        found = self._data("names", source)
        if not isinstance(found, tuple) or not all(isinstance(n, str) for n in found):
            return None
        return frozenset(found)

    def store_names(self, source: str, names: frozenset[str]) -> None:
        self._store_data("names", source, tuple(sorted(names)))

    def outline(self, source: str) -> tuple[object, ...] | None:
        """A plain template's outline (engine/template_walk.py), kept so that a second run
        builds it without parsing; None when there is none."""
        found = self._data("outline", source)
        return found if isinstance(found, tuple) else None

    def store_outline(self, source: str, outline: tuple[object, ...]) -> None:
        self._store_data("outline", source, outline)

    def _data(self, kind: str, source: str) -> object:
        """Plain data (strings, numbers, tuples) kept for `source` under `kind`, or None;
        marshal reads only such values back, never code here: a code object is refused."""
        key = self.key(kind, source)
        payload = self._bundle().get(key)
        if payload is None:
            return None
        self._used.add(key)
        try:
            found = marshal.loads(payload)
        except (EOFError, ValueError, TypeError):
            return None
        return None if isinstance(found, CodeType) else found

    def _store_data(self, kind: str, source: str, value: Any) -> None:
        if not self.writable:
            return
        key = self.key(kind, source)
        try:
            payload = marshal.dumps(value)
        except ValueError:  # a value marshal cannot keep: nothing is kept
            return
        with self._lock:
            self._added[key] = payload
            self._used.add(key)
            if not self._flush_registered:
                self._flush_registered = True
                atexit.register(self.flush)

    def _bundle(self) -> dict[str, bytes]:
        """Every template's data, in one file read once (a file per template cost a second
        run 2,000 opens): a dict of payloads under their keys, tagged as a whole."""
        if self._loaded is None:
            self._loaded = self._read_bundle()
        return self._loaded

    def _read_bundle(self) -> dict[str, bytes]:
        data = _read(os.path.join(self.directory, _BUNDLE))
        if data is None or not data.startswith(_BUNDLE_MAGIC):
            return {}
        tag = data[len(_BUNDLE_MAGIC) : len(_BUNDLE_MAGIC) + _TAG_SIZE]
        payload = data[len(_BUNDLE_MAGIC) + _TAG_SIZE :]
        if not hmac.compare_digest(tag, self._tag(_BUNDLE, payload)):
            return {}
        try:
            found = marshal.loads(payload)
        except (EOFError, ValueError, TypeError):
            return {}
        if not isinstance(found, dict):
            return {}
        return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, bytes)}

    def _write_bundle(self) -> None:
        """The bundle with this run's additions, written at once (a new file renamed over
        the old). A bundle grown past `_BUNDLE_LIMIT` entries keeps what this run used."""
        with self._lock:
            added, self._added = self._added, {}
        if not added:
            return
        merged = {**self._read_bundle(), **added}  # another run may have written since
        if len(merged) > _BUNDLE_LIMIT:
            merged = {k: v for k, v in merged.items() if k in self._used}
        payload = marshal.dumps(merged)
        entry = _BUNDLE_MAGIC + self._tag(_BUNDLE, payload) + payload
        self._write(os.path.join(self.directory, _BUNDLE), entry)

    def cached_code(self, kind: str, source: str) -> CodeType | None:
        """The compiled code of `source` when the cache holds it (nothing is parsed)."""
        bucket = Bucket(self.environment, self.key(kind, source), checksum="")
        self.load_bytecode(bucket)
        return bucket.code

    def flush(self) -> None:
        """Wait until every entry handed over is written, and write the bundle."""
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            self._queue.put(None)
            writer.join()
        self._write_bundle()

    def _write_all(self) -> None:
        while (item := self._queue.get()) is not None:
            self._write(*item)

    def _write(self, name: str, entry: bytes) -> None:
        # a name of this process: concurrent runs never write the same file, and the rename
        # makes a whole entry appear at once
        temporary = f"{name}.{os.getpid()}.tmp"
        try:
            if not self._ready:
                # .accord/ and its templates/, never the project folder itself: a run whose
                # project was removed under it must not bring the folder back
                folder = Path(self.directory)
                folder.parent.mkdir(exist_ok=True)
                folder.mkdir(exist_ok=True)
                self._ready = True
            with open(temporary, "wb") as out:
                out.write(entry)
            os.replace(temporary, name)
        except OSError as exc:
            if not self._warned:
                self._warned = True
                _warn(str(self.directory), str(exc))
            with contextlib.suppress(OSError):
                os.remove(temporary)

    def store_code(self, kind: str, source: str, code: CodeType) -> None:
        bucket = Bucket(self.environment, self.key(kind, source), checksum="")
        bucket.code = code
        self.dump_bytecode(bucket)

    def code(self, kind: str, source: str, build: Callable[[], CodeType]) -> CodeType:
        """The compiled code of `source`: from the cache, or `build()` and stored."""
        code = self.cached_code(kind, source)
        if code is None:
            code = build()
            self.store_code(kind, source, code)
        return code


_active: list[TemplateCache] = []
_secrets: dict[str, bytes | None] = {}


def _warn(folder: str, problem: str) -> None:
    log.get().warning(
        "template_cache_not_written",
        folder=folder,
        problem=problem,
        effect="templates are compiled again on the next run",
    )


def secret_path() -> Path:
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_home) / "accord" / "template-cache.key"


def _secret() -> bytes | None:
    """This user's key for the entries' tags, made on first use; None when it can be neither
    read nor made."""
    path = secret_path()
    if str(path) in _secrets:
        return _secrets[str(path)]
    found: bytes | None = None
    for _ in range(2):  # a second look when another process made it at the same moment
        try:
            found = path.read_bytes()
            break
        except FileNotFoundError:
            pass
        except OSError as exc:
            _warn(str(path.parent), f"cannot read {path}: {exc}")
            break
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        except OSError as exc:
            _warn(str(path.parent), f"cannot make {path}: {exc}")
            break
        found = secrets.token_bytes(32)
        with os.fdopen(fd, "wb") as out:
            out.write(found)
        break
    if found is not None and len(found) < 16:
        _warn(str(path.parent), f"{path} is too short to be a key: delete it")
        found = None
    _secrets[str(path)] = found
    return found


def use(
    root: Path, key_base: str, environment: jinja2.Environment, writable: bool = True
) -> TemplateCache | None:
    """Keep this process's compiled templates under `root`'s `.accord/templates/` from now on
    (a run calls it once it knows its project; `writable=False` only reads what is there);
    None (in memory only) without a secret."""
    directory = root / ".accord" / FOLDER
    current = active()
    if current is not None and (current.fingerprint, current.directory) == (
        key_base,
        str(directory),
    ):
        current.writable = current.writable or writable
        return current
    secret = _secret()
    if secret is None:
        _active.clear()
        return None
    if current is not None:
        current.flush()
    cache = TemplateCache(directory, key_base, secret, environment, writable)
    _active[:] = [cache]
    return cache


def active() -> TemplateCache | None:
    return _active[0] if _active else None


def stop() -> None:
    """Write what is pending and compile in memory only again."""
    current = active()
    if current is not None:
        current.flush()
    _active.clear()

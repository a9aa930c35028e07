"""Compiled templates kept across runs, in `<root>/.accord/templates/`, with Jinja's own
bytecode cache.

Jinja turns a template into Python source and compiles it (about 0.4 ms a template); a
second run of an unchanged workflow would redo that for every template. Each compiled
template is stored once, as Jinja's `Bucket` (a magic header naming Jinja's bytecode format
and the Python version, a checksum, the marshalled code), under a key that hashes the
template's text together with a fingerprint of everything that shapes the generated code:
accord's version and the source of the modules that instrument it (the render budget's
`tick` at every block, the sandbox's intercepted operators), Jinja's and Python's versions,
the environment's options and the names and calling conventions of its filters and tests.
The checksum inside the file is that same hash, so an entry copied under another key, or
written for another template text, is refused like a missing one.

A damaged, truncated or foreign entry is a miss: the template is compiled again and the
entry rewritten; the cache never makes a run fail. A cache that cannot be written (a
read-only project) is reported once and the run goes on compiling in memory.

The entries are code the run executes, as trusted as the project's own files (Python's
`__pycache__` is the same): whoever can write `.accord/` can already change the workflow.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import marshal
import os
import pickle
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import CodeType

import jinja2
from jinja2.bccache import Bucket, FileSystemBytecodeCache, bc_magic

from accord.engine import log

FOLDER = "templates"  # under the project's .accord/
_SUFFIX = ".jinja"


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

    def __init__(self, directory: Path, key_base: str) -> None:
        super().__init__(str(directory), "%s" + _SUFFIX)
        self.fingerprint = key_base
        self._ready = False
        self._warned = False
        self._lock = threading.Lock()

    def key(self, kind: str, source: str) -> str:
        """The entry's name and checksum: the text, what kind of template it is (a whole
        template or one expression), and the fingerprint."""
        text = f"{self.fingerprint}\0{kind}\0{source}"
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def load_bytecode(self, bucket: Bucket) -> None:
        """Jinja's `Bucket.load_bytecode`, reading the file in one call: `marshal.load` on a
        file object reads it a few bytes at a time (a third of a second run went there)."""
        try:
            bucket.reset()
            data = _read(self._get_cache_filename(bucket))
            if data is not None:
                stream = io.BytesIO(data)
                stream.seek(len(bc_magic))
                if data.startswith(bc_magic) and pickle.load(stream) == bucket.checksum:
                    bucket.code = marshal.loads(data[stream.tell() :])
        except Exception:  # any damage (a bad pickle, a short file) is a miss
            bucket.reset()
            return
        if bucket.code is not None and not isinstance(bucket.code, CodeType):
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        name = self._get_cache_filename(bucket)
        # a name of this process and thread: concurrent runs never write the same file, and
        # the rename makes a whole entry appear at once
        temporary = f"{name}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            if not self._ready:
                # .accord/ and its templates/, never the project folder itself: a run whose
                # project was removed under it must not bring the folder back
                folder = Path(self.directory)
                folder.parent.mkdir(exist_ok=True)
                folder.mkdir(exist_ok=True)
                self._ready = True
            with open(temporary, "wb") as out:
                bucket.write_bytecode(out)
            os.replace(temporary, name)
        except OSError as exc:
            with self._lock:
                warned, self._warned = self._warned, True
            if not warned:
                log.get().warning(
                    "template_cache_not_written",
                    folder=self.directory,
                    problem=str(exc),
                    effect="templates are compiled again on the next run",
                )
            with contextlib.suppress(OSError):
                os.remove(temporary)

    def code(
        self, env: jinja2.Environment, kind: str, source: str, build: Callable[[], CodeType]
    ) -> CodeType:
        """The compiled code of `source`: from the cache, or `build()` and stored."""
        key = self.key(kind, source)
        bucket = Bucket(env, key, key)
        self.load_bytecode(bucket)
        if bucket.code is not None:
            return bucket.code
        code = build()
        bucket.code = code
        self.dump_bytecode(bucket)
        return code


_active: list[TemplateCache] = []


def use(root: Path, key_base: str) -> TemplateCache:
    """Keep this process's compiled templates under `root`'s `.accord/templates/` from now on
    (a run calls it once it knows its project)."""
    directory = root / ".accord" / FOLDER
    current = active()
    if current is not None and (current.fingerprint, current.directory) == (
        key_base,
        str(directory),
    ):
        return current
    cache = TemplateCache(directory, key_base)
    _active[:] = [cache]
    return cache


def active() -> TemplateCache | None:
    return _active[0] if _active else None


def stop() -> None:
    """Compile in memory only again (tests that switch projects in one process)."""
    _active.clear()

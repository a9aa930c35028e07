"""What the scenario macros read, kept in bounds: files inside the project root (documents as
text, directory listings, sqlite databases opened read-only), a small JSONPath subset, and web
pages from allowed hosts only.

Bounds on size and time: a zip-based document (docx, pptx, xlsx) is refused when its zip
directory declares members past `MAX_XML_MEMBER_BYTES` / `MAX_ZIP_BYTES` uncompressed, before
any reader opens it (Python's zipfile never inflates a member past its declared size, so the
directory is a bound); an xlsx is read by its real cells, never by the declared dimension (one
cell at XFD1048576 declares 17 billion); a query and a web request end at a deadline the macro
layer gives (`OutOfTime`), and their results stop at a size (`max_chars`, `MAX_RESPONSE_BYTES`).

Every failure here is a `MacroProblem`, a sentence meant for the user; the macro layer adds
which macro failed and its usage.
"""

from __future__ import annotations

import contextlib
import fnmatch
import http.client
import importlib
import json
import os
import re
import shutil
import socket
import sqlite3
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing, suppress
from pathlib import Path
from typing import Any

from .....engine.datafiles import DataProblem, parse_json
from .....engine.paths import private
from .....engine.render_budget import MAX_TEXT

MAX_RESPONSE_BYTES = 10_000_000
MAX_XML_MEMBER_BYTES = 50_000_000  # a 1 GB document.xml took 2.1 GB to read as a docx
MAX_ZIP_BYTES = 250_000_000  # every member, media included (the readers load them all)
ZIP_TYPES = frozenset({"docx", "pptx", "xlsx"})


class MacroProblem(Exception):
    """A user-ready reason a macro could not do its work."""


class OutOfTime(MacroProblem):
    """Work stopped at its deadline; the macro layer names the budget that set it."""

    def __init__(self, doing: str) -> None:
        self.doing = doing
        super().__init__(f"{doing} was stopped at its deadline")


def inside_root(root: Path, raw: str) -> Path:
    """`raw` (relative to `root`, or absolute) resolved, symlinks followed; refused outside."""
    root = root.resolve()
    candidate = Path(raw).expanduser()
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if not resolved.is_relative_to(root):
        raise MacroProblem(f"path '{raw}' is outside the project root {root}")
    reason = private(root, resolved, raw)  # a .env file, .accord/: never data
    if reason is not None:
        raise MacroProblem(f"path '{raw}' {reason}")
    return resolved


def existing_file(root: Path, raw: str) -> Path:
    """A file inside `root` that exists."""
    path = inside_root(root, raw)
    if not path.is_file():
        raise MacroProblem(f"file '{raw}' not found under {root.resolve()}")
    return path


def read_bytes(root: Path, raw: str) -> bytes:
    """The bytes of a file inside `root`."""
    path = existing_file(root, raw)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise MacroProblem(f"file '{raw}' cannot be read: {exc.strerror or exc}") from exc


def universal_newlines(text: str) -> str:
    """`\r\n` and `\r` as `\n`, as Python's text mode reads a file (the reference's `open`)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_text(root: Path, raw: str) -> str:
    """A UTF-8 text file inside `root`, read as text mode reads it."""
    try:
        return universal_newlines(read_bytes(root, raw).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise MacroProblem(
            f"file '{raw}' is not UTF-8 text (give its file_type if it is a document)"
        ) from exc


def _pdf(path: Path) -> str:
    from pypdf import PdfReader

    return "\n".join(page.extract_text() for page in PdfReader(path).pages)


def _docx(path: Path) -> str:
    """Paragraphs and tables in the body's order, joined by a blank line; a table's rows as
    `| a | b |` (the reference's layout, merged cells repeated as python-docx gives them)."""
    import docx
    from docx.table import Table

    blocks: list[str] = []
    for block in docx.Document(str(path)).iter_inner_content():
        if isinstance(block, Table):
            rows = (
                [cell.text.strip().replace("\n", " ") for cell in row.cells] for row in block.rows
            )
            blocks.append("\n".join("| " + " | ".join(cells) + " |" for cells in rows))
        else:
            blocks.append(block.text)
    return "\n\n".join(blocks)


def _shape_texts(shapes: Any) -> Iterator[str]:
    for shape in shapes:
        if getattr(shape, "shapes", None) is not None:  # a group
            yield from _shape_texts(shape.shapes)
        elif shape.has_text_frame:
            yield shape.text_frame.text
        elif getattr(shape, "has_table", False):
            for row in shape.table.rows:
                yield "\t".join(cell.text for cell in row.cells)


def _pptx(path: Path) -> str:
    from pptx import Presentation

    slides = Presentation(str(path)).slides
    return "\n".join(text for slide in slides for text in _shape_texts(slide.shapes))


def _xlsx(path: Path) -> str:
    from .sheets import workbook_csv

    return workbook_csv(path)


def _ocr(path: Path) -> str:
    try:
        tesseract: Any = importlib.import_module("pytesseract")
    except ImportError:
        tesseract = None
    if tesseract is None or shutil.which("tesseract") is None:
        raise MacroProblem(
            f"reading the image '{path.name}' needs OCR, and tesseract is not installed "
            "(install the tesseract program and the pytesseract package)"
        )
    return str(tesseract.image_to_string(str(path)))


def _old_format(modern: str) -> Callable[[Path], str]:
    def refuse(path: Path) -> str:
        raise MacroProblem(
            f"'{path.name}' is an old binary Office file; convert it to {modern} first"
        )

    return refuse


def _text(path: Path) -> str:
    return universal_newlines(path.read_bytes().decode("utf-8"))


IMAGE_TYPES = frozenset({"png", "jpg", "jpeg", "gif", "bmp", "tiff", "tif", "webp"})
READERS: dict[str, Callable[[Path], str]] = {
    "text": _text,
    "txt": _text,
    "pdf": _pdf,
    "docx": _docx,
    "pptx": _pptx,
    "xlsx": _xlsx,
    "doc": _old_format("docx"),
    "ppt": _old_format("pptx"),
    "xls": _old_format("xlsx"),
    **dict.fromkeys(IMAGE_TYPES, _ocr),
}


def check_zip(path: Path, raw: str, kind: str) -> None:
    """Refuse a zip-based document whose members would inflate past the size bounds; read
    from the zip directory, before any reader opens a member."""
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise MacroProblem(f"file '{raw}' is not a {kind} file (not a zip archive: {exc})") from exc
    for member in members:
        if member.filename.endswith((".xml", ".rels")) and member.file_size > MAX_XML_MEMBER_BYTES:
            raise MacroProblem(
                f"file '{raw}' holds {member.filename} of {member.file_size:,} bytes "
                f"uncompressed; a document part may have at most {MAX_XML_MEMBER_BYTES:,} "
                "(the size budget for documents)"
            )
    total = sum(member.file_size for member in members)
    if total > MAX_ZIP_BYTES:
        raise MacroProblem(
            f"file '{raw}' holds {total:,} bytes uncompressed; a document may hold at most "
            f"{MAX_ZIP_BYTES:,} (the size budget for documents)"
        )


def read_document(root: Path, raw: str, file_type: str | None = None) -> str:
    """A file inside `root` as text, read by its type (its extension unless `file_type`)."""
    path = existing_file(root, raw)
    kind = (file_type or "").lower().lstrip(".")
    if kind and kind not in READERS:
        raise MacroProblem(f"unknown file_type '{file_type}'; known: {', '.join(sorted(READERS))}")
    kind = kind or path.suffix.lower().lstrip(".")
    reader = READERS.get(kind, _text)
    if kind in ZIP_TYPES:
        check_zip(path, raw, kind)
    try:
        return reader(path)
    except MacroProblem:
        raise
    except UnicodeDecodeError as exc:
        raise MacroProblem(
            f"file '{raw}' is not UTF-8 text (give its file_type if it is a document)"
        ) from exc
    except Exception as exc:
        raise MacroProblem(f"file '{raw}' cannot be read: {type(exc).__name__}: {exc}") from exc


_STEP = re.compile(r"""\.(\*|[A-Za-z_][\w-]*)|\[\s*(\*|-?\d+|'[^']*'|"[^"]*")\s*\]""")


def _steps(path: str) -> list[str | int]:
    """`$.a[0]['b c'].*` as steps: keys, indexes and "*" for a wildcard."""
    if not path.startswith("$"):
        raise MacroProblem(f"json path '{path}' must start with '$'")
    steps: list[str | int] = []
    position = 1
    while position < len(path):
        match = _STEP.match(path, position)
        if match is None:
            raise MacroProblem(f"json path '{path}' is not understood at '{path[position:]}'")
        token = match.group(1) or match.group(2)
        if token[0] in "'\"":
            steps.append(token[1:-1])
        elif token.lstrip("-").isdigit():
            steps.append(int(token))
        else:
            steps.append(token)
        position = match.end()
    return steps


def _children(value: Any, step: str | int) -> list[Any]:
    if step == "*":
        if isinstance(value, dict):
            return list(value.values())
        return list(value) if isinstance(value, list) else []
    if isinstance(step, int):
        if isinstance(value, list) and -len(value) <= step < len(value):
            return [value[step]]
        return []
    return [value[step]] if isinstance(value, dict) and step in value else []


def json_path(document: Any, path: str) -> list[Any]:
    """The values of `document` that `path` selects (`$`, `.key`, `['key']`, `[N]`, `*`)."""
    matches = [document]
    for step in _steps(path.strip()):
        matches = [child for value in matches for child in _children(value, step)]
    return matches


def json_extract(root: Path, raw: str, path: str) -> str:
    """What `path` selects in a JSON file, written as the reference writes it: a path with a
    wildcard gives the JSON list of what it matches, another path its one value or `None`;
    a list or mapping as JSON, anything else as Python's `str` (`True`, `None`, `42`)."""
    try:
        document = parse_json(read_text(root, raw))
    except DataProblem as exc:
        raise MacroProblem(f"file '{raw}' is not JSON accord reads: {exc.message}") from None
    steps = _steps(path.strip())
    matches = json_path(document, path)
    value: Any = matches if "*" in steps else (matches[0] if matches else None)
    return json.dumps(value) if isinstance(value, dict | list) else str(value)


def fill_template(root: Path, raw: str, variables: Mapping[str, Any]) -> str:
    """A template file inside `root` with each `{name}` of `variables` replaced by its value
    (`str`); other braces, and names not given, stay as they are (the reference's)."""
    text = read_text(root, raw)
    for name, value in variables.items():
        text = text.replace(f"{{{name}}}", str(value))
    return text


def list_files(root: Path, raw: str, pattern: str) -> list[str]:
    """The names in a directory inside `root` (files and folders) matching a glob, sorted:
    `os.listdir` and `fnmatch`, as the reference lists them."""
    directory = inside_root(root, raw)
    if not directory.is_dir():
        raise MacroProblem(f"directory '{raw}' not found under {root.resolve()}")
    return sorted(name for name in os.listdir(directory) if fnmatch.fnmatch(name, pattern))


def _deny_attach(action: int, *rest: object) -> int:
    return sqlite3.SQLITE_DENY if action == sqlite3.SQLITE_ATTACH else sqlite3.SQLITE_OK


def sql_query(root: Path, raw: str, query: str, seconds: float) -> list[dict[str, Any]]:
    """The rows of `query` on a sqlite file inside `root`, opened read-only (no ATTACH),
    stopped after `seconds` (`OutOfTime`) or past `MAX_TEXT` characters of values."""
    uri = f"{existing_file(root, raw).as_uri()}?mode=ro"
    deadline = time.monotonic() + seconds
    opened: list[sqlite3.Connection] = []

    def fetch() -> list[dict[str, Any]]:
        with closing(sqlite3.connect(uri, uri=True)) as connection:
            opened.append(connection)
            connection.set_authorizer(_deny_attach)
            # sqlite calls this every 10,000 steps of the query's program; true interrupts it
            connection.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
            connection.row_factory = sqlite3.Row
            rows: list[dict[str, Any]] = []
            size = 0
            try:
                for row in connection.execute(query):
                    rows.append(dict(row))
                    size += sum(len(str(value)) + len(key) + 6 for key, value in rows[-1].items())
                    if size > MAX_TEXT:
                        raise MacroProblem(
                            f"the query's rows make more than {MAX_TEXT:,} characters "
                            "(the macro expansion budget); select fewer rows or columns"
                        )
            except sqlite3.OperationalError:
                if time.monotonic() > deadline:
                    raise OutOfTime("the query") from None
                raise
            return rows

    return _interruptible(fetch, opened)


def _interruptible(
    fetch: Callable[[], list[dict[str, Any]]], opened: list[sqlite3.Connection]
) -> list[dict[str, Any]]:
    """`fetch()` in a thread of its own (which opens and closes the connection): the calling
    thread waits on a future, where Ctrl-C reaches it. Blocked inside SQLite it would not see
    Ctrl-C until the query ended, and a recursive CTE may never end. On Ctrl-C the query is
    interrupted, again until it stops (an interrupt sent before it began does nothing), for
    at most a few seconds; a query that does not stop is left to the process's exit."""
    from .....engine.blocking import start_blocking

    rows = start_blocking(fetch)
    try:
        return rows.result()
    except KeyboardInterrupt:
        deadline = time.monotonic() + 5
        while not rows.done() and time.monotonic() < deadline:
            for connection in opened:
                with suppress(sqlite3.ProgrammingError):  # closed: the query is over
                    connection.interrupt()
            with suppress(TimeoutError):
                rows.exception(timeout=0.05)
        raise


def host_allowed(host: str, allow_hosts: frozenset[str]) -> bool:
    """`host` is listed, or is under a listed `*.domain` (the domain itself is not)."""
    host = host.lower().rstrip(".")
    return any(
        host == pattern.lower() or (pattern.startswith("*.") and host.endswith(pattern[1:].lower()))
        for pattern in allow_hosts
    )


def check_url(url: str, allow_hosts: frozenset[str]) -> None:
    """Refuse a url that is not http(s) or whose host is not allowed."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise MacroProblem(f"url '{url}' must be http or https")
    if not host_allowed(parts.hostname or "", allow_hosts):
        raise MacroProblem(
            f"host '{parts.hostname}' is not in allow_hosts (the setting that lists the hosts "
            "HTTP_GET may reach)"
        )


class _AllowedRedirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only to an allowed host."""

    def __init__(self, allow_hosts: frozenset[str]) -> None:
        self.allow_hosts = allow_hosts

    def redirect_request(self, *args: Any) -> Any:
        check_url(str(args[-1]), self.allow_hosts)  # the arguments end with the new url
        return super().redirect_request(*args)


class _Watchdog:
    """Ends one request at its deadline, redirects included: a socket timeout bounds each
    read, so a server sending a byte just before every timeout would hold the request for
    ever; at the deadline the watchdog shuts the request's sockets down, which wakes a read
    blocked in any of them."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self.fire)
        self._timer.daemon = True

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def remaining(self) -> float:
        return max(0.001, self.deadline - time.monotonic())

    def spent(self) -> bool:
        """The deadline came (a socket timeout set to the time left may beat the timer)."""
        return self.fired or time.monotonic() >= self.deadline - 0.01

    def watch(self, connection: http.client.HTTPConnection) -> None:
        # the socket itself: a connection that will close forgets it once the headers are in,
        # while its response still reads the body from it
        with self._lock:
            if connection.sock is not None:
                self._sockets.append(connection.sock)
                if self.fired:
                    _shut(connection.sock)

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._sockets:
                _shut(sock)

    def handlers(self) -> list[urllib.request.BaseHandler]:
        watchdog = self

        class Http(http.client.HTTPConnection):
            def connect(self) -> None:
                super().connect()
                watchdog.watch(self)

        class Https(http.client.HTTPSConnection):
            def connect(self) -> None:
                super().connect()
                watchdog.watch(self)

        class HttpHandler(urllib.request.HTTPHandler):
            def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
                return self.do_open(Http, req)

        class HttpsHandler(urllib.request.HTTPSHandler):
            def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
                return self.do_open(Https, req, context=self._context)  # type: ignore[attr-defined]

        return [HttpHandler(), HttpsHandler()]


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed
        sock.shutdown(socket.SHUT_RDWR)


def http_get(
    url: str, headers: Mapping[str, str], allow_hosts: frozenset[str], seconds: float
) -> str:
    """The body of a 2xx answer to GET `url` from allowed hosts only, the whole request
    (redirects included) ended after `seconds` (`OutOfTime`), the body at most
    `MAX_RESPONSE_BYTES`."""
    check_url(url, allow_hosts)
    request = urllib.request.Request(url, headers=dict(headers))
    with _Watchdog(seconds) as watchdog:
        opener = urllib.request.build_opener(_AllowedRedirects(allow_hosts), *watchdog.handlers())
        try:
            with opener.open(request, timeout=min(30.0, watchdog.remaining())) as response:
                body: bytes = response.read(MAX_RESPONSE_BYTES + 1)
                charset = response.headers.get_content_charset() or "utf-8"
                status = int(response.status)
        except urllib.error.HTTPError as exc:
            raise MacroProblem(f"GET {url} answered HTTP {exc.code} {exc.reason}") from exc
        except urllib.error.URLError as exc:
            if watchdog.spent():
                raise OutOfTime(f"GET {url}") from None
            raise MacroProblem(f"GET {url} failed: {exc.reason}") from exc
        except (OSError, http.client.HTTPException) as exc:
            if watchdog.spent():
                raise OutOfTime(f"GET {url}") from None
            raise MacroProblem(f"GET {url} failed: {type(exc).__name__}: {exc}") from exc
        if watchdog.spent():  # the body read ended because the watchdog shut the socket
            raise OutOfTime(f"GET {url}")
    if not 200 <= status < 300:
        raise MacroProblem(f"GET {url} answered HTTP {status}")
    if len(body) > MAX_RESPONSE_BYTES:
        raise MacroProblem(
            f"GET {url} answered more than {MAX_RESPONSE_BYTES:,} bytes (the size budget for "
            "a web page)"
        )
    return body.decode(charset, errors="replace")

"""What the scenario macros read, kept in bounds: files inside the project root (documents as
text, directory listings, sqlite databases opened read-only), a small JSONPath subset, and web
pages from allowed hosts only.

Every failure here is a `MacroProblem`, a sentence meant for the user; the macro layer adds
which macro failed and its usage.
"""

from __future__ import annotations

import importlib
import json
import re
import shutil
import sqlite3
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing, suppress
from pathlib import Path
from typing import Any

MAX_RESPONSE_BYTES = 10_000_000


class MacroProblem(Exception):
    """A user-ready reason a macro could not do its work."""


def inside_root(root: Path, raw: str) -> Path:
    """`raw` (relative to `root`, or absolute) resolved, symlinks followed; refused outside."""
    root = root.resolve()
    candidate = Path(raw).expanduser()
    resolved = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if not resolved.is_relative_to(root):
        raise MacroProblem(f"path '{raw}' is outside the project root {root}")
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


def read_text(root: Path, raw: str) -> str:
    """A UTF-8 text file inside `root`."""
    try:
        return read_bytes(root, raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MacroProblem(
            f"file '{raw}' is not UTF-8 text (give its file_type if it is a document)"
        ) from exc


def _pdf(path: Path) -> str:
    from pypdf import PdfReader

    return "\n".join(page.extract_text() for page in PdfReader(path).pages)


def _docx(path: Path) -> str:
    import docx

    document = docx.Document(str(path))
    lines = [paragraph.text for paragraph in document.paragraphs]
    for table in document.tables:
        lines.extend("\t".join(cell.text for cell in row.cells) for row in table.rows)
    return "\n".join(lines)


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
    import openpyxl

    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    try:
        blocks = []
        for sheet in book.worksheets:
            rows = (
                "\t".join("" if cell is None else str(cell) for cell in row)
                for row in sheet.iter_rows(values_only=True)
            )
            blocks.append("\n".join([f"# {sheet.title}", *rows]))
        return "\n\n".join(blocks)
    finally:
        book.close()


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
    return path.read_bytes().decode("utf-8")


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


def read_document(root: Path, raw: str, file_type: str | None = None) -> str:
    """A file inside `root` as text, read by its type (its extension unless `file_type`)."""
    path = existing_file(root, raw)
    kind = (file_type or "").lower().lstrip(".")
    if kind and kind not in READERS:
        raise MacroProblem(f"unknown file_type '{file_type}'; known: {', '.join(sorted(READERS))}")
    reader = READERS.get(kind or path.suffix.lower().lstrip("."), _text)
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
    """What `path` selects in a JSON file: one value (a string as it is, anything else as
    JSON), or a JSON list of several."""
    try:
        document = json.loads(read_text(root, raw))
    except json.JSONDecodeError as exc:
        raise MacroProblem(f"file '{raw}' is not JSON: {exc}") from exc
    matches = json_path(document, path)
    if not matches:
        raise MacroProblem(f"json path '{path}' matches nothing in '{raw}'")
    value = matches[0] if len(matches) == 1 else matches
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def fill_template(root: Path, raw: str, variables: Mapping[str, Any]) -> str:
    """A template file inside `root` with its `{name}` placeholders filled (str.format_map)."""
    try:
        return read_text(root, raw).format_map(variables)
    except KeyError as exc:
        raise MacroProblem(
            f"template '{raw}' uses {{{exc.args[0]}}}, which variables_json does not give"
        ) from exc


def list_files(root: Path, raw: str, pattern: str) -> list[str]:
    """The files of a directory inside `root` matching a glob, relative to it, sorted."""
    directory = inside_root(root, raw)
    if not directory.is_dir():
        raise MacroProblem(f"directory '{raw}' not found under {root.resolve()}")
    if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
        raise MacroProblem(f"pattern '{pattern}' must stay inside the directory")
    return sorted(
        path.relative_to(directory).as_posix()
        for path in directory.glob(pattern)
        if path.is_file() and path.resolve().is_relative_to(root.resolve())
    )


def _deny_attach(action: int, *rest: object) -> int:
    return sqlite3.SQLITE_DENY if action == sqlite3.SQLITE_ATTACH else sqlite3.SQLITE_OK


def sql_query(root: Path, raw: str, query: str) -> list[dict[str, Any]]:
    """The rows of `query` on a sqlite file inside `root`, opened read-only (no ATTACH)."""
    uri = f"{existing_file(root, raw).as_uri()}?mode=ro"
    opened: list[sqlite3.Connection] = []

    def fetch() -> list[dict[str, Any]]:
        with closing(sqlite3.connect(uri, uri=True)) as connection:
            opened.append(connection)
            connection.set_authorizer(_deny_attach)
            connection.row_factory = sqlite3.Row
            return [dict(row) for row in connection.execute(query).fetchall()]

    return _interruptible(fetch, opened)


def _interruptible(
    fetch: Callable[[], list[dict[str, Any]]], opened: list[sqlite3.Connection]
) -> list[dict[str, Any]]:
    """`fetch()` in a thread of its own (which opens and closes the connection): the calling
    thread waits on a future, where Ctrl-C reaches it. Blocked inside SQLite it would not see
    Ctrl-C until the query ended, and a recursive CTE may never end. On Ctrl-C the query is
    interrupted, again until it stops (an interrupt sent before it began does nothing), for
    at most a few seconds; a query that does not stop is left to the process's exit."""
    from accord.engine.blocking import start_blocking

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


def http_get(url: str, headers: Mapping[str, str], allow_hosts: frozenset[str]) -> str:
    """The body of a 2xx answer to GET `url` (30 s timeout), from allowed hosts only."""
    check_url(url, allow_hosts)
    request = urllib.request.Request(url, headers=dict(headers))
    opener = urllib.request.build_opener(_AllowedRedirects(allow_hosts))
    try:
        with opener.open(request, timeout=30) as response:
            body: bytes = response.read(MAX_RESPONSE_BYTES + 1)
            charset = response.headers.get_content_charset() or "utf-8"
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        raise MacroProblem(f"GET {url} answered HTTP {exc.code} {exc.reason}") from exc
    except urllib.error.URLError as exc:
        raise MacroProblem(f"GET {url} failed: {exc.reason}") from exc
    if not 200 <= status < 300:
        raise MacroProblem(f"GET {url} answered HTTP {status}")
    if len(body) > MAX_RESPONSE_BYTES:
        raise MacroProblem(f"GET {url} answered more than {MAX_RESPONSE_BYTES} bytes")
    return body.decode(charset, errors="replace")

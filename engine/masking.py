"""Secret values, and their masking in everything accord writes.

Every value accord reads from the environment (a model's `key_var`, a `${{ VAR }}` of an
AgentV targets file, a scenario's `{{ ENV X }}`, a `.env` file) or from an `api_key` field is
remembered here, and so is the value of every environment variable whose name says it is a
credential (`*_API_KEY`, `*_TOKEN`, `*PASSWORD*`, ...), read or not: providers' SDKs read
those themselves. `mask` replaces each remembered value with `[redacted]`; it is applied
where text leaves the process: error messages (`AccordError`, `Issue`), log lines,
tracebacks, the run store and the reports. The values keep working where they are used
(a request's header, a model call's key); only what is shown, stored or written is masked.
"""

from __future__ import annotations

import io
import os
import re
import threading
from collections.abc import Callable
from typing import Any, TextIO, cast

REDACTED = "[redacted]"
CREDENTIAL_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|AUTH|CREDENTIAL|PRIVATE|COOKIE|SIGNATURE|DSN",
    re.IGNORECASE,
)
# A credential's value is masked from 4 characters on (no real key is shorter); any other
# value read from the environment from 6, so that the "true", "1" or "prod" a variable often
# holds do not blank out every message and report that happens to contain the word; and a
# credential-named variable accord never read from 8 (`SSH_AUTH_SOCK=/tmp` is not a key).
CREDENTIAL_LENGTH, VALUE_LENGTH, UNREAD_LENGTH = 4, 6, 8

_lock = threading.Lock()
_values: set[str] = set()
_forgetting: list[Callable[[], None]] = []  # called by forget (on_forget)
_pattern: re.Pattern[str] | None = None


def remember(value: object, name: str | None = None, *, least: int | None = None) -> None:
    """Mask `value` from now on: the value of the environment variable `name`, or (no name)
    a credential given in a file (an `api_key`); only from `least` characters on when given."""
    global _pattern
    if not isinstance(value, str):
        return
    if least is None:
        credential = name is None or CREDENTIAL_NAME.search(name)
        least = CREDENTIAL_LENGTH if credential else VALUE_LENGTH
    found = {v for v in (value, value.strip()) if len(v) >= least}
    with _lock:
        if found <= _values:
            return
        _values.update(found)
        # longest first: a key that holds another key is masked whole
        ordered = sorted(_values, key=len, reverse=True)
        _pattern = re.compile("|".join(re.escape(v) for v in ordered))


def forget() -> None:
    """Forget every remembered value: for a process that runs one project after another
    (a test session), where one project's values would blank out words in the next one's."""
    global _pattern
    with _lock:
        _values.clear()
        _pattern = None
    for forget_too in _forgetting:  # what others know of the same values (`keys`)
        forget_too()


def on_forget(callback: Callable[[], None]) -> None:
    """Have `forget` call `callback` too: a module that knows where values came from."""
    _forgetting.append(callback)


def remember_environment(environ: dict[str, str] | None = None) -> None:
    """Remember every environment variable whose name says it is a credential."""
    for name, value in (os.environ if environ is None else environ).items():
        if CREDENTIAL_NAME.search(name):
            remember(value, name, least=UNREAD_LENGTH)


def mask(text: str) -> str:
    """`text` with every remembered secret replaced by `[redacted]`."""
    pattern = _pattern
    if pattern is None or not text:
        return text
    return pattern.sub(REDACTED, text)


def mask_data(value: Any) -> Any:
    """`value` (JSON-like data) with `mask` applied to every string in it, keys included."""
    if _pattern is None:
        return value
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {mask_data(k): mask_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(mask_data(v) for v in value)
    return value


def holds_secret(text: str) -> bool:
    """Whether `text` holds a remembered secret."""
    pattern = _pattern
    return pattern is not None and pattern.search(text) is not None


class MaskingWriter(io.TextIOBase):
    """A text stream that masks what is written to it before passing it on: what a Rich
    console or a report writer is given instead of the terminal or the file."""

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__()
        # None: the process has no such stream (`2>&-`); what is written to it is dropped,
        # as a Rich console on a missing stream drops it
        self.stream = stream

    def write(self, text: str) -> int:
        if self.stream is not None:
            self.stream.write(mask(text))
        return len(text)

    def flush(self) -> None:
        if self.stream is not None:
            self.stream.flush()

    def isatty(self) -> bool:
        return self.stream is not None and self.stream.isatty()

    def fileno(self) -> int:
        if self.stream is None:
            raise io.UnsupportedOperation("no stream")
        return self.stream.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", None) or "utf-8"


def masked(stream: TextIO | None) -> TextIO:
    """`stream` behind a `MaskingWriter` (a Rich console's file, say)."""
    return cast(TextIO, MaskingWriter(stream))

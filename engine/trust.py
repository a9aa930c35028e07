"""Trust: the powers a file from others has only when the user says so.

A project file is data. A few of its keys reach further than data may: they send a key from
the environment to a URL the file chooses, or run a program that is not the project's own
(one found on the PATH, given by an absolute path, or code written in the file itself). Those
keys work only in a file the user trusts; anywhere else they are refused where the file is
loaded, at their line, with the command that trusts the file (`refusal`).

A file is trusted when:

- it is the project's `config.yml` (the user's own configuration), or a file matched by one
  of its `trusted:` globs (paths relative to the project root, `*` crossing folders); or
- the user ran `accord trust FILE` on it, and it has not changed since: the file's SHA-256 is
  recorded by its absolute path in `$XDG_DATA_HOME/accord/trusted.json` (default
  `~/.local/share/accord/`), outside every project, as direnv keeps its allow list outside the
  folders it allows. A record under the project (`.accord/`) would travel with a repository,
  and a file from others would bring its own trust with it.

Trust is per file, kept by its content: an edited file must be trusted again.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

TRUSTED_KEY = "trusted"
_STORE_NAME = "trusted.json"
_config_globs: dict[Path, tuple[tuple[int, int], tuple[str, ...]]] = {}


def store_path() -> Path:
    """Where `accord trust` records what it trusts: outside every project."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "accord" / _STORE_NAME


def digest(file: Path) -> str:
    return hashlib.sha256(file.read_bytes()).hexdigest()


def _records() -> dict[str, str]:
    try:
        data = json.loads(store_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def _save(records: dict[str, str]) -> None:
    path = store_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".trusted-")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(records, out, indent=1, sort_keys=True)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def grant(files: list[Path]) -> dict[Path, str]:
    """Trust `files` as they are now; each file's recorded digest."""
    records = _records()
    granted = {}
    for file in files:
        resolved = file.resolve()
        granted[file] = records[str(resolved)] = digest(resolved)
    _save(records)
    return granted


def revoke(files: list[Path]) -> list[Path]:
    """Stop trusting `files`; those that were trusted."""
    records = _records()
    gone = [f for f in files if records.pop(str(f.resolve()), None) is not None]
    _save(records)
    return gone


def granted() -> dict[str, str]:
    """Every file trusted with `accord trust`, by absolute path, with its recorded digest."""
    return dict(sorted(_records().items()))


def _globs(root: Path) -> tuple[str, ...]:
    """config.yml's `trusted:` globs (read raw and cached by the file's time: the project
    loader validates the key's type with the rest of config.yml)."""
    config = root / "config.yml"
    try:
        info = config.stat()
        stamp = (info.st_mtime_ns, info.st_size)
    except OSError:
        return ()
    cached = _config_globs.get(config)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    import yaml

    try:
        data: Any = yaml.safe_load(config.read_text(encoding="utf-8"))
    except (OSError, ValueError, yaml.YAMLError):
        data = None
    found = data.get(TRUSTED_KEY) if isinstance(data, dict) else None
    globs = tuple(g for g in found if isinstance(g, str)) if isinstance(found, list) else ()
    _config_globs[config] = (stamp, globs)
    return globs


def is_trusted(file: Path, root: Path) -> bool:
    """Whether the user trusts `file` (of the project at `root`): see the module's text."""
    resolved = file.resolve()
    root = root.resolve()
    if resolved == root / "config.yml":
        return True
    with contextlib.suppress(ValueError):
        relative = resolved.relative_to(root).as_posix()
        if any(fnmatch.fnmatchcase(relative, glob) for glob in _globs(root)):
            return True
    recorded = _records().get(str(resolved))
    if recorded is None:
        return False
    try:
        return digest(resolved) == recorded
    except OSError:
        return False


def refusal(file: Path, root: Path, what: str, instead: str) -> str | None:
    """None when the user trusts `file`; else the message that refuses `what` in it.

    `what` says what the key would do ("sends OPENAI_API_KEY to http://..."), `instead` the
    way to do it without trust ("name a model of config.yml").
    """
    if is_trusted(file, root):
        return None
    return (
        f"{what}: a file accord has not been told to trust may not do this. {instead}; or, "
        f"having read the file, trust it: accord trust {_shown(file)}"
    )


def _shown(file: Path) -> str:
    import shlex

    shown = str(file)
    with contextlib.suppress(ValueError):
        shown = str(file.resolve().relative_to(Path.cwd().resolve()))
    return shlex.quote(shown)

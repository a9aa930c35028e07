"""Keys from the environment: every read of a variable a file names, and where its value may
be sent. One door for every format (config.yml, promptfoo configs, AgentV targets and
catalogs, Oxy agents), so that a new format cannot open another.

Reading (`read`, `environment`): a value a file takes from the environment (`${{ X }}`,
`{{ env.X }}`, `{{ ENV X }}`, a `key_var`) or from a `.env` file is remembered for masking
(engine/masking.py) and as a value from the environment, whose variable `variable_of` tells.

Sending (`destination_refusal`, `model_refusal`): a key from the environment goes only where
the user chose: the provider's own default endpoint, an endpoint written in config.yml, one
read from the environment itself (`${{ AZURE_OPENAI_ENDPOINT }}`, `{{ env.BASE }}`,
`OPENAI_BASE_URL`), or one written in a file the user trusts (engine/trust.py). Any other
file that writes a URL and has a key from the environment sent there (named, or the
provider's default variable picked up) is refused where it is loaded, at its line.
A URL with a key written in the file, or with no key, is the file's own business.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

from . import trust
from .masking import on_forget, remember

_lock = threading.Lock()
_read: dict[str, str] = {}  # value -> the variable it was read from
# a text a template made from values it read (`x{{ env.K }}`, `{{ env.K | upper }}`) -> one
# variable it read: such a text carries the value as much as the value itself
_derived: dict[str, str] = {}
_tracking = threading.local()  # the names read while `rendered` runs a template
CARRIED_MIN = 8  # a value read this long, found inside a text, is carried by it

# the variable a provider's SDK reads its key from when none is given (litellm's names);
# a provider not listed reads one of its own too
DEFAULT_KEYS = {
    "openai": "OPENAI_API_KEY",
    "text-completion-openai": "OPENAI_API_KEY",
    "azure": "AZURE_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "fireworks_ai": "FIREWORKS_AI_API_KEY",
    "perplexity": "PERPLEXITYAI_API_KEY",
    "xai": "XAI_API_KEY",
    "bedrock": "AWS_SECRET_ACCESS_KEY",
    "vertex_ai": "GOOGLE_APPLICATION_CREDENTIALS",
}
# providers that send no key of their own (a local server)
KEYLESS = ("ollama", "ollama_chat", "local")


def read(name: str, fallback: Mapping[str, str] | None = None) -> str | None:
    """The value of the environment variable `name`, which a file names, else `fallback`'s
    (the values of `.env` files); None when neither has it. The value is masked from now on
    and known as one from the environment (`variable_of`)."""
    value = os.environ.get(name)
    if value is None and fallback is not None:
        value = fallback.get(name)
    if value:
        remember(value, name)
        with _lock:
            _read.setdefault(value, name)
            _read.setdefault(value.strip(), name)
    return value


class _Environment(Mapping[str, str]):
    """The environment as a template sees it (`{{ env.X }}`): each value looked up goes
    through `read`; listing the names reads none."""

    def __init__(self, fallback: Mapping[str, str] | None) -> None:
        self._fallback = fallback or {}

    def __getitem__(self, name: str) -> str:
        value = read(name, self._fallback)
        if value is None:
            raise KeyError(name)
        names = getattr(_tracking, "names", None)
        if names is not None:
            names.append(name)
        return value

    def __contains__(self, name: object) -> bool:
        return name in os.environ or name in self._fallback

    def __iter__(self) -> Iterator[str]:
        return iter({*os.environ, *self._fallback})

    def __len__(self) -> int:
        return len({*os.environ, *self._fallback})


def environment(fallback: Mapping[str, str] | None = None) -> Mapping[str, str]:
    """The environment (then `fallback`) for a file's templates: a value is read, and so
    remembered, only when a template looks it up."""
    return _Environment(fallback)


def rendered(render: Callable[[], str]) -> str:
    """Run `render`, a template reading `environment()` (`x{{ env.KEY }}`); its text, when
    made from values read, is known as carrying them (`variable_of`), whatever the template
    did to them (`{{ env.KEY | upper }}`, `{{ env.KEY[1:] }}`)."""
    previous = getattr(_tracking, "names", None)
    names: list[str] = []
    _tracking.names = names
    try:
        text = render()
    finally:
        _tracking.names = previous
    if names and text:
        with _lock:
            _derived.setdefault(text, names[0])
            _derived.setdefault(text.strip(), names[0])
    return text


def variable_of(value: str | None) -> str | None:
    """The variable whose value `value` is or carries (read through `read`: the value
    itself, a text a template made from it, or a text holding it: `x` + key, a URL's
    `?key=` or `user:key@`), else None."""
    if not value:
        return None
    with _lock:
        found = _read.get(value) or _read.get(value.strip()) or _derived.get(value)
        if found is None:
            found = _derived.get(value.strip())
        if found is None:
            found = next(
                (name for read_value, name in _read.items()
                 if len(read_value) >= CARRIED_MIN and read_value in value),
                None,
            )  # fmt: skip
        return found


def forget() -> None:
    """Forget what was read (a process running one project after another): with what
    `masking` remembers (`masking.forget` calls it)."""
    with _lock:
        _read.clear()
        _derived.clear()


on_forget(forget)


def _chosen_by_environment(url: str) -> bool:
    """Whether the environment chose `url`: the whole URL, its start (`${{ ENDPOINT }}` with
    a path added), or its host was read from it."""
    with _lock:
        values = [v for v in _read if len(v) >= 4]
    if any(url == v or (url.startswith(v) and "://" in v and (v.endswith("/") or url[len(v)]
           in "/?#")) for v in values):  # fmt: skip
        return True
    try:
        host = urlsplit(url if "://" in url else f"//{url}").hostname or ""
    except ValueError:
        return False
    # an Azure resource's name read from the environment makes its host
    return bool(host) and any(host.lower() in (v.lower(), f"{v.lower()}.openai.azure.com")
                              for v in values)  # fmt: skip


def shown_url(url: str) -> str:
    """A URL as a message shows it: scheme, host, port and path; no password, no query."""
    try:
        parts = urlsplit(url)
        netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
    except ValueError:
        return url.split("?", 1)[0]
    if not parts.scheme:
        return url.split("?", 1)[0]
    return f"{parts.scheme}://{netloc}{parts.path}"


def destination_refusal(
    file: Path,
    root: Path,
    *,
    url: str | None,
    key: str | None,
    instead: str,
    what: str = "",
) -> str | None:
    """None when the key may go to `url`; else the message refusing it (engine/trust.py's).

    `file` (of the project at `root`) is the file that writes `url`; `url` the endpoint it
    writes (None: the provider's default, or one config.yml or the environment gives); `key`
    the variable the key sent there is read from (None: a key written in the file, or none);
    `instead` the way without trust; `what` names the entry ("provider 'x': ").
    """
    if not url or _chosen_by_environment(url):
        return None
    # a URL written in the file that holds a value from the environment (`?k={{ env.K }}`,
    # `http://{{ env.K }}@host/`) sends it there, whatever key goes with it
    key = key or variable_of(url)
    if not key:
        return None
    return trust.refusal(
        file,
        root,
        f"{what}sends the key in the environment variable {key} to {shown_url(url)}, an "
        "endpoint written in this file",
        instead,
    )


def default_key(model: str | None) -> str | None:
    """The variable a provider reads its key from when given none (None: it takes none)."""
    prefix = (model or "").split("/", 1)[0] if "/" in (model or "") else "openai"
    if prefix in KEYLESS:
        return None
    return DEFAULT_KEYS.get(prefix, f"{prefix.upper()}_API_KEY (the provider's own)")


def key_source(model: str | None, key_var: str | None, api_key: str | None) -> str | None:
    """The variable a call's key comes from: `key_var`; the variable an `api_key` value was
    read from; else, with no key given, the provider's default variable (None: a key written
    in a file, or a provider that takes none)."""
    if key_var:
        return key_var
    if api_key:
        return variable_of(api_key)
    return default_key(model)


class ModelEntry(Protocol):
    """What `model_refusal` reads of a model entry (`spec.ModelSpec`)."""

    @property
    def model(self) -> str | None: ...
    @property
    def vendor(self) -> str | None: ...
    @property
    def model_ref(self) -> str | None: ...
    @property
    def key_var(self) -> str | None: ...
    @property
    def api_key(self) -> str | None: ...
    @property
    def api_base(self) -> str | None: ...
    @property
    def api_base_var(self) -> str | None: ...
    @property
    def api_url(self) -> str | None: ...


def model_refusal(
    spec: ModelEntry, file: Path, root: Path, *, instead: str, what: str = ""
) -> str | None:
    """`destination_refusal` for a model entry a file other than config.yml builds."""
    if spec.api_base_var:
        return None  # the environment names the endpoint
    url = spec.api_base or spec.api_url
    model = spec.model or f"{(spec.vendor or 'openai').lower()}/{spec.model_ref}"
    key = key_source(model, spec.key_var, spec.api_key)
    return destination_refusal(file, root, url=url, key=key, instead=instead, what=what)

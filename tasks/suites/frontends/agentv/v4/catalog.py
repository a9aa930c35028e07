"""AgentV's provider catalog (`.agentv/providers.yaml`): the labels an AgentV 4 eval file
names as its providers (`llm`, `mock_agent`, ...), each resolved to a provider accord runs.

An entry is one of promptfoo's ids accord runs (echo, exec:, python:FILE, a model id such as
openai:chat:MODEL), or one of AgentV's own model providers, which its targets.ts resolves
(resolveOpenAIConfig, resolveAzureConfig, resolveAnthropicConfig, resolveOpenRouterConfig,
resolveGeminiConfig):
`openai` (`model`, `base_url` or `endpoint`, `api_key`, `temperature`, `max_output_tokens`,
`api_format: chat`), `azure` (`endpoint` or `resource`, `deployment` or `model`,
`version`), `anthropic`, `openrouter`, `gemini`. Those become models of accord's
models door. As in AgentV, an `api_key` is `{{ env.NAME }}`: accord reads NAME at each call
and never stores the key. AgentV's `mock` (mock.py), `replay` (replay.py) and `cli`
(cli.py) run too. Its agent providers (`copilot-cli`, `claude-cli`, `codex-cli`,
`pi-cli`, ...) drive a coding agent: refused, naming the catalog's line.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ......engine import keys
from ......engine.yamlmarks import parse_yaml, read_text
from ...promptfoo.providers import SOURCE
from ..common.project import CATALOG, nearest_catalog

if TYPE_CHECKING:
    from ....core.targets import Target
    from ...promptfoo.form import _Loader

# what a promptfoo provider id accord runs looks like: echo, exec:, python:, file://, PREFIX:
RUNNABLE = re.compile(r"^(?:echo$|exec:|python:|file://|[A-Za-z][\w.-]*:)")
# AgentV's model providers -> the promptfoo id accord runs for MODEL
MODEL_KINDS = {
    # litellm's own id: none of promptfoo's OpenAI defaults (its max_tokens 1024, its
    # OPENAI_* base variables), which AgentV does not have
    "openai": "litellm:openai/{}",
    "anthropic": "anthropic:messages:{}",
    "openrouter": "openrouter:{}",
    "gemini": "litellm:gemini/{}",
    "azure": "litellm:openai/{}",  # on the resource's /openai/v1 (see _azure)
}
AZURE_DEFAULT_VERSION = "v1"  # targets.ts DEFAULT_AZURE_API_VERSION
# keys of a model provider's entry accord reads; the rest of AgentV's (retries, workers,
# grader_target, ...) tune its own runner and are refused rather than dropped
MODEL_ENTRY_KEYS = ("id", "provider", "label", "name", "model", "deployment", "variant",
                    "base_url", "endpoint", "api_key", "temperature", "max_output_tokens",
                    "api_format", "resource", "version", "api_version")  # fmt: skip
_AZURE_ONLY = ("resource", "version", "api_version")
_ENV_REF = re.compile(r"^\s*\{\{\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*$")


class CatalogProblem(ValueError):
    """A catalog entry accord cannot run, the message saying what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def providers(loader: _Loader, value: Any) -> Any:
    """The providers with each AgentV label replaced by its catalog entry; AgentV runs the
    label `default` when a file names none."""
    if value is None:
        value = ["default"]
    if not isinstance(value, list):
        return value  # the promptfoo loader says what a provider list is
    out: list[Any] = []
    for index, entry in enumerate(value):
        if isinstance(entry, str) and not RUNNABLE.match(entry):
            found = _catalog_entry(loader, entry, ("providers", index))
            if found is not None:
                out.append(found)
            continue
        out.append(entry)
    return out


def _catalog_entry(loader: _Loader, label: str, loc: tuple[Any, ...]) -> dict[str, Any] | None:
    path = nearest_catalog(loader.base, loader.root)
    if path is None:
        loader.issue(loc, f"provider '{label}' is an AgentV provider label, and no "
                     f"{CATALOG} defines it (searched from {loader.base} up to the project "
                     f"root): define '{label}' there, or give a provider accord runs "
                     "(echo, exec:, python:, a model id such as openai:chat:MODEL)"
                     )  # fmt: skip
        return None
    try:
        data, marks = parse_yaml(read_text(path), path, core=True)
    except Exception as exc:  # the catalog's own syntax error, with its line
        loader.issue(loc, f"{path}: {getattr(exc, 'message', exc)}")
        return None
    entries = data.get("providers") if isinstance(data, dict) else data
    prefix: tuple[Any, ...] = ("providers",) if isinstance(data, dict) else ()
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        if not (isinstance(entry, dict) and label in (entry.get("label"), entry.get("id"))):
            continue
        pid = entry.get("id", entry.get("provider"))
        line = marks.find((*prefix, index))[0]
        # where its endpoint is written: the catalog's trust decides where keys go
        at = next((k for k in ("base_url", "endpoint", "resource") if k in entry), None)
        source = (str(path), marks.find((*prefix, index, at))[0] if at else line)
        if isinstance(pid, str) and pid in MODEL_KINDS:
            try:
                return {**_model_entry(pid, entry, label), SOURCE: source}
            except CatalogProblem as exc:
                loader.issue(loc, f"provider '{label}' ({path}:{line}): {exc.message}")
                return None
        if pid == "mock":  # AgentV's canned answer (mock.py)
            from . import mock as agentv_mock

            return {"id": agentv_mock.ID, "label": label,
                    "config": agentv_mock.entry_config(entry)}  # fmt: skip
        if pid == "replay":  # recorded answers (replay.py)
            return _replay(loader, entry, label, loc, f"{path}:{line}")
        if pid == "cli":  # a program of AgentV's placeholders (cli.py)
            found = _cli(loader, entry, label, loc, f"{path}:{line}")
            # its program is judged with the catalog's trust, at the catalog's line
            return None if found is None else {**found, SOURCE: (str(path), line)}
        if not isinstance(pid, str) or not RUNNABLE.match(pid):
            loader.issue(loc, f"provider '{label}' is AgentV's '{pid}' provider ({path}:"
                         f"{line}), which accord does not run (it drives a coding agent or a "
                         f"program of AgentV's own): define '{label}' there as a provider accord "
                         "runs (echo, exec:, python:FILE, a model id such as "
                         "openai:chat:MODEL, or AgentV's openai, azure, anthropic, openrouter, "
                         "gemini)")  # fmt: skip
            return None
        if (
            pid.startswith(("python:", "file://"))
            and not Path(pid.split(":", 1)[1].removeprefix("//")).is_absolute()
        ):
            # a catalog's provider file is the catalog's folder's, wherever the eval file is
            rest = pid.split(":", 1)[1].removeprefix("//")
            pid = f"python:{(path.parent / rest).resolve()}"
        return {**entry, "id": pid, "label": label, SOURCE: (str(path), line)}
    # as AgentV's resolveUseTarget says it, with the labels there are; 'default' is no
    # special label but the one AgentV runs when the file names none (pickProviderLabel)
    listed = entries if isinstance(entries, list) else []
    labels = [str(e.get("label") or e.get("id")) for e in listed if isinstance(e, dict)]
    available = f" (its labels: {', '.join(labels)})" if labels else ""
    default = (
        "; a file without 'providers' runs the label 'default', which AgentV fails alike: "
        "name one of those labels in the file's 'providers'"
        if label == "default"
        else ""
    )
    loader.issue(loc, f"provider '{label}' is not in {path}{available}: define it there "
                 f"(label: {label}){default}")  # fmt: skip
    return None


def _replay(
    loader: _Loader, entry: dict[str, Any], label: str, loc: tuple[Any, ...], where: str
) -> dict[str, Any] | None:
    from . import replay as agentv_replay

    data = parse_yaml(read_text(loader.path), loader.path, core=True)[0]
    try:
        config = agentv_replay.entry_config(
            entry, loader.path, loader.root, agentv_replay.suite_name(data, loader.path)
        )
    except agentv_replay.ReplayProblem as exc:
        loader.issue(loc, f"provider '{label}' ({where}): {exc.message}")
        return None
    return {"id": agentv_replay.ID, "label": label, "config": config}


def _cli(
    loader: _Loader, entry: dict[str, Any], label: str, loc: tuple[Any, ...], where: str
) -> dict[str, Any] | None:
    from . import cli as agentv_cli

    try:
        config = agentv_cli.entry_config(entry, loader.path, loader.root)
    except agentv_cli.CliProblem as exc:
        loader.issue(loc, f"provider '{label}' ({where}): {exc.message}")
        return None
    return {"id": agentv_cli.ID, "label": label, "config": config}


def _model_entry(kind: str, entry: dict[str, Any], label: str) -> dict[str, Any]:
    """An AgentV model provider as the promptfoo provider entry accord runs."""
    unknown = [k for k in entry if k not in MODEL_ENTRY_KEYS or
               (kind != "azure" and k in _AZURE_ONLY)]  # fmt: skip
    if unknown:
        raise CatalogProblem(
            f"key '{unknown[0]}' of an AgentV '{kind}' provider is not supported by accord "
            f"(supported: {', '.join(MODEL_ENTRY_KEYS[3:])}): remove it"
        )
    model_source = entry.get("model", entry.get("deployment", entry.get("variant")))
    model = _text(model_source, "model") if model_source is not None else None
    if model is None:
        if kind != "gemini":
            raise CatalogProblem(f"an AgentV '{kind}' provider needs 'model'")
        model = "gemini-2.5-flash"  # resolveGeminiConfig's default
    config: dict[str, Any] = {"apiKeyEnvar": _key_variable(entry.get("api_key"), kind)}
    pid = MODEL_KINDS[kind].format(model)
    if kind == "azure":
        pid = _azure(entry, model, config)
    elif kind == "openai":
        base = entry.get("endpoint", entry.get("base_url"))
        if base is not None:
            config["apiBaseUrl"] = _openai_base(_text(base, "base_url"))
        api_format = entry.get("api_format")
        if api_format not in (None, "chat"):
            raise CatalogProblem(
                f"api_format '{api_format}': accord calls a model's chat completions API "
                "only; use 'api_format: chat' (or leave it out)"
            )
    elif "base_url" in entry or "endpoint" in entry or "api_format" in entry:
        raise CatalogProblem(f"an AgentV '{kind}' provider takes no base_url/api_format")
    for key, name in (("temperature", "temperature"), ("max_output_tokens", "max_tokens")):
        if entry.get(key) is not None:
            value = _text(entry[key], key) if isinstance(entry[key], str) else entry[key]
            try:
                config[name] = float(value) if key == "temperature" else int(value)
            except (TypeError, ValueError):
                raise CatalogProblem(f"'{key}' is a number, not {entry[key]!r}") from None
    return {"id": pid, "label": label, "config": config}


def _azure(entry: dict[str, Any], deployment: str, config: dict[str, Any]) -> str:
    """resolveAzureConfig (targets.ts): `endpoint` (or `resource`: a URL, or the resource's
    name), the deployment (`deployment` or `model`), `version` (or `api_version`; an unset
    variable is AgentV's default `v1`). AgentV calls the deployment through the resource's
    `/openai/v1` API (buildAzureBaseUrl); accord calls the same deployment there, with the
    chat API, when the version is `v1`, and through litellm's Azure provider with the
    version given otherwise."""
    if "api_format" in entry:
        raise CatalogProblem("an AgentV 'azure' provider takes no api_format (AgentV refuses "
                             "it too): remove it")  # fmt: skip
    source = entry.get("endpoint", entry.get("resource"))
    if source is None:
        raise CatalogProblem("an AgentV 'azure' provider needs 'endpoint' (or 'resource')")
    endpoint = _text(source, "endpoint").strip().rstrip("/")
    if not re.match(r"(?i)^https?://", endpoint):
        endpoint = f"https://{endpoint}.openai.azure.com"
    raw = entry.get("version", entry.get("api_version"))
    version = _optional_text(raw, "version") if raw is not None else None
    version = re.sub(r"(?i)^api[-_]?version\s*=\s*", "", (version or "").strip()).strip()
    version = version or AZURE_DEFAULT_VERSION
    root = re.sub(r"/openai(/v1)?$", "", endpoint)
    if version == AZURE_DEFAULT_VERSION:
        config["apiBaseUrl"] = f"{root}/openai/v1"
        return MODEL_KINDS["azure"].format(deployment)
    config["apiBaseUrl"] = root
    config["apiVersion"] = version
    return f"litellm:azure/{deployment}"


def _optional_text(value: Any, key: str) -> str | None:
    """A catalog value whose `{{ env.NAME }}` may be unset (AgentV's optionalEnv)."""
    found = _ENV_REF.match(value) if isinstance(value, str) else None
    if found is not None and not keys.read(found.group(1)):
        return None
    return _text(value, key)


def _text(value: Any, key: str) -> str:
    """A catalog value: text, with AgentV's `{{ env.NAME }}` read from the environment."""
    if not isinstance(value, str | int | float):
        raise CatalogProblem(f"'{key}' is text, not {value!r}")
    text = str(value)
    found = _ENV_REF.match(text)
    if found is None:
        return text
    name = found.group(1)
    found_value = keys.read(name)  # masked wherever it could show (docs/security.md)
    if not found_value:
        raise CatalogProblem(f"'{key}' reads the environment variable {name}, which is not set")
    return found_value


def _key_variable(value: Any, kind: str) -> str:
    """The variable an `api_key: "{{ env.NAME }}"` names; as in AgentV, a key is never
    written in the catalog itself."""
    found = _ENV_REF.match(value) if isinstance(value, str) else None
    if found is None:
        raise CatalogProblem(
            f"an AgentV '{kind}' provider's api_key is '{{{{ env.NAME }}}}' (the variable that "
            "holds the key), as AgentV requires"
        )
    return found.group(1)


def _openai_base(url: str) -> str:
    """normalizeOpenAIBaseUrl (targets.ts): no trailing slash, and `/v1` at the end unless
    the URL is an Azure deployment's."""
    trimmed = url.strip().rstrip("/")
    if re.search(r"\.openai\.azure\.com/openai/deployments/[^/]+$", trimmed, re.IGNORECASE):
        return trimmed
    return trimmed if trimmed.endswith("/v1") else f"{trimmed}/v1"


def special_target(pid: str, config: dict[str, Any]) -> Target | None:
    """The target of an entry this catalog hands the provider builder under one of AgentV's
    own ids (no promptfoo id): its canned answer (mock.py), its recorded answers
    (replay.py), its program (cli.py)."""
    from . import cli as agentv_cli
    from . import mock as agentv_mock
    from . import replay as agentv_replay

    if pid == agentv_mock.ID:  # an AgentV catalog's canned answer
        return agentv_mock.MockTarget(**config)
    if pid == agentv_replay.ID:  # an AgentV catalog's recorded answers
        return agentv_replay.ReplayTarget(**config)
    if pid == agentv_cli.ID:  # an AgentV catalog's program
        return agentv_cli.CliCommandTarget(**config)
    return None

"""AgentV's `.agentv/targets.yaml`: named targets mapped onto accord's.

```yaml
targets:
  - name: default
    provider: azure                    # azure, openai, anthropic, gemini, ... -> litellm
    endpoint: ${{ AZURE_OPENAI_ENDPOINT }}
    api_key: ${{ AZURE_OPENAI_API_KEY }}
    model: ${{ AZURE_DEPLOYMENT_NAME }}
    judge_target: azure_base           # the model that judges this target's answers
  - name: mock_agent
    provider: cli                      # a program; {PROMPT} {OUTPUT_FILE} ... filled in
    command_template: python agent.py --prompt "{PROMPT}" --output {OUTPUT_FILE}
  - name: small
    type: model                        # accord's own target forms are accepted too
    model: local
```

`${{ VAR }}` takes the whole value from the environment, else from `.env` files between the
eval file's folder and the project's (nearer first); an unset one is an error at its line,
but only for the targets a run uses. Providers that drive a coding agent's own CLI (codex,
claude-code, copilot, vscode, pi) are refused with what to use instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ......engine import keys
from ......engine.errors import Issue
from ......engine.masking import remember
from ......engine.spec import ModelSpec
from ......engine.yamlmarks import Loc, Marks
from ....core.targets import Target, target_from
from .project import find_agentv_folder, project_root

VARIABLE = re.compile(r"^\s*\$\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\s*$")
# AgentV provider -> litellm provider prefix
LITELLM_PROVIDERS = {
    "openai": "openai",
    "azure": "azure",
    "azure-openai": "azure",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "google": "gemini",
    "google-gemini": "gemini",
    "openrouter": "openrouter",
    "ollama": "ollama_chat",
    "mistral": "mistral",
    "groq": "groq",
    "deepseek": "deepseek",
    "bedrock": "bedrock",
    "vertex": "vertex_ai",
}
CLI_AGENTS = {
    "codex": "the Codex CLI",
    "codex-cli": "the Codex CLI",
    "claude-code": "the Claude Code CLI",
    "claude": "the Claude Code CLI",
    "copilot": "GitHub Copilot",
    "copilot-sdk": "GitHub Copilot",
    "copilot_sdk": "GitHub Copilot",
    "copilot-cli": "GitHub Copilot",
    "vscode": "VS Code",
    "vscode-insiders": "VS Code Insiders",
    "pi": "the pi coding agent",
    "pi-coding-agent": "the pi coding agent",
    "pi-agent-sdk": "the pi agent SDK",
}
# the keys of AgentV's targets accord reads (providers/targets.ts at 4a86b769)
CLI_KEYS = frozenset({
    "name", "provider", "command_template", "commandTemplate", "files_format", "filesFormat",
    "attachments_format", "attachmentsFormat", "cwd", "workspace_template", "workspaceTemplate",
    "timeout_seconds", "timeoutSeconds", "healthcheck", "judge_target",
})  # fmt: skip
MODEL_KEYS = frozenset({
    "name", "provider", "model", "deployment", "deployment_name", "endpoint", "base_url",
    "api_base", "api_key", "version", "api_version", "temperature", "max_output_tokens",
    "max_tokens", "timeout_seconds", "judge_target",
})  # fmt: skip
# keys that change how AgentV logs or dispatches, never a result: read and left unused
NO_EFFECT = frozenset({
    "verbose", "cli_verbose", "cliVerbose", "provider_batching", "providerBatching",
    "keep_temp_files", "keepTempFiles", "keep_output_files", "keepOutputFiles", "workers",
})  # fmt: skip
AZURE_API_VERSION = "2024-12-01-preview"
AGENTV_PREFIX = "agentv:"


class TargetProblem(Exception):
    """A target that cannot be used, at a position of the targets file."""

    def __init__(self, loc: Loc, message: str) -> None:
        super().__init__(message)
        self.loc = loc
        self.message = message


@dataclass
class ResolvedTarget:
    """A targets.yaml entry as accord runs it: the target, its judge's target name, and the
    model entry it adds to the run's models (None for programs)."""

    name: str
    target: Target
    judge_target: str | None = None
    model: ModelSpec | None = None
    workspace_template: str | None = None  # a cli target's, from the eval file's folder


@dataclass
class TargetsFile:
    """The entries of a targets file by name, with where each is written."""

    path: Path | None
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    index: dict[str, int] = field(default_factory=dict)
    marks: Marks = field(default_factory=Marks)
    env: dict[str, str] = field(default_factory=dict)
    # the project the eval file belongs to, and whether the command line named the file
    # (`--targets`: the user's choice, as config.yml is): where its endpoints may get keys
    root: Path | None = None
    explicit: bool = False

    def issue(self, loc: Loc, message: str) -> Issue:
        line, column = self.marks.find(loc)
        from ......engine.yamlmarks import format_path

        return Issue(self.path or Path("targets.yaml"), line, column, format_path(loc), message)

    def resolve(self, name: str) -> ResolvedTarget:
        """The target `name` names; `TargetProblem` when it cannot be used."""
        if name not in self.entries:
            known = ", ".join(sorted(self.entries)) or "none"
            where = f"{self.path}" if self.path else "no .agentv/targets.yaml found"
            raise TargetProblem((), f"unknown target '{name}' (targets in {where}: {known})")
        at: Loc = ("targets", self.index[name])
        entry = {k: self._value(at, k, v) for k, v in self.entries[name].items()}
        remember(entry.get("api_key"))
        judge = entry.pop("judge_target", None)
        if "type" in entry:  # accord's own target form
            body = {k: v for k, v in entry.items() if k != "name"}
            try:
                return ResolvedTarget(name, target_from(body), judge)
            except ValueError as exc:
                raise TargetProblem(at, str(exc).splitlines()[0]) from None
        provider = str(entry.get("provider", "")).lower()
        if not provider:
            raise TargetProblem(at, f"target '{name}' has no 'provider'")
        if provider in CLI_AGENTS:
            raise TargetProblem(
                (*at, "provider"),
                f"target '{name}' uses provider '{provider}' ({CLI_AGENTS[provider]}), which "
                "accord does not drive; run the agent as a `provider: cli` target (a "
                "command_template that prints its answer or writes {OUTPUT_FILE}), or answer "
                "with an accord agent (`type: agent`) or a model provider",
            )
        if provider == "cli":
            workspace = _first(entry, "workspace_template", "workspaceTemplate")
            program = _cli_target(name, {**entry, "judge_target": judge}, at)
            cli = ResolvedTarget(name, program, judge)
            cli.workspace_template = str(workspace) if workspace is not None else None
            return cli
        if provider == "mock":
            from .cli import ReplyTarget

            return ResolvedTarget(name, ReplyTarget(text=str(entry.get("response", ""))), judge)
        if provider not in LITELLM_PROVIDERS:
            known = ", ".join(sorted({*LITELLM_PROVIDERS, "cli", "mock"}))
            raise TargetProblem(
                (*at, "provider"), f"unknown provider '{provider}' (accord maps: {known})"
            )
        return self._model_target(name, provider, entry, at, judge)

    def _model_target(
        self, name: str, provider: str, entry: dict[str, Any], at: Loc, judge: str | None
    ) -> ResolvedTarget:
        from ....core.targets import ModelTarget

        _unknown_key({**entry, "judge_target": None}, MODEL_KEYS, at, f"{provider} target")
        model = entry.get("model") or entry.get("deployment") or entry.get("deployment_name")
        if not model:
            raise TargetProblem(at, f"target '{name}' has no 'model'")
        base = entry.get("endpoint") or entry.get("base_url") or entry.get("api_base")
        version = entry.get("version") or entry.get("api_version")
        prefix = LITELLM_PROVIDERS[provider]
        if prefix == "azure":
            version = version or AZURE_API_VERSION
            if base and "://" not in str(base):  # a resource name
                base = f"https://{base}.openai.azure.com"
        temperature = entry.get("temperature")
        max_tokens = entry.get("max_output_tokens") or entry.get("max_tokens")
        timeout = entry.get("timeout_seconds")
        try:
            spec = ModelSpec(
                name=AGENTV_PREFIX + name, model=f"{prefix}/{model}",
                api_base=str(base) if base else None, api_version=str(version) if version
                else None, api_key=str(entry["api_key"]) if entry.get("api_key") else None,
                temperature=float(temperature) if temperature is not None else None,
                max_tokens=int(max_tokens) if max_tokens is not None else None,
                timeout=float(timeout) if timeout is not None else None,
            )  # fmt: skip
        except (ValueError, TypeError) as exc:
            raise TargetProblem(at, f"target '{name}': {str(exc).splitlines()[0]}") from None
        if self.path is not None and not self.explicit:
            refused = keys.model_refusal(
                spec, self.path, self.root or self.path.parent.parent, what=f"target '{name}' ",
                instead="Write the endpoint as ${{ VAR }} (read from the environment), or the "
                "key itself in the file, or name a targets file you reviewed with --targets",
            )  # fmt: skip
            if refused is not None:
                key = next((k for k in ("endpoint", "base_url", "api_base") if k in entry), "")
                raise TargetProblem((*at, key) if key else at, refused)
        return ResolvedTarget(name, ModelTarget(model=spec.name), judge, spec)

    def _value(self, at: Loc, key: str, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        match = VARIABLE.match(value)
        if match is None:
            return value
        variable = match.group(1)
        found = keys.read(variable, self.env)  # remembered: masked, known as the environment's
        if not found:
            raise TargetProblem(
                (*at, key),
                f"{key} reads ${{{{ {variable} }}}}, which is not set: set the environment "
                "variable, or write it in a .env file beside the eval file or the project",
            )
        return found


def _first(entry: dict[str, Any], *keys: str) -> Any:
    return next((entry[k] for k in keys if entry.get(k) is not None), None)


def _unknown_key(entry: dict[str, Any], known: frozenset[str], at: Loc, what: str) -> None:
    """A key accord does not implement is an error at its line, never dropped."""
    for key in entry:
        if key not in known and key not in NO_EFFECT:
            raise TargetProblem(
                (*at, key),
                f"{what} key '{key}' is not supported by accord (it reads: "
                + ", ".join(sorted(known - {"name", "provider"}))
                + "); remove it",
            )


def _healthcheck(value: Any, at: Loc) -> dict[str, Any] | None:
    if value is None:
        return None
    known = {"type", "command_template", "commandTemplate", "cwd", "url", "timeout_seconds"}
    if not isinstance(value, dict) or not (value.get("url") or value.get("command_template")
                                           or value.get("commandTemplate")):  # fmt: skip
        raise TargetProblem(
            (*at, "healthcheck"),
            "healthcheck is {type: command, command_template, cwd} or {type: http, url}",
        )
    for key in value:
        if key not in known:
            raise TargetProblem((*at, "healthcheck", key), f"unknown healthcheck key '{key}'")
    check = dict(value)
    if "commandTemplate" in check:
        check["command_template"] = check.pop("commandTemplate")
    return check


def _cli_target(name: str, entry: dict[str, Any], at: Loc) -> Target:
    from .cli import CliTarget
    from .command_template import template_problem

    _unknown_key(entry, CLI_KEYS, at, "cli target")
    key = "command_template" if "command_template" in entry else "commandTemplate"
    template = entry.get(key)
    if not isinstance(template, str) or not template.strip():
        raise TargetProblem(at, f"cli target '{name}' needs a 'command_template'")
    problem = template_problem(template)
    if problem is not None:
        raise TargetProblem((*at, key), f"cli target '{name}': {problem}")
    timeout = _first(entry, "timeout_seconds", "timeoutSeconds")
    workspace = _first(entry, "workspace_template", "workspaceTemplate")
    if workspace is not None and entry.get("cwd") is not None:
        raise TargetProblem(
            (*at, "cwd"), f"cli target '{name}': cwd and workspace_template exclude each other"
        )
    try:
        return CliTarget(
            command_template=template,
            cwd=entry.get("cwd"),
            timeout=float(timeout) if timeout is not None else None,
            files_format=_first(
                entry, "files_format", "filesFormat", "attachments_format", "attachmentsFormat"
            ),
            healthcheck=_healthcheck(entry.get("healthcheck"), at),
        )
    except ValueError as exc:
        raise TargetProblem(at, f"cli target '{name}': {str(exc).splitlines()[-1]}") from None


def read_env(eval_file: Path, top: Path) -> dict[str, str]:
    """Values of `.env` files from `eval_file`'s folder up to `top` (nearer ones win)."""
    from dotenv import dotenv_values

    folder = eval_file.resolve().parent
    chain = [folder, *folder.parents]
    top = top.resolve()
    found: dict[str, str] = {}
    for candidate in chain:
        env_file = candidate / ".env"
        if env_file.is_file():
            for key, value in dotenv_values(env_file).items():
                if value is not None:
                    remember(value, key)
                    found.setdefault(key, value)
        if candidate == top:
            break
    return found


def load_targets(eval_file: Path, explicit: Path | None) -> TargetsFile:
    """The targets file for `eval_file`: `explicit`, else the nearest
    `.agentv/targets.yaml` (or `.yml`); an empty one when there is none."""
    from ......engine.errors import ValidationError
    from ......engine.yamlmarks import parse_yaml, read_text

    path = explicit
    root = project_root(eval_file)[0]  # never a file above it (common/project.py)
    folder = find_agentv_folder(eval_file, root)
    if path is None and folder is not None:
        for filename in ("targets.yaml", "targets.yml"):
            if (folder / filename).is_file():
                path = folder / filename
                break
    top = folder.parent if folder is not None else root
    env = read_env(eval_file, top)
    if path is None:
        return TargetsFile(None, env=env)
    if not path.is_file():
        raise ValidationError([Issue(path, None, None, "", "targets file not found")])
    data, marks = parse_yaml(read_text(path), path, core=True)
    entries = data.get("targets") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise ValidationError(
            [Issue(path, 1, 1, "targets", "expected 'targets:', a list of named targets")]
        )
    out = TargetsFile(path, marks=marks, env=env, explicit=explicit is not None,
                      root=root)  # fmt: skip
    issues: list[Issue] = []
    for index, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            issues.append(out.issue(("targets", index), "a target needs a 'name'"))
            continue
        if name in out.entries:
            issues.append(out.issue(("targets", index, "name"), f"duplicate target '{name}'"))
            continue
        out.entries[name] = entry
        out.index[name] = index
    if issues:
        raise ValidationError(issues)
    return out

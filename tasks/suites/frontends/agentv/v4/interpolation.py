"""AgentV's interpolation (interpolation.ts): `{{ env.X }}` filled from the environment when a
file loads, `{{ name }}` from a test's vars when it runs; and the pattern of a template that
is one var."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ......engine import keys
from ...promptfoo import templating
from ...promptfoo.asserts.base import render_text

if TYPE_CHECKING:
    from ......engine.yamlmarks import Loc
    from ...promptfoo.form import _Loader

# a template that is one var: `{{ input }}`
WHOLE_VAR = re.compile(r"^\s*\{\{\s*([A-Za-z_]\w*)\s*\}\}\s*$")

# AgentV renders every `{{ env.… }}` of an eval file with the process environment when it
# loads the file (interpolation.ts), leaving the rest of each template to test time
_ENV_OUTPUT = re.compile(r"\{\{\s*env\.[\s\S]*?\}\}")
_WHOLE_ENV_OUTPUT = re.compile(r"^\s*\{\{\s*env\.[\s\S]*?\}\}\s*$")
_NUMBER = re.compile(r"^-?(?:0|[1-9]\d*)(?:\.\d+)?$")


_ENV_NAME = re.compile(r"env\s*(?:\.\s*([A-Za-z_]\w*)|\[\s*['\"]([^'\"]+)['\"]\s*\])")


def remember_env_refs(text: str, env: Mapping[str, str]) -> None:
    """Mask from now on the value of every variable `text`'s `{{ env.NAME }}` reads, as
    every value accord reads from the environment is masked (docs/security.md)."""
    from ......engine.masking import remember

    for found in _ENV_NAME.finditer(text):
        name = found.group(1) or found.group(2)
        remember(env.get(name), name)


def env_interpolated(loader: _Loader, value: Any, env: Mapping[str, str], loc: Loc = ()) -> Any:
    if isinstance(value, dict):
        return {k: env_interpolated(loader, v, env, (*loc, k)) for k, v in value.items()}
    if isinstance(value, list):
        return [env_interpolated(loader, v, env, (*loc, i)) for i, v in enumerate(value)]
    if not isinstance(value, str) or "${{" in value or not _ENV_OUTPUT.search(value):
        return value
    try:
        text = keys.rendered(
            lambda: _ENV_OUTPUT.sub(lambda m: templating.render(m.group(0), {"env": env}), value)
        )
        remember_env_refs(value, env)
    except templating.NunjucksDifference as exc:
        loader.issue(loc, f"{{{{ env.… }}}}: {exc.message}")
        return value
    if not _WHOLE_ENV_OUTPUT.match(value):
        return text
    # a value that is only an env expression takes the type its text reads as
    if text in ("true", "false"):
        return text == "true"
    if _NUMBER.match(text):
        return float(text) if "." in text else int(text)
    return text


_WHOLE_PATH = re.compile(r"^\s*\{\{\s*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\s*\}\}\s*$")


def vars_interpolated(value: Any, variables: dict[str, Any]) -> Any:
    """interpolateTemplateVars (interpolation.ts): every string filled from the vars; a
    string that is one `{{ name }}` (or `{{ a.b }}`) naming a value is that value."""
    if isinstance(value, str):
        whole = _WHOLE_PATH.match(value)
        if whole:
            found: Any = {**variables, "vars": variables}
            for part in whole.group(1).split("."):
                found = found.get(part) if isinstance(found, dict) else None
            if found is not None:
                return found
        return render_text(value, variables)
    if isinstance(value, list):
        return [vars_interpolated(v, variables) for v in value]
    if isinstance(value, dict):
        return {k: vars_interpolated(v, variables) for k, v in value.items()}
    return value

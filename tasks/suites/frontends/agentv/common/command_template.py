"""How a `cli` target's `command_template` gets its values without the shell reading them.

AgentV fills each placeholder with the value in single quotes and hands the line to the
shell. Inside the user's own quotes (`./agent.sh "{PROMPT}"`) that quoting turns inside out:
the value's own `'` closes a quote, and `a'$(touch pwned)'` runs. accord never writes a value
into the command line. Every value is an environment variable of the command
(`AGENTV_PROMPT`, `AGENTV_GUIDELINES`, `AGENTV_EVAL_ID`, `AGENTV_ATTEMPT`,
`AGENTV_OUTPUT_FILE`, `AGENTV_FILES`), and each placeholder becomes a reference to it, chosen
by where the placeholder sits; the shell expands a reference once and never parses the
result as code:

- unquoted, `{PROMPT}` -> `"${AGENTV_PROMPT}"`: one word, as AgentV's quoting meant;
  `{FILES}` -> `"$@"`: each input file one word (the files are the shell's arguments);
- inside double quotes, `"{PROMPT}"` -> `"${AGENTV_PROMPT}"`: the text around it is kept;
- inside single quotes, nothing is expanded, and what the quotes hold is usually a script
  for another program (`bash -c '... > {OUTPUT_FILE}'`, as in AgentV's examples), which would
  run a value as its own code. accord's own values, a temporary file's path and the attempt
  number, are written there as they are (they hold only `[A-Za-z0-9_./-]`); a value from the
  eval file (`{PROMPT}`, `{GUIDELINES}`, `{EVAL_ID}`, `{FILES}`) is refused when the target
  is loaded, with the fix: a script file of the project reading `"$AGENTV_PROMPT"`.

Double quotes do not make a script safe: in `sh -c "echo {PROMPT}"` the outer shell expands
the reference into the script of the inner one, which runs the value. A value from the eval
file inside the script of `sh -c` (`bash -lc`, `env sh -c`, ...), in `eval`'s words, or piped
into a shell, is refused whatever its quotes, trusted or not (engine/programs.splice_problem).

A placeholder right after a backslash is refused too: the backslash would quote the first
character of the reference and leave the rest to the shell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

PLACEHOLDERS = ("PROMPT", "GUIDELINES", "EVAL_ID", "ATTEMPT", "FILES", "OUTPUT_FILE")
# values the eval file (or its data) gives; accord makes the others
FROM_DATA = ("PROMPT", "GUIDELINES", "EVAL_ID", "FILES")
ENV_PREFIX = "AGENTV_"
PLACEHOLDER = re.compile(r"\{([A-Z_]+)\}")
# what accord's own values may hold to be written inside single quotes as they are
PLAIN_VALUE = re.compile(r"^[A-Za-z0-9_./-]*$")

Context = Literal["plain", "double", "single", "escaped"]


@dataclass(frozen=True)
class Slot:
    """A placeholder of the template: its name, where it is, and what quotes it sits in."""

    name: str
    start: int
    end: int
    context: Context


def slots(template: str) -> list[Slot]:
    """The placeholders of `template` with their quoting, scanned as the POSIX shell reads
    quotes, `$(...)` and backquotes (a command substitution starts unquoted again)."""
    found: list[Slot] = []
    # open constructs, innermost last: '"' double quotes, "'" single, "$'" ANSI-C quotes,
    # "(" a command substitution or subshell, "`" a backquoted command
    stack: list[str] = []
    i = 0
    while i < len(template):
        top = stack[-1] if stack else ""
        match = PLACEHOLDER.match(template, i)
        if match is not None:
            context: Context = (
                "single" if top in ("'", "$'") else "double" if top == '"' else "plain"
            )
            found.append(Slot(match.group(1), match.start(), match.end(), context))
            i = match.end()
        elif template[i] == "\\" and top not in ("'", "$'"):
            escaped = PLACEHOLDER.match(template, i + 1)
            if escaped is not None:
                found.append(Slot(escaped.group(1), escaped.start(), escaped.end(), "escaped"))
                i = escaped.end()
            else:
                i += 2  # the next character is taken as it is
        else:
            i = _step(template, i, stack)
    return found


def _step(template: str, i: int, stack: list[str]) -> int:
    """Past the character at `i`, opening or closing what it opens or closes."""
    top = stack[-1] if stack else ""
    char = template[i]
    if top in ("'", "$'"):
        if char == "\\" and top == "$'":
            return i + 2
        if char == "'":
            stack.pop()
    elif top == '"':
        if char == '"':
            stack.pop()
        elif template.startswith("$(", i):
            stack.append("(")
            return i + 2
        elif char == "`":
            stack.append("`")
    elif char == "'":  # unquoted, or inside $(...) or `...`
        stack.append("$'" if template[i - 1 : i] == "$" else "'")
    elif char in ('"', "("):
        stack.append(char)
    elif (char == ")" and top == "(") or (char == "`" and top == "`"):
        stack.pop()
    elif char == "`":
        stack.append("`")
    return i + 1


def template_problem(template: str) -> str | None:
    """Why `template` cannot be filled safely (with the fix), or None."""
    for slot in slots(template):
        if slot.name not in PLACEHOLDERS:
            return (
                f"unknown placeholder {{{slot.name}}} in command_template (known: "
                + ", ".join(f"{{{p}}}" for p in PLACEHOLDERS)
                + ")"
            )
        variable = ENV_PREFIX + slot.name
        if slot.context == "escaped":
            return (
                f"{{{slot.name}}} follows a backslash in command_template: remove the "
                f'backslash; accord passes the value as one word ("{{{slot.name}}}")'
            )
        if slot.context == "single" and slot.name in FROM_DATA:
            return (
                f"{{{slot.name}}} sits inside single quotes in command_template, where the "
                "shell hands the text on unread (most often as a script for another shell, "
                "which would run the value as code). A value never goes into a script: give "
                f"it to the program as an argument of its own ({{{slot.name}}} outside every "
                "quoted script), or write the script in a file of the project that reads "
                f'"${variable}" from its environment (accord sets it to the exact text) and '
                "run that file"
            )
    from ......engine.programs import splice_problem

    return splice_problem(template)


def render(template: str, own_values: dict[str, str]) -> str:
    """The command line: each placeholder replaced by a reference to its variable (or, inside
    single quotes, by accord's own value `own_values[name]`). The template has passed
    `template_problem`."""
    out: list[str] = []
    last = 0
    for slot in slots(template):
        out.append(template[last : slot.start])
        last = slot.end
        if slot.context == "single":
            value = own_values[slot.name]
            if not PLAIN_VALUE.match(value):
                raise ValueError(
                    f"{{{slot.name}}} sits inside single quotes and its value {value!r} holds "
                    "characters the shell would read: set TMPDIR to a plain folder path"
                )
            out.append(value)
        elif slot.name == "FILES" and slot.context == "plain":
            out.append('"$@"')
        else:
            out.append(f'"${{{ENV_PREFIX}{slot.name}}}"' if slot.context == "plain" else
                       f"${{{ENV_PREFIX}{slot.name}}}")  # fmt: skip
    out.append(template[last:])
    return "".join(out)

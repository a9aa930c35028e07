"""Running a program with a time limit and a cap on what is kept of its output: the one way
code judges, `command`/`cli` targets and workspace scripts run (here or in a Ray task).

A program that prints fast and runs past its time (`yes`) used to keep accord waiting for
ever: it was killed, but `Process.wait()` also waits for its pipes to close (Python 3.11.7 and
later), and nobody read them any more. Here the pipes are read until they close, whatever
happens; a timeout kills the program's whole process group (children it started hold the pipes
too); after the kill the wait is bounded; and at most `MAX_OUTPUT` bytes of each stream are
kept, the rest read and dropped, with a note saying so at the end of what is kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import telemetry

MAX_OUTPUT = 10_000_000  # bytes kept of a program's stdout, and of its stderr
KILL_GRACE = 5.0  # seconds for the pipes to close once the process group is killed
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Finished:
    """A program that ended: what it printed (capped) and its exit code; `timed_out` when it
    was killed at its time limit."""

    stdout: bytes
    stderr: bytes
    code: int
    timed_out: bool = False


def truncation_note(cap: int) -> bytes:
    return f"\n[output truncated at {cap:,} bytes]".encode()


@telemetry.traced_program
async def run_program(
    argv: list[str],
    stdin: bytes,
    cwd: Path,
    timeout: float,
    env: dict[str, str] | None = None,
    cap: int = MAX_OUTPUT,
) -> Finished:
    """Run `argv` in `cwd` with `stdin` (and `env` on top of this process's environment).

    `OSError` when it cannot start. Cancelling the caller kills the program's process group.
    """
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(cwd),
        start_new_session=True,  # its own process group, so that a kill reaches its children
        env={**os.environ, **env} if env else None,
    )
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out = asyncio.create_task(_kept(proc.stdout, cap))
    err = asyncio.create_task(_kept(proc.stderr, cap))
    work = {
        asyncio.create_task(_fed(proc.stdin, stdin)),
        out,
        err,
        asyncio.create_task(proc.wait()),
    }
    try:
        _done, pending = await asyncio.wait(work, timeout=timeout)
        timed_out = bool(pending)
        if timed_out:
            kill_group(proc.pid)
            _done, pending = await asyncio.wait(pending, timeout=KILL_GRACE)
        if pending:  # a process that left the group still holds the pipes: stop reading them
            _close(proc)
    except BaseException:  # cancelled (Ctrl-C, fail-fast): the program must not outlive us
        kill_group(proc.pid)
        _close(proc)
        raise
    finally:
        for task in work:
            task.cancel()
    stdout = out.result() if out.done() and not out.cancelled() else b""
    stderr = err.result() if err.done() and not err.cancelled() else b""
    code = proc.returncode if proc.returncode is not None else -signal.SIGKILL
    return Finished(stdout, stderr, code, timed_out)


async def _fed(stream: asyncio.StreamWriter, data: bytes) -> None:
    # a program that exits (or is killed) without reading all of its stdin is no error
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        if data:
            stream.write(data)
            await stream.drain()
        stream.close()
        await stream.wait_closed()


async def _kept(stream: asyncio.StreamReader, cap: int) -> bytes:
    """Read `stream` to its end, keeping the first `cap` bytes."""
    kept = bytearray()
    dropped = False
    while chunk := await stream.read(_CHUNK):
        room = cap - len(kept)
        if room > 0:
            kept += chunk[:room]
        dropped = dropped or len(chunk) > room
    if dropped:
        kept += truncation_note(cap)
    return bytes(kept)


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _close(proc: asyncio.subprocess.Process) -> None:
    # asyncio has no public way to drop a process's pipes; its transport's close() closes
    # them (and kills the process if it still runs), so that nothing waits on them any more
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        transport.close()


# --- the door: which programs a file may run ------------------------------------------------
#
# Every key that runs a program or code from a file passes here when the file is loaded
# (`admit`, `admit_code`), so that `accord validate` refuses what `accord eval` would refuse,
# at the key's line. Two rules:
#
# 1. A value from the file (a test's text: `{PROMPT}`, `{GUIDELINES}`, `{EVAL_ID}`, `{FILES}`)
#    never becomes part of a script another program reads as code: the script of `sh -c`
#    (`bash -lc`, `env sh -c`, `/bin/sh -c`, ...), `eval`'s words, a shell or interpreter
#    reading its script from a pipe. Whatever the quoting, trusted or not: the outer shell
#    expands the value into the inner script, which runs it. The script belongs in a file of
#    the project reading "$AGENTV_PROMPT" from its environment.
# 2. A program from a file runs without trust only when it is the project's own: a file of
#    the project (named by its path: `./run.sh`, `scripts/agent`; no `..` or link leading
#    out), or a known interpreter or runner (RUNNERS) given a script file of the project and
#    no option that takes code (`-c`, `-e`, `--eval`, `-p`, ...). Anything else (a program of
#    the PATH, an absolute path, `sh -c`, `python3 -c`, shell syntax beyond a plain command
#    line) needs the user's trust in the file (engine/trust.py).

DATA_PLACEHOLDERS = ("PROMPT", "GUIDELINES", "EVAL_ID", "FILES")
OWN_PLACEHOLDERS = ("OUTPUT_FILE", "PROMPT_FILE", "ATTEMPT")  # accord's own values
ENV_PREFIX = "AGENTV_"
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash"})
# programs that run the program after their own options (for rule 1's `env sh -c`)
WRAPPERS = {
    "env": ("-u", "--unset", "-C", "--chdir"), "exec": ("-a",), "command": (), "builtin": (),
    "nohup": (), "nice": ("-n", "--adjustment"), "timeout": ("-s", "--signal", "-k"),
    "time": ("-f", "-o"), "stdbuf": ("-i", "-o", "-e"), "setsid": (), "xargs": ("-I", "-L",
    "-n", "-P", "-s", "-d", "-E", "-a"), "sudo": ("-u", "-g", "-C", "-D", "-h", "-p", "-U"),
    "doas": ("-u",), "chronic": (), "ionice": ("-c", "-n", "-p"), "unbuffer": (),
}  # fmt: skip
# shell builtins that run nothing else (a healthcheck's `exit 0`, `cd sub && ./run`)
HARMLESS = frozenset({":", "true", "false", "exit", "echo", "printf", "cd", "test", "["})
INSTEAD = (
    "Put the command in a script of the project and name that script (`./run.sh`, `python3 run.py`)"
)
_PLACEHOLDER = re.compile(r"\{([A-Z_]+)\}")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_REDIRECT = re.compile(r"\d*(?:&>>|&>|>>|>\||>&|<&|<<<|<<-|<<|<>|>|<)")
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")


@dataclass
class _Command:
    """A simple command of a shell line: its words (raw, quotes kept) and redirections."""

    words: list[str]
    redirects: list[tuple[str, str]]


@dataclass
class _Parsed:
    commands: list[_Command]
    substitution: bool = False  # `$(...)`, backquotes, `<(...)`: commands inside words


def _parse(text: str) -> _Parsed:
    parsed = _Parsed([])
    _scan(text, 0, "", parsed)
    return parsed


def _scan(text: str, i: int, stop: str, parsed: _Parsed) -> int:
    """Read simple commands from `text[i:]` up to `stop` (`)` or a backquote; "" the end)
    into `parsed`, as the POSIX shell splits words, quotes and operators; the index of
    `stop`. A command substitution's commands are read as commands of their own."""
    command = _Command([], [])
    word: list[str] = []
    redirect: list[str] = []  # the operator whose target the next word is

    def end_word() -> None:
        if not word:
            return
        raw = "".join(word)
        word.clear()
        if redirect:
            command.redirects.append((redirect.pop(), raw))
        else:
            command.words.append(raw)

    def end_command() -> None:
        nonlocal command
        end_word()
        if command.words or command.redirects:
            parsed.commands.append(command)
        command = _Command([], [])

    n = len(text)
    while i < n:
        char = text[i]
        if stop and char == stop:
            break
        end = _quoted_part(text, i, parsed)
        if end is not None:
            word.append(text[i:end])
            i = end
        elif char in " \t":
            end_word()
            i += 1
        elif char == "#" and not word:
            while i < n and text[i] != "\n":
                i += 1
        elif text[i] in "<>" or (text[i] == "&" and text.startswith("&>", i)):
            match = _REDIRECT.match(text, i)
            assert match is not None
            if "".join(word).isdigit():
                word.clear()  # the number before it is the redirection's file descriptor
            end_word()
            redirect[:] = [match.group(0)]
            i = match.end()
        elif char in ";&|\n()":
            end_command()
            i += 1
        else:
            word.append(char)
            i += 1
    end_command()
    return i


def _quoted_part(text: str, i: int, parsed: _Parsed) -> int | None:
    """The end of the quoted text, escape or substitution starting at `i` (part of a word),
    or None; a substitution's commands go into `parsed`."""
    char = text[i]
    if char == "\\":
        return i + 2
    if char == "'":
        end = text.find("'", i + 1)
        return len(text) if end < 0 else end + 1
    if char == '"':
        j = i + 1
        while j < len(text) and text[j] != '"':
            if text[j] == "\\":
                j += 2
            elif text.startswith("$(", j) or text[j] == "`":
                parsed.substitution = True
                closing = "`" if text[j] == "`" else ")"
                j = _scan(text, j + (1 if closing == "`" else 2), closing, parsed) + 1
            else:
                j += 1
        return j + 1
    if text.startswith(("$(", "<(", ">("), i) or char == "`":
        parsed.substitution = True
        closing = "`" if char == "`" else ")"
        return _scan(text, i + (1 if char == "`" else 2), closing, parsed) + 1
    return None


def _unquoted(raw: str) -> str | None:
    """The word as the program gets it (quotes removed), None when it is not one word."""
    import shlex

    try:
        parts = shlex.split(raw)
    except ValueError:
        return None
    return parts[0] if len(parts) == 1 else None


def _program_at(words: list[str]) -> int:
    """The index of the program a simple command runs, past variable assignments and
    wrappers (`env X=1 nice -n 5 sh ...`); len(words) when there is none."""
    i = 0
    while i < len(words) and _ASSIGNMENT.match(words[i]):
        i += 1
    while i < len(words):
        name = Path(_unquoted(words[i]) or words[i]).name
        valued = WRAPPERS.get(name)
        if valued is None:
            return i
        i += 1
        while i < len(words) and (
            words[i].startswith("-") or _ASSIGNMENT.match(words[i]) or words[i][:1].isdigit()
        ):
            i += 2 if words[i] in valued else 1
    return i


def _placeholders(raw: str, names: tuple[str, ...] = DATA_PLACEHOLDERS) -> list[str]:
    return [m.group(1) for m in _PLACEHOLDER.finditer(raw) if m.group(1) in names]


def splice_problem(command: str) -> str | None:
    """Rule 1: why a value from the file would become code in `command` (a line the shell
    runs, with AgentV's placeholders), or None. Refused trusted or not."""
    for simple in _parse(command).commands:
        words = simple.words
        at = _program_at(words)
        if at >= len(words):
            continue
        found = _placeholders(words[at])
        name = Path(_unquoted(words[at]) or words[at]).name
        reads: str | None = None
        if found:
            reads = "is the program itself"
        elif name == "eval" and (found := _placeholders(" ".join(words[at + 1 :]))):
            reads = "is in the words `eval` runs as shell code"
        else:
            # a shell anywhere in the command, not only as its program: `find -exec sh -c`,
            # `busybox sh -c`, `chroot / sh -c`, `flock f sh -c`; and programs whose own
            # option or arguments are a script a shell runs (`script -c`, `su -c`, `watch`)
            for j in range(at, len(words)):
                inner = Path(_unquoted(words[j]) or words[j]).name
                script = None
                if inner in SHELLS:
                    script = _shell_script(words[j + 1 :])
                elif inner in SCRIPT_TAKERS and j == at:
                    script = _script_of(SCRIPT_TAKERS[inner], words[j + 1 :])
                if script is not None and (found := _placeholders(script)):
                    shown = f"{inner} -c" if inner in SHELLS else inner
                    reads = f"sits inside the script `{shown}` runs (whatever its quotes)"
                    break
        if (
            reads is None
            and _reads_code_from_stdin(name, words[at + 1 :])
            and (found := _placeholders(command))
        ):
            reads = f"reaches `{name}`, which reads its code from its input"
        if reads is not None:
            placeholder = found[0]
            variable = ENV_PREFIX + placeholder
            return (
                f"{{{placeholder}}} {reads}: the shell would splice the test's text into "
                "that script and run it as code. Write the script in a file of the project "
                f'that reads "${variable}" from its environment (accord sets it to the exact '
                f"text), and run that file (`./run.sh`, `python3 run.py`) instead"
            )
    return None


# programs that hand a script to a shell: the option whose value it is (None: every argument)
SCRIPT_TAKERS: dict[str, str | None] = {
    "script": "-c", "su": "-c", "runuser": "-c", "flock": "-c", "watch": None, "ssh": None,
}  # fmt: skip


def _script_of(option: str | None, args: list[str]) -> str | None:
    """The script `args` give a SCRIPT_TAKERS program: the value of `option` (`-c X`,
    `-qc X`, `--command=X`), or every argument (None)."""
    if option is None:
        return " ".join(args) or None
    for i, arg in enumerate(args):
        if arg.startswith("--command"):
            return arg.partition("=")[2] or (args[i + 1] if i + 1 < len(args) else None)
        if arg.startswith("-") and not arg.startswith("--") and option[1] in arg[1:]:
            return args[i + 1] if i + 1 < len(args) else None
    return None


def _shell_script(args: list[str]) -> str | None:
    """The raw script a shell's arguments give with `-c` (`-c`, `-lc`, `-ec`, ...), or None."""
    has_c = False
    i = 0
    while i < len(args) and args[i][:1] in ("-", "+") and args[i] not in ("-", "--"):
        flag = args[i]
        if not flag.startswith("--") and "c" in flag[1:]:
            has_c = True
        i += 2 if flag in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file") else 1
    if i < len(args) and args[i] == "--":
        i += 1
    return args[i] if has_c and i < len(args) else None


STDIN_INTERPRETERS = frozenset({"node", "bun", "deno", "perl", "ruby", "php", "lua", "Rscript"})


def _reads_code_from_stdin(name: str, args: list[str]) -> bool:
    """A shell or interpreter given no script (nor `-c`): it runs what comes on its input."""
    if not (name in SHELLS or _PYTHON.match(name) or name in STDIN_INTERPRETERS):
        return False
    operands = [a for a in args if not a.startswith("-")]
    return not operands and not any(
        a.startswith("-") and not a.startswith("--") and "c" in a[1:] for a in args
    )


def _own_file(value: str, cwd: Path, root: Path) -> str | None:
    """Why `value` (relative to `cwd`) is not a file of the project, or None."""
    if "$" in value or _PLACEHOLDER.search(value) or any(c in value for c in "*?["):
        return f"'{value}', which is a value, not a file of the project"
    if value.startswith("~"):  # the shell reads `~/x`, `~root/..` as a home folder
        return f"'{value}', which the shell reads as a home folder, not a file of the project"
    path = Path(value) if Path(value).is_absolute() else cwd / value
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        return f"'{value}', which is no file of the project"
    if not real.is_relative_to(root.resolve()):
        how = (
            "an absolute path" if Path(value).is_absolute()
            else "with '..'" if ".." in Path(value).parts else "through a symbolic link"
        )  # fmt: skip
        return f"'{value}', which is outside the project ({how})"
    return None


def _same_program(path: str, name: str) -> bool:
    """Whether `path` is the program `name` finds on the PATH (or the Python running accord)."""
    import shutil

    try:
        real = Path(path).resolve()
        found = shutil.which(name)
        return (found is not None and Path(found).resolve() == real) or (
            _PYTHON.match(name) is not None and Path(sys.executable).resolve() == real
        )
    except (OSError, RuntimeError):
        return False


RUNNERS = ("python", "python3", "node", "bun", "deno", "uv run", "npx tsx", "npx ts-node",
           "tsx", "ts-node", "bash", "sh")  # fmt: skip


def argv_problem(argv: list[str], cwd: Path, root: Path) -> str | None:
    """Rule 2 for argv run without a shell in `cwd`: why it is not the project's own
    program (the reason, to show after the command), or None."""
    if not argv:
        return "is empty"
    program = argv[0]
    name = Path(program).name
    runner = name if (_PYTHON.match(name) or name in _RUNNER_RULES) else None
    if "/" in program:
        if runner is not None and (_same_program(program, name) or _own_file(program, cwd, root)
                                   is None):  # fmt: skip
            return _runner_problem(runner, argv[1:], cwd, root)
        problem = _own_file(program, cwd, root)
        return f"runs {problem}" if problem is not None else None
    if runner is None:
        return (
            f"runs '{program}' from the PATH, a program that is not the project's own (known "
            f"runners of a project script: {', '.join(RUNNERS)})"
        )
    return _runner_problem(runner, argv[1:], cwd, root)


def _python_rule(args: list[str], cwd: Path, root: Path) -> str | None:
    from .project_code import module_problem

    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        flag = args[i]
        if flag == "--":
            i += 1
            break
        if flag.startswith("-m"):
            module = flag[2:] or (args[i + 1] if i + 1 < len(args) else "")
            problem = module_problem(module, root) if module else "no module"
            return None if problem is None else f"runs a module that {problem}"
        if flag.startswith("--") or not set(flag[1:]) <= set("uBOEsSIPqbvRW X"):
            if "c" in flag[1:] and not flag.startswith("--"):
                return "gives python the option '-c': code written in the file"
            return f"gives python the option '{flag}'"
        i += 2 if flag in ("-W", "-X") else 1
    return _script_rule("python", args[i:], cwd, root)


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")


def _script_rule(runner: str, args: list[str], cwd: Path, root: Path) -> str | None:
    if not args or args[0] == "-":
        return f"gives {runner} its code on its input, not a script of the project"
    script = args[0]
    if _SCHEME.match(script):  # `deno run https://...`, `npm:pkg`, `uv run https://...`
        return f"runs '{script}', code from elsewhere, not a script of the project"
    problem = _own_file(script, cwd, root)
    if problem is None and not (cwd / script).exists():
        # a runner's subcommand (`bun x pkg`, `bun exec 'cmd'`), a package, a name
        return f"runs '{script}', which is no file of the project"
    return None if problem is None else f"runs the script {problem}"


_Rule = Callable[[list[str], Path, Path], "str | None"]


def _options_then_script(
    runner: str, flags: tuple[str, ...], prefixes: tuple[str, ...] = (), inline: str = ""
) -> _Rule:
    def rule(args: list[str], cwd: Path, root: Path) -> str | None:
        i = 0
        while i < len(args) and args[i].startswith("-") and args[i] != "-":
            flag = args[i]
            if flag == "--":
                i += 1
                break
            code = flag.split("=")[0] in ("--eval", "--print", "--command") or (
                not flag.startswith("--") and bool(set(flag[1:]) & set(inline))
            )
            if code:
                return f"gives {runner} the option '{flag}': code written in the file"
            if flag not in flags and not flag.startswith(prefixes):
                return (
                    f"gives {runner} the option '{flag}' (accord runs a project script through "
                    f"it only with {', '.join(flags) or 'no options'})"
                )
            i += 1
        return _script_rule(runner, args[i:], cwd, root)

    return rule


_NODE_FLAGS = (
    "--no-warnings",
    "--enable-source-maps",
    "--experimental-strip-types",
    "--experimental-transform-types",
    "--no-deprecation",
    "--trace-warnings",
)
_SHELL_FLAGS = ("-e", "-u", "-x", "-eu", "-ex", "-eux", "-l", "--noprofile", "--norc")


def _bun_rule(args: list[str], cwd: Path, root: Path) -> str | None:
    rest = args[1:] if args[:1] == ["run"] else args
    flags = ("--bun", "--silent", "--smol")
    return _options_then_script("bun", flags, (), "ep")(rest, cwd, root)


def _deno_rule(args: list[str], cwd: Path, root: Path) -> str | None:
    if args[:1] != ["run"]:
        return "runs deno without `run` and a script of the project"
    return _options_then_script("deno", ("-A", "-q", "--quiet", "--no-check", "--no-prompt"),
                                ("--allow-", "--unstable"))(args[1:], cwd, root)  # fmt: skip


def _uv_rule(args: list[str], cwd: Path, root: Path) -> str | None:
    if args[:1] != ["run"]:
        return "runs uv without `run` and a script of the project"
    flags = ("-q", "--quiet", "--no-project", "--frozen", "--locked", "--isolated", "--no-sync",
             "--offline", "--no-dev")  # fmt: skip
    i = 1
    while i < len(args) and args[i].startswith("-"):
        if args[i] not in flags:
            return f"gives uv run the option '{args[i]}' (accepted: {', '.join(flags)})"
        i += 1
    rest = args[i:]
    if not rest:
        return "runs uv run without a script"
    if "/" in rest[0] or rest[0].endswith(".py") or (cwd / rest[0]).is_file():
        return _script_rule("uv run", rest, cwd, root)
    return argv_problem(rest, cwd, root)  # `uv run python x.py`


def _npx_rule(args: list[str], cwd: Path, root: Path) -> str | None:
    i = 0
    while i < len(args) and args[i] in ("-y", "--yes", "--no-install", "-q", "--quiet"):
        i += 1
    if i < len(args) and args[i] in ("tsx", "ts-node"):
        return _RUNNER_RULES[args[i]](args[i + 1 :], cwd, root)
    shown = args[i] if i < len(args) else ""
    return f"runs the package '{shown}' through npx (only npx tsx or npx ts-node run a script)"


_RUNNER_RULES: dict[str, _Rule] = {
    "node": _options_then_script("node", _NODE_FLAGS, ("--max-old-space-size=",), "ep"),
    "tsx": _options_then_script("tsx", _NODE_FLAGS, (), "ep"),
    "ts-node": _options_then_script("ts-node", ("--transpile-only", "-T"), (), "ep"),
    "bun": _bun_rule,
    "deno": _deno_rule,
    "uv": _uv_rule,
    "npx": _npx_rule,
    **{shell: _options_then_script(shell, _SHELL_FLAGS, (), "cs") for shell in ("sh", "bash")},
}


def _runner_problem(runner: str, args: list[str], cwd: Path, root: Path) -> str | None:
    if _PYTHON.match(runner):
        return _python_rule(args, cwd, root)
    return _RUNNER_RULES[runner](args, cwd, root)


def _redirect_problem(simple: _Command, cwd: Path, root: Path) -> str | None:
    """Why a redirection of `simple` leads out of the project, or None."""
    for operator, target in simple.redirects:
        if operator.endswith("&") and (target.isdigit() or target == "-"):
            continue
        if _placeholders(target, OWN_PLACEHOLDERS) or operator.startswith("<<"):
            continue
        if target in ("/dev/null", "/dev/stdout", "/dev/stderr"):
            continue
        problem = _own_file(_unquoted(target) or target, cwd, root)
        if problem is not None:
            return f"redirects to {problem}"
    return None


def shell_problem(command: str, cwd: Path, root: Path) -> str | None:
    """Rule 2 for a command line the shell runs in `cwd`: each simple command a program of
    the project (or `cd`, `echo`, `exit` and the like), redirections to files of the project
    or accord's own temporary files; no command substitution, no variable set before a
    program. The reason, or None."""
    parsed = _parse(command)
    if parsed.substitution:
        return "runs commands inside words ($(...), backquotes)"
    for simple in parsed.commands:
        problem = _redirect_problem(simple, cwd, root)
        if problem is not None:
            return problem
        words = simple.words
        if not words:
            continue
        if _ASSIGNMENT.match(words[0]):
            return f"sets '{words[0].split('=')[0]}' before its program"
        argv = [_unquoted(w) for w in words]
        if any(a is None for a in argv) or "$" in words[0]:
            return f"runs '{words[0]}', which is no plain program name"
        plain = [a for a in argv if a is not None]
        if plain[0] == "cd":
            # one folder of the project, nothing else: `cd` alone, `cd -` and options
            # (`cd -L /usr/bin`) go where the check cannot follow
            if len(plain) != 2 or plain[1].startswith("-"):
                return f"runs `{' '.join(plain)}`: cd takes one folder of the project"
            problem = _own_file(plain[1], cwd, root)
            if problem is not None:
                return f"changes folder to {problem}"
            cwd = cwd / plain[1]
            continue
        if plain[0] in HARMLESS:
            continue
        problem = argv_problem(plain, cwd, root)
        if problem is not None:
            return problem
    return None


def admit(command: str | list[str], file: Path, root: Path, cwd: Path | None = None) -> str | None:
    """The one door of the programs a file names: None when `command` may run, else the
    message refusing it at the key's line.

    `command`: argv run without a shell, or (a string) a line `/bin/sh -c` runs, with
    AgentV's placeholders; `file`: the file that names it; `root`: the project's root;
    `cwd`: the folder it runs in (default: the file's). Rule 1 (no value of the file in a
    script) holds trusted or not; rule 2 (the project's own program) unless `file` is
    trusted."""
    cwd = file.parent if cwd is None else cwd
    if isinstance(command, str):
        problem = splice_problem(command)
        if problem is not None:
            return problem
        reason = shell_problem(command, cwd, root)
        shown = command
    else:
        import shlex

        reason = argv_problem(list(command), cwd, root)
        shown = shlex.join(command)  # as a shell would have to be given it
    if reason is None:
        return None
    from . import trust

    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return trust.refusal(file, root, f"the command `{shown}` {reason}", INSTEAD)


def admit_code(file: Path, root: Path, what: str) -> str | None:
    """Code written in a file (an inline assertion, a transform): it runs only when the
    user trusts the file. None when it may run, else the message refusing it."""
    from . import trust

    return trust.refusal(
        file, root, f"{what} is code written in the file",
        "Put the code in a file of the project and name it with file://",
    )  # fmt: skip

"""The suite front-end registry (tasks/suites/core/frontend.py): a front-end registered here claims
its file by content, takes its own `accord eval` option, loads, runs and writes its own file
after the run; and every file `accord eval` runs is read once."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click
import pytest

from accord.engine.paths import Output
from accord.tasks.suites.core import frontend as frontends
from accord.tasks.suites.core.cases import Suite
from accord.tasks.suites.core.verdicts import SuiteRun
from accord.tasks.suites.frontends.evalfile import load_eval_file
from tests.evals.conftest import accord

PROBES = """\
# a probe file: no suffix of its own, told by its `probes:` key
probes:
  - {id: hello, say: hello world, expect: hello}
  - {id: bye, say: goodbye, expect: bye}
"""


def _load_probes(source: frontends.Source, request: frontends.Request) -> list[Suite]:
    """Probes as an .eval.yml's cases on the echo target, each input led by --probe-prefix."""
    import yaml

    prefix = request.options.get("probe_prefix") or ""
    probes = yaml.safe_load(source.text)["probes"]
    cases = [
        {
            "id": p["id"],
            "input": prefix + p["say"],
            "evaluators": [{"type": "contains", "value": p["expect"]}],
        }
        for p in probes
    ]
    text = json.dumps({"target": "echo", "cases": cases})
    return [load_eval_file(source.path, repeat=request.repeat, text=text)]


def _after_run(runs: Sequence[SuiteRun], output_dir: Path | None, err: Any) -> None:
    for run in runs:
        assert run.suite.path is not None
        done = run.suite.path.with_name("probes.done")
        done.write_text("".join(f"{c.id} {c.status}\n" for c in run.cases))


PROBE_FRONTEND = frontends.FrontEnd(
    name="probes",
    describe="a probe file with 'probes:'",
    claims=lambda source: source.has_top_level_key("probes"),
    load=_load_probes,
    options=(click.Option(["--probe-prefix"], help="Probe files: put this before each input."),),
    after_run=_after_run,
)


@pytest.fixture
def probes_registered() -> Iterator[None]:
    frontends.frontends()  # the built-in ones first: the new one is asked last
    with frontends.FRONTENDS.restored():
        frontends.register(PROBE_FRONTEND)
        yield


@pytest.mark.usefixtures("probes_registered")
def test_a_new_frontend_claims_its_file_by_content_and_runs_through_accord_eval(
    tmp_path: Path,
) -> None:
    probes = tmp_path / "smoke.yml"
    probes.write_text(PROBES)
    result = accord("eval", probes, "--probe-prefix", "> ", "--format", "json")
    assert result.exit_code == 0, result.stderr
    cases = {c["id"]: c for c in result.suite()["cases"]}
    assert set(cases) == {"hello", "bye"}
    assert all(c["status"] == "passed" for c in cases.values())
    assert "> hello world" in json.dumps(cases["hello"])  # its own option reached its loader
    assert (tmp_path / "probes.done").read_text() == "hello passed\nbye passed\n"
    help_text = accord("eval", "--help").stdout
    assert "--probe-prefix" in help_text and "--targets" in help_text


def test_a_file_no_frontend_claims_names_every_kind(tmp_path: Path) -> None:
    probes = tmp_path / "smoke.yml"
    probes.write_text(PROBES)
    result = accord("eval", probes)
    assert result.exit_code == 2
    assert "not an evaluation file accord knows" in result.stderr
    for kind in (".eval.yml", ".test.yml", "AgentV", "scenarios:"):
        assert kind in result.stderr
    assert "Traceback" not in result.stderr


def test_an_option_two_frontends_declare_is_refused() -> None:
    clash = frontends.FrontEnd(
        name="clash",
        describe="a clash",
        claims=lambda source: False,
        load=lambda source, request: [],
        options=(click.Option(["--target"]),),
    )
    frontends.frontends()
    with frontends.FRONTENDS.restored(), pytest.raises(frontends.RegistryError, match="--target"):
        frontends.register(clash)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[Path]:
    """How many times each file's text is read (Path.read_text, as every loader reads)."""
    counted: Counter[Path] = Counter()
    read_text = Path.read_text

    def counting(self: Path, *args: Any, **kwargs: Any) -> str:
        counted[self.resolve()] += 1
        return read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counting)
    return counted


AGENTV = """\
execution:
  target: echo
  evaluators:
    - {name: says-6, type: contains, value: "6"}
tests:
  - {id: t, criteria: Repeats the question, input: What is 6 x 7?}
"""

EVAL = """\
target: echo
cases:
  - {id: hi, input: hello, evaluators: [{type: contains, value: hello}]}
"""


@pytest.mark.parametrize(("name", "text"), [("agent.yaml", AGENTV), ("hi.eval.yml", EVAL)])
def test_accord_eval_reads_each_file_once(
    tmp_path: Path, reads: Counter[Path], name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    result = accord("eval", path, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert result.suite()["cases"][0]["status"] == "passed"
    assert reads[path.resolve()] == 1


def test_accord_validate_reads_a_scenario_file_once(tmp_path: Path, reads: Counter[Path]) -> None:
    (tmp_path / "agents.py").write_text(
        "class Echo:\n    def run(self, message):\n        return message\n"
    )
    path = tmp_path / "scenarios.yaml"
    path.write_text(
        "agent_class: agents.Echo\nscenarios:\n"
        "  - {name: Greeting, input_message: Hello, expected_output: A greeting}\n"
    )
    result = accord("validate", path)
    assert result.exit_code == 0, result.stderr
    assert f"ok: {path} (scenarios suite, 1 case)" in result.stdout
    assert reads[path.resolve()] == 1


def test_a_folder_of_scenario_files_reports_every_invalid_file(tmp_path: Path) -> None:
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text(
            "agent_class: agents.Echo\nscenarios:\n  - {name: Greeting, input_message: Hello}\n"
        )
    result = accord("eval", tmp_path)
    assert result.exit_code == 2
    for name in ("a.yaml", "b.yaml"):
        assert f"{tmp_path / name}:3:5 scenarios[0]: a scenario needs expected_output" in (
            result.stderr
        )
    assert "Traceback" not in result.stderr


def _probe_log(suites: Sequence[Suite], output: Path | None) -> Path:
    path = suites[0].path
    assert path is not None
    return output if output is not None else path.with_name("probes.log")


def _write_probe_log(runs: Sequence[SuiteRun], output: Path | None) -> None:
    path = _probe_log([r.suite for r in runs], output)
    path.write_text("".join(f"{c.id}: {c.status}\n" for run in runs for c in run.cases))


# a front-end that writes its own file after the run (as promptfoo's `-o` and `outputPath`):
# `--output x.probe` is its own; without one it writes probes.log beside the file
PROBE_FILES = frontends.OwnFiles(
    takes_output=lambda suites, output: output.suffix == ".probe",
    planned=lambda suites, output: [] if output is not None else [
        Output("the probe log", _probe_log(suites, None), example="probes.log")
    ],
    write=_write_probe_log,
)  # fmt: skip


@pytest.fixture
def probe_files_registered() -> Iterator[None]:
    from dataclasses import replace

    frontends.frontends()
    with frontends.FRONTENDS.restored():
        frontends.register(replace(PROBE_FRONTEND, name="probe-files", files=PROBE_FILES))
        yield


@pytest.mark.usefixtures("probe_files_registered")
def test_a_frontend_owns_the_output_of_its_suites_and_writes_its_own_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yml").write_text("")
    (tmp_path / "smoke.yml").write_text(PROBES)
    # its own form: the front-end writes it, accord writes no report of its own there
    assert accord("eval", "smoke.yml", "-o", "out.probe").exit_code == 0
    assert (tmp_path / "out.probe").read_text() == "hello: passed\nbye: passed\n"
    assert not (tmp_path / "probes.log").exists()  # --output replaced its default file
    # any other --output is accord's; the front-end writes its default file beside it
    assert accord("eval", "smoke.yml", "-o", "out.json", "--format", "json").exit_code == 0
    assert '"hello"' in json.dumps(json.loads((tmp_path / "out.json").read_text()))
    assert (tmp_path / "probes.log").read_text() == "hello: passed\nbye: passed\n"
    # its files are checked before the run as accord's own outputs are
    refused = accord("eval", "smoke.yml", "-o", ".accord/x.probe")
    assert refused.exit_code == 2 and "no case was run" in refused.stderr, refused.stderr
    assert not (tmp_path / ".accord" / "x.probe").exists()


def test_the_eval_command_imports_no_frontend() -> None:
    # what a file kind writes or reads is its front-end's (the hooks above): `accord eval`
    # itself names none of them
    from tests.layers import imports_of

    root = Path(__file__).resolve().parents[2]
    command = root / "tasks" / "suites" / "commands" / "eval.py"
    assert imports_of(command, root, "tasks.suites.frontends") == []


def test_the_reports_import_no_frontend() -> None:
    # a format's own result files are registered from its own package (AgentV's jsonl from
    # agentv/frontend.py): accord's reports name no front-end
    from tests.layers import imports_of

    root = Path(__file__).resolve().parents[2]
    reports = sorted((root / "tasks" / "suites" / "reports").glob("*.py"))
    assert {r.name for r in reports} >= {"formats.py", "evals.py", "html.py", "text.py"}
    found = [line for r in reports for line in imports_of(r, root, "tasks.suites.frontends")]
    assert found == []

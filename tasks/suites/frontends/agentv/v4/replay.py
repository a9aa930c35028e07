"""AgentV's `replay` provider: each test's answer read from a file of recorded answers
instead of asking a model, as AgentV 4 reads it (commit 58f316ca2: providers/targets.ts
resolveReplayConfig, providers/replay.ts ReplayProvider, replay-fixtures.ts).

A catalog entry (`.agentv/providers.yaml`):

    - id: replay
      label: recorded
      fixtures: ../fixtures/answers.jsonl   # from the eval file's folder
      source_target: llm                    # the provider whose answers were recorded

`fixtures` is a JSONL file of `agentv.replay_fixture.v1` records (`suite`, `test_id`,
`source_target`, `output` messages; optional `eval_path`, `attempt`, `variant`,
`token_usage`, `cost_usd`, `duration_ms`, ...). A test's answer is the one record whose
suite is the entry's `suite` (else the eval file's suite name: its `name`, else its file
name without `.eval.yaml`), whose test id is the test's, whose source target is the
entry's, whose `attempt` is 0 (AgentV's first try) and whose `variant` is the entry's;
its `eval_path`, when it has one, must name the eval file. None or several: the test's
answer fails with AgentV's words. The answer is the last assistant message's text; its
tool calls are the answer's.

The file must lie inside the project (every file a project's files name does). AgentV's
other replay sources (`execution_traces`, `transcripts`) are refused.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .....evaluators.cases import Case, Output
from ....core.targets import Target, TargetFailure, agent_reply

if TYPE_CHECKING:
    from ......engine.context import TaskContext

ID = "agentv-replay"  # the entry the catalog hands the provider builder (no promptfoo id)
SCHEMA = "agentv.replay_fixture.v1"
KEYS = ("id", "provider", "label", "name", "fixtures", "source_target", "suite", "eval_path",
        "variant", "execution_traces", "transcripts")  # fmt: skip


class ReplayProblem(ValueError):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def entry_config(entry: dict[str, Any], eval_file: Path, root: Path, suite: str) -> dict[str, Any]:
    """A catalog `replay` entry as the config of ReplayTarget (paths relative to `root`)."""
    from .catalog import _text

    unknown = [k for k in entry if k not in KEYS]
    if unknown:
        raise ReplayProblem(f"key '{unknown[0]}' of an AgentV 'replay' provider is not "
                            "supported by accord (it reads fixtures, source_target, suite, "
                            "eval_path, variant): remove it")  # fmt: skip
    for other in ("execution_traces", "transcripts"):
        if other in entry:
            raise ReplayProblem(f"a replay provider's '{other}' is not supported by "
                                "accord (it replays 'fixtures' only)")  # fmt: skip
    if "fixtures" not in entry:
        raise ReplayProblem("an AgentV 'replay' provider needs 'fixtures' (the recorded "
                            "answers' JSONL file)")  # fmt: skip
    if "source_target" not in entry:
        raise ReplayProblem("an AgentV 'replay' provider needs 'source_target' (the provider "
                            "whose answers were recorded)")  # fmt: skip
    try:
        fixtures = _text(entry["fixtures"], "fixtures")
        config: dict[str, Any] = {
            "source_target": _text(entry["source_target"], "source_target"),
            "suite": _text(entry["suite"], "suite") if "suite" in entry else suite,
            "eval_path": _text(entry["eval_path"], "eval_path") if "eval_path" in entry else None,
            "variant": _text(entry["variant"], "variant") if "variant" in entry else None,
            "eval_file": str(eval_file.resolve()),
        }  # fmt: skip
    except ValueError as exc:
        raise ReplayProblem(getattr(exc, "message", str(exc))) from None
    path = (eval_file.parent / fixtures).resolve()
    try:
        relative = path.relative_to(root.resolve())
    except ValueError:
        raise ReplayProblem(f"the replay fixtures '{fixtures}' are outside the project root "
                            f"{root}: keep them in the project") from None  # fmt: skip
    if not path.is_file():
        raise ReplayProblem(f"replay fixture file not found: {path}")
    config["fixtures"] = str(relative)
    return config


def suite_name(data: Any, eval_file: Path) -> str:
    """yaml-parser.ts: the file's `name`, else its file name without `.eval.yaml`/`.yaml`."""
    name = data.get("name") if isinstance(data, dict) else None
    if isinstance(name, str) and name.strip():
        return name.strip()
    base = eval_file.name
    for suffix in (".eval.yaml", ".eval.yml", ".yaml", ".yml"):
        if base.lower().endswith(suffix):
            return base[: -len(suffix)] or "eval"
    return base or "eval"


class ReplayTarget(Target):
    """A test's recorded answer, read from the fixtures file."""

    type: Literal["agentv-replay"] = "agentv-replay"
    fixtures: str = ""  # relative to the project root
    source_target: str = ""
    suite: str = ""
    eval_path: str | None = None
    variant: str | None = None
    eval_file: str = ""

    def describe(self) -> str:
        return f"recorded answers of {self.source_target} ({self.fixtures})"

    def problem(self, root: Path) -> str | None:
        path = (root / self.fixtures).resolve()
        if not path.is_relative_to(root.resolve()):
            return f"the replay fixtures '{self.fixtures}' are outside the project root {root}"
        return None

    async def produce(self, tctx: TaskContext, case: Case, repeat: int) -> Output:
        path = Path(tctx.root) / self.fixtures
        record = self._find(_records(path), case.id)
        # the recorded reply as an agent's (replayFixtureRecordToProviderResponse)
        return agent_reply({
            "output_messages": record["output"] or [{"role": "assistant", "content": ""}],
            "token_usage": record.get("token_usage"), "cost_usd": record.get("cost_usd"),
            "duration_ms": record.get("duration_ms"),
        })  # fmt: skip

    def _find(self, records: list[dict[str, Any]], test_id: str) -> dict[str, Any]:
        """findReplayFixtureRecord: exactly one record of this lookup."""
        found = [r for r in records if self._matches(r, test_id)]
        if len(found) == 1:
            return found[0]
        key = " ".join(
            part for part in (
                f"suite={self.suite}",
                f"eval_path={self.eval_path}" if self.eval_path else "",
                f"test_id={test_id}", f"source_target={self.source_target}", "attempt=0",
                f"variant={self.variant or '<none>'}",
            ) if part
        )  # fmt: skip
        if not found:
            raise TargetFailure(f"Replay fixture lookup found no record for {key}")
        raise TargetFailure(f"Replay fixture lookup found {len(found)} duplicate records for {key}")

    def _matches(self, record: dict[str, Any], test_id: str) -> bool:
        if record.get("suite") != self.suite:
            return False
        recorded = record.get("eval_path")
        lookup = self.eval_path or self.eval_file
        if recorded and not _same_path(str(recorded), lookup):
            return False
        return (
            record.get("test_id") == test_id
            and record.get("source_target") == self.source_target
            and (record.get("attempt") or 0) == 0
            and record.get("variant") == self.variant
        )


def _same_path(recorded: str, lookup: str) -> bool:
    """sameReplayEvalPath: equal once normalised, or an absolute lookup ending in it."""

    def normal(value: str) -> str:
        value = value.replace("\\", "/").removeprefix("./")
        while "//" in value:
            value = value.replace("//", "/")
        return value

    return normal(recorded) == normal(lookup) or (
        Path(lookup).is_absolute() and normal(lookup).endswith(f"/{normal(recorded)}")
    )


def _records(path: Path) -> list[dict[str, Any]]:
    """readReplayFixtureRecords: one JSON record a line, each of the fixture schema."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise TargetFailure(f"Replay fixture file not found or unreadable: {path}: "
                            f"{exc.strerror or exc}") from None  # fmt: skip
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise TargetFailure(f"Invalid replay fixture JSONL at {path}:{number}: {exc}") from None
        needed = ("suite", "test_id", "source_target", "output")
        missing = [k for k in needed if k not in record] if isinstance(record, dict) else ["{}"]
        if (
            missing
            or record.get("schema_version") != SCHEMA
            or not isinstance(record.get("output"), list)
        ):
            raise TargetFailure(
                f"Invalid replay fixture record at {path}:{number}: needs schema_version "
                f"'{SCHEMA}', suite, test_id, source_target and output (a list of messages)"
            )
        records.append(record)
    return records

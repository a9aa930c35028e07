"""What `A` and `B` of `accord runs compare A B` (and `--baseline`) name: a results file, or a
run of the project's store (an id or unique prefix, `last`, `last~N`)."""

from __future__ import annotations

from pathlib import Path

from ....engine.errors import ConfigError
from .convert import from_document
from .records import RunRecord
from .storeview import find_row, load_run


def project_store(folder: Path) -> Path:
    """The run store of the project `folder` (a file or folder) belongs to."""
    from ....engine.store import runs_db_of

    return runs_db_of(folder)


def is_file_ref(ref: str) -> bool:
    return ref.endswith(".json") or Path(ref).is_file()


def load_ref(
    ref: str, store: Path, before: float | None = None, workflows: tuple[str, ...] = ()
) -> RunRecord:
    """The run `ref` names. `before` and `workflows` narrow `last`/`last~N` to runs started
    before a time, of these suites (a gate's baseline: not the run just made)."""
    if is_file_ref(ref):
        path = Path(ref)
        if not path.is_file():
            raise ConfigError(
                f"{ref}: no such results file; give a file written by `accord eval --format "
                "json` (or `accord test --output-json`), or a run id, 'last' or 'last~1'"
            )
        return from_document(path)
    if len(workflows) > 1 and ref.startswith("last"):
        return _each_suite(ref, store, before, workflows)
    row = find_row(store, ref, before, workflows)
    return load_run(store, row)


def _each_suite(
    ref: str, store: Path, before: float | None, workflows: tuple[str, ...]
) -> RunRecord:
    """`last~N` of each suite of a run of several (each suite is its own stored run)."""
    merged = RunRecord(label=ref)
    problems: list[ConfigError] = []
    for workflow in workflows:
        try:
            record = load_run(store, find_row(store, ref, before, (workflow,)))
        except ConfigError as exc:
            problems.append(exc)
            continue
        merged.suites.update(record.suites)
        merged.run_ids += record.run_ids
    if not merged.suites:
        raise problems[0]
    merged.label = f"{ref} ({', '.join(merged.run_ids)})"
    return merged

"""What an AgentV 4 file's load keeps beside the promptfoo loader's state: the file's
inherited assertions, its environment, its prompts' ids, its graders. It lives on the file's
`AgentV4Dialect` (dialect.py), one per file loaded; the modules that read or fill it get
it with `state(loader)`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ......engine.yamlmarks import Loc, Marks
    from ...promptfoo.form import _Loader


@dataclass
class State:
    trailing: list[Any] = field(default_factory=list)  # asserts after a test's own
    trailing_locs: list[Loc | None] = field(default_factory=list)  # where `trailing` is
    process_env: dict[str, str] = field(default_factory=dict)  # its environment's env
    workdir: str | None = None  # its environment's folder, where programs run
    prompt_ids: list[str] = field(default_factory=list)  # each prompt's id (files.prompts)
    skipped_tests: int = 0  # tests skipped for want of an id (rows.has_id)
    judge: Any = None  # the model of the file's defaults.grader
    implicit_input: bool = False  # no `prompts`: each test's `input` is its prompt
    grader_models: dict[str, Any] = field(default_factory=dict)  # graders.py
    # the file as parsed by the loader (before the loader's changes), and its marks
    data: dict[str, Any] = field(default_factory=dict)
    marks: Marks | None = None


def state(loader: _Loader) -> State:
    """The AgentV state of a load; a `TypeError` when the loader reads another dialect."""
    found = getattr(loader.dialect, "state", None)
    if not isinstance(found, State):
        raise TypeError(f"an AgentV 4 step in a load of dialect '{loader.dialect.name}'")
    return found

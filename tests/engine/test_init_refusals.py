"""`accord init` checks the whole project before it writes anything: a folder it cannot take
whole is refused with exit 2 and left exactly as it was, and no link inside it is followed
(a `config.yml` link, even a broken one, would write the file wherever it points)."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from accord.cli import main


def _tree(folder: Path) -> dict[str, tuple[str, str]]:
    """Every entry under `folder` (links not followed): its kind and content or target."""
    entries: dict[str, tuple[str, str]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            key = str(path.relative_to(folder))
            if path.is_symlink():
                entries[key] = ("link", os.readlink(path))
            elif path.is_dir():
                entries[key] = ("folder", "")
            else:
                entries[key] = ("file", path.read_text())
    return entries


def _init(folder: Path) -> Any:
    return CliRunner().invoke(main, ["init", str(folder)])


def _refused(tmp_path: Path, folder: Path, *expected: str) -> None:
    before = _tree(tmp_path)
    result = _init(folder)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    for text in expected:
        assert text in result.stderr, result.stderr
    assert result.stdout == ""  # no "created ..." line
    assert _tree(tmp_path) == before


def test_a_file_named_data_is_refused_before_config_yml_is_written(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    (project / "data").write_text("my notes\n")
    _refused(tmp_path, project, "data is a file where accord init puts a folder")
    assert not (project / "config.yml").exists()


def test_a_broken_config_link_is_not_written_through(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    target = tmp_path / "elsewhere" / "planted.yml"
    target.parent.mkdir()
    (project / "config.yml").symlink_to(target)
    _refused(tmp_path, project, "config.yml is a symbolic link", "follows no link")
    assert not target.exists()


def test_a_data_link_to_another_folder_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / "data").symlink_to(outside)
    _refused(tmp_path, project, "data is a symbolic link")
    assert list(outside.iterdir()) == []


def test_existing_files_are_all_named_and_kept(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "data").mkdir(parents=True)
    (project / "data" / "orders.csv").write_text("mine\n")
    (project / "checks.eval.yml").write_text("mine\n")
    _refused(tmp_path, project, "checks.eval.yml exists", "data/orders.csv exists")


@pytest.mark.parametrize("shape", ["file", "under_a_file", "broken_link"])
def test_a_folder_that_cannot_be_one_is_refused(tmp_path: Path, shape: str) -> None:
    blocker = tmp_path / "blocker"
    if shape == "broken_link":
        blocker.symlink_to(tmp_path / "gone")
        folder, said = blocker, "is a broken symbolic link"
    else:
        blocker.write_text("a file\n")
        folder = blocker if shape == "file" else blocker / "project"
        said = "is a file, not a folder"
    _refused(tmp_path, folder, said)
    assert not (tmp_path / "gone").exists()


def test_a_write_that_fails_halfway_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the disk fills up on the third file: the two before it are removed again
    opened = Path.open
    count = [0]

    def full_disk(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if mode == "x":
            count[0] += 1
            if count[0] == 3:
                raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return opened(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", full_disk)
    _refused(
        tmp_path, tmp_path / "new" / "project", "No space left on device", "nothing was written"
    )
    assert not (tmp_path / "new").exists()


def test_a_folder_with_other_files_and_an_empty_data_folder_is_fine(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "data").mkdir(parents=True)
    (project / "notes.txt").write_text("kept\n")
    made = _init(project)
    assert made.exit_code == 0, made.output
    assert (project / "config.yml").read_text().startswith("# One DuckDB")
    assert (project / "data" / "orders.csv").is_file()
    assert (project / "notes.txt").read_text() == "kept\n"

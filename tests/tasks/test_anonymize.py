"""Oxy's `anonymize:` (flash_text): what is hidden from the model, and what comes back."""

from __future__ import annotations

from pathlib import Path

import pytest

from accord.engine.errors import AccordError
from accord.engine.spec import AnonymizeSpec
from accord.tasks.agent.anonymize import Anonymizer, plural, singular


def test_mapping_keeps_case_and_plural_forms_and_restores_them() -> None:
    words = Anonymizer(
        [("organization", "company"), ("total_response", "feedback")],
        pluralize=True,
        case_insensitive=True,
    )
    session = words.session()
    text = "By Organization: | organizations | total_response |, ORGANIZATION, total_responses"
    hidden = session.hide(text)
    assert hidden == "By Company: | companies | feedback |, COMPANY, feedbacks"
    assert session.reveal(hidden) == text


def test_keywords_become_numbered_placeholders_and_whole_words_only() -> None:
    session = Anonymizer([("Acme Corp", None), ("Bob", None)]).session()
    hidden = session.hide("Acme Corp paid Bob; Bob thanked Acme Corp. Bobby and bob stay.")
    assert hidden == "FLASH0 paid FLASH1; FLASH1 thanked FLASH0. Bobby and bob stay."
    # FLASH1 must not be read inside FLASH10
    assert session.reveal("FLASH1 and FLASH0, not FLASH10") == "Bob and Acme Corp, not FLASH10"


def test_case_insensitive_keywords_remember_each_spelling() -> None:
    session = Anonymizer([("acme", None)], case_insensitive=True, replacement="X").session()
    hidden = session.hide("ACME and acme and Acme")
    assert hidden == "X0 and X1 and X2"
    assert session.reveal(hidden) == "ACME and acme and Acme"


@pytest.mark.parametrize(
    ("word", "many"),
    [
        ("company", "companies"),
        ("day", "days"),
        ("box", "boxes"),
        ("match", "matches"),
        ("user", "users"),
        ("ID", "IDS"),
    ],
)
def test_plural_and_singular(word: str, many: str) -> None:
    assert plural(word) == many
    assert singular(many) == word


def test_files_are_read_relative_to_the_project_root(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "map.csv").write_text("secret;public\n\nhidden;shown\n")
    (tmp_path / "data" / "words.txt").write_text("Alice\n")
    spec = AnonymizeSpec(mapping_file="data/map.csv", keywords_file="data/words.txt", delimiter=";")
    session = Anonymizer.from_spec(spec, tmp_path, "agent file 'a.agent.yml'").session()
    assert session.hide("secret hidden Alice") == "public shown FLASH0"


def test_bad_files_are_named(tmp_path: Path) -> None:
    missing = AnonymizeSpec(keywords_file="nope.txt")
    with pytest.raises(AccordError, match=r"agent file 'a.agent.yml': anonymize file 'nope.txt'"):
        Anonymizer.from_spec(missing, tmp_path, "agent file 'a.agent.yml'")
    (tmp_path / "map.csv").write_text("a,b\njust-one-column\n")
    broken = AnonymizeSpec(mapping_file="map.csv")
    with pytest.raises(AccordError, match=r"'map.csv' line 2: expected 'original,replacement'"):
        Anonymizer.from_spec(broken, tmp_path, "agent file 'a.agent.yml'")


def test_a_spec_needs_a_file() -> None:
    with pytest.raises(ValueError, match="keywords_file or mapping_file"):
        AnonymizeSpec()

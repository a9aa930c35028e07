"""Oxy's `anonymize:` on an agent: listed words never reach the model.

`type: flash_text` with
- `keywords_file`: one word or phrase per line; each occurrence becomes `<replacement><n>`
  (FLASH0, FLASH1, ...), the same text always the same placeholder;
- `mapping_file`: `original<delimiter>replacement` per line; each occurrence becomes its
  replacement, in the occurrence's case (Organization -> Company).
`pluralize` adds the plural and singular forms of every entry; `case_insensitive` matches any
case. Everything the agent sends to the model (instructions, prompt, tool results) is
anonymized; the model's answer and its tool-call arguments are restored before anything else
sees them (so a query the model writes with a placeholder runs with the real name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ...engine.errors import AccordError
from ...engine.paths import inside
from ...engine.spec import AnonymizeSpec


def plural(word: str) -> str:
    lower = word.lower()
    if re.search(r"[^aeiou]y$", lower):
        return word[:-1] + _cased(word, "ies")
    if re.search(r"(s|x|z|ch|sh)$", lower):
        return word + _cased(word, "es")
    return word + _cased(word, "s")


def singular(word: str) -> str:
    lower = word.lower()
    if lower.endswith("ies") and len(word) > 3:
        return word[:-3] + _cased(word, "y")
    if re.search(r"(s|x|z|ch|sh)es$", lower):
        return word[:-2]
    if lower.endswith("s") and not lower.endswith("ss") and len(word) > 1:
        return word[:-1]
    return word


def _cased(word: str, suffix: str) -> str:
    return suffix.upper() if word.isupper() and len(word) > 1 else suffix


def match_case(sample: str, word: str) -> str:
    """`word` in the case of `sample`: UPPER, Capitalized, or as written."""
    if sample.isupper() and len(sample) > 1:
        return word.upper()
    if sample[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _pattern(words: list[str], case_insensitive: bool) -> re.Pattern[str] | None:
    if not words:
        return None
    alternatives = "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE if case_insensitive else 0)


class Anonymizer:
    """The words of one agent's `anonymize:` files; `session()` anonymizes one conversation."""

    def __init__(
        self,
        entries: list[tuple[str, str | None]],
        *,
        replacement: str = "FLASH",
        pluralize: bool = False,
        case_insensitive: bool = False,
    ) -> None:
        self.replacement = replacement
        self.case_insensitive = case_insensitive
        self.targets: dict[str, str | None] = {}  # a form of an entry -> its replacement form
        self.sources: dict[str, str] = {}  # a replacement form -> the entry form it stands for
        for original, replaced in entries:
            forms = [(original, replaced)]
            if pluralize:
                forms.append((plural(original), plural(replaced) if replaced else None))
                forms.append((singular(original), singular(replaced) if replaced else None))
            for form, target in forms:
                self.targets.setdefault(self._key(form), target)
                if target is not None:
                    self.sources.setdefault(target.lower(), form)
        self.find = _pattern(list(self.targets), case_insensitive)
        self.find_replaced = _pattern(list(self.sources), True)

    def _key(self, text: str) -> str:
        return text.lower() if self.case_insensitive else text

    def session(self) -> AnonymizeSession:
        return AnonymizeSession(self)

    @classmethod
    def from_spec(cls, spec: AnonymizeSpec, root: Path, where: str = "") -> Anonymizer:
        """The words of the spec's files; a problem with them raises AccordError, its message
        starting with `where` when one is given."""
        entries: list[tuple[str, str | None]] = []
        if spec.keywords_file:
            for line in _lines(root, spec.keywords_file, where):
                entries.append((line, None))
        if spec.mapping_file:
            for number, line in enumerate(_lines(root, spec.mapping_file, where), start=1):
                original, sep, replaced = line.partition(spec.delimiter)
                if not sep or not original.strip() or not replaced.strip():
                    raise AccordError(
                        f"{_prefix(where)}anonymize mapping_file '{spec.mapping_file}' line "
                        f"{number}: expected 'original{spec.delimiter}replacement', got {line!r}"
                    )
                entries.append((original.strip(), replaced.strip()))
        return cls(
            entries,
            replacement=spec.replacement,
            pluralize=spec.pluralize,
            case_insensitive=spec.case_insensitive,
        )


def _prefix(where: str) -> str:
    return f"{where}: " if where else ""


def _lines(root: Path, name: str, where: str) -> list[str]:
    path = inside(root, name, f"{_prefix(where)}anonymize file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = "not found" if isinstance(exc, FileNotFoundError) else str(exc)
        raise AccordError(
            f"{_prefix(where)}anonymize file '{name}' (relative to the project root {root}): "
            f"{reason}"
        ) from None
    return [line.strip() for line in text.splitlines() if line.strip()]


@dataclass
class AnonymizeSession:
    """One conversation's placeholders: the same text gets the same placeholder throughout."""

    words: Anonymizer
    placeholders: dict[str, str] = field(default_factory=dict)  # placeholder -> original

    def hide(self, text: str) -> str:
        if self.words.find is None or not text:
            return text
        return self.words.find.sub(self._hide_one, text)

    def _hide_one(self, match: re.Match[str]) -> str:
        found = match.group(0)
        target = self.words.targets[self.words._key(found)]
        if target is not None:
            return match_case(found, target)
        for placeholder, original in self.placeholders.items():
            if original == found:
                return placeholder
        placeholder = f"{self.words.replacement}{len(self.placeholders)}"
        self.placeholders[placeholder] = found
        return placeholder

    def reveal(self, text: str) -> str:
        if not text:
            return text
        if self.placeholders:
            found = _pattern(list(self.placeholders), False)
            assert found is not None
            text = found.sub(lambda m: self.placeholders[m.group(0)], text)
        if self.words.find_replaced is not None:
            text = self.words.find_replaced.sub(
                lambda m: match_case(m.group(0), self.words.sources[m.group(0).lower()]), text
            )
        return text

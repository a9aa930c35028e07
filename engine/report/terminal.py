"""Text from a store, a model or a data file, made safe to print on a terminal.

Such text may hold control characters: an escape sequence (OSC, CSI, DCS) can retitle the
window, write the clipboard, move the cursor over lines already printed or hide what
follows. Every control character but newline and tab is shown as a visible `\\xNN` instead,
and rich's markup is escaped, so the text prints as itself and nothing else.
"""

from __future__ import annotations

import re

from rich.markup import escape

# C0 controls but tab and newline, DEL, and the C1 controls (U+0080-U+009F: a terminal reads
# U+009B as CSI and U+009D as OSC, as it does ESC [ and ESC ])
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def printable(text: object) -> str:
    """`text` (any value, as `str()` gives it) with its control characters made visible."""
    shown = text if isinstance(text, str) else str(text)
    return _CONTROLS.sub(_visible, shown.replace("\r\n", "\n"))


def shown(text: object) -> str:
    """`printable(text)` with rich's markup escaped: to put inside a rich markup string."""
    return escape(printable(text))

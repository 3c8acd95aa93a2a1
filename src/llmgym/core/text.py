"""Text helpers shared by every environment: the character set, sanitising and action parsing.

Observations must stay inside the observation space (a :class:`gymnasium.spaces.Text` over
:data:`CHARSET`), while actions may be *any* Python string an LLM can produce. These helpers
are the one place where both directions are handled.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

__all__ = [
    "CHARSET",
    "REPLACEMENT_CHAR",
    "clip_text",
    "join_names",
    "normalize_command",
    "quote_action",
    "sanitize_text",
]


def _build_charset() -> str:
    ranges = [
        (0x20, 0x7E),  # printable ASCII
        (0xA0, 0x24F),  # Latin-1 supplement, Latin extended A/B
        (0x370, 0x3FF),  # Greek (units, maths)
        (0x2000, 0x206F),  # general punctuation (dashes, quotes, ellipsis)
        (0x20A0, 0x20BF),  # currency symbols
        (0x2100, 0x214F),  # letterlike symbols
        (0x2190, 0x21FF),  # arrows
        (0x2200, 0x22FF),  # mathematical operators
        (0x2500, 0x259F),  # box drawing and blocks (maps, boards)
        (0x25A0, 0x25FF),  # geometric shapes
        (0x2600, 0x26FF),  # miscellaneous symbols
        (0x2700, 0x27BF),  # dingbats (check marks)
    ]
    chars = ["\n", "\t"]
    for low, high in ranges:
        for code in range(low, high + 1):
            char = chr(code)
            if unicodedata.category(char) not in {"Cc", "Cf", "Cs", "Co", "Cn"}:
                chars.append(char)
    chars.append("\ufffd")
    return "".join(chars)


CHARSET: str = _build_charset()
"""Characters an observation may contain: printable ASCII, newline, tab, Latin, Greek, common
punctuation, arrows, maths, box drawing and symbols. Anything else is replaced by
:data:`REPLACEMENT_CHAR` before an observation leaves an environment."""

REPLACEMENT_CHAR = "\ufffd"

_OUTSIDE_CHARSET = re.compile("[^" + re.escape(CHARSET) + "]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_WHITESPACE = re.compile(r"\s+")
_WRAPPING = " \t\r\n`'\"*_.!?;:"


def sanitize_text(text: str) -> str:
    """Replace every character outside :data:`CHARSET` by :data:`REPLACEMENT_CHAR`."""
    if _OUTSIDE_CHARSET.search(text) is None:
        return text
    return _OUTSIDE_CHARSET.sub(REPLACEMENT_CHAR, text)


def clip_text(text: str, max_length: int, marker: str = "\n[... truncated]") -> str:
    """Shorten ``text`` to at most ``max_length`` characters, ending with ``marker`` if cut."""
    if len(text) <= max_length:
        return text
    keep = max(0, max_length - len(marker))
    return text[:keep] + marker[: max_length - keep]


def normalize_command(action: str, *, max_length: int = 1000) -> str:
    """Canonical form of a short command: lower case, single spaces, no wrapping punctuation.

    Control characters are dropped, markdown emphasis and quotes around the command are removed
    (``"**Move Up.**"`` becomes ``"move up"``), and text longer than ``max_length`` yields ``""``
    so that environments treat it as unparseable rather than scanning megabytes of input.
    """
    if len(action) > max_length:
        return ""
    text = _CONTROL.sub(" ", action)
    text = _WHITESPACE.sub(" ", text).strip(_WRAPPING)
    return text.lower()


def quote_action(action: object, limit: int = 60) -> str:
    """A short, safe rendering of a (possibly hostile) action for feedback messages."""
    if not isinstance(action, str):
        return f"<{type(action).__name__}>"
    shown = _CONTROL.sub("?", action.replace("\n", " "))
    if len(shown) > limit:
        shown = shown[: limit - 3] + "..."
    return sanitize_text(repr(shown))


def join_names(names: Iterable[str], conjunction: str = "and") -> str:
    """``["a", "b", "c"]`` -> ``"a, b and c"``."""
    items = list(names)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {conjunction} " + items[-1]

"""Text shown on a terminal with its non-printing characters made visible: a bot's name that
holds an escape sequence or a newline cannot clear the screen or forge a line."""

from __future__ import annotations

import unicodedata

# Unicode categories that print nothing, or move or rewrite what is printed: controls (C0, C1,
# DEL), formats (bidi overrides, zero-width characters), surrogates, private use, unassigned, and
# the line and paragraph separators.
INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escaped(char: str) -> str:
    """One character as Python writes it in a string literal: \\n, \\x1b, \\u202e, \\U000e0001."""
    if char in _SHORT:
        return _SHORT[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def visible(text: str) -> str:
    """`text` with every non-printing character written as its escape (\\x1b shows as `\\x1b`)."""
    if text.isprintable():
        return text
    return "".join(
        escaped(char) if unicodedata.category(char) in INVISIBLE_CATEGORIES else char for char in text
    )


__all__ = ["INVISIBLE_CATEGORIES", "escaped", "visible"]

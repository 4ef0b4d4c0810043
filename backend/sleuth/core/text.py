"""What user-supplied text may contain: labels (titles, plan steps, file names), their length, and message length.

A label is shown on one line in lists, exports and terminals. Control characters in it can
rewrite a terminal (ESC), end a C string (NUL) or break an XML export, and bidi overrides make
a name read differently from what it is (`exe.txt` shown for `txt.exe`). So every label is
cleaned by `clean_label`, the one rule for all of them, and refused when nothing visible is left.
"""

from __future__ import annotations

import re
import unicodedata

from sleuth.core.words import FUNCTION_WORDS

# C0 controls, DEL and C1 controls; the whitespace among them (tab, newline, NEL...) becomes a
# space so words stay apart, the rest goes.
_CONTROLS = [chr(c) for c in (*range(0x20), *range(0x7F, 0xA0))]
# Bidi embeddings and overrides (U+202A-U+202E) and isolates (U+2066-U+2069).
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_STRIP = str.maketrans({ch: (" " if ch.isspace() else None) for ch in (*_CONTROLS, *BIDI_CONTROLS)})

# Letters that render as nothing (Hangul fillers, the blank Braille pattern).
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
# Format (zero-width, marks), controls, separators and combining marks: none is visible on its own.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zs", "Zl", "Zp", "Mn", "Me"})

NOT_VISIBLE = "must contain visible text (control, bidi and zero-width characters do not count)"


def strip_controls(text: str) -> str:
    """`text` without control characters and bidi overrides; whitespace controls become spaces."""
    return text.translate(_STRIP)


def is_visible(ch: str) -> bool:
    return not ch.isspace() and ch not in _BLANK_LETTERS and unicodedata.category(ch) not in _INVISIBLE_CATEGORIES


def has_visible_text(text: str) -> bool:
    """Whether `text` shows anything: not empty, not only whitespace, zero-width or control characters."""
    return any(is_visible(ch) for ch in text)


def clean_label(text: str) -> str:
    """A label without control characters, bidi overrides or surrounding whitespace.

    Raises ValueError (message `NOT_VISIBLE`) when nothing visible is left. Inner whitespace is
    kept (a file name's spaces are part of it); titles and steps collapse theirs where they are used.
    """
    cleaned = strip_controls(text).strip()
    if not has_visible_text(cleaned):
        raise ValueError(NOT_VISIBLE)
    return cleaned


def message_too_long(text: str, max_chars: int) -> str | None:
    """Why a question or message is refused for its length (the API and the CLI say the same), or None."""
    if len(text) <= max_chars:
        return None
    return f"message is {len(text)} characters; the limit is {max_chars}"


ELLIPSIS = "…"
# What a shortened label may not end on: it would read as cut mid-phrase ("methods, and…").
_LOOSE_END = re.compile(r"[\s,;:(\[{/&+–—-]+$")


def shorten(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters: whole when it fits, else cut at a word
    boundary, without a trailing function word or separator, and ended with an ellipsis.

    The one rule for every shortened label (report and session titles, terminal lines), so a
    title never stops mid-word or on "and" with nothing to say it was cut.
    """
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    budget = max(1, limit - len(ELLIPSIS))
    words = line[:budget].split(" ")
    if len(words) > 1 and line[budget] != " ":
        words.pop()  # cut inside this word
    while len(words) > 1 and (words[-1].lower().strip(",;:") in FUNCTION_WORDS or not _LOOSE_END.sub("", words[-1])):
        words.pop()
    kept = _LOOSE_END.sub("", " ".join(words)) or line[:budget]  # one word longer than the limit: cut inside it
    return kept + ELLIPSIS

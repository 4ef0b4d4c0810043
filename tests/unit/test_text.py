"""The one rule for labels (titles, plan steps, file names) and the message length limit."""

from __future__ import annotations

import re

import pytest

from sleuth.core.text import (
    ELLIPSIS,
    NOT_VISIBLE,
    clean_label,
    has_visible_text,
    message_too_long,
    shorten,
    strip_controls,
)

CONTROLS = "".join(chr(c) for c in (*range(0x20), *range(0x7F, 0xA0)))
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_controls_and_bidi_overrides_are_stripped_whitespace_controls_become_spaces() -> None:
    assert strip_controls("a\x00b\x07c\x1bd\x7fe\x9bf") == "abcdef"
    assert strip_controls("one\ttwo\nthree\r\nfour\x85five") == "one two three  four five"
    assert strip_controls("txt.\u202eexe") == "txt.exe" and strip_controls(f"x{BIDI}y") == "xy"
    assert strip_controls(CONTROLS + BIDI).strip() == ""
    # what renders text is kept: joiners inside words and emoji, marks, other scripts
    kept = "نامه\u200cها 👩\u200d💻 e\u0301 \u200fשלום"
    assert strip_controls(kept) == kept


@pytest.mark.parametrize(
    "value",
    [
        "",
        "   ",
        "\t\n",
        "\u200b",
        "\u200b\u200c\u200d\u2060\ufeff",
        "\u3164\u115f",
        "\u2800",
        "\u0301",
        "\x1b\x00",
        BIDI,
    ],
)
def test_a_label_with_nothing_visible_is_refused(value: str) -> None:
    assert not has_visible_text(strip_controls(value))
    with pytest.raises(ValueError, match=re.escape(NOT_VISIBLE)):
        clean_label(value)


def test_a_label_keeps_its_inner_spacing_and_loses_its_edges() -> None:
    assert clean_label("  report  final\x07.pdf\u202e ") == "report  final.pdf"
    assert clean_label("\u200bx") == "\u200bx"  # something visible: zero-width characters inside are left alone


def test_the_length_message_names_both_numbers() -> None:
    assert message_too_long("x" * 20_000, 20_000) is None
    assert message_too_long("x" * 50_000, 20_000) == "message is 50000 characters; the limit is 20000"


QUESTION = (
    "What happens when a generator's close() and throw() methods are called, and how do they interact with try/finally?"
)


def test_a_label_that_fits_stays_whole_on_one_line() -> None:
    assert shorten("  How do\tdescriptors\nwork? ", 80) == "How do descriptors work?"
    assert shorten(QUESTION, len(QUESTION)) == QUESTION


@pytest.mark.parametrize("limit", range(12, len(QUESTION)))
def test_a_shortened_label_ends_on_a_whole_word_with_an_ellipsis(limit: int) -> None:
    short = shorten(QUESTION, limit)
    assert len(short) <= limit and short.endswith(ELLIPSIS)
    kept = short.removesuffix(ELLIPSIS)
    assert QUESTION.startswith(kept)
    assert QUESTION[len(kept)] in " ,"  # the next character of the question starts a new word
    last = kept.split()[-1].lower()
    assert last not in ("and", "a", "the", "how", "do", "are") and not kept.endswith((",", " "))


def test_one_word_longer_than_the_limit_is_cut_inside_it() -> None:
    assert shorten("Supercalifragilistic", 8) == "Superca…"

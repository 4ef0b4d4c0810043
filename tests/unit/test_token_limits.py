"""Token limits told without tokenizing where a byte count settles them, with the same results."""

from __future__ import annotations

import pytest

from sleuth.llm.tokens import count_tokens, surely_fits, token_bound, truncate_tokens
from sleuth.research.lanes.excerpts import GAP, focused_text
from sleuth.research.step import OutputCap

TEXTS = [
    "Descriptors win over instance attributes.",
    "naïve café — “quoted” … ünïcödé",
    "漢字とかなの文章です。検索語が入る。",
    "🙂🙃 emoji 👩‍👩‍👧 family",
    "    \n\n\t  spaces   and\n\n\nnewlines  ",
    "x" * 500,
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_byte_bound_never_counts_fewer_tokens_than_the_tokenizer(text: str) -> None:
    assert count_tokens(text) <= token_bound(text)
    assert surely_fits(text, count_tokens(text) - 1) is False


@pytest.mark.parametrize("text", TEXTS)
def test_truncation_keeps_a_text_that_fits_and_cuts_one_that_does_not(text: str) -> None:
    assert truncate_tokens(text, count_tokens(text)) == text
    cut = truncate_tokens(text, max(1, count_tokens(text) // 2))
    assert count_tokens(cut) <= max(1, count_tokens(text) // 2) and cut != text


def _page(paragraphs: int) -> str:
    filler = "The interpreter looks the name up in the class, then in the instance, then falls back."
    parts = [f"Section {i}\n\n{filler} Paragraph {i} says nothing new." for i in range(paragraphs)]
    parts[paragraphs // 2] += " A __getattr__ hook runs only when lookup fails."
    return "\n\n".join(parts)


def test_a_page_within_the_budget_by_tokens_though_not_by_bytes_is_shown_whole() -> None:
    page = _page(6)
    budget = count_tokens(page)
    assert not surely_fits(page, budget)
    assert focused_text(page, ["__getattr__ lookup"], budget, count_tokens) == page


def test_a_long_page_keeps_its_opening_and_the_matching_paragraph_within_the_budget() -> None:
    page = _page(200)
    focused = focused_text(page, ["__getattr__ hook"], 300, count_tokens)
    assert focused.startswith("Section 0") and GAP in focused
    assert "A __getattr__ hook runs only when lookup fails." in focused
    assert count_tokens(focused) <= 300


def test_a_capped_stream_of_multibyte_text_stops_at_the_cap() -> None:
    shown: list[str] = []
    cap = OutputCap("final report", 30, shown.append)
    text = "漢字とかなの文章です。🙂 " * 40
    deltas = [text[i : i + 3] for i in range(0, len(text), 3)]
    for delta in deltas:
        cap.on_text(delta)
    assert count_tokens("".join(shown)) <= 30 + max(count_tokens(d) for d in deltas)
    assert len("".join(shown)) < len(text)

"""OutputCap: what a capped model output shows, keeps, and says."""

from __future__ import annotations

from sleuth.llm.tokens import count_tokens
from sleuth.research.step import OutputCap


def test_a_provider_cut_is_reported_even_when_the_text_fits() -> None:
    cap = OutputCap("plan", 100)
    assert cap.keep("1. Short step", finish_reason="length") == "1. Short step"
    assert cap.cut and cap.degraded().level == "output_cut"


def test_text_within_the_cap_is_kept_whole_and_not_reported() -> None:
    cap = OutputCap("plan", 100)
    assert cap.keep("1. Short step", finish_reason="stop") == "1. Short step"
    assert not cap.cut


def test_the_stream_stops_at_the_cap_and_the_kept_text_is_cut_to_it() -> None:
    shown: list[str] = []
    cap = OutputCap("final report", 20, shown.append)
    text = "Descriptors win over instance attributes. " * 30
    for i in range(0, len(text), 10):
        cap.on_text(text[i : i + 10])
    assert count_tokens("".join(shown)) <= 20 + count_tokens(text[:10])
    kept = cap.keep(text)
    assert count_tokens(kept) <= 20 and text.startswith(kept) and cap.cut
    assert "20 tokens" in cap.degraded().detail

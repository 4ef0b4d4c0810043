"""One redaction helper for values and names, used by logs, model errors and search providers."""

from __future__ import annotations

from sleuth.core.redaction import MASK, redact_fields, redact_query, redact_values


def test_values_are_masked_wherever_they_appear() -> None:
    text = "401 for key sk-live-1234 at https://api.example/?k=sk-live-1234"
    assert redact_values(text, [None, "sk-live-1234"]) == f"401 for key {MASK} at https://api.example/?k={MASK}"


def test_values_too_short_to_be_keys_are_left_alone() -> None:
    assert redact_values("the cat sat", ["at", ""]) == "the cat sat"


def test_names_decide_for_fields_and_queries() -> None:
    fields = {"api_key": "k", "access_token": "t", "input_tokens": 12, "password": "p", "question": "q"}
    assert redact_fields(fields) == {
        "api_key": MASK,
        "access_token": MASK,
        "input_tokens": 12,
        "password": MASK,
        "question": "q",
    }
    assert redact_query("after=3&token=abc") == "after=3&token=%5Bredacted%5D"
    assert redact_query("code=c0de&state=st4te") == "code=%5Bredacted%5D&state=%5Bredacted%5D"

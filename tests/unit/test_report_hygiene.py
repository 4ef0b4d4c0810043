"""How a report reads, counted by `sleuth eval`: repeated sentences, dangling colons, cut titles."""

from __future__ import annotations

import re

import pytest

from sleuth.evaluation.hygiene import dangling_colons, hygiene_totals, is_cut_title, repeated_sentences
from sleuth.evaluation.summary import summarise, summary_table

QUESTION = (
    "What happens when a generator's close() and throw() methods are called, and how do they interact with try/finally?"
)


def test_a_sentence_met_again_counts_once_per_repeat_wherever_it_is() -> None:
    document = "\n\n".join(
        [
            "# How do descriptors work?",
            "**Descriptors**",
            "A descriptor defines `__get__()`. It may also define `__set__()`.",  # the summary
            "## Key findings\n\n- A descriptor defines __get__(). [1]",  # markers and code marks aside
            "## Details",
            "A descriptor defines `__get__()`. [1] Data descriptors override instances. [1]",
            "*A descriptor defines __get__()*!",  # emphasis, case and closing punctuation aside
        ]
    )
    assert repeated_sentences(document) == 3


def test_headings_code_tables_and_short_sentences_are_not_counted() -> None:
    document = "\n\n".join(
        [
            "## How descriptors work",
            "## How descriptors work",
            "```\nx = 1\nx = 1\n```",
            "| a | b |\n|---|---|\n| same row here now | 1 |\n| same row here now | 1 |",
            "See below. [1] See below. [2]",
            "Two different sentences about descriptors here. Another sentence about descriptors here.",
        ]
    )
    assert repeated_sentences(document) == 0


def test_a_colon_with_nothing_it_announces_after_it_is_dangling() -> None:
    assert dangling_colons("The interpreter follows this process: [2] Classes are instances of types. [2]") == 1
    assert dangling_colons("Both exceptions will be printed: [1]\n\n## Next\n\nText.") == 1
    assert dangling_colons("Both exceptions will be printed:") == 1  # the end of the report
    assert dangling_colons("Two steps [1]:\n\n- find the module\n- bind the name") == 0
    assert dangling_colons("Two steps:\n- find the module\n- bind the name") == 0
    assert dangling_colons("An example:\n\n```\nx = 1\n```") == 0
    assert dangling_colons("Compare:\n\n| a | b |\n|---|---|\n| 1 | 2 |") == 0
    assert dangling_colons("Note: the value is cached. [1] It is reused.") == 0  # a colon inside a sentence
    assert dangling_colons("## Answers:\n\nText.") == 0  # a heading announces the section under it


@pytest.mark.parametrize(
    ("title", "cut"),
    [
        ("What happens when a generator's close() and throw() methods are called", False),  # a whole sub-question
        ("What happens when a generator's close() and throw() methods are called, and", True),
        ("What happens when a generator's close() and throw() methods…", False),
        ("What happens when a generator's close() and throw() metho…", True),  # inside a word
        ("What happens when a generator's close() and throw() methods", True),  # short of the question, no ellipsis
        ("What happens when a generator's close(…", True),  # a bracket left open
        ("Generators: close() and throw()", False),  # rewritten
        (QUESTION, False),
        (QUESTION.rstrip("?"), False),
        ("", False),
    ],
)
def test_a_title_cut_mid_phrase_is_recognised(title: str, cut: bool) -> None:
    assert is_cut_title(title, QUESTION) is cut


def test_summary_json_has_the_totals_and_the_table_shows_them() -> None:
    records = [
        {"id": "a", "repeated_sentences": 3, "dangling_colons": 1, "cut_title": True, "stop_reason": "completed"},
        {"id": "b", "repeated_sentences": 0, "dangling_colons": 2, "cut_title": False, "stop_reason": "completed"},
    ]
    assert hygiene_totals(records) == {"repeated_sentences": 3, "dangling_colons": 3, "cut_titles": 1}
    summary = summarise(records)
    assert summary["hygiene"] == {"repeated_sentences": 3, "dangling_colons": 3, "cut_titles": 1}
    assert summary["means"]["repeated_sentences"] == 1.5 and summary["means"]["cut_title"] == 0.5
    rows = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in summary_table(summary).splitlines())
    totals = (rows["total repeated sentences"], rows["total dangling colons"], rows["total cut titles"])
    assert totals == ("3", "3", "1")

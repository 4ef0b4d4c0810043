"""The deterministic claim-support check: what it flags, and what it must not flag."""

from __future__ import annotations

from sleuth.research.report.claims import check_claims
from sleuth.research.report.sentences import CitedSentence, cited_sentences

WITH_DOC = """The "with" statement
********************

The "with" statement is used to wrap the execution of a block with
methods defined by a context manager (see section With Statement
Context Managers). This allows common "try"..."except"..."finally" usage
patterns to be encapsulated for convenient reuse.

If the suite was exited due to an exception, and the return value from
the "__exit__()" method was false, the exception is reraised.
"""

RECURSION_DOC = """The default recursion limit of the interpreter is 1000 frames; sys.setrecursionlimit()
changes it. Deep recursion beyond the limit raises RecursionError."""

SLOTS_DOC = """__slots__ allow us to explicitly declare data members (like properties) and deny the
creation of __dict__ and __weakref__ (unless explicitly declared in __slots__)."""


def verdicts(markdown: str, texts: dict[int, str]) -> dict[tuple[str, str], tuple[bool, str]]:
    return {(v.marker, v.sentence[:25]): (v.supported, v.reason) for v in check_claims(markdown, texts)}


def test_a_paraphrase_with_the_sources_words_is_supported() -> None:
    report = (
        "The with statement wraps a block's execution in methods that a context manager defines [1]. "
        "When the suite exits because of an exception and __exit__() returns false, the exception is reraised [1]."
    )
    result = check_claims(report, {1: WITH_DOC})
    assert len(result) == 2
    assert all(v.supported and v.reason == "" for v in result), result


def test_a_wrong_number_is_flagged_with_the_number_named() -> None:
    result = check_claims("The default recursion limit of the interpreter is 5000 frames [1].", {1: RECURSION_DOC})
    assert [(v.marker, v.supported) for v in result] == [("[1]", False)]
    assert "5000" in result[0].reason
    right = check_claims("The interpreter's default recursion limit is 1000 frames [1].", {1: RECURSION_DOC})
    assert right[0].supported


def test_a_number_the_source_spells_out_is_not_a_false_alarm() -> None:
    doc = "PEP 8 recommends four spaces per indentation level for Python code."
    assert check_claims("PEP 8 recommends 4 spaces per indentation level [1].", {1: doc})[0].supported


def test_an_unrelated_sentence_is_flagged() -> None:
    result = check_claims("Generators suspend execution at each yield and resume on next() [1].", {1: WITH_DOC})
    assert len(result) == 1 and not result[0].supported
    assert "key words" in result[0].reason


def test_a_sentence_citing_two_documents_is_judged_on_both_together() -> None:
    report = (
        "The with statement wraps a block in methods defined by a context manager, "
        "and the default recursion limit of the interpreter is 1000 frames [1][2]."
    )
    both = verdicts(report, {1: WITH_DOC, 2: RECURSION_DOC})
    assert all(supported for supported, _ in both.values()), both
    # Neither document alone says all of it, yet together they do: no false alarm on either marker.
    assert not check_claims(report.replace("[1][2]", "[1]"), {1: WITH_DOC})[0].supported
    # A third document that says nothing of it is flagged on its own marker only.
    three = check_claims(report.replace("[1][2]", "[1][2][3]"), {1: WITH_DOC, 2: RECURSION_DOC, 3: SLOTS_DOC})
    assert [(v.marker, v.supported) for v in three] == [("[1]", True), ("[2]", True), ("[3]", False)]
    assert "adds nothing" in three[2].reason


def test_markers_attach_to_the_sentence_before_them_and_code_is_ignored() -> None:
    markdown = (
        "## Heading [9]\n\n"
        "First claim about context managers. [1] Second claim about `x[2]` frames [2].\n\n"
        "- A list item that cites two sources [1][3]\n"
        "A sentence without citations."
    )
    assert cited_sentences(markdown) == [
        CitedSentence("First claim about context managers.", ((1, 1),)),
        CitedSentence("Second claim about x[2] frames.", ((2, 1),)),
        CitedSentence("A list item that cites two sources", ((1, 2), (3, 1))),
    ]


def test_each_marker_knows_which_appearance_of_its_number_it_is() -> None:
    markdown = (
        "## Overview [1]\n\nAlpha beta gamma [1]. Delta [2] and epsilon [1] zeta.\n\n"
        "```\nx = [1]\n```\nEta theta iota. [1][2]"
    )
    assert [c.markers for c in cited_sentences(markdown)] == [((1, 2),), ((2, 1), (1, 3)), ((1, 4), (2, 2))]


def test_markers_without_source_text_and_too_short_sentences_are_not_checked() -> None:
    assert check_claims("See the reference [1].", {1: WITH_DOC}) == []
    assert check_claims("The with statement wraps a block in a context manager [2].", {1: WITH_DOC}) == []


def test_hard_wrapped_documents_are_matched_across_line_breaks() -> None:
    sentence = "This allows common try except finally usage patterns to be encapsulated for convenient reuse [1]."
    assert check_claims(sentence, {1: WITH_DOC})[0].supported


def test_sentences_lose_markdown_but_keep_operators_and_identifiers() -> None:
    markdown = '- **Bold** claim on `__exit__()` and an "except*" clause where -1**2 is -1 [1].'
    assert (
        cited_sentences(markdown)[0].sentence == 'Bold claim on __exit__() and an "except*" clause where -1**2 is -1.'
    )

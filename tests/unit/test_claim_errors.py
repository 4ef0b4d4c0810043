"""The claim check catches the errors a writer makes while keeping the source's words: a negation or a
polarity flipped, a number changed, a comparison or an order swapped, a wrong name; and it marks what no
source backs: a factual sentence without a citation, and a claim whose citation verification removed."""

from __future__ import annotations

import pytest

from sleuth.core.markdown import CITATION_REMOVED
from sleuth.research.report.citations import verify_report
from sleuth.research.report.claims import NO_CITATION, check_claims
from sleuth.research.report.sentences import report_sentences
from sleuth.research.sources import SourceRegistry
from sleuth.stream.documents import Document
from sleuth.tools.web.credibility import is_unsafe_citation_url

WITH_DOC = """The "with" statement is used to wrap the execution of a block with methods defined by a
context manager. If the suite was exited due to an exception, and the return value from the
"__exit__()" method was false, the exception is reraised. If the return value was true, the
exception is suppressed, and execution continues with the statement following the "with" statement.
The context manager's "__enter__()" method is invoked before the suite is executed."""

LAMBDA_DOC = """Lambda expressions (sometimes called lambda forms) are used to create anonymous functions.
Note that functions created with lambda expressions cannot contain statements or annotations."""

GLOBAL_DOC = """Names listed in a "global" statement must not be used in the same code block textually
preceding that "global" statement. The "global" statement is a declaration which holds for the
entire current code block."""

ASSERT_DOC = """The current code generator emits no code for an "assert" statement when optimization is
requested at compile time. The built-in variable "__debug__" is always true under normal
circumstances."""

PARTIAL_DOC = """partialmethod.__get__ is called with four arguments. The function is called with three None
arguments when the traceback is missing. The second argument is the instance."""

STEPS_DOC = """The lookup proceeds in order:

1. The instance dictionary is searched.
2. The class dictionary is searched.
3. Base classes are searched in method resolution order.
4. "__getattr__()" is called.
5. AttributeError is raised.
6. The error is logged.
7. The program exits.

Descriptors in the class take priority over the instance dictionary."""

HEAP_DOC = """Heaps are binary trees for which every parent node has a value less than or equal to any of
its children. The smallest element is always the root, heap[0]. "heapq.heappush()" pushes the value
item onto the heap, maintaining the heap invariant. A "TypeError" is raised for unorderable items."""

DECORATOR_DOC = """The decorator expressions are evaluated when the function is defined, in the scope that
contains the function definition. Multiple decorators are applied in nested fashion: the decorator
closest to the definition is applied first, before the outer ones."""


def verdict(markdown: str, doc: str) -> tuple[bool, str]:
    (result,) = check_claims(markdown, {1: doc})
    return result.supported, result.reason


@pytest.mark.parametrize(
    ("faithful", "edited", "doc"),
    [
        # "not" dropped
        (
            "Functions created with lambda expressions cannot contain statements or annotations [1].",
            "Functions created with lambda expressions can contain statements or annotations [1].",
            LAMBDA_DOC,
        ),
        # "not" added
        (
            "If the return value of the __exit__() method was false, the exception is reraised [1].",
            "If the return value of the __exit__() method was false, the exception is not reraised [1].",
            WITH_DOC,
        ),
        # "must not" as "must"
        (
            "Names listed in a global statement must not be used in the same code block before it [1].",
            "Names listed in a global statement must be used in the same code block before it [1].",
            GLOBAL_DOC,
        ),
        # an inverted true/false rule
        (
            "If the return value was true, the exception is suppressed and execution continues [1].",
            "If the return value was false, the exception is suppressed and execution continues [1].",
            WITH_DOC,
        ),
        # "always" as "never"
        (
            "The built-in variable __debug__ is always true under normal circumstances [1].",
            "The built-in variable __debug__ is never true under normal circumstances [1].",
            ASSERT_DOC,
        ),
    ],
)
def test_a_flipped_negation_or_polarity_is_flagged(faithful: str, edited: str, doc: str) -> None:
    assert verdict(faithful, doc) == (True, "")
    supported, reason = verdict(edited, doc)
    assert not supported and ("negat" in reason or "says “" in reason), reason


@pytest.mark.parametrize(
    ("faithful", "edited", "shown"),
    [
        ("The function is called with three None arguments when the traceback is missing [1].", None, ""),
        ("The function is called with four None arguments when the traceback is missing [1].", None, "4"),
        ("The function is called with 4 None arguments when the traceback is missing [1].", None, "4"),
        ("The second argument of the call is the instance [1].", None, ""),
        ("The third argument of the call is the instance [1].", None, "3rd"),
    ],
)
def test_numbers_are_checked_in_digits_number_words_and_ordinals(faithful: str, edited: None, shown: str) -> None:
    supported, reason = verdict(faithful, PARTIAL_DOC)
    assert supported == (not shown), reason
    if shown:
        assert reason == f"the cited passage does not contain the number {shown}"


def test_a_numbered_list_on_the_page_does_not_make_small_numbers_supported() -> None:
    assert verdict("Descriptors in the class take priority over the instance dictionary [1].", STEPS_DOC)[0]
    supported, reason = verdict(
        "Descriptors in the class take priority over the instance dictionary in 7 cases [1].", STEPS_DOC
    )
    assert not supported and reason == "the cited passage does not contain the number 7"
    # The list's text still supports what it says.
    assert verdict("Base classes are searched in method resolution order [1].", STEPS_DOC)[0]


@pytest.mark.parametrize(
    ("faithful", "edited"),
    [
        (
            "The context manager's __enter__() method is invoked before the suite is executed [1].",
            "The context manager's __enter__() method is invoked after the suite is executed [1].",
        ),
        (
            "Every parent node has a value less than or equal to any of its children [1].",
            "Every parent node has a value greater than or equal to any of its children [1].",
        ),
        (
            "The smallest element of a heap is always the root, heap[0] [1].",
            "The largest element of a heap is always the root, heap[0] [1].",
        ),
        (
            "The decorator closest to the definition is applied first, before the outer ones [1].",
            "The decorator closest to the definition is applied last, after the outer ones [1].",
        ),
    ],
)
def test_a_swapped_comparison_or_order_is_flagged(faithful: str, edited: str) -> None:
    doc = WITH_DOC + "\n\n" + HEAP_DOC + "\n\n" + DECORATOR_DOC
    assert verdict(faithful, doc) == (True, "")
    supported, reason = verdict(edited, doc)
    assert not supported and "says “" in reason, reason


def test_the_two_sides_of_a_comparison_swapped_are_flagged() -> None:
    doc = "The context manager's __enter__() method is called before the suite of the statement is executed."
    assert verdict("The __enter__() method is called before the suite of the statement is executed [1].", doc)[0]
    supported, reason = verdict(
        "The suite of the statement is executed before the __enter__() method is called [1].", doc
    )
    assert not supported and "other way round" in reason, reason


def test_sides_that_differ_only_by_a_negator_are_swapped_sides() -> None:
    doc = "TypeError will be raised if a field without a default value follows a field with a default value."
    assert verdict(
        "TypeError will be raised if a field without a default value follows a field with a default value [1].", doc
    )[0]
    supported, reason = verdict(
        "TypeError will be raised if a field with a default value follows a field without a default value [1].", doc
    )
    assert not supported and "other way round" in reason, reason


@pytest.mark.parametrize(
    ("edited", "named"),
    [
        ("heapq.heappop() pushes the value item onto the heap, maintaining the heap invariant [1].", "heapq.heappop"),
        ("A ValueError is raised by the heap for unorderable items [1].", "valueerror"),
        (
            "If the suite was exited due to an exception and __enter__() returned false, it is reraised [1].",
            "__enter__",
        ),
    ],
)
def test_a_wrong_name_or_identifier_is_flagged(edited: str, named: str) -> None:
    supported, reason = verdict(edited, HEAP_DOC + "\n\n" + WITH_DOC)
    assert not supported and reason == f"the cited passage does not mention {named}", reason


def test_faithful_paraphrases_are_not_flagged() -> None:
    doc = "\n\n".join([WITH_DOC, LAMBDA_DOC, GLOBAL_DOC, HEAP_DOC, DECORATOR_DOC])
    report = (
        "A lambda cannot contain statements or annotations, so lambda forms only create anonymous functions [1]. "
        "When __exit__() returns a false value after an exception, the with statement reraises the exception [1]. "
        "A name must not appear in a code block before the global statement that lists it [1]. "
        "heapq.heappush() keeps the heap invariant while pushing an item onto the heap [1]. "
        "The decorator nearest the definition is applied before the outer decorators [1]."
    )
    assert [(v.supported, v.reason) for v in check_claims(report, {1: doc})] == [(True, "")] * 5


def test_a_factual_sentence_without_a_citation_is_flagged_and_connectives_are_not() -> None:
    report = (
        "## How the with statement works\n\n"
        "The with statement wraps a block in the methods of a context manager [1]. "
        "The exception is suppressed when __exit__() returns a true value. "
        "The sections below explain each step in detail.\n\n"
        "**Key points**\n\n"
        "The rules are as follows:\n\n"
        "- The __enter__() method runs before the suite [1].\n"
        "- Lambda functions cannot contain statements or annotations.\n\n"
        "What does __exit__() return?\n\n"
        "| method | when it runs |\n|---|---|\n| __enter__() | before the suite [1] |\n\n"
        "```python\nwith open(path) as handle: data = handle.read()\n```\n\n"
        "_This report is extractive: each sentence was copied from the cited sources._\n"
    )
    flagged = [(v.marker, v.occurrence, v.sentence, v.reason) for v in check_claims(report, {1: WITH_DOC})]
    uncited = [(m, k, s) for m, k, s, r in flagged if r == NO_CITATION]
    assert uncited == [
        ("", 1, "The exception is suppressed when __exit__() returns a true value."),
        ("", 2, "Lambda functions cannot contain statements or annotations."),
    ]
    facts = {s.sentence: s.factual for s in report_sentences(report)}
    assert facts["The sections below explain each step in detail."] is False
    assert facts["The rules are as follows:"] is False
    assert facts["What does __exit__() return?"] is False
    assert "How the with statement works" not in facts and "Key points" not in facts
    assert not any(s.startswith(("method", "This report", "with open")) for s in facts)


def test_a_claim_whose_citation_verification_removed_is_marked_and_flagged() -> None:
    known = Document.from_url("https://docs.python.org/3/reference/compound_stmts.html", title="Compound")
    registry = SourceRegistry()
    registry.add(known)
    draft = (
        "The with statement wraps a block in a context manager's methods [1]. "
        "It was added to the language in Python 2.5 [2]. "
        "The suite runs after __enter__() returns [1][3]."
    )
    verified = verify_report(draft, {1: known}, registry, is_unsafe_citation_url)
    assert verified.markdown == (
        "The with statement wraps a block in a context manager's methods [1]. "
        f"It was added to the language in Python 2.5 {CITATION_REMOVED}. "
        "The suite runs after __enter__() returns [1]."
    )
    claims = check_claims(verified.markdown, {1: WITH_DOC})
    lost = [(v.marker, v.occurrence, v.sentence) for v in claims if not v.supported and v.marker == CITATION_REMOVED]
    assert lost == [(CITATION_REMOVED, 1, "It was added to the language in Python 2.5.")]
    assert "removed in verification" in next(v.reason for v in claims if v.marker == CITATION_REMOVED)
    assert not any(v.reason == NO_CITATION for v in claims)  # marked once, as lost, not also as uncited

"""The confidence rule: which degradations cost confidence and which are only named, and whether the
cited passages address the question at all."""

from __future__ import annotations

from dataclasses import replace

from sleuth.research.report.method_note import Counts, confidence
from sleuth.research.report.relevance import question_coverage
from sleuth.research.state import RunTally

WELL_SOURCED = Counts(
    sources_found=12,
    sources_read=6,
    sources_cited=5,
    citations_removed=0,
    claims_unsupported=0,
    max_cycles=8,
    time_budget_s=600,
    elapsed_s=40,
)


def test_an_unreviewed_plan_costs_no_confidence_but_a_stopped_agent_does() -> None:
    assert confidence(WELL_SOURCED, RunTally(degraded=["plan_review_timeout"])) == ("high", "well_sourced")
    stopped = RunTally(degraded=["plan_review_timeout", "agent_force_report"])
    assert confidence(WELL_SOURCED, stopped) == ("medium", "degraded")
    assert confidence(WELL_SOURCED, RunTally(degraded=["deadline"])) == ("low", "cut_short")


QUESTION = (
    "How does functools.lru_cache decide which entries to evict, and how can I inspect its cache hits and misses?"
)
ANSWERED = (
    "`functools.lru_cache()`: Decorator to wrap a function with a memoizing callable that saves up to the"
    " maxsize most recent calls. [1] The LRU feature discards the least recently used entries when the"
    " cache is full. [1] Use cache_info() to measure its hits and misses. [1]"
)
# What a corpus without the answer gives: well-cited sentences about something else.
OFF_TOPIC = (
    "A function definition defines a user-defined function object. [1] The function definition does not"
    " execute the function body; it is executed only when the function is called. [2] A decorator"
    " expression is evaluated when the function is defined. [3]"
)


def _with(markdown: str) -> Counts:
    return replace(WELL_SOURCED, coverage=question_coverage(QUESTION, markdown))


def test_confidence_says_whether_the_cited_passages_address_the_question() -> None:
    assert confidence(_with(ANSWERED), RunTally()) == ("high", "well_sourced")
    assert confidence(_with(OFF_TOPIC), RunTally()) == ("low", "off_topic")
    # the same off-topic sentences with the name the question asks about are still only partly on it
    renamed = OFF_TOPIC.replace("A decorator expression", "The lru_cache decorator expression")
    assert confidence(_with(renamed), RunTally())[0] != "high"


def test_question_coverage_counts_subject_words_and_names_in_cited_sentences_only() -> None:
    coverage = question_coverage(QUESTION, ANSWERED + "\n\nEvict, inspect, decide (uncited words do not count).")
    assert coverage is not None and coverage.names_asked == 1 and coverage.names_found == 1
    off = question_coverage(QUESTION, OFF_TOPIC)
    assert off is not None and off.names_found == 0 and off.share < coverage.share
    assert question_coverage("Что такое кэш?", ANSWERED) is None  # nothing this can read

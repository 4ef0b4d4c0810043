"""The confidence rule: measured signals in, a level and a one-line reason out. Which degradations cost
confidence, whether the checked cited passages address the question and each plan step, and what a
flagged claim or a step that found nothing does to it."""

from __future__ import annotations

from dataclasses import replace

from sleuth.research.report.method import Counts, StepSignal, confidence, method_note, step_signals
from sleuth.research.report.relevance import (
    checked_claims,
    checked_sentences,
    coverage,
    on_subject_share,
    opens_with_a_cited_answer,
    question_coverage,
    uncited_subject_title,
)
from sleuth.research.state import Finding, RunTally
from sleuth.stream.results import ClaimVerdict

QUESTION = (
    "How does functools.lru_cache decide which entries to evict, and how can I inspect its cache hits and misses?"
)
ANSWERED = (
    "`functools.lru_cache()`: Decorator to wrap a function with a memoizing callable that saves up to the"
    " maxsize most recent calls. [1] The LRU feature discards the least recently used entries when the"
    " cache is full, which decides what to evict. [1] Use cache_info() to inspect its hits and misses. [1]"
)
# What a corpus without the answer gives: well-cited sentences about something else.
OFF_TOPIC = (
    "A function definition defines a user-defined function object. [1] The function definition does not"
    " execute the function body; it is executed only when the function is called. [2] A decorator"
    " expression is evaluated when the function is defined. [3]"
)
PLAN = [
    "How does functools.lru_cache decide which entries to evict?",
    "Pitfalls, edge cases and limitations of cache_info",
]


def _counts(markdown: str, verdicts: list[ClaimVerdict] | None = None, **changes: object) -> Counts:
    sentences = checked_sentences(markdown, verdicts or [])
    findings = [Finding("t1", "Saves calls. [1]", 0, 1, "done", plan_step=1), Finding("t2", "x [2]", 1, 1, "done", 2)]
    counts = Counts(
        sources_found=12,
        sources_read=6,
        sources_cited=3,
        citations_removed=0,
        claims_unsupported=sum(1 for v in verdicts or [] if not v.supported),
        claims_checked=len(verdicts or []) or 3,
        max_cycles=8,
        time_budget_s=600,
        elapsed_s=40,
        question=coverage(QUESTION, sentences),
        steps=step_signals(PLAN, findings, sentences),
    )
    return replace(counts, **changes)  # type: ignore[arg-type]


def test_a_report_whose_checked_sentences_answer_every_part_is_high() -> None:
    assert confidence(_counts(ANSWERED), RunTally()) == ("high", "well_sourced")


def test_an_unreviewed_plan_costs_no_confidence_but_a_stopped_agent_does() -> None:
    counts = _counts(ANSWERED)
    assert confidence(counts, RunTally(degraded=["plan_review_timeout"])) == ("high", "well_sourced")
    stopped = RunTally(degraded=["plan_review_timeout", "agent_force_report"])
    assert confidence(counts, stopped) == ("medium", "degraded")
    assert confidence(counts, RunTally(degraded=["deadline"])) == ("low", "cut_short")


def test_an_off_target_report_is_never_high() -> None:
    assert confidence(_counts(OFF_TOPIC), RunTally()) == ("low", "off_topic")
    # the same sentences naming the function the question asks about are still only partly on it
    renamed = OFF_TOPIC.replace("A decorator expression", "The lru_cache decorator expression")
    assert confidence(_counts(renamed), RunTally())[0] != "high"


def test_sentences_the_claim_check_flagged_do_not_count_as_covering_the_question() -> None:
    flagged = [
        ClaimVerdict(marker="[1]", sentence=sentence, supported=False, reason="not in the source")
        for sentence in checked_sentences(ANSWERED)
    ]
    assert checked_sentences(ANSWERED, flagged) == []
    level, reason = confidence(_counts(ANSWERED, flagged), RunTally())
    assert (level, reason) == ("low", "unsupported")


def test_a_plan_step_that_found_nothing_costs_confidence_and_is_named() -> None:
    counts = _counts(ANSWERED)
    empty = replace(counts, steps=(counts.steps[0], StepSignal(found_nothing=True, coverage=None)))
    assert confidence(empty, RunTally()) == ("medium", "step_uncovered")
    note = method_note(empty, RunTally())
    assert note.steps_empty == [2] and note.steps_covered == 1 and note.steps_planned == 2
    assert note.confidence_reason == "step 2 of the plan found nothing."
    assert note.text.endswith(f"**Confidence: medium** — {note.confidence_reason}")
    nothing = replace(counts, steps=(StepSignal(True, None), StepSignal(True, None)))
    assert confidence(nothing, RunTally()) == ("low", "steps_uncovered")


def test_the_reason_is_one_line_with_the_measured_figures() -> None:
    note = method_note(_counts(ANSWERED), RunTally())
    assert note.confidence == "high" and "\n" not in note.confidence_reason
    assert note.question_coverage is not None and f"{round(note.question_coverage * 100)}%" in note.confidence_reason
    off = method_note(_counts(OFF_TOPIC), RunTally())
    assert off.confidence == "low" and "never name what the question asks about" in off.confidence_reason


def test_coverage_counts_subject_words_and_names_in_cited_sentences_only() -> None:
    answered = question_coverage(QUESTION, ANSWERED + "\n\nEvict, inspect, decide (uncited words do not count).")
    assert answered is not None and answered.names_asked == 1 and answered.names_found == 1
    off = question_coverage(QUESTION, OFF_TOPIC)
    assert off is not None and off.names_found == 0 and off.share < answered.share
    assert question_coverage("Что такое кэш?", ANSWERED) is None  # nothing this can read
    # a step's scaffolding is not its subject: only "cache_info" is asked of step 2
    step = step_signals(PLAN, [], checked_sentences(ANSWERED))[1]
    assert step.coverage is not None and step.coverage.words_asked == 1 and step.found_nothing


def test_a_passage_cited_after_its_last_sentence_covers_the_question_in_all_its_sentences() -> None:
    question = "How do I generate a sequence of integers like generate_series?"
    passage = (
        "The generate_series(START,END,STEP) function is a table-valued function. "
        "Its rows hold integer values. The first row has the value START. [1]"
    )
    covered = question_coverage(question, passage)
    assert covered is not None and covered.names_asked == 1 and covered.names_found == 1
    # a sentence the claim check flagged still counts for nothing
    flagged = ClaimVerdict(
        marker="[1]",
        sentence="The generate_series(START,END,STEP) function is a table-valued function.",
        supported=False,
        reason="not in the source",
    )
    uncovered = question_coverage(question, passage, [flagged])
    assert uncovered is not None and uncovered.names_found == 0


SEEN = ["functools — Higher-order functions", "SQLite Autoincrement", "Compound statements", "SQLite Older News",
        "SQLite Backup API", "Function definitions"]  # fmt: skip


def test_a_source_is_on_the_subject_when_its_title_names_a_word_few_titles_share() -> None:
    claims = checked_claims(ANSWERED + "\n\nA function is called. [2]")
    titles = {1: "functools — Higher-order functions", 2: "Function definitions"}
    # `functools.lru_cache` names functools; "function" is no question word, "cache" is in neither title
    assert on_subject_share(QUESTION, claims, titles, SEEN) == 3 / 4
    assert on_subject_share(QUESTION, claims, {1: "Compound statements", 2: "Function definitions"}, SEEN) == 0.0
    # "SQLite" is in half the titles the run saw: it tells no page apart, "autoincrement" does
    sqlite_claims = checked_claims("Rows get a ROWID. [1] AUTOINCREMENT prevents reuse. [2]")
    question = "Should I use AUTOINCREMENT in SQLite?"
    assert on_subject_share(question, sqlite_claims, {1: "SQLite Older News", 2: "SQLite Autoincrement"}, SEEN) == 0.5
    assert on_subject_share(question, sqlite_claims, {1: "SQLite Older News", 2: "SQLite Backup API"}, SEEN) == 0.0
    # a title names a word it holds before stemming ("Datatypes" holds "type")
    assert on_subject_share("How does type affinity work?", sqlite_claims, {1: "Datatypes In SQLite"}, SEEN) == 0.5
    assert on_subject_share(question, [], {}, SEEN) is None


def test_a_report_drawn_from_pages_on_something_else_is_not_high() -> None:
    counts = _counts(ANSWERED)
    assert confidence(replace(counts, on_subject=0.0), RunTally()) == ("medium", "off_subject")
    assert confidence(replace(counts, on_subject=0.5), RunTally()) == ("high", "well_sourced")
    # a quarter from the page on the subject, the rest from pages that mention it: not yet well sourced
    assert confidence(replace(counts, on_subject=0.25), RunTally()) == ("medium", "off_subject")
    assert confidence(replace(counts, on_subject=None), RunTally()) == ("high", "well_sourced")  # nothing to tell
    half = _counts(
        "The lru_cache decorator keeps a cache of recent calls. [1] Old entries are dropped. [1]", on_subject=0.0
    )
    assert half.question is not None and 0.34 < half.question.share < 0.5
    assert confidence(half, RunTally()) == ("low", "off_subject")
    note = method_note(replace(counts, on_subject=0.0), RunTally())
    assert note.on_subject_share == 0.0
    assert note.confidence_reason == (
        "none of the checked, cited sentences come from a source titled for what the question asks about."
    )


DEL_SEEN = ['The "del" statement', "Special method names", "The standard type hierarchy", "Naming and binding",
            "Execution model", "Slicings", "Exceptions", "Basic customization"]  # fmt: skip
DEL = "What happens when you delete a name with the Python del statement?"


def test_a_page_titled_for_the_question_that_went_uncited_is_named() -> None:
    cited = ["Special method names", "The standard type hierarchy", "Naming and binding"]
    # "del" is in one seen title: the page on the statement was found, and the report cites pages
    # that only touch it ("Naming and binding" names "name", as the del page does not: one word each
    # would tie, so the page must name more than every cited one)
    assert uncited_subject_title(DEL, cited, DEL_SEEN) == 'The "del" statement'
    assert uncited_subject_title(DEL, [*cited, 'The "del" statement'], DEL_SEEN) is None
    assert uncited_subject_title(DEL, ["Special method names"], ["Special method names"]) is None
    # a word most seen titles share ("SQLite") tells no page apart
    sqlite_seen = ["SQLite Autoincrement", "SQLite Older News", "SQLite Backup API", "Datatypes In SQLite"]
    assert uncited_subject_title("Is SQLite fast?", ["SQLite Older News"], sqlite_seen) is None
    # a long title that shares some of the question's words is about something else
    question = "Why are my SQLite foreign key constraints not enforced?"
    seen = ["SQLite Foreign Key Support", "Determine The Number Of Foreign Key Constraint Violations", *sqlite_seen]
    assert uncited_subject_title(question, ["SQLite Foreign Key Support"], seen) is None


def test_a_report_that_left_the_page_on_its_subject_uncited_is_not_high() -> None:
    counts = replace(_counts(ANSWERED), uncited_subject='The "del" statement')
    assert confidence(counts, RunTally()) == ("medium", "subject_page_uncited")
    note = method_note(counts, RunTally())
    assert note.uncited_subject_title == 'The "del" statement'
    assert note.confidence_reason == (
        'the page titled “The "del" statement”, found but not cited, names more of what the question asks'
        " about than any cited source."
    )
    # off target still wins: the report is low, not merely medium
    assert confidence(replace(_counts(OFF_TOPIC), uncited_subject="x"), RunTally())[0] == "low"


# How the offline writer opens a report whose sources name nothing the question asks about in one
# sentence: a note, uncited, then what the pages say.
INDIRECT = "_The sources found do not answer this question directly; what they say about it follows._\n\n" + ANSWERED


def test_a_report_is_answered_in_its_first_paragraph_only_by_a_checked_cited_sentence() -> None:
    assert opens_with_a_cited_answer(ANSWERED) is True
    assert opens_with_a_cited_answer(f"## Summary\n\n{ANSWERED}") is True  # headings are not the opening
    assert opens_with_a_cited_answer(f"## Summary\n{ANSWERED}") is True  # nor when no blank line follows
    assert opens_with_a_cited_answer(INDIRECT) is False
    assert opens_with_a_cited_answer("## Summary\n\n") is None
    # a first paragraph whose only cited sentences were flagged answers nothing
    first = "Use cache_info() to inspect its hits and misses. [1]"
    flagged = [
        ClaimVerdict(marker="[1]", sentence=sentence, supported=False, reason="not in source")
        for sentence in checked_sentences(first)
    ]
    assert opens_with_a_cited_answer(f"{first}\n\n{ANSWERED}", flagged) is False
    assert opens_with_a_cited_answer(f"{first}\n\n{ANSWERED}") is True


def test_a_report_that_does_not_open_on_a_cited_answer_is_not_high() -> None:
    counts = replace(_counts(INDIRECT), opening_cited=opens_with_a_cited_answer(INDIRECT))
    assert confidence(counts, RunTally()) == ("medium", "opening_uncited")
    # the reason is the one the report itself gives where its answer would start, though few of its
    # sentences come from pages titled for the subject as well
    assert confidence(replace(counts, on_subject=0.25), RunTally()) == ("medium", "opening_uncited")
    note = method_note(counts, RunTally())
    assert note.opening_cited is False
    assert note.confidence_reason == (
        "the report's first paragraph cites no source that passed the claim check: the sources found may"
        " not answer the question directly."
    )
    assert confidence(replace(counts, opening_cited=True), RunTally()) == ("high", "well_sourced")
    # off target still wins
    assert confidence(replace(_counts(OFF_TOPIC), opening_cited=False), RunTally())[0] == "low"

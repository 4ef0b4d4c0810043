"""What a run carries from its conversation into prompts is cut to one token budget."""

from __future__ import annotations

from sleuth.llm.tokens import count_tokens
from sleuth.research.planning.context import ITEM_OVERHEAD_TOKENS, bounded_conversation
from sleuth.stream.results import ClarificationExchange, PriorReport, ResearchRequest

LONG = "Descriptors define __get__ and __set__. " * 3000


def _tokens(request: ResearchRequest) -> int:
    clarification = request.clarification
    parts = [*(clarification.questions if clarification else []), clarification.answer if clarification else ""]
    parts += [text for item in request.history for text in (item.question, item.markdown)]
    return sum(count_tokens(part) for part in parts)


def test_questions_answer_and_earlier_reports_share_one_budget_clarification_first() -> None:
    request = ResearchRequest(
        question="How do descriptors work?",
        clarification=ClarificationExchange(questions=[LONG, "Which version?"], answer=LONG),
        history=[PriorReport(question=f"Earlier {i}? " * 500, markdown=LONG) for i in range(4)],
        review_plan=True,
    )
    bounded = bounded_conversation(request, 1000)
    assert _tokens(bounded) <= 1000
    assert bounded.clarification is not None
    assert 0 < count_tokens("\n".join(bounded.clarification.questions)) <= 500  # at most half to the questions
    assert bounded.clarification.answer and LONG.startswith(bounded.clarification.answer)
    assert (bounded.question, bounded.review_plan, bounded.report_id) == (
        request.question,
        request.review_plan,
        request.report_id,
    )
    assert request.clarification.questions[0] == LONG  # the caller's request is left as it was


def test_newest_reports_are_kept_first_and_a_short_conversation_is_untouched() -> None:
    history = [PriorReport(question=f"Question {i}?", markdown=f"Report {i}. " + "Findings. " * 300) for i in range(5)]
    each = count_tokens(history[0].markdown) + count_tokens(history[0].question) + ITEM_OVERHEAD_TOKENS
    bounded = bounded_conversation(ResearchRequest(question="q", history=history), 2 * each + 150)
    assert [item.question for item in bounded.history] == ["Question 2?", "Question 3?", "Question 4?"]
    assert (
        bounded.history[-1] == history[-1] and bounded.history[0].markdown != history[2].markdown
    )  # oldest kept is cut
    small = ResearchRequest(
        question="q",
        clarification=ClarificationExchange(questions=["Which version?"], answer="3.12"),
        history=history[:1],
    )
    assert bounded_conversation(small, 3000) == small
    assert bounded_conversation(small, 0).history == []

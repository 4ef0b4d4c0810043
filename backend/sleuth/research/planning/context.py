"""What a run carries from its conversation into prompts, bounded in tokens once for every prompt.

The conversation reaches prompts from three places: the clarifying questions (a model's output),
the user's answer to them, and the session's earlier questions and reports. `bounded_conversation`
cuts all of it to one budget (`history_max_tokens`) when the run starts, so the clarifier, planner,
orchestrator and report prompts all show the same bounded text, whichever client started the run
(API, CLI, worker) and however long what was stored is.
"""

from __future__ import annotations

import dataclasses

from sleuth.llm.prompting import render
from sleuth.llm.tokens import count_tokens, truncate_tokens
from sleuth.stream.results import ClarificationExchange, PriorReport, ResearchRequest

MIN_CUT_TOKENS = 64  # a report cut shorter than this says nothing useful: it is left out instead
ITEM_OVERHEAD_TOKENS = 8  # numbering and separators around each question or report


def bounded_conversation(request: ResearchRequest, max_tokens: int) -> ResearchRequest:
    """`request` with its clarification and history within `max_tokens` in all.

    The clarification comes first (it constrains this run): its questions get at most half the
    budget, the answer what they leave. Earlier reports share the rest, newest first.
    """
    budget = max(0, max_tokens)
    clarification = request.clarification
    if clarification is not None:
        questions, used = _fit_questions(clarification.questions, budget // 2)
        answer = truncate_tokens(clarification.answer, max(0, budget - used))
        budget = max(0, budget - used - count_tokens(answer))
        clarification = ClarificationExchange(questions=questions, answer=answer)
    return dataclasses.replace(request, clarification=clarification, history=_fit_history(request.history, budget))


def _fit_questions(questions: list[str], budget: int) -> tuple[list[str], int]:
    kept: list[str] = []
    used = 0
    for question in questions:
        room = budget - used - ITEM_OVERHEAD_TOKENS
        if room <= 0:
            break
        cut = truncate_tokens(question, room)
        if cut:
            kept.append(cut)
            used += count_tokens(cut) + ITEM_OVERHEAD_TOKENS
        if cut != question:
            break
    return kept, used


def _fit_history(history: list[PriorReport], budget: int) -> list[PriorReport]:
    """Earlier reports, newest kept first; the one that does not fit is cut, older ones are left out."""
    kept: list[PriorReport] = []
    for item in reversed(history):
        question = truncate_tokens(item.question, max(0, budget // 4))
        room = budget - count_tokens(question) - ITEM_OVERHEAD_TOKENS
        cost = count_tokens(item.markdown)
        if cost <= room:
            kept.append(PriorReport(question=question, markdown=item.markdown))
            budget = room - cost
            continue
        if room >= MIN_CUT_TOKENS:
            kept.append(PriorReport(question=question, markdown=truncate_tokens(item.markdown, room)))
        break
    return list(reversed(kept))


def history_text(history: list[PriorReport]) -> str:
    """Earlier reports as the clarifier and planner show them (already bounded: `bounded_conversation`)."""
    return render("history", items=history) if history else ""

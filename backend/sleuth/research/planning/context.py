"""Context text shared by several steps: earlier reports of the session, the clarification."""

from __future__ import annotations

from sleuth.llm.prompting import render
from sleuth.llm.tokens import count_tokens, truncate_tokens
from sleuth.stream.results import PriorReport


def history_text(history: list[PriorReport], max_tokens: int) -> str:
    """Earlier reports, newest kept first when the budget is tight."""
    if not history or max_tokens <= 0:
        return ""
    kept: list[PriorReport] = []
    budget = max_tokens
    for item in reversed(history):
        cost = count_tokens(item.markdown) + count_tokens(item.question) + 8
        if cost > budget:
            if budget > 64:
                kept.append(PriorReport(question=item.question, markdown=truncate_tokens(item.markdown, budget - 32)))
            break
        kept.append(item)
        budget -= cost
    return render("history", items=list(reversed(kept)))

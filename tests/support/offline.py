"""Requests for the offline model built from the real templates, as the engine would send them."""

from __future__ import annotations

from typing import Any

from sleuth.llm.offline.request import OfflineRequest
from sleuth.llm.prompting import render


def agent_report_request(task: str, pages: list[dict[str, Any]], max_tokens: int = 600) -> OfflineRequest:
    """An agent's report step: its task and the pages it opened (`number`, `title`, `url`, `text`)."""
    return OfflineRequest(
        messages=[
            {
                "role": "system",
                "content": render(
                    "intermediate_report", today="2025-01-01", task=task, max_tokens=max_tokens, forced=False
                ),
            },
            {"role": "user", "content": render("intermediate_report_user", sources=pages, forced=False)},
        ],
        tools=[],
        max_tokens=max_tokens,
    )

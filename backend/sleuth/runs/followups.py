"""A follow-up message: which stored report it asks about, as the engine's request."""

from __future__ import annotations

from sleuth.store.store import Store
from sleuth.stream.results import Followup, ResearchRequest, ResearchResult


class NoReport(Exception):
    """There is no completed report to ask about."""


def followup_request(store: Store, session_id: str, content: str, report_id: str | None) -> ResearchRequest:
    """The request answering `content` from `report_id`, or from the session's latest report."""
    report_id = report_id or store.latest_report_id(session_id)
    data = store.get_report(report_id) if report_id else None
    if data is None or data["session_id"] != session_id or data["status"] != "completed":
        raise NoReport()
    report = ResearchResult.model_validate(data)
    followup = Followup(
        report_id=str(report.report_id), question=report.question, markdown=report.markdown, sources=report.sources
    )
    return ResearchRequest(question=content, session_id=session_id, clarify=False, followup=followup)

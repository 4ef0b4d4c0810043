"""What a new user message means in its session, as the engine's request: an answer to
clarification, a new question, or a follow-up about a stored report."""

from __future__ import annotations

from dataclasses import dataclass

from sleuth.config import Mode
from sleuth.store.records import RunKind
from sleuth.store.store import Store
from sleuth.stream.results import ClarificationExchange, Followup, PriorReport, ResearchRequest, ResearchResult


@dataclass(frozen=True)
class PlannedRun:
    request: ResearchRequest
    kind: RunKind
    answers_run_id: str | None = None


def plan_run(
    store: Store,
    session_id: str,
    content: str,
    *,
    mode: Mode | None,
    clarify: bool | None,
    time_budget_s: float | None = None,
    sources: list[str] | None = None,
    prior: list[PriorReport] | None = None,
    with_history: bool = True,
) -> PlannedRun:
    """Turn a message into a ResearchRequest.

    If the session's latest run ended asking clarification questions, this message answers
    them: the new run researches the original question with the exchange attached and skips
    clarification. Otherwise it is a new question; `prior` (a conversation held elsewhere) and the
    session's earlier completed reports go along as history (the engine caps them in tokens), unless
    `with_history` is False (a scheduled run researches afresh and compares afterwards).
    """
    runs = store.list_runs(session_id)
    reports = store.completed_reports(session_id) if with_history else []
    stored = [PriorReport(question=q, markdown=md) for q, md in reports]
    history = [*(prior or []), *stored]
    last = runs[-1] if runs else None
    if last is not None and last.status == "waiting_for_input" and last.stop_reason == "clarification":
        exchange = ClarificationExchange(questions=list(last.clarification_questions), answer=content)
        request = ResearchRequest(
            question=last.question,
            session_id=session_id,
            mode=mode or last.mode,
            clarify=False,
            clarification=exchange,
            history=history,
            time_budget_s=time_budget_s,
            sources=sources,
        )
        return PlannedRun(request=request, kind="clarification_answer", answers_run_id=last.id)
    request = ResearchRequest(
        question=content,
        session_id=session_id,
        mode=mode,
        clarify=clarify,
        history=history,
        time_budget_s=time_budget_s,
        sources=sources,
    )
    return PlannedRun(request=request, kind="question")


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

"""A completed report stored as a finished run leaves it: its session, its run and the report row."""

from __future__ import annotations

from sleuth.core.ids import new_id
from sleuth.store.records import RunRecord, now_iso
from sleuth.store.recovery import this_host
from sleuth.store.store import Store
from sleuth.stream.results import ResearchResult


def store_report(store: Store, result: ResearchResult, session_id: str | None = None) -> str:
    """Store `result` (its report_id set) as the report of a new completed run; returns the session id."""
    session_id = session_id or new_id("s")
    run_id = new_id("r")
    if store.get_session(session_id) is None:
        store.create_session(session_id, "stored report")
    store.create_run(RunRecord(run_id, session_id, result.question, "question", "running", this_host(), 1, now_iso()))
    store.finish_run(
        run_id,
        status="completed",
        stop_reason="completed",
        report_id=result.report_id,
        result=result,
        session_id=session_id,
    )
    return session_id

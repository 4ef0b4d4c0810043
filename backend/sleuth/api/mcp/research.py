"""What the MCP tools do, in plain terms: start and follow a run, search, list sources, open
reports and documents. Text in, text out; the SDK's side is `server.py`.

A refusal or a failed run is `Refused` (the tool answers with an error result the model reads).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Literal

from sleuth.api.documents import document_by_id, document_by_url
from sleuth.api.openai_chat import progress_line
from sleuth.api.refused import Refused
from sleuth.api.services import Services
from sleuth.api.sse import run_objects
from sleuth.api.starting import Started, check_capacity, check_length, start_run
from sleuth.config import Mode
from sleuth.core.ids import new_id
from sleuth.exports.markdown import report_document
from sleuth.stream.results import ResearchResult
from sleuth.tools import sources
from sleuth.tools.factory import build_toolbox
from sleuth.tools.local.access import Viewer

ResearchMode = Literal["light", "standard", "heavy"]
MODES: dict[ResearchMode, Mode | None] = {"light": "light", "standard": None, "heavy": "heavy"}
REPORT_URI = "sleuth://reports/{report_id}"

Say = Callable[[str], Awaitable[None]]


def report_uri(report_id: str) -> str:
    return REPORT_URI.format(report_id=report_id)


async def deep_research(
    services: Services,
    question: str,
    *,
    mode: ResearchMode,
    time_budget_s: float | None,
    chosen: list[str] | None,
    say: Say,
    when_cancelled: Callable[[str], None],
) -> str:
    """Run the research to its end, saying each step a reader follows; the verified report.

    The run belongs to the server, not to this call: when the call is cancelled,
    `when_cancelled(run_id)` decides whether the run goes with it (`cancel_run`).
    """
    check_length(services, question)
    await check_capacity(services)
    starting = asyncio.ensure_future(
        start_run(
            services,
            new_id("s"),
            question,
            mode=MODES[mode],
            clarify=False,  # a host cannot answer Sleuth's questions mid-call
            new_session=True,
            time_budget_s=time_budget_s,
            chosen=None if chosen is None else sources.clean_names(chosen),
        )
    )
    try:
        # Shielded: a run launched as the call is cancelled still gets its id to `when_cancelled`.
        started = await asyncio.shield(starting)
    except asyncio.CancelledError:
        starting.add_done_callback(lambda done: _started_after_all(done, when_cancelled))
        raise
    run_id = started.record.id
    report_id: str | None = None
    errors: list[str] = []
    stop_reason = ""
    try:
        await say(f"Run {run_id} started (get_report accepts this id if the call ends before the report)")
        async for obj in run_objects(
            services.manager, services.store, run_id, heartbeat_s=services.settings.heartbeat_s
        ):
            if obj is None:
                continue
            if obj["type"] == "report":
                report_id = obj["report_id"]
            elif obj["type"] == "error" and not obj["recoverable"]:
                errors.append(obj["message"])
            elif obj["type"] == "stop":
                stop_reason = obj["reason"]
            line = progress_line(obj)
            if line is not None:
                await say(line)
    except asyncio.CancelledError:
        when_cancelled(run_id)
        raise
    if report_id is None:
        if errors:
            raise Refused(500, f"the research failed: {errors[-1]}")
        raise Refused(500, f"the research ended without a report ({stop_reason or 'no reason given'})")
    return await report_text(services, report_id)


def _started_after_all(done: asyncio.Future[Started], when_cancelled: Callable[[str], None]) -> None:
    if not done.cancelled() and done.exception() is None:
        when_cancelled(done.result().record.id)


async def cancel_run(services: Services, run_id: str) -> None:
    """Cancel it as `POST /api/runs/{id}/cancel` does; shielded, so the caller's own cancellation
    cannot cut it short."""
    await asyncio.shield(services.manager.cancel(run_id))


async def report_text(services: Services, report_id: str) -> str:
    """A stored report as markdown (its `.md` export), under a header with its id, title and confidence.

    A run id is accepted too: `deep_research` says it first, and a host whose call timed out
    asks with it once the run is done.
    """
    report = await _stored_report(services, report_id)
    header = [f"Report id: {report.report_id} ({report_uri(str(report.report_id))})"]
    if report.title:
        header.append(f"Title: {report.title}")
    if report.method is not None:
        header.append(f"Confidence: {report.method.confidence} ({report.method.confidence_reason})")
    if report.stop_reason != "completed":
        header.append(f"Ended: {report.stop_reason}")
    return "\n".join(header) + "\n\n" + report_document(report)


async def _session_of(services: Services, report_or_run_id: str) -> str:
    """The session of a report, or of a run (its research may still be going)."""
    found = await asyncio.to_thread(services.store.get_report, report_or_run_id)
    if found is not None:
        return str(found["session_id"])
    run = await asyncio.to_thread(services.store.get_run, report_or_run_id)
    if run is None:
        raise Refused(404, f"no report or run {report_or_run_id!r}")
    return run.session_id


async def _stored_report(services: Services, report_or_run_id: str) -> ResearchResult:
    store = services.store
    found = await asyncio.to_thread(store.get_report, report_or_run_id)
    if found is None:
        run = await asyncio.to_thread(store.get_run, report_or_run_id)
        if run is not None and run.status == "running":
            raise Refused(409, f"run {run.id} is still running; ask again when it is done")
        if run is not None and run.report_id is not None:
            found = await asyncio.to_thread(store.get_report, run.report_id)
        elif run is not None:
            raise Refused(404, f"run {run.id} ended without a report ({run.error or run.stop_reason or run.status})")
    if found is None:
        raise Refused(404, f"no report or run {report_or_run_id!r}")
    return ResearchResult.model_validate(found)


async def quick_search(services: Services, query: str, chosen: list[str] | None, limit: int) -> str:
    """Ranked results, one per line with its URL and snippet, from the chosen sources (None: the defaults)."""
    settings = services.settings
    owner_id = services.store.owner  # the caller's own collections and the shared ones, no one else's
    viewer = Viewer(owner_id)
    try:
        names = None
        if chosen is not None:
            names = await asyncio.to_thread(partial(sources.check_sources, settings, chosen, viewer=viewer))
        toolbox = await asyncio.to_thread(partial(build_toolbox, settings, names, owner_id=owner_id))
    except ValueError as exc:  # UnknownSource among them
        raise Refused(400, str(exc)) from None
    outcome = await toolbox.search(query, limit=limit)
    lines = [
        f"{n}. {doc.title or doc.url}\n   {doc.url}\n   {' '.join(doc.snippet.split())}".rstrip()
        for n, doc in enumerate(outcome.documents, 1)
    ]
    if not lines:
        lines.append("No results.")
    lines += [f"(search failed: {error})" for error in outcome.errors]
    return "\n".join(lines)


async def source_list(services: Services) -> str:
    found = await asyncio.to_thread(
        partial(sources.list_sources, services.settings, viewer=Viewer(services.store.owner))
    )
    lines = []
    for source in found:
        details: list[str] = [source.kind]
        if source.documents is not None:
            details.append(f"{source.documents} documents")
        if source.default:
            details.append("searched by default")
        lines.append(f"- {source.name} ({', '.join(details)})")
    return "\n".join(lines) or "No sources are configured."


async def document_text(services: Services, doc_id: str | None, url: str | None, report_id: str | None = None) -> str:
    """A document as the viewer shows it; with `report_id`, also what a tool (an MCP server) returned
    to that report's run, which opens only in its session."""
    if (doc_id is None) == (url is None):
        raise Refused(422, "give exactly one of `id` and `url`")
    session_id = await _session_of(services, report_id) if report_id else None
    if doc_id is not None:
        document = await document_by_id(services, doc_id, session_id)
    else:
        document = await document_by_url(services, str(url), session_id)
    header = f"# {document.title or document.url}\n\nURL: {document.url}"
    if document.collection:
        header += f"\nCollection: {document.collection}"
    return f"{header}\n\n{document.text}"


async def recent_reports(services: Services, limit: int) -> list[tuple[str, str]]:
    """(report id, title) of the latest reports, newest first."""
    rows = await asyncio.to_thread(services.store.recent_reports, limit)
    return [(report_id, title or question) for report_id, title, question in rows]

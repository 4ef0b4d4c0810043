"""The final report: one streamed model step over cited findings, then citation verification."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import Any

from sleuth.core.clock import DeadlineReached, run_until
from sleuth.llm.gateway import LLMError
from sleuth.llm.prompting import render
from sleuth.llm.types import StreamHandlers
from sleuth.research.modes import REPORT_WORDS
from sleuth.research.report.artifact import describe_findings, reconcile
from sleuth.research.report.change_labels import confirm_changes
from sleuth.research.report.changes import compare, snapshot_of, with_section
from sleuth.research.report.citations import VerifiedReport, verify_report
from sleuth.research.report.claim_check import SourcePrep, check_report_claims, source_texts
from sleuth.research.report.method import note_for
from sleuth.research.state import Finding, RunState
from sleuth.research.step import OutputCap, llm_step
from sleuth.research.time.deadlines import both
from sleuth.stream.documents import Document
from sleuth.stream.packets import (
    Changes,
    CitationInfo,
    Degraded,
    Error,
    MessageDelta,
    MessageStart,
    NumberedSource,
    Report,
    SectionEnd,
)
from sleuth.stream.results import unsupported

MARKER_REACH = 16  # characters before a delta that a citation marker ending in it may start at


def start_report(state: RunState) -> None:
    """Open the report block once (the deadline path may have to open it too)."""
    if state.report_started:
        return
    state.report_started = True
    state.new_turn()
    state.emit(
        MessageStart(
            final_documents=[Document(**s.model_dump(exclude={"number"})) for s in state.citations.numbered_sources()]
        )
    )


def fallback_report(state: RunState, note: str) -> str:
    """A report assembled from the agents' findings without a model, for when the model can't write one."""
    findings = [f for f in state.findings if f.report.strip()]
    return render("responses/report_fallback", note=note, findings=findings)


async def check_report(
    state: RunState, text: str, *, allow_judge: bool = True, prepared: SourcePrep | None = None
) -> VerifiedReport:
    """`text` with its citations verified against what tools really returned, and a verdict on
    whether each cited document supports its sentence."""
    verified = verify_report(text, state.citations.by_number, state.registry, state.unsafe_url)
    verified.claims = await check_report_claims(
        state, verified.markdown, verified.sources, allow_judge=allow_judge, prepared=prepared
    )
    return verified


class EarlyCheck:
    """The report's check (`check_report`), started on its text as soon as the model has finished:
    the provider's usage comes after that, and litellm hands it over only once it has rebuilt the
    whole response from its chunks. Published only if the report keeps that text."""

    def __init__(self, state: RunState, prepared: SourcePrep) -> None:
        self._state = state
        self._prepared = prepared
        self._checks: dict[str, asyncio.Task[VerifiedReport]] = {}

    def start(self, text: str) -> None:
        if text.strip() and text not in self._checks:
            self._checks[text] = asyncio.ensure_future(check_report(self._state, text, prepared=self._prepared))

    def of(self, text: str) -> Awaitable[VerifiedReport] | None:
        """The check started on `text`, if one was."""
        return self._checks.get(text)

    async def cancel(self) -> None:
        for check in self._checks.values():
            check.cancel()
        await asyncio.gather(*self._checks.values(), return_exceptions=True)


async def write_report(state: RunState) -> VerifiedReport:
    """Stream the final report, cut at its timeout, then verify and publish it; the artifact's call
    goes out beside it, from the same findings, so no model call follows the report's last token."""
    start_report(state)
    findings = [f for f in state.findings if f.report.strip()]
    sources = state.citations.numbered_sources()
    artifact = asyncio.ensure_future(
        describe_findings(state, findings, sources, until=state.deadlines.deadline_at - 1.0)
    )
    prepared = SourcePrep(state, sources)
    early = EarlyCheck(state, prepared)
    try:
        text = await _stream_report(state, findings, sources, prepared, early)
        return await publish_report(state, text, artifact=artifact, prepared=prepared, checked=early.of(text))
    finally:  # a run cancelled or out of time while the report streams leaves no call behind
        if not artifact.done():
            artifact.cancel()
        await asyncio.gather(artifact, return_exceptions=True)
        await early.cancel()
        await prepared.cancel()


async def _stream_report(
    state: RunState, findings: list[Finding], sources: list[NumberedSource], prepared: SourcePrep, early: EarlyCheck
) -> str:
    """The report's text: streamed, cut at its cap and its timeout, or assembled without a model."""
    min_words, max_words = REPORT_WORDS[state.mode]
    max_tokens = state.settings.report_max_tokens
    messages = [
        {
            "role": "system",
            "content": render("report", today=state.today, mode=state.mode, min_words=min_words, max_words=max_words),
        },
        {
            "role": "user",
            "content": render(
                "report_user",
                question=state.request.question,
                clarification=state.request.clarification,
                mode=state.mode,
                plan=state.plan,
                findings=findings,
                sources=sources,
                partial=any(f.status != "done" for f in state.findings),
                min_words=min_words,
                max_words=max_words,
                max_tokens=max_tokens,
            ),
        },
    ]

    def on_text(delta: str) -> None:
        state.report_draft += delta
        state.emit(MessageDelta(content=delta))
        if "]" in delta:  # a marker that ends in this delta; it may have started in an earlier one
            prepared.seen(state.report_draft[-(len(delta) + MARKER_REACH) :])

    cap = OutputCap("final report", state.settings.report_max_tokens, on_text)

    def on_finish(content: str, finish_reason: str) -> None:
        early.start(cap.keep(content, finish_reason))

    end_at = state.deadlines.report_end_at(state.clock.now())
    try:
        result = await run_until(
            state.clock,
            end_at,
            llm_step(
                state,
                "report",
                messages,
                max_tokens=cap.max_tokens,
                handlers=StreamHandlers(on_text=cap.on_text, on_finish=on_finish),
            ),
        )
        text = cap.keep(result.content, result.finish_reason)
        if cap.cut:
            state.emit(cap.degraded())
    except DeadlineReached:
        state.emit(Degraded(level="report_timeout", detail="The report hit its time limit and was cut."))
        text = state.report_draft
    except LLMError as exc:
        state.emit(
            Error(message=f"The report model failed; showing the research findings instead. ({exc})", recoverable=True)
        )
        text = state.report_draft
    if not text.strip():
        text = fallback_report(state, render("responses/fallback_note"))
    return text


async def publish_report(
    state: RunState,
    text: str,
    *,
    allow_judge: bool = True,
    artifact: Awaitable[dict[str, Any] | None] | None = None,
    prepared: SourcePrep | None = None,
    checked: Awaitable[VerifiedReport] | None = None,
) -> VerifiedReport:
    """Verify citations against what tools really returned, check that the cited documents support
    their sentences (`checked`: that check of `text`, already started), take the artifact's call
    (title, summary and key findings) in the report's numbering; send `citation_info`s and the
    `report`, its markdown ending with the engine's method note.

    `allow_judge=False` (the deadline path) makes no further model calls; without `artifact` the
    report carries the fallback title and no summary or key findings.
    """
    if checked is None:
        checked = check_report(state, text, allow_judge=allow_judge, prepared=prepared)
    if artifact is not None:
        verified, recorded = await both(checked, artifact)
    else:
        verified, recorded = await checked, None
    published = reconcile(recorded, state.request.question, verified)
    for source in verified.sources:
        state.emit(
            CitationInfo(citation_number=source.number, document_id=source.id, url=source.url, title=source.title)
        )
    flagged = unsupported(verified.claims)
    note = note_for(state, verified, claims_unsupported=len(flagged))
    verified.markdown = f"{verified.markdown}\n\n{note.text}" if verified.markdown else note.text
    if state.request.scheduled:
        await _compare_with_previous(state, verified)
    state.published = Report(
        report_id=state.request.report_id,
        title=published.title,
        summary=published.summary,
        key_findings=published.key_findings,
        markdown=verified.markdown,
        sources=verified.sources,
        removed_citations=verified.removed,
        unsupported_claims=flagged,
        method=note,
        changes=state.changes,
    )
    state.emit(state.published)
    state.emit(SectionEnd())
    return verified


async def _compare_with_previous(state: RunState, verified: VerifiedReport) -> None:
    """A scheduled run keeps a snapshot of what it found; with its schedule's previous one, the diff
    opens the report and goes out as the `changes` packet, just before the `report`."""
    texts = await source_texts(state, verified.sources)
    taken_at = datetime.now(UTC)
    state.snapshot = snapshot_of(state.request.report_id, taken_at, verified.claims, verified.sources, texts)
    previous = state.request.previous
    if previous is None:
        return
    state.changes = await confirm_changes(state, compare(previous, state.snapshot, verified.sources))
    verified.markdown = with_section(verified.markdown, state.changes)
    state.emit(Changes(**state.changes.model_dump()))

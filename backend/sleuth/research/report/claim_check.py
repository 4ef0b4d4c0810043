"""Claim-support checking of the verified report, with the texts the run really read: the deterministic
check (`claims.py`), and a judge model's verdicts when one is configured (`SLEUTH_JUDGE_MODEL`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from sleuth.core.clock import DeadlineReached, run_until
from sleuth.core.markdown import CITATION_REMOVED, cited_numbers
from sleuth.llm.gateway import LLMError, ModelAccessError
from sleuth.llm.prompting import render
from sleuth.llm.types import LLMResult
from sleuth.research import tool_schemas as ts
from sleuth.research.report.claims import Source, check_claims, source
from sleuth.research.state import RunState
from sleuth.research.step import llm_step
from sleuth.stream.documents import normalise_url
from sleuth.stream.packets import Error, NumberedSource
from sleuth.stream.results import ClaimVerdict
from sleuth.tools.base import ToolError
from sleuth.tools.local.urls import is_corpus_url

log = logging.getLogger(__name__)

BATCH = 30  # claims per judge call: enough context per claim, few calls per report

# One call of the judge model: messages, tool schemas and tool choice in, the model's result out.
JudgeCall = Callable[[list[dict[str, Any]], list[dict[str, Any]], str], Awaitable[LLMResult]]


async def source_text(state: RunState, numbered: NumberedSource) -> str:
    """The text behind a numbered source: the page an agent opened, else the local document read
    back from the corpus (cheap and offline), else the search snippet the agent was shown."""
    key = normalise_url(numbered.url)
    page = state.url_cache.peek(key)
    if page is None and is_corpus_url(numbered.url):
        try:
            page = await state.url_cache.get(key, partial(state.toolbox.read, numbered.url))
        except ToolError as exc:
            log.info("claim check could not read %s: %s", numbered.url, exc)
    known = state.registry.get(numbered.id)
    return page.text if page is not None else (known.snippet if known else numbered.snippet)


async def source_texts(state: RunState, sources: list[NumberedSource]) -> dict[int, str]:
    """The text behind each numbered source (`source_text`)."""
    return {numbered.number: await source_text(state, numbered) for numbered in sources}


class SourcePrep:
    """The sources a report cites, read and analysed for the claim check while the report streams:
    most of the check's work does not depend on the report, so little of it is left after its last
    token. `seen` is fed the report's text as it grows; each newly cited number (in the numbering
    the report was given) is prepared once, off the event loop."""

    def __init__(self, state: RunState, sources: list[NumberedSource]) -> None:
        self._state = state
        self._given = {numbered.number: numbered for numbered in sources}
        self._tasks: dict[int, asyncio.Task[tuple[str, Source]]] = {}

    def seen(self, text: str) -> None:
        for number in cited_numbers(text):
            numbered = self._given.get(number)
            if numbered is not None and number not in self._tasks:
                self._tasks[number] = asyncio.ensure_future(self._prepare(numbered))

    async def _prepare(self, numbered: NumberedSource) -> tuple[str, Source]:
        text = await source_text(self._state, numbered)
        return text, await asyncio.to_thread(source, text)

    async def ready(self) -> dict[str, Source]:
        """What has been prepared, by text (a preparation that failed is left to the check itself)."""
        done = await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        return {text: prepared for item in done if isinstance(item, tuple) for text, prepared in [item]}

    async def cancel(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)


def judgeable(verdict: ClaimVerdict) -> bool:
    """A verdict on a citation: an uncited sentence, or one whose citation was removed, has no source to judge."""
    return verdict.marker not in ("", CITATION_REMOVED)


async def judge_batch(call: JudgeCall, today: str, batch: list[ClaimVerdict]) -> list[ClaimVerdict]:
    """The judge's verdicts on `batch`; a claim it does not answer keeps the verdict it had."""
    claims = [
        {"index": i, "marker": v.marker, "sentence": v.sentence, "passages": [v.passage] if v.passage else []}
        for i, v in enumerate(batch, 1)
    ]
    messages = [
        {"role": "system", "content": render("claim_judge", today=today)},
        {"role": "user", "content": render("claim_judge_user", claims=claims)},
    ]
    result = await call(messages, [ts.claim_verdicts()], "required")
    judged = list(batch)
    for tool_call in result.tool_calls:
        if not (tool_call.ok and tool_call.resolved_name == ts.CLAIM_VERDICTS and tool_call.parsed is not None):
            continue
        for item in tool_call.parsed.get("verdicts") or []:
            if not isinstance(item, dict) or not isinstance(item.get("claim"), int):
                continue
            index = item["claim"] - 1
            if 0 <= index < len(batch) and isinstance(item.get("supported"), bool):
                supported = item["supported"]
                reason = "" if supported else str(item.get("reason") or "the judge found no support in the source")
                judged[index] = batch[index].model_copy(
                    update={"supported": supported, "reason": reason, "checker": "judge"}
                )
    return judged


async def judge_claims(state: RunState, verdicts: list[ClaimVerdict]) -> list[ClaimVerdict]:
    """The judge's verdicts on every citation it can read, within one report timeout; a claim it does
    not answer keeps the deterministic verdict."""
    end_at = state.deadlines.report_end_at(state.clock.now())

    async def call(messages: list[dict[str, Any]], tools: list[dict[str, Any]], tool_choice: str) -> LLMResult:
        return await llm_step(state, "judge", messages, tools=tools, tool_choice=tool_choice)

    indexes = [i for i, v in enumerate(verdicts) if judgeable(v)]
    out = list(verdicts)
    for start in range(0, len(indexes), BATCH):
        chunk = indexes[start : start + BATCH]
        try:
            judged = await run_until(state.clock, end_at, judge_batch(call, state.today, [verdicts[i] for i in chunk]))
        except ModelAccessError as exc:
            # The report is written; a judge that refuses its credentials must not cost the run.
            state.emit(Error(message=f"{exc} Citations were checked by word overlap instead.", recoverable=True))
            break
        except (LLMError, DeadlineReached) as exc:
            log.warning("claim judge unavailable (%s); keeping the overlap check's verdicts", exc)
            break
        for i, verdict in zip(chunk, judged, strict=True):
            out[i] = verdict
    return out


async def check_report_claims(
    state: RunState,
    markdown: str,
    sources: list[NumberedSource],
    *,
    allow_judge: bool = True,
    prepared: SourcePrep | None = None,
) -> list[ClaimVerdict]:
    """A verdict for every citation marker on a checkable sentence of the final report, and for every
    factual sentence without one: the judge model's when one is configured (and time allows), else the
    deterministic check's."""
    texts = await source_texts(state, sources)
    ready = await prepared.ready() if prepared is not None else {}
    # CPU work that grows with the report: off the event loop, so other runs' packets keep flowing.
    verdicts = await asyncio.to_thread(check_claims, markdown, texts, ready)
    if allow_judge and state.settings.judge_model and any(judgeable(v) for v in verdicts):
        verdicts = await judge_claims(state, verdicts)
    return verdicts

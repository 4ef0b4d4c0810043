"""Claim-support checking of the verified report, with the texts the run really read."""

from __future__ import annotations

import asyncio
import logging
from functools import partial

from sleuth.research.report.claim_judge import judge_claims
from sleuth.research.report.claims import check_claims
from sleuth.research.state import RunState
from sleuth.stream.documents import normalise_url
from sleuth.stream.packets import NumberedSource
from sleuth.stream.results import ClaimVerdict
from sleuth.tools.base import ToolError
from sleuth.tools.local.urls import is_corpus_url

log = logging.getLogger(__name__)


async def source_texts(state: RunState, sources: list[NumberedSource]) -> dict[int, str]:
    """The text behind each numbered source: the page an agent opened, else the local document read
    back from the corpus (cheap and offline), else the search snippet the agent was shown."""
    texts: dict[int, str] = {}
    for source in sources:
        key = normalise_url(source.url)
        page = state.url_cache.peek(key)
        if page is None and is_corpus_url(source.url):
            try:
                page = await state.url_cache.get(key, partial(state.toolbox.read, source.url))
            except ToolError as exc:
                log.info("claim check could not read %s: %s", source.url, exc)
        known = state.registry.get(source.id)
        texts[source.number] = page.text if page is not None else (known.snippet if known else source.snippet)
    return texts


async def check_report_claims(
    state: RunState, markdown: str, sources: list[NumberedSource], *, allow_judge: bool = True
) -> list[ClaimVerdict]:
    """A verdict for every citation marker on a checkable sentence of the final report: the judge model's
    when one is configured (and time allows), else the deterministic overlap check's."""
    texts = await source_texts(state, sources)
    # CPU work that grows with the report: off the event loop, so other runs' packets keep flowing.
    verdicts = await asyncio.to_thread(check_claims, markdown, texts)
    if allow_judge and state.settings.judge_model and verdicts:
        verdicts = await judge_claims(state, verdicts)
    return verdicts

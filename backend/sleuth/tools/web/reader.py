"""The `web` page reader: credibility gate, SSRF-safe fetch, and text extraction for http(s) URLs."""

from __future__ import annotations

import asyncio
import logging

from sleuth.stream.documents import Document
from sleuth.tools.base import Page, SourceBlocked, ToolError
from sleuth.tools.web.content import extract
from sleuth.tools.web.credibility import credibility
from sleuth.tools.web.fetch import SafeFetcher

log = logging.getLogger(__name__)

SNIPPET_CHARS = 300


class WebReader:
    """Opens http(s) URLs. Implements `PageReader`."""

    name = "web"

    def __init__(self, fetcher: SafeFetcher, *, credibility_threshold: float) -> None:
        self.fetcher = fetcher
        self.credibility_threshold = credibility_threshold

    def handles(self, url: str) -> bool:
        return url.strip().lower().startswith(("http://", "https://"))

    async def read(self, url: str) -> Page:
        url = url.strip()
        guard = self.fetcher.guard
        parsed = guard.check_static(url)  # scheme and IP-literal refusals come first: clearest message
        # Operator allow-listed hosts are trusted explicitly, so the heuristic does not veto them.
        if not guard.allow.allows_host(parsed.host):
            score = credibility(url)
            if score.score <= self.credibility_threshold:
                threshold = self.credibility_threshold
                raise SourceBlocked(
                    "credibility",
                    f"not fetched: low credibility ({score.score:.2f} <= {threshold:.2f}): {score.reason}",
                )
        resource = await self.fetcher.fetch(url)
        # Parsing a multi-megabyte page or PDF is CPU work; keep the event loop responsive.
        title, text = await asyncio.to_thread(extract, resource)
        if not text.strip():
            raise ToolError(f"no readable text at {url}")
        if resource.truncated:
            log.info("page %s cut at %d bytes", url, self.fetcher.limits.max_bytes)
        snippet = " ".join(text[: SNIPPET_CHARS * 2].split())[:SNIPPET_CHARS]
        # The document keeps the requested URL so it matches the search hit that led here.
        document = Document.from_url(url, title=title or resource.url, snippet=snippet, source=self.name)
        return Page(document=document, text=text)

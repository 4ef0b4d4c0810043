"""DuckDuckGo through the maintained `ddgs` package (synchronous, so it runs in a worker thread)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from sleuth.core import heavy
from sleuth.stream.documents import Document
from sleuth.tools.base import ToolError
from sleuth.tools.web.provider_http import clean_snippet, http_url

# query, max_results -> ddgs-style result dicts ({"title", "href", "body"}). Injectable for tests.
TextSearch = Callable[[str, int], list[dict[str, Any]]]


def ddgs_text_search(backend: str = "duckduckgo", timeout_s: int = 10) -> TextSearch:
    """The real search function: `ddgs.DDGS().text(...)` with the given backend."""

    def run(query: str, max_results: int) -> list[dict[str, Any]]:
        return heavy.DDGS(timeout=timeout_s).text(query, max_results=max_results, backend=backend)

    return run


class DuckDuckGoProvider:
    """Implements `SearchProvider`. Needs no key; may be rate limited by DuckDuckGo."""

    name = "duckduckgo"

    def __init__(
        self, search_fn: TextSearch | None = None, *, backend: str = "duckduckgo", timeout_s: int = 10
    ) -> None:
        self._search = search_fn or ddgs_text_search(backend, timeout_s)

    async def search(self, query: str, *, limit: int) -> list[Document]:
        try:
            raw = await asyncio.to_thread(self._search, query, limit)
        except heavy.RatelimitException:
            raise ToolError("rate limited by DuckDuckGo; try again later") from None
        except heavy.TimeoutException:
            raise ToolError("DuckDuckGo timed out") from None
        except heavy.DDGSException as exc:
            if "no results" in str(exc).lower():  # ddgs raises instead of returning []
                return []
            raise ToolError(f"DuckDuckGo search failed: {type(exc).__name__}") from None
        except OSError as exc:
            raise ToolError(f"DuckDuckGo unreachable: {type(exc).__name__}") from None
        if not isinstance(raw, list):
            raise ToolError("unexpected response shape from ddgs")
        documents: list[Document] = []
        for item in raw:
            url = http_url(item.get("href")) if isinstance(item, dict) else None
            if url:
                documents.append(
                    Document.from_url(
                        url,
                        title=clean_snippet(item.get("title")),
                        snippet=clean_snippet(item.get("body")),
                        source=self.name,
                    )
                )
        return documents[:limit]

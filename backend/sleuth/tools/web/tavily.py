"""Tavily: POST https://api.tavily.com/search with a bearer API key."""

from __future__ import annotations

import httpx
from pydantic import SecretStr

from sleuth.documents import Document
from sleuth.tools.base import ToolError
from sleuth.tools.web.provider_http import DEFAULT_TIMEOUT_S, clean_snippet, http_url, request_json, results_list, secret_value

TAVILY_URL = "https://api.tavily.com/search"
MAX_RESULTS = 20  # Tavily's documented maximum for max_results


class TavilyProvider:
    """Implements `SearchProvider`."""

    name = "tavily"

    def __init__(
        self,
        api_key: str | SecretStr | None,
        *,
        endpoint: str = TAVILY_URL,
        client: httpx.AsyncClient | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self._api_key = SecretStr(secret_value(api_key) or "")
        self.endpoint = endpoint
        self._client = client
        self._timeout_s = timeout_s

    def __repr__(self) -> str:  # never show the key
        return f"TavilyProvider(endpoint={self.endpoint!r})"

    async def search(self, query: str, *, limit: int) -> list[Document]:
        key = secret_value(self._api_key)
        if not key:
            raise ToolError("not configured: set SLEUTH_TAVILY_API_KEY")
        payload = await request_json(
            "POST",
            self.endpoint,
            client=self._client,
            timeout_s=self._timeout_s,
            secrets=[key],
            headers={"Authorization": f"Bearer {key}", "Accept": "application/json"},
            json={"query": query, "max_results": max(1, min(limit, MAX_RESULTS)), "search_depth": "basic"},
        )
        documents: list[Document] = []
        for item in results_list(payload, "results"):
            url = http_url(item.get("url"))
            if url:
                documents.append(
                    Document.from_url(url, title=clean_snippet(item.get("title")), snippet=clean_snippet(item.get("content")), source=self.name)
                )
        return documents[:limit]

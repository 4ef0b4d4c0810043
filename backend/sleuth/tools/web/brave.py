"""Brave Search: GET https://api.search.brave.com/res/v1/web/search with X-Subscription-Token."""

from __future__ import annotations

import httpx
from pydantic import SecretStr

from sleuth.documents import Document
from sleuth.tools.base import ToolError
from sleuth.tools.web.provider_http import DEFAULT_TIMEOUT_S, clean_snippet, http_url, request_json, results_list, secret_value

BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"
MAX_COUNT = 20  # Brave's documented maximum for `count`


class BraveProvider:
    """Implements `SearchProvider`."""

    name = "brave"

    def __init__(
        self,
        api_key: str | SecretStr | None,
        *,
        endpoint: str = BRAVE_URL,
        client: httpx.AsyncClient | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self._api_key = SecretStr(secret_value(api_key) or "")
        self.endpoint = endpoint
        self._client = client
        self._timeout_s = timeout_s

    def __repr__(self) -> str:  # never show the key
        return f"BraveProvider(endpoint={self.endpoint!r})"

    async def search(self, query: str, *, limit: int) -> list[Document]:
        key = secret_value(self._api_key)
        if not key:
            raise ToolError("not configured: set SLEUTH_BRAVE_API_KEY")
        payload = await request_json(
            "GET",
            self.endpoint,
            client=self._client,
            timeout_s=self._timeout_s,
            secrets=[key],
            params={"q": query, "count": max(1, min(limit, MAX_COUNT))},
            headers={"X-Subscription-Token": key, "Accept": "application/json"},
        )
        documents: list[Document] = []
        for item in results_list(payload, "web", "results"):
            url = http_url(item.get("url"))
            if url:
                documents.append(
                    Document.from_url(url, title=clean_snippet(item.get("title")), snippet=clean_snippet(item.get("description")), source=self.name)
                )
        return documents[:limit]

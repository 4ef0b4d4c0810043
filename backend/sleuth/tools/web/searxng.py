"""SearXNG through its JSON API: GET {base}/search?q=...&format=json."""

from __future__ import annotations

import httpx

from sleuth.stream.documents import Document
from sleuth.tools.base import ToolError
from sleuth.tools.web.provider_http import DEFAULT_TIMEOUT_S, clean_snippet, http_url, request_json, results_list


class SearxngProvider:
    """Implements `SearchProvider`. The instance must enable `json` in `search.formats`."""

    name = "searxng"

    def __init__(
        self, base_url: str | None, *, client: httpx.AsyncClient | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> None:
        self.base_url = (base_url or "").strip().rstrip("/") or None
        self._client = client
        self._timeout_s = timeout_s

    async def search(self, query: str, *, limit: int) -> list[Document]:
        if not self.base_url:
            raise ToolError(
                "not configured: set SLEUTH_SEARXNG_URL to your SearXNG instance (e.g. http://localhost:8080)"
            )
        if not self.base_url.lower().startswith(("http://", "https://")):
            raise ToolError(f"SLEUTH_SEARXNG_URL must start with http:// or https:// (got {self.base_url!r})")
        payload = await request_json(
            "GET",
            f"{self.base_url}/search",
            client=self._client,
            timeout_s=self._timeout_s,
            params={"q": query, "format": "json"},
            headers={"Accept": "application/json"},
            # SearXNG answers 403 when the JSON format is not enabled in its settings.yml.
            forbidden_hint="the instance refused the JSON API; enable `json` under search.formats in settings.yml",
        )
        documents: list[Document] = []
        for item in results_list(payload, "results"):  # SearXNG does not take a result count
            url = http_url(item.get("url"))
            if url:
                documents.append(
                    Document.from_url(
                        url,
                        title=clean_snippet(item.get("title")),
                        snippet=clean_snippet(item.get("content")),
                        source=self.name,
                    )
                )
            if len(documents) >= limit:
                break
        return documents

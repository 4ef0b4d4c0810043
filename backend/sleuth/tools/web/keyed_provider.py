"""The shared shape of search APIs that take a key and return a JSON list of results."""

from __future__ import annotations

from typing import Any, ClassVar

import httpx
from pydantic import SecretStr

from sleuth.stream.documents import Document
from sleuth.tools.base import ToolError
from sleuth.tools.web.provider_http import (
    DEFAULT_TIMEOUT_S,
    clean_snippet,
    http_url,
    request_json,
    results_list,
    secret_value,
)


class KeyedApiProvider:
    """Implements `SearchProvider` for a keyed JSON search API; subclasses describe the API."""

    name: ClassVar[str]
    default_endpoint: ClassVar[str]
    key_setting: ClassVar[str]  # the environment variable a user sets, for the error message
    results_path: ClassVar[tuple[str, ...]]
    snippet_field: ClassVar[str]

    def __init__(
        self,
        api_key: str | SecretStr | None,
        *,
        endpoint: str | None = None,
        client: httpx.AsyncClient | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self._api_key = SecretStr(secret_value(api_key) or "")
        self.endpoint = endpoint or self.default_endpoint
        self._client = client
        self._timeout_s = timeout_s

    def __repr__(self) -> str:  # never show the key
        return f"{type(self).__name__}(endpoint={self.endpoint!r})"

    def request(self, query: str, limit: int, key: str) -> dict[str, Any]:
        """Method and keyword arguments for `request_json` (headers, params or json)."""
        raise NotImplementedError

    async def search(self, query: str, *, limit: int) -> list[Document]:
        key = secret_value(self._api_key)
        if not key:
            raise ToolError(f"not configured: set {self.key_setting}")
        spec = self.request(query, limit, key)
        payload = await request_json(
            spec.pop("method"), self.endpoint, client=self._client, timeout_s=self._timeout_s, secrets=[key], **spec
        )
        documents: list[Document] = []
        for item in results_list(payload, *self.results_path):
            url = http_url(item.get("url"))
            if url:
                documents.append(
                    Document.from_url(
                        url,
                        title=clean_snippet(item.get("title")),
                        snippet=clean_snippet(item.get(self.snippet_field)),
                        source=self.name,
                    )
                )
        return documents[:limit]

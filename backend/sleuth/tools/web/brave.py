"""Brave Search: GET https://api.search.brave.com/res/v1/web/search with X-Subscription-Token."""

from __future__ import annotations

from typing import Any

from sleuth.tools.web.keyed_provider import KeyedApiProvider

BRAVE_URL = "https://api.search.brave.com/res/v1/web/search"
MAX_COUNT = 20  # Brave's documented maximum for `count`


class BraveProvider(KeyedApiProvider):
    name = "brave"
    default_endpoint = BRAVE_URL
    key_setting = "SLEUTH_BRAVE_API_KEY"
    results_path = ("web", "results")
    snippet_field = "description"

    def request(self, query: str, limit: int, key: str) -> dict[str, Any]:
        return {
            "method": "GET",
            "params": {"q": query, "count": max(1, min(limit, MAX_COUNT))},
            "headers": {"X-Subscription-Token": key, "Accept": "application/json"},
        }

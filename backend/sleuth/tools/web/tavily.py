"""Tavily: POST https://api.tavily.com/search with a bearer API key (never in the body)."""

from __future__ import annotations

from typing import Any

from sleuth.tools.web.keyed_provider import KeyedApiProvider

TAVILY_URL = "https://api.tavily.com/search"
MAX_RESULTS = 20  # Tavily's documented maximum for max_results


class TavilyProvider(KeyedApiProvider):
    name = "tavily"
    default_endpoint = TAVILY_URL
    key_setting = "SLEUTH_TAVILY_API_KEY"
    results_path = ("results",)
    snippet_field = "content"

    def request(self, query: str, limit: int, key: str) -> dict[str, Any]:
        return {
            "method": "POST",
            "headers": {"Authorization": f"Bearer {key}", "Accept": "application/json"},
            "json": {"query": query, "max_results": max(1, min(limit, MAX_RESULTS)), "search_depth": "basic"},
        }

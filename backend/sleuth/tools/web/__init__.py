"""Web tools: search providers (SearXNG, Tavily, Brave, DuckDuckGo) and SSRF-safe page fetching.

`credibility` is bound at once, the rest on first use: it names both a module and its function,
and the function is what this package exports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sleuth.core.lazy import lazy_exports
from sleuth.tools.web.credibility import Credibility, credibility, is_unsafe_citation_url

if TYPE_CHECKING:
    from sleuth.tools.web.brave import BraveProvider
    from sleuth.tools.web.duckduckgo import DuckDuckGoProvider
    from sleuth.tools.web.factory import build_web_reader, build_web_tools, fetch_limits
    from sleuth.tools.web.fetch import FetchLimits, SafeFetcher
    from sleuth.tools.web.reader import WebReader
    from sleuth.tools.web.searxng import SearxngProvider
    from sleuth.tools.web.ssrf import AllowList, SsrfGuard
    from sleuth.tools.web.tavily import TavilyProvider

__all__ = [
    "AllowList",
    "BraveProvider",
    "Credibility",
    "DuckDuckGoProvider",
    "FetchLimits",
    "SafeFetcher",
    "SearxngProvider",
    "SsrfGuard",
    "TavilyProvider",
    "WebReader",
    "build_web_reader",
    "build_web_tools",
    "fetch_limits",
    "credibility",
    "is_unsafe_citation_url",
]
__getattr__ = lazy_exports(
    __name__,
    {
        "AllowList": "ssrf",
        "BraveProvider": "brave",
        "DuckDuckGoProvider": "duckduckgo",
        "FetchLimits": "fetch",
        "SafeFetcher": "fetch",
        "SearxngProvider": "searxng",
        "SsrfGuard": "ssrf",
        "TavilyProvider": "tavily",
        "WebReader": "reader",
        "build_web_reader": "factory",
        "build_web_tools": "factory",
        "fetch_limits": "factory",
    },
)

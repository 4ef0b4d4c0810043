"""Web tools: search providers (SearXNG, Tavily, Brave, DuckDuckGo) and SSRF-safe page fetching."""

from sleuth.tools.web.brave import BraveProvider
from sleuth.tools.web.credibility import Credibility, credibility, is_unsafe_citation_url
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

"""Build the web search providers and the `web` page reader from Settings."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from sleuth.config import Settings
from sleuth.tools.base import PageReader, SearchProvider
from sleuth.tools.web.brave import BraveProvider
from sleuth.tools.web.duckduckgo import DuckDuckGoProvider
from sleuth.tools.web.fetch import FetchLimits, SafeFetcher
from sleuth.tools.web.reader import WebReader
from sleuth.tools.web.searxng import SearxngProvider
from sleuth.tools.web.ssrf import AllowList, Resolver, SsrfGuard, system_resolver
from sleuth.tools.web.tavily import TavilyProvider

# Providers built elsewhere (the local corpus); skipped here rather than reported as unknown.
NOT_WEB = frozenset({"local"})

PROVIDERS: dict[str, Callable[[Settings], SearchProvider]] = {
    "searxng": lambda s: SearxngProvider(s.searxng_url, timeout_s=s.search_timeout_s),
    "tavily": lambda s: TavilyProvider(s.tavily_api_key, timeout_s=s.search_timeout_s),
    "brave": lambda s: BraveProvider(s.brave_api_key, timeout_s=s.search_timeout_s),
    "duckduckgo": lambda s: DuckDuckGoProvider(backend=s.ddgs_backend, timeout_s=int(s.search_timeout_s)),
}


def provider_names(settings: Settings) -> list[str]:
    """The search providers named in SLEUTH_SEARCH, lower-cased, in order."""
    return [name.lower() for name in settings.search_providers]


def fetch_limits(settings: Settings) -> FetchLimits:
    return FetchLimits(
        connect_timeout_s=settings.fetch_connect_timeout_s,
        read_timeout_s=settings.fetch_timeout_s,
        total_timeout_s=settings.fetch_total_timeout_s,
        max_bytes=settings.fetch_max_bytes,
        max_redirects=settings.fetch_max_redirects,
    )


def build_web_reader(
    settings: Settings, *, resolver: Resolver | None = None, transport: httpx.AsyncBaseTransport | None = None
) -> WebReader:
    """The `web` PageReader with the SSRF guard, limits and credibility threshold from settings."""
    guard = SsrfGuard(AllowList.parse(settings.fetch_allow_hosts), resolver or system_resolver)
    fetcher = SafeFetcher(guard, fetch_limits(settings), transport=transport)
    return WebReader(fetcher, credibility_threshold=settings.credibility_threshold)


def build_web_tools(
    settings: Settings, *, resolver: Resolver | None = None, transport: httpx.AsyncBaseTransport | None = None
) -> tuple[list[SearchProvider], PageReader]:
    """Web search providers named in `settings.search_providers` (in order) and the `web` reader.

    Unknown names raise ValueError so a typo in SLEUTH_SEARCH fails at start-up, not mid-run.
    Missing keys do not: that provider reports a clear error on each search and the run goes on.
    """
    providers: list[SearchProvider] = []
    for name in provider_names(settings):
        if name in NOT_WEB or any(p.name == name for p in providers):
            continue
        if name not in PROVIDERS:
            known = ", ".join(sorted([*PROVIDERS, *NOT_WEB]))
            raise ValueError(f"unknown search provider {name!r} in SLEUTH_SEARCH (known: {known})")
        providers.append(PROVIDERS[name](settings))
    return providers, build_web_reader(settings, resolver=resolver, transport=transport)

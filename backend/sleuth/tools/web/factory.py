"""Build the web search providers and the `web` page reader from Settings.

Settings fields are read with getattr and a default so this works before (and after) the
fields are added to `sleuth.config.Settings`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from sleuth.tools.base import PageReader, SearchProvider
from sleuth.tools.web.brave import BraveProvider
from sleuth.tools.web.credibility import DEFAULT_THRESHOLD
from sleuth.tools.web.duckduckgo import DuckDuckGoProvider
from sleuth.tools.web.fetch import FetchLimits, SafeFetcher
from sleuth.tools.web.provider_http import DEFAULT_TIMEOUT_S
from sleuth.tools.web.reader import WebReader
from sleuth.tools.web.searxng import SearxngProvider
from sleuth.tools.web.ssrf import AllowList, Resolver, SsrfGuard, system_resolver
from sleuth.tools.web.tavily import TavilyProvider

# Providers built elsewhere (the local corpus); skipped here rather than reported as unknown.
NOT_WEB = frozenset({"local"})


def _setting(settings: Any, name: str, default: Any) -> Any:
    value = getattr(settings, name, default)
    return default if value is None else value


def _timeout(settings: Any) -> float:
    return float(_setting(settings, "search_timeout_s", DEFAULT_TIMEOUT_S))


PROVIDERS: dict[str, Callable[[Any], SearchProvider]] = {
    "searxng": lambda s: SearxngProvider(getattr(s, "searxng_url", None), timeout_s=_timeout(s)),
    "tavily": lambda s: TavilyProvider(getattr(s, "tavily_api_key", None), timeout_s=_timeout(s)),
    "brave": lambda s: BraveProvider(getattr(s, "brave_api_key", None), timeout_s=_timeout(s)),
    "duckduckgo": lambda s: DuckDuckGoProvider(
        backend=str(_setting(s, "ddgs_backend", "duckduckgo")), timeout_s=int(_timeout(s))
    ),
}


def provider_names(settings: Any) -> list[str]:
    names = getattr(settings, "search_providers", None)
    if names is None:
        names = [n.strip() for n in str(getattr(settings, "search", "")).split(",") if n.strip()]
    return [name.lower() for name in names]


def build_web_reader(
    settings: Any, *, resolver: Resolver | None = None, transport: httpx.AsyncBaseTransport | None = None
) -> WebReader:
    """The `web` PageReader with the SSRF guard, limits and credibility threshold from settings."""
    defaults = FetchLimits()
    limits = FetchLimits(
        connect_timeout_s=float(_setting(settings, "fetch_connect_timeout_s", defaults.connect_timeout_s)),
        read_timeout_s=float(_setting(settings, "fetch_timeout_s", defaults.read_timeout_s)),
        total_timeout_s=float(_setting(settings, "fetch_total_timeout_s", defaults.total_timeout_s)),
        max_bytes=int(_setting(settings, "fetch_max_bytes", defaults.max_bytes)),
        max_redirects=int(_setting(settings, "fetch_max_redirects", defaults.max_redirects)),
    )
    guard = SsrfGuard(AllowList.parse(_setting(settings, "fetch_allow_hosts", "")), resolver or system_resolver)
    threshold = float(_setting(settings, "credibility_threshold", DEFAULT_THRESHOLD))
    return WebReader(SafeFetcher(guard, limits, transport=transport), credibility_threshold=threshold)


def build_web_tools(
    settings: Any, *, resolver: Resolver | None = None, transport: httpx.AsyncBaseTransport | None = None
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

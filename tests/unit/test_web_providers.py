"""Search providers against fakes of their HTTP APIs (httpx.MockTransport) and merged search."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from ddgs.exceptions import DDGSException, RatelimitException

from sleuth.config import Settings
from sleuth.tools.base import ToolError
from sleuth.tools.toolbox import Toolbox
from sleuth.tools.web.brave import BraveProvider
from sleuth.tools.web.duckduckgo import DuckDuckGoProvider
from sleuth.tools.web.factory import build_web_tools
from sleuth.tools.web.searxng import SearxngProvider
from sleuth.tools.web.tavily import TavilyProvider

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "web"
SECRET = "sk-test-SECRET-1234567890"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def client_for(handler: Callable[[httpx.Request], httpx.Response]) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def static(status: int, body: Any = None, *, text: str | None = None, headers: dict[str, str] | None = None):
    def handler(request: httpx.Request) -> httpx.Response:
        if text is not None:
            return httpx.Response(status, text=text, headers=headers)
        return httpx.Response(status, json=body, headers=headers)

    return handler


def unreachable(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("connection refused", request=request)


# --- SearXNG -------------------------------------------------------------------------------


async def test_searxng_parses_json_api() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=fixture("searxng_search.json"))

    provider = SearxngProvider("http://searx.test:8080/", client=client_for(handler))
    docs = await provider.search("python descriptors", limit=2)

    assert seen[0].method == "GET"
    assert seen[0].url.path == "/search"
    assert seen[0].url.params["q"] == "python descriptors"
    assert seen[0].url.params["format"] == "json"
    assert [d.url for d in docs] == [
        "https://docs.python.org/3/howto/descriptor.html",
        "https://en.wikipedia.org/wiki/Python_(programming_language)",
    ]
    assert docs[0].title == "Descriptor Guide — Python 3 documentation"  # entities unescaped
    assert docs[0].snippet.startswith("Descriptors let objects")
    assert all(d.source == "searxng" for d in docs)


async def test_searxng_unconfigured_is_a_clear_error() -> None:
    with pytest.raises(ToolError, match="SLEUTH_SEARXNG_URL"):
        await SearxngProvider(None).search("q", limit=3)


async def test_searxng_403_explains_json_format() -> None:
    provider = SearxngProvider("http://searx.test", client=client_for(static(403, text="Forbidden")))
    with pytest.raises(ToolError, match="search.formats"):
        await provider.search("q", limit=3)


async def test_searxng_unreachable() -> None:
    provider = SearxngProvider("http://searx.test", client=client_for(unreachable))
    with pytest.raises(ToolError, match="unreachable: http://searx.test/search"):
        await provider.search("q", limit=3)


# --- Tavily --------------------------------------------------------------------------------


async def test_tavily_posts_query_with_bearer_key() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=fixture("tavily_search.json"))

    provider = TavilyProvider(SECRET, client=client_for(handler))
    docs = await provider.search("python descriptors", limit=5)

    assert seen[0].method == "POST"
    assert str(seen[0].url) == "https://api.tavily.com/search"
    assert seen[0].headers["authorization"] == f"Bearer {SECRET}"
    body = json.loads(seen[0].content)
    assert body["query"] == "python descriptors" and body["max_results"] == 5
    assert SECRET not in seen[0].content.decode()  # the key travels only in the header
    assert [d.title for d in docs] == ["Descriptor Guide — Python 3 documentation", "Descriptors in Python"]
    assert docs[1].source == "tavily"


async def test_tavily_missing_key() -> None:
    with pytest.raises(ToolError, match="SLEUTH_TAVILY_API_KEY"):
        await TavilyProvider(None).search("q", limit=3)
    with pytest.raises(ToolError, match="SLEUTH_TAVILY_API_KEY"):
        await TavilyProvider("   ").search("q", limit=3)


# --- Brave ---------------------------------------------------------------------------------


async def test_brave_sends_subscription_token_and_strips_markup() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=fixture("brave_web_search.json"))

    provider = BraveProvider(SECRET, client=client_for(handler))
    docs = await provider.search("python descriptors", limit=5)

    request = seen[0]
    assert request.url.host == "api.search.brave.com" and request.url.path == "/res/v1/web/search"
    assert request.url.params["q"] == "python descriptors" and request.url.params["count"] == "5"
    assert request.headers["x-subscription-token"] == SECRET
    assert docs[0].snippet == "Descriptors let objects customize attribute lookup, storage, and deletion."
    assert docs[1].title == "Python Descriptors & Properties"
    assert [d.source for d in docs] == ["brave", "brave"]


async def test_brave_without_web_section_is_empty() -> None:
    provider = BraveProvider(SECRET, client=client_for(static(200, {"type": "search", "query": {"original": "x"}})))
    assert await provider.search("x", limit=3) == []


# --- Shared failure modes, every HTTP provider -------------------------------------------

HTTP_PROVIDERS: dict[str, Callable[[httpx.AsyncClient], Any]] = {
    "searxng": lambda c: SearxngProvider("http://searx.test", client=c),
    "tavily": lambda c: TavilyProvider(SECRET, client=c),
    "brave": lambda c: BraveProvider(SECRET, client=c),
}


@pytest.mark.parametrize("name", HTTP_PROVIDERS)
@pytest.mark.parametrize(
    ("handler", "message"),
    [
        (
            static(429, {"detail": "slow down"}, headers={"Retry-After": "30"}),
            r"rate limited \(HTTP 429\); retry after 30 s",
        ),
        (static(200, text="<html>definitely not json"), "malformed JSON"),
        (static(502, text="bad gateway"), r"server error \(HTTP 502\)"),
        (static(200, ["a", "list"]), "unexpected response shape"),
        (unreachable, "unreachable"),
    ],
    ids=["429", "malformed-json", "5xx", "wrong-shape", "unreachable"],
)
async def test_provider_failures_are_clear_tool_errors(name: str, handler: Any, message: str) -> None:
    provider = HTTP_PROVIDERS[name](client_for(handler))
    with pytest.raises(ToolError, match=message) as caught:
        await provider.search("q", limit=3)
    assert SECRET not in str(caught.value)


@pytest.mark.parametrize("name", ["tavily", "brave"])
async def test_rejected_key_is_reported_without_the_key(name: str, caplog: pytest.LogCaptureFixture) -> None:
    provider = HTTP_PROVIDERS[name](client_for(static(401, {"error": f"bad key {SECRET}"})))
    with pytest.raises(ToolError, match=r"API key was rejected \(HTTP 401\)") as caught:
        await provider.search("q", limit=3)
    assert SECRET not in str(caught.value)
    assert SECRET not in repr(provider)
    assert SECRET not in caplog.text


# --- DuckDuckGo (ddgs) ---------------------------------------------------------------------


async def test_duckduckgo_uses_injected_search_in_a_thread() -> None:
    calls: list[tuple[str, int]] = []

    def fake(query: str, max_results: int) -> list[dict[str, Any]]:
        calls.append((query, max_results))
        return fixture("ddgs_text.json")

    docs = await DuckDuckGoProvider(fake).search("python descriptors", limit=4)
    assert calls == [("python descriptors", 4)]
    assert [d.url for d in docs] == [
        "https://docs.python.org/3/howto/descriptor.html",
        "https://blog.example.net/descriptors",
    ]
    assert docs[0].source == "duckduckgo"


async def test_duckduckgo_rate_limit_and_no_results() -> None:
    def limited(query: str, max_results: int) -> list[dict[str, Any]]:
        raise RatelimitException("202 Ratelimit")

    def nothing(query: str, max_results: int) -> list[dict[str, Any]]:
        raise DDGSException("No results found.")

    with pytest.raises(ToolError, match="rate limited"):
        await DuckDuckGoProvider(limited).search("q", limit=3)
    assert await DuckDuckGoProvider(nothing).search("q", limit=3) == []


# --- Merged search through the Toolbox -----------------------------------------------------


async def test_toolbox_merges_and_deduplicates_across_providers() -> None:
    searxng = SearxngProvider("http://searx.test", client=client_for(static(200, fixture("searxng_search.json"))))
    tavily = TavilyProvider(SECRET, client=client_for(static(200, fixture("tavily_search.json"))))
    brave = BraveProvider(SECRET, client=client_for(static(429, {})))
    ddg = DuckDuckGoProvider(lambda q, n: fixture("ddgs_text.json"))
    toolbox = Toolbox(providers=[searxng, tavily, brave, ddg], readers=[])

    outcome = await toolbox.search("python descriptors", limit=10)

    urls = [d.url for d in outcome.documents]
    # docs.python.org descriptor guide comes from three providers (one with a trailing slash): kept once.
    assert sum("descriptor.html" in u for u in urls) == 1
    assert urls[0] == "https://docs.python.org/3/howto/descriptor.html"
    assert "https://www.example.org/descriptors" in urls and "https://blog.example.net/descriptors" in urls
    assert outcome.errors == ["brave: rate limited (HTTP 429)"]


# --- Factory -------------------------------------------------------------------------------


def test_build_web_tools_from_settings() -> None:
    settings = Settings(search="local, searxng,tavily,brave,duckduckgo,searxng")
    providers, reader = build_web_tools(settings)
    assert [p.name for p in providers] == ["searxng", "tavily", "brave", "duckduckgo"]
    assert reader.name == "web" and reader.handles("https://example.org/") and not reader.handles("corpus://x")


def test_build_web_tools_rejects_unknown_provider() -> None:
    with pytest.raises(ValueError, match="unknown search provider 'googel'"):
        build_web_tools(Settings(search="googel"))


def test_build_web_tools_reads_the_settings() -> None:
    settings = Settings(
        search="tavily",
        tavily_api_key=SECRET,
        fetch_allow_hosts="wiki.corp, 10.0.0.0/8",
        fetch_max_bytes=1234,
        fetch_max_redirects=2,
        credibility_threshold=0.6,
    )
    providers, reader = build_web_tools(settings)
    assert providers[0].name == "tavily"
    assert reader.fetcher.limits.max_bytes == 1234 and reader.fetcher.limits.max_redirects == 2
    assert reader.credibility_threshold == 0.6
    assert reader.fetcher.guard.allow.allows_host("wiki.corp")


async def test_searxng_url_without_scheme_is_explained() -> None:
    with pytest.raises(ToolError, match="must start with http:// or https://"):
        await SearxngProvider("localhost:8080").search("q", limit=3)

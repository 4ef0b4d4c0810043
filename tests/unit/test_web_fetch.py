"""Page fetching against a real HTTP server on 127.0.0.1 (allow-listed explicitly in these tests)."""

from __future__ import annotations

import socket
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

from sleuth.config import Settings
from sleuth.tools.base import ToolError
from sleuth.tools.web.factory import build_web_reader, fetch_limits
from sleuth.tools.web.fetch import FetchLimits, SafeFetcher
from sleuth.tools.web.reader import WebReader
from sleuth.tools.web.ssrf import AllowList, SsrfGuard
from support.pdf import minimal_pdf

ARTICLE_HTML = """<!doctype html>
<html><head>
  <title>Fallback title</title>
  <meta property="og:title" content="Descriptors, explained">
  <style>body { color: red }</style>
  <script>var tracker = "SCRIPT-CONTENT";</script>
</head><body>
  <header><a href="/">Site logo HEADER-CONTENT</a></header>
  <nav><ul><li>Home</li><li>NAV-CONTENT</li></ul></nav>
  <div class="cookie-banner">We use cookies COOKIE-CONTENT</div>
  <main>
    <h1>How descriptors work</h1>
    <p>A descriptor is an object that defines
       <code>__get__</code>.</p>
    <h2>Lookup order</h2>
    <ul><li>Data descriptors first</li><li>Then the instance dict</li></ul>
    <form><input name="q"><button>FORM-CONTENT</button></form>
  </main>
  <aside>Related posts ASIDE-CONTENT</aside>
  <footer>Copyright FOOTER-CONTENT</footer>
  <script>console.log("SCRIPT-CONTENT-2")</script>
</body></html>"""


async def article(request: Request) -> Response:
    return Response(ARTICLE_HTML, media_type="text/html; charset=utf-8")


async def pdf(request: Request) -> Response:
    return Response(minimal_pdf("Hello from a PDF about descriptors", "PDF Title"), media_type="application/pdf")


async def plain(request: Request) -> Response:
    return PlainTextResponse("Just text.\nSecond line.")


async def echo_host(request: Request) -> Response:
    return PlainTextResponse(f"host={request.headers['host']}")


async def image(request: Request) -> Response:
    return Response(b"\x89PNG\r\n\x1a\n", media_type="image/png")


async def endless(request: Request) -> Response:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(10_000):  # ~10 MB if nobody stopped reading; no Content-Length announced
            yield b"<p>" + b"x" * 1020 + b"</p>"

    return StreamingResponse(chunks(), media_type="text/html")


async def huge_declared(request: Request) -> Response:
    return Response(b"%PDF-" + b"0" * 200_000, media_type="application/pdf")


async def bounce(request: Request) -> Response:
    left = int(request.path_params["left"])
    target = "/article" if left == 0 else f"/bounce/{left - 1}"
    return RedirectResponse(target, status_code=302)


async def missing(request: Request) -> Response:
    return PlainTextResponse("nope", status_code=404)


APP = Starlette(
    routes=[
        Route("/article", article),
        Route("/doc.pdf", pdf),
        Route("/plain.txt", plain),
        Route("/echo-host", echo_host),
        Route("/image.png", image),
        Route("/endless", endless),
        Route("/huge.pdf", huge_declared),
        Route("/bounce/{left}", bounce),
        Route("/missing", missing),
    ]
)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """A uvicorn server on 127.0.0.1 in a thread; the socket listens before the thread starts."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    config = uvicorn.Config(APP, log_level="warning", lifespan="off")
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        instance.should_exit = True
        thread.join(timeout=10)
        sock.close()


async def loopback_resolver(host: str, port: int) -> list[str]:
    return {"site.test": ["127.0.0.1"]}[host]


def limits(**overrides: int) -> FetchLimits:
    return replace(fetch_limits(Settings()), **overrides)


def reader(allow: str = "127.0.0.1", **overrides: int) -> WebReader:
    guard = SsrfGuard(AllowList.parse(allow), loopback_resolver)
    fetcher = SafeFetcher(guard, limits(**overrides))
    return WebReader(fetcher, credibility_threshold=Settings().credibility_threshold)


async def test_loopback_server_is_refused_without_allow_list(server: str) -> None:
    with pytest.raises(ToolError, match="refused: 127.0.0.1 is a loopback address"):
        await reader(allow="").read(f"{server}/article")
    with pytest.raises(ToolError, match="refused: site.test resolves to 127.0.0.1, which is a loopback address"):
        await reader(allow="").read(f"{server.replace('127.0.0.1', 'site.test')}/article")


async def test_default_factory_refuses_loopback(server: str) -> None:
    with pytest.raises(ToolError, match="loopback"):
        await build_web_reader(Settings()).read(f"{server}/article")


async def test_html_main_content_extraction(server: str) -> None:
    page = await reader().read(f"{server}/article")
    text = page.text
    assert page.document.title == "Descriptors, explained"  # og:title wins over <title>
    assert page.document.source == "web" and page.document.url == f"{server}/article"
    assert text.startswith("# How descriptors work")
    assert "A descriptor is an object that defines __get__." in text
    assert "## Lookup order" in text and "- Data descriptors first" in text
    for chrome in (
        "SCRIPT",
        "NAV-CONTENT",
        "HEADER-CONTENT",
        "FOOTER-CONTENT",
        "ASIDE-CONTENT",
        "COOKIE",
        "FORM",
        "color: red",
    ):
        assert chrome not in text
    assert page.document.snippet.startswith("# How descriptors work")


async def test_pdf_to_text(server: str) -> None:
    page = await reader().read(f"{server}/doc.pdf")
    assert "Hello from a PDF about descriptors" in page.text
    assert page.document.title == "PDF Title"


async def test_plain_text_as_is(server: str) -> None:
    page = await reader().read(f"{server}/plain.txt")
    assert page.text == "Just text.\nSecond line."


async def test_unsupported_content_type_is_refused(server: str) -> None:
    with pytest.raises(ToolError, match="refused: content type 'image/png' is not supported"):
        await reader().read(f"{server}/image.png")


async def test_size_cap_stops_reading_a_stream(server: str) -> None:
    fetcher = SafeFetcher(SsrfGuard(AllowList.parse("127.0.0.1")), limits(max_bytes=50_000))
    resource = await fetcher.fetch(f"{server}/endless")
    assert resource.truncated and len(resource.body) == 50_000
    page = await reader(max_bytes=50_000).read(f"{server}/endless")  # a cut page still yields text
    assert page.text.startswith("xxx")


async def test_size_cap_refuses_declared_large_body(server: str) -> None:
    with pytest.raises(ToolError, match=r"over the 100000-byte cap"):
        await reader(max_bytes=100_000).read(f"{server}/huge.pdf")


async def test_redirects_followed_up_to_the_limit(server: str) -> None:
    page = await reader(max_redirects=3).read(f"{server}/bounce/2")  # 3 redirects
    assert page.document.title == "Descriptors, explained"
    with pytest.raises(ToolError, match="refused: more than 2 redirects"):
        await reader(max_redirects=2).read(f"{server}/bounce/2")


async def test_http_error_status(server: str) -> None:
    with pytest.raises(ToolError, match="HTTP 404"):
        await reader().read(f"{server}/missing")


async def test_pinned_connection_keeps_the_host_name(server: str) -> None:
    # site.test exists only in the fake resolver: reaching the server proves the socket went to
    # the vetted address, and the echoed Host header proves the name was kept.
    url = server.replace("127.0.0.1", "site.test") + "/echo-host"
    page = await reader().read(url)
    assert page.text == f"host=site.test:{server.rsplit(':', 1)[1]}"
